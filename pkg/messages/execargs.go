package messages

// ExecutionArguments are the argument keys that agents' hosts (Claude
// Code, Codex, Gemini CLI…) read as changing how or where a call runs,
// beyond what its command or path says, with what each does. The
// approvers' cards flag them, and the policy judges them: one table, so
// that what a card warns about and what the policy asks about cannot
// drift apart.
var ExecutionArguments = map[string]string{
	"dangerouslyDisableSandbox":  "turns the host's sandbox off for this call",
	"sandbox_permissions":        "asks the host for permissions beyond its sandbox",
	"with_escalated_permissions": "asks the host for permissions beyond its sandbox",
	"run_in_background":          "runs the call in the background, without the host waiting for it",
	"env":                        "sets environment variables the command runs with",
	"cwd":                        "changes the directory the call runs in",
	"workdir":                    "changes the directory the call runs in",
	"shell":                      "chooses the program that runs the command",
	"environment":                "sets environment variables the command runs with",
	"user":                       "runs the command as another user",
}

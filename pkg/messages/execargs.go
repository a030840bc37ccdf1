package messages

import (
	"strconv"
	"strings"
)

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
	"directory":                  "changes the directory the call runs in",
	"dir_path":                   "changes the directory the call runs in",
	"dir":                        "changes the directory the call runs in",
	"working_directory":          "changes the directory the call runs in",
	"working_dir":                "changes the directory the call runs in",
	"cd":                         "changes the directory the call runs in",
	"shell":                      "chooses the program that runs the command",
	"environment":                "sets environment variables the command runs with",
	"user":                       "runs the command as another user",
}

// SummaryPrefix begins the text that stands in for an argument too large
// to send (the hook's summary of a Write's content: its size, SHA-256 and
// first bytes, "[Signoff: N bytes not sent (why); …]"). An approver who
// sees it has not seen the argument, so no channel approves such a call
// and the hook refuses a person's approval of it.
const SummaryPrefix = "[Signoff: "

// SummaryOf is the summary text of an argument of size bytes: its start,
// up to the head, which follows it.
func SummaryOf(size int, why, sha256Hex string, headLen int) string {
	return SummaryPrefix + strconv.Itoa(size) + " bytes not sent (" + why + "); SHA-256 " + sha256Hex +
		"; the first " + strconv.Itoa(headLen) + " bytes follow]\n"
}

// IsSummary reports whether an argument's text is such a summary.
func IsSummary(s string) bool {
	rest, ok := strings.CutPrefix(s, SummaryPrefix)
	if !ok {
		return false
	}
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	return i > 0 && strings.HasPrefix(rest[i:], " bytes not sent (")
}

// ExecutionArgument returns what the argument key does when it is one of
// ExecutionArguments in any spelling a host might read — any case, with
// or without '_' and '-' (workingDirectory, Working-Dir): the card and the
// policy compare keys alike.
func ExecutionArgument(key string) (what string, ok bool) {
	what, ok = executionByNorm[NormalizeKey(key)]
	return what, ok
}

// NormalizeKey is key in lower case without '_' and '-', as the policy
// compares argument keys.
func NormalizeKey(key string) string {
	return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(key))
}

var executionByNorm = func() map[string]string {
	m := make(map[string]string, len(ExecutionArguments))
	for k, w := range ExecutionArguments {
		m[NormalizeKey(k)] = w
	}
	return m
}()

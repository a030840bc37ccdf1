package admincli

import (
	"context"
	"fmt"
	"io"
	"sort"
)

// Exit statuses of `signoff admin` (docs/OPERATIONS.md "Operating a
// fleet"): scripts branch on them.
const (
	// ExitOK: the operation was done (or the listing read).
	ExitOK = 0
	// ExitFailed: a broker refused or failed the operation (invalid,
	// forbidden, state store unavailable…). With several grant ids, revoke
	// exits with the highest status of any.
	ExitFailed = 1
	// ExitUsage: the command line is wrong; nothing was sent.
	ExitUsage = 2
	// ExitNotFound: what the operation names does not exist (a grant id,
	// a fleet stop to resume).
	ExitNotFound = 3
	// ExitNoBroker: NATS could not be reached, or no broker answered in
	// time.
	ExitNoBroker = 4
)

// command is one subcommand of `signoff admin`.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, out, errw io.Writer) int
}

// commands are the subcommands. The policy experiments (replay, shadow)
// live in internal/replay; experiments.go adds their wrappers.
var commands = map[string]command{
	"pending": {"open questions (--team, --session, --agent, --agent-type)", runPending},
	"grants":  {"standing grants (--session, --agent, --team)", runGrants},
	"revoke":  {"revoke GRANT_ID…, or --all grants of --session/--agent", runRevoke},
	"stop":    {"fleet stop: deny the selected agents' calls on every replica (--agent GLOB, --session, --agent-type, --all)", runStop},
	"resume":  {"lift the fleet stop of the same selector", runResume},
	"stops":   {"the fleet stops in force", runStops},
	"mode":    {"set (MODE) or clear (--clear) the mode of --session or --agent-type", runMode},
	"policy":  {"the policy version on each replica; `policy reload` reloads it everywhere", runPolicy},
	"audit":   {"search and tail the audit stream (--session, --agent, --tool, --outcome, --since, --follow)", runAudit},
	"agents":  {"agents' last seen: gate, version, last request; flags agents gone silent", runAgents},
}

// Usage is the help of `signoff admin`.
func Usage() string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	s := "Usage: signoff admin <command> [flags]\n\nCommands:\n"
	for _, n := range names {
		s += fmt.Sprintf("  %-9s %s\n", n, commands[n].summary)
	}
	return s + `
Every command takes the connection flags of the other signoff commands
(--nats, --nats-creds, … also as SIGNOFF_* variables or in --config), --json
for output a script reads, and --timeout. Run 'signoff admin <command> --help'
for its flags.

Exit status: 0 done, 1 refused or failed, 2 usage, 3 not found,
4 NATS unreachable or no broker answered.
`
}

// Run runs `signoff admin` with args (after "admin") and returns the exit
// status.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, Usage())
		return ExitUsage
	}
	switch args[0] {
	case "help", "-h", "--help":
		fmt.Fprint(stdout, Usage())
		return ExitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "signoff admin: unknown command %q\n\n%s", args[0], Usage())
		return ExitUsage
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

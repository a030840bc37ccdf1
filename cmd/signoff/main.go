package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/signoff-dev/signoff/internal/admincli"
	"github.com/signoff-dev/signoff/internal/buildinfo"
	"github.com/signoff-dev/signoff/internal/cmdflag"
	"github.com/signoff-dev/signoff/internal/hook"
	"github.com/signoff-dev/signoff/pkg/natstrace"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `Usage: signoff <command> [flags]

Commands:
  hook claude-code   answer a Claude Code hook event (JSON on stdin)
  hook codex         answer a Codex hook event (JSON on stdin)
  mcp-gateway        serve MCP, gating every tools/call of upstream MCP servers
  admin              the operator's command: open questions, grants, fleet
                     stop/resume, modes, policy versions, audit, agents
  version            print the version (also --version): module version,
                     VCS revision, Go version

Run 'signoff <command> --help' for the flags of a command. docs/AGENTS.md
shows the configuration to paste into each host.
`

// run dispatches to a subcommand and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	switch args[0] {
	case "hook":
		return runHook(ctx, args[1:], stdin, stdout, stderr)
	case "mcp-gateway":
		return runGateway(ctx, args[1:], stdin, stdout, stderr)
	case "admin":
		return admincli.Run(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "signoff", version())
		return 0
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	}
	fmt.Fprintf(stderr, "signoff: unknown command %q\n\n%s", args[0], usage)
	return 2
}

// version is the module version and VCS revision of this build.
func version() string { return buildinfo.String() }

// runHook is `signoff hook <host>`. Every failure, a usage error included,
// exits 2: the hosts read that as "block", and a hook that is misconfigured
// must not let calls through.
func runHook(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stderr, "Usage: signoff hook claude-code|codex [flags] < event.json\n\nRun 'signoff hook claude-code --help' for the flags.\n")
		return 2
	}
	host, err := hook.ParseHost(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "signoff: Signoff blocked this hook event: %v\n", err)
		return 2
	}
	// A host that traces its tool calls hands the hook its span in the
	// environment (TRACEPARENT, OpenTelemetry's environment carrier): the
	// request goes to the brokers as a child of it. A malformed value is
	// ignored: it never blocks the call.
	ctx = natstrace.Parse(ctx, os.Getenv("TRACEPARENT"))
	fs := flag.NewFlagSet("signoff hook "+string(host), flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := hook.Config{Host: host}
	fill := cfg.Agent.Bind(fs)
	fs.DurationVar(&cfg.Deadline, "deadline", hook.DefaultDeadline, "answer (deny, when no decision came) this long after the hook started; keep it under the host's hook timeout (docs/AGENTS.md)")
	logFile := fs.String("log-file", "", "append one JSON line per event (decision, or why the call was refused) to this `file`")
	fs.StringVar(&cfg.Session, "session", "", "Signoff session of every event instead of the host's session id (for NATS users pinned to their sessions)")
	fs.DurationVar(&cfg.CancelGrace, "cancel-grace", 0, "the end of the deadline kept for cancelling a request still pending (default 1s, at most a quarter of the deadline)")
	cmdflag.Usage(fs, fmt.Sprintf(`Usage: signoff hook %s [flags] < event.json

Reads one %s hook event as JSON on stdin, asks Signoff and answers in the
host's format: JSON on stdout and exit 0, or the reason on stderr and exit 2
(the host blocks the call). Every error denies. Each flag can also be set by
the environment variable SIGNOFF_<FLAG> (e.g. SIGNOFF_NATS, SIGNOFF_DEADLINE)
or in the --config file (YAML; keys are the flag names).

Flags:
`, host, host))
	if err := fs.Parse(args[1:]); err != nil {
		// --help too: a hook run with --help by mistake must not allow.
		return 2
	}
	if !cmdflag.NoArgs(fs, stderr, "signoff: Signoff blocked this hook event", "the event is read from stdin") {
		return 2
	}
	if err := fill(); err != nil {
		fmt.Fprintf(stderr, "signoff: Signoff blocked this hook event: configuration: %v\n", err)
		return 2
	}
	if *logFile != "" {
		// A log that cannot be opened must not refuse calls: the hook runs
		// without it and says so on stderr (the host's verbose mode).
		f, err := os.OpenFile(*logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			fmt.Fprintf(stderr, "signoff: --log-file: %v (not logging)\n", err)
		} else {
			defer f.Close()
			cfg.Logger = slog.New(slog.NewJSONHandler(f, nil))
		}
	}
	return hook.Run(ctx, cfg, stdin, stdout, stderr)
}

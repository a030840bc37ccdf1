package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/signoff-dev/signoff/internal/approverbot"
	_ "github.com/signoff-dev/signoff/internal/approverbot/channels"
	"github.com/signoff-dev/signoff/internal/approverbot/terminal"
	"github.com/signoff-dev/signoff/internal/approverbotd"
	"github.com/signoff-dev/signoff/internal/buildinfo"
	"github.com/signoff-dev/signoff/internal/cmdflag"
	"github.com/signoff-dev/signoff/internal/healthcheck"
	"github.com/signoff-dev/signoff/internal/tracing"
)

const usage = `Usage:
  approver-bot --config FILE [--nats URL] [--log-level LEVEL] [--log-format FORMAT]
  approver-bot hash-password [--cost N] < password
  approver-bot enroll-code [--cost N]
  approver-bot health [--url URL]
  approver-bot --version

Connects to a Signoff plane over NATS, shows the open questions of the teams
in its config on every channel the config enables (terminal, web, slack,
telegram, webhook), and sends the answers of the approvers who respond.
The config file is described in docs/APPROVERS.md.

One HTTP listener (http.listen, default 127.0.0.1:8090) serves the web page,
Slack's interactions (/slack/interactions), the webhook's responses
(/webhook/respond), GET /healthz (the process is up), GET /readyz (NATS
is connected, the server accepts the bot's subscriptions, every team's
pending replay was answered and every channel is healthy) and GET /metrics
(Prometheus). SIGINT or SIGTERM shut the bot down gracefully.

Commands:
  hash-password   read a password (without echo on a terminal) and print
                  its bcrypt hash for approvers.<id>.password_hash
  enroll-code     print a one-time code for an approver's first security
                  key and its bcrypt hash for approvers.<id>.enroll_code_hash
  health          exit 0 when --url (default http://127.0.0.1:8090/readyz)
                  answers 200: a container healthcheck

Every flag can also be set in the environment: SIGNOFF_BOT_CONFIG,
SIGNOFF_NATS (as the signoff command), SIGNOFF_BOT_LOG_LEVEL,
SIGNOFF_BOT_LOG_FORMAT,
SIGNOFF_BOT_OTLP_ENDPOINT; a flag wins over its variable, and --nats over the
config's nats.url.

Flags:
`

// exit statuses.
const (
	exitOK    = 0
	exitError = 1 // the bot failed while running
	exitUsage = 2 // bad flags, config or environment
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
}

// run dispatches to a subcommand and returns the exit status.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if len(args) > 0 && (args[0] == "version" || args[0] == "--version" || args[0] == "-version") {
		fmt.Fprintln(stdout, "approver-bot", buildinfo.String())
		return exitOK
	}
	if len(args) > 0 && args[0] == "health" {
		// A container healthcheck (the image has no shell): GET /readyz.
		return healthcheck.Main("approver-bot health", args[1:], "http://127.0.0.1:8090/readyz", stdout, stderr)
	}
	if len(args) > 0 && args[0] == "hash-password" {
		return hashPassword(args[1:], stdin, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "enroll-code" {
		return enrollCode(args[1:], stdout, stderr)
	}
	return serve(args, stdin, stdout, stderr, getenv)
}

// settings are the command line of the bot.
type settings struct {
	config    string
	nats      string
	logLevel  string
	logFormat string
	otlp      string
}

// flags declares the bot's flags on fs and returns a function that, after
// Parse, fills what no flag set from the environment.
func (s *settings) flags(fs *flag.FlagSet, getenv func(string) string) func() {
	fs.StringVar(&s.config, "config", "", "the bot's config `file` (YAML, docs/APPROVERS.md); env SIGNOFF_BOT_CONFIG")
	fs.StringVar(&s.nats, "nats", "", "NATS `URL` to connect to, instead of the config's nats.url; env SIGNOFF_NATS")
	fs.StringVar(&s.logLevel, "log-level", "info", "log `level`: debug, info, warn or error (warn when the terminal channel shares stderr's terminal); env SIGNOFF_BOT_LOG_LEVEL")
	fs.StringVar(&s.logFormat, "log-format", "text", "log `format`: text or json; env SIGNOFF_BOT_LOG_FORMAT")
	fs.StringVar(&s.otlp, "otlp-endpoint", "", "export traces of the responses sent over OTLP to this `URL` (http://collector:4318; the standard OTEL_EXPORTER_OTLP_* variables are honoured too; empty and unset: off); env SIGNOFF_BOT_OTLP_ENDPOINT")
	return func() {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for name, dst := range map[string]*string{"config": &s.config, "log-level": &s.logLevel, "log-format": &s.logFormat, "otlp-endpoint": &s.otlp} {
			env := "SIGNOFF_BOT_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
			if v := getenv(env); !set[name] && v != "" {
				*dst = v
				set[name] = true
			}
		}
		if v := getenv("SIGNOFF_NATS"); !set["nats"] && v != "" {
			s.nats = v
		}
		if !set["log-level"] {
			s.logLevel = ""
		}
	}
}

// serve runs the bot until SIGINT or SIGTERM.
func serve(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fs := flag.NewFlagSet("approver-bot", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var s settings
	fill := s.flags(fs, getenv)
	cmdflag.Usage(fs, usage)
	if code, done := parseFlags(fs, args, stdout); done {
		return code
	}
	if !cmdflag.NoArgs(fs, stderr, "approver-bot", "see approver-bot --help") {
		return exitUsage
	}
	fill()
	if s.config == "" {
		fmt.Fprintln(stderr, "approver-bot: --config FILE (or SIGNOFF_BOT_CONFIG) is required; see docs/APPROVERS.md")
		return exitUsage
	}
	cfg, err := approverbot.LoadConfig(s.config)
	if err != nil {
		fmt.Fprintf(stderr, "approver-bot: config: %v\n", err)
		return exitUsage
	}
	if s.nats != "" {
		cfg.NATS.URL = s.nats
	}

	// The terminal channel puts a shared terminal in raw mode: logs need
	// "\r\n", and only warnings, to leave the prompt readable.
	logOut := stderr
	if _, on := cfg.Channels[terminal.Name]; on && isTerminal(stderr) {
		logOut = terminal.LogWriter(stderr)
		if s.logLevel == "" {
			s.logLevel = "warn"
		}
	}
	if s.logLevel == "" {
		s.logLevel = "info"
	}
	log, err := newLogger(s.logLevel, s.logFormat, logOut)
	if err != nil {
		fmt.Fprintf(stderr, "approver-bot: %v\n", err)
		return exitUsage
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	tp, err := tracing.Setup(ctx, tracing.Config{Endpoint: s.otlp, Service: "signoff-approver-bot", Version: buildinfo.String(), Getenv: getenv, Logger: log})
	if err != nil {
		fmt.Fprintf(stderr, "approver-bot: %v\n", err)
		return exitUsage
	}
	defer tp.Flush()
	if err := approverbotd.Run(ctx, cfg, stdin, stdout, log, tp.Tracer()); err != nil {
		log.Error("approver bot failed", "err", err)
		var ue approverbotd.UsageError
		if errors.As(err, &ue) {
			return exitUsage
		}
		return exitError
	}
	return exitOK
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// newLogger returns a slog logger writing to w.
func newLogger(level, format string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	// Durations as Go writes them ("1.5s"): slog's JSON handler would
	// write nanoseconds, which read as a count.
	ho := &slog.HandlerOptions{Level: l, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Value.Kind() == slog.KindDuration {
			a.Value = slog.StringValue(a.Value.Duration().String())
		}
		return a
	}}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, ho)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	}
	return nil, fmt.Errorf("--log-format %q: want text or json", format)
}

// parseFlags parses args into fs; help goes to stdout with exit status 0
// (asked for, not an error). done reports that the caller should exit with
// code.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) (code int, done bool) {
	for _, a := range args {
		if a == "-h" || a == "-help" || a == "--help" {
			fs.SetOutput(stdout)
			fs.Usage()
			return exitOK, true
		}
	}
	if err := fs.Parse(args); err != nil {
		return exitUsage, true
	}
	return exitOK, false
}

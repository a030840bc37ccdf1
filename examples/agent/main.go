package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/pkg/client"
)

func main() {
	var s settings
	defaultURL := nats.DefaultURL
	if v := os.Getenv("NATS_URL"); v != "" {
		defaultURL = v
	}
	flag.StringVar(&s.url, "nats", defaultURL, "NATS URL of the Signoff plane (make run: nats://127.0.0.1:4222; the compose plane: nats://127.0.0.1:14222); default $NATS_URL, as for the nats CLI")
	flag.StringVar(&s.session, "session", "demo", "session id")
	flag.StringVar(&s.agent, "agent", "demo-agent", "agent id")
	flag.StringVar(&s.user, "user", "", "the human this agent works for (may not approve its own calls)")
	flag.DurationVar(&s.wait, "wait", 10*time.Second, "how long to wait for a broker's first answer before giving up")
	flag.StringVar(&s.nkey, "nats-nkey", "", "nkey seed `file` of the agent's NATS user (the compose plane: deploy/nats/keys/demo-agent.nk, from make keys)")
	flag.StringVar(&s.inbox, "nats-inbox-prefix", "", "reply inbox prefix its NATS user may read (default _INBOX; with -nats-nkey: _INBOX.agent, as deploy/nats gives agents)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, s, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

// settings are the demo agent's flags.
type settings struct {
	url, session, agent, user string
	nkey, inbox               string
	wait                      time.Duration
}

// demoCalls are the tool calls the demo agent asks about. The README and
// docs/OPERATIONS.md say what the built-in and the compose policies answer
// (main_test.go holds them to it).
func demoCalls() []client.Call {
	return []client.Call{
		{Tool: "bash", Arguments: map[string]any{"command": "ls -la"}},
		{Tool: "read_file", Arguments: map[string]any{"path": "app/.env"}},
		{Tool: "write_file", Arguments: map[string]any{"path": "notes.md", "content": "hello"}},
		{Tool: "bash", Arguments: map[string]any{"command": "rm -rf build && make build"}, TTL: 2 * time.Minute},
	}
}

// errNoBroker is the error when NATS answers but no broker does.
var errNoBroker = errors.New("no Signoff broker answered")

func run(ctx context.Context, s settings, stdout, stderr io.Writer) error {
	opts := []nats.Option{nats.Name("signoff-demo-agent")}
	if s.nkey != "" {
		o, err := nats.NkeyOptionFromSeed(s.nkey)
		if err != nil {
			return fmt.Errorf("-nats-nkey: %w", err)
		}
		opts = append(opts, o)
		if s.inbox == "" {
			s.inbox = "_INBOX.agent"
		}
	}
	if s.inbox != "" {
		opts = append(opts, nats.CustomInboxPrefix(s.inbox))
	}
	nc, err := nats.Connect(s.url, opts...)
	if err != nil {
		return fmt.Errorf("connect to NATS at %s (is `make run` or the compose plane running?): %w", s.url, err)
	}
	defer nc.Close()
	// The client retries while no broker answers; say so instead of
	// waiting in silence.
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "agent: "+format+"\n", args...) }
	c, err := client.New(nc, client.WithSession(s.session), client.WithAgent(s.agent), client.WithRequestedBy(s.user), client.WithLogf(logf))
	if err != nil {
		return err
	}

	// A first round trip, bounded: NATS being up says nothing about the
	// brokers behind it.
	first, cancel := context.WithTimeout(ctx, s.wait)
	_, err = c.NewTurn(first)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w within %s on %s: NATS is up, but no broker serves the signoff.v1 subjects there "+
			"(start one: `make run`, or the compose plane; a broker with another --prefix does not count): %v", errNoBroker, s.wait, s.url, err)
	}

	calls := demoCalls()
	fmt.Fprintf(stdout, "asking about %d tool calls in session %q; calls the policy asks about wait for an approver (README: the approver bot)\n", len(calls), s.session)
	results, err := c.RunBatch(ctx, calls, func(_ context.Context, call client.Call) error {
		// call is the call as approved: with the approver's arguments
		// when it was approved with changes.
		// Printed as written: json.Marshal would show && as \u0026\u0026.
		var args bytes.Buffer
		enc := json.NewEncoder(&args)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(call.Arguments); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "  running %s %s\n", call.Tool, bytes.TrimSpace(args.Bytes()))
		return nil
	})
	for _, r := range results {
		switch {
		case r.Decision == nil && r.Err != nil:
			fmt.Fprintf(stdout, "✗ %s not decided: %v\n", r.Call.Tool, r.Err)
		case r.Decision == nil && r.LLMMessage != "":
			fmt.Fprintf(stdout, "✗ %s skipped: %s\n", r.Call.Tool, r.LLMMessage)
		case r.Decision == nil:
			fmt.Fprintf(stdout, "✗ %s not asked: the batch stopped before it\n", r.Call.Tool)
		case r.Ran:
			fmt.Fprintf(stdout, "✓ %s allowed (%s: %s)\n", r.Call.Tool, r.Decision.ReasonCode, r.Decision.Reason)
		default:
			fmt.Fprintf(stdout, "✗ %s denied (%s): %s\n", r.Call.Tool, r.Decision.ReasonCode, r.LLMMessage)
		}
	}
	if err != nil && !errors.Is(err, client.ErrHardStop) {
		return err
	}
	return nil
}

package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/pkg/client"
)

func main() {
	url := flag.String("nats", nats.DefaultURL, "NATS URL of the Signoff plane")
	sessionID := flag.String("session", "demo", "session id")
	agentID := flag.String("agent", "demo-agent", "agent id")
	user := flag.String("user", "", "the human this agent works for (may not approve its own calls)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *url, *sessionID, *agentID, *user); err != nil {
		fmt.Fprintln(os.Stderr, "agent:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, url, sessionID, agentID, user string) error {
	nc, err := nats.Connect(url, nats.Name("signoff-demo-agent"))
	if err != nil {
		return fmt.Errorf("connect to %s (is `make run` running?): %w", url, err)
	}
	defer nc.Close()
	c, err := client.New(nc, client.WithSession(sessionID), client.WithAgent(agentID), client.WithRequestedBy(user))
	if err != nil {
		return err
	}
	if _, err := c.NewTurn(ctx); err != nil {
		return err
	}
	calls := []client.Call{
		{Tool: "bash", Arguments: map[string]any{"command": "ls -la"}},
		{Tool: "read_file", Arguments: map[string]any{"path": "app/.env"}},
		{Tool: "write_file", Arguments: map[string]any{"path": "notes.md", "content": "hello"}},
		{Tool: "bash", Arguments: map[string]any{"command": "rm -rf build && make build"}, TTL: 2 * time.Minute},
	}
	fmt.Printf("asking about %d tool calls in session %q; answer questions on signoff.v1.ask.default\n", len(calls), sessionID)
	results, err := c.RunBatch(ctx, calls, func(_ context.Context, call client.Call) error {
		fmt.Printf("  running %s %v\n", call.Tool, call.Arguments)
		return nil
	})
	for _, r := range results {
		switch {
		case r.Decision == nil:
			fmt.Printf("✗ %s skipped: %s\n", r.Call.Tool, r.LLMMessage)
		case r.Ran:
			fmt.Printf("✓ %s allowed (%s: %s)\n", r.Call.Tool, r.Decision.ReasonCode, r.Decision.Reason)
		default:
			fmt.Printf("✗ %s denied (%s): %s\n", r.Call.Tool, r.Decision.ReasonCode, r.LLMMessage)
		}
	}
	if err != nil && err != client.ErrHardStop {
		return err
	}
	return nil
}

package brokerd

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Without --max-message-bytes the broker takes requests up to half the
// NATS server's max_payload (the embedded server's default 1 MiB: 512 KiB),
// so a 200 KB Write is decided, and one over that is refused too_large.
func TestTheMessageLimitFollowsTheServersMaxPayload(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	o := Options{Dev: true, Listen: addr, HTTPAddr: "", PolicyFile: "builtin", LogFormat: "text", NoAudit: true,
		Prefix: messages.DefaultPrefix, PolicyInterval: time.Second, StoreTimeout: time.Second, ShutdownGrace: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, o, io.Discard, slog.New(slog.DiscardHandler)) }()
	t.Cleanup(func() { cancel(); <-done })

	var nc *nats.Conn
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if nc, err = nats.Connect("nats://" + addr); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dev broker's NATS never came up: %v", err)
		}
	}
	defer nc.Close()
	c, err := client.New(nc, client.WithSession("s-large"), client.WithAgent("agent-1"), client.WithReceiptTimeout(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	write := func(size int) (*messages.Decision, error) {
		rctx, rcancel := context.WithTimeout(ctx, 15*time.Second)
		defer rcancel()
		return c.Request(rctx, client.Call{Tool: "Write", Cwd: "/workspace/app",
			Arguments: map[string]any{"file_path": "/workspace/app/data.txt", "content": strings.Repeat("x", size)}})
	}
	d, err := write(200_000)
	if err != nil || d.Outcome != messages.OutcomeAllow {
		t.Fatalf("a 200 KB Write: %v %+v", err, d)
	}
	if _, err := write(600_000); !errors.Is(err, messages.ErrTooLarge) {
		t.Fatalf("a 600 KB Write: %v, want too_large", err)
	}
}

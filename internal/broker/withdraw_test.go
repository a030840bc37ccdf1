package broker_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/broker"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
)

// lateWrites is a store whose creates reach the backend but report a
// timeout, as when Redis froze with the write already on the wire and ran it
// after the broker gave up.
type lateWrites struct{ session.Store }

func (s lateWrites) Create(ctx context.Context, r session.Request) (*session.Record, bool, error) {
	_, _, _ = s.Store.Create(ctx, r)
	return nil, false, fmt.Errorf("create: %w", session.ErrUnavailable)
}

func TestARequestStoredAfterItsCreateFailedIsWithdrawn(t *testing.T) {
	pol, err := policy.Parse([]byte(brokertest.DefaultPolicy), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	mem := memstore.New(memstore.Options{})
	ns := testenv.NATS(t)
	b, err := broker.New(broker.Config{Conn: ns.Connect(t), Store: lateWrites{mem}, Policy: broker.StaticPolicy{P: pol},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), DisableReaper: true})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.Run(t, "broker.Run", b.Run)
	for b.Ready(context.Background()) != nil {
		time.Sleep(10 * time.Millisecond)
	}

	c, err := client.New(ns.Connect(t), client.WithSession("s-late"), client.WithAgent("pod-1"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.Request(context.Background(), client.Call{RequestID: "late-1", Tool: "bash", Arguments: brokertest.Bash("make deploy")})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.WantDecision(t, d, messages.OutcomeDeny, broker.ReasonUnavailable)

	// The write landed anyway; the broker withdraws it with the same deny,
	// so no approver can give the agent a second, contradicting decision.
	waitFor(t, func() bool {
		rec, err := mem.Get(context.Background(), "s-late", "late-1")
		return err == nil && rec.State == messages.StateCancelled
	})
	rec, _ := mem.Get(context.Background(), "s-late", "late-1")
	if rec.Decision == nil || rec.Decision.ReasonCode != broker.ReasonUnavailable || rec.Decision.Outcome != messages.OutcomeDeny {
		t.Fatalf("withdrawn with %+v, want the agent's deny/unavailable", rec.Decision)
	}
	if open, _ := mem.ListPendingTeam(context.Background(), "default"); len(open) != 0 {
		t.Fatalf("%d questions still open", len(open))
	}
}

package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync/atomic"
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

// loneBroker runs one broker on store, with the test policy and no reaper,
// on a NATS server of its own, and returns the server once it serves.
func loneBroker(t *testing.T, store session.Store) *testenv.NATSServer {
	t.Helper()
	pol, err := policy.Parse([]byte(brokertest.DefaultPolicy), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ns := testenv.NATS(t)
	b, err := broker.New(broker.Config{Conn: ns.Connect(t), Store: store, Policy: broker.StaticPolicy{P: pol},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), DisableReaper: true})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.Run(t, "broker.Run", b.Run)
	for b.Ready(context.Background()) != nil {
		time.Sleep(10 * time.Millisecond)
	}
	return ns
}

func TestARequestStoredAfterItsCreateFailedIsWithdrawn(t *testing.T) {
	mem := memstore.New(memstore.Options{})
	ns := loneBroker(t, lateWrites{mem})

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

// lateDecides is a store whose votes reach the backend but report a failure
// while fail is set: Redis ran the write after the broker had given up.
type lateDecides struct {
	session.Store
	fail *atomic.Bool
}

func (s lateDecides) Decide(ctx context.Context, sessionID, id string, v session.Vote) (session.Result, error) {
	res, err := s.Store.Decide(ctx, sessionID, id, v)
	if s.fail.Load() {
		return session.Result{}, fmt.Errorf("decide: %w", session.ErrUnavailable)
	}
	return res, err
}

// An approval whose store call failed after its write landed is still
// published, with its grant stored: the broker follows up the failed call
// instead of leaving the agent to find out by polling, and the session
// grant the approver gave covers the next call.
func TestAnApprovalStoredAfterItsCallFailedIsPublished(t *testing.T) {
	mem := memstore.New(memstore.Options{})
	fail := new(atomic.Bool)
	ns := loneBroker(t, lateDecides{mem, fail})
	devices := ns.Connect(t)
	resolved, err := devices.SubscribeSync(messages.Subjects{}.Resolved("default"))
	if err != nil {
		t.Fatal(err)
	}
	_ = devices.Flush()

	c, pending := askUntilOpen(t, ns, mem, "s-late", "late-ok")

	fail.Store(true)
	data, _ := json.Marshal(messages.Response{V: 1, RequestID: "late-ok", SessionID: "s-late",
		Approver: messages.Approver{ID: "alice", Channel: "test"}, Approved: true, Scope: messages.ScopeSession})
	reply, err := devices.Request(messages.Subjects{}.Respond(), data, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if rep, ok := messages.IsErrorReply(reply.Data); !ok || rep.Error.Code != messages.CodeUnavailable {
		t.Fatalf("respond reply %s, want an unavailable error", reply.Data)
	}
	fail.Store(false)

	d := pending.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if d.DecidedBy.ID != "alice" || d.Scope != messages.ScopeSession {
		t.Fatalf("decision %+v, want alice's session approval", d)
	}
	m, err := resolved.NextMsg(5 * time.Second)
	if err != nil {
		t.Fatalf("devices were not told: %v", err)
	}
	var res messages.Resolved
	if err := json.Unmarshal(m.Data, &res); err != nil || res.RequestID != "late-ok" || res.Decision.DecidedBy.ID != "alice" {
		t.Fatalf("resolved %s", m.Data)
	}
	// The session grant was stored: the next call of the tool is allowed.
	next, err := c.Request(t.Context(), client.Call{Tool: "bash", Arguments: brokertest.Bash("make test")})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.WantDecision(t, next, messages.OutcomeAllow, messages.ReasonScopeGrant)
}

// A vote that failed and never reached the store changes nothing: the
// request stays open for the approver's retry.
func TestAVoteThatNeverLandedLeavesTheRequestOpen(t *testing.T) {
	mem := memstore.New(memstore.Options{})
	ns := loneBroker(t, lostDecides{mem})
	_, pending := askUntilOpen(t, ns, mem, "s-lost", "lost-1")
	devices := ns.Connect(t)
	data, _ := json.Marshal(messages.Response{V: 1, RequestID: "lost-1", SessionID: "s-lost",
		Approver: messages.Approver{ID: "alice", Channel: "test"}, Approved: true})
	if _, err := devices.Request(messages.Subjects{}.Respond(), data, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // the follow-up has read the request several times
	rec, err := mem.Get(context.Background(), "s-lost", "lost-1")
	if err != nil || rec.State != messages.StatePending || len(rec.Approvals) != 0 {
		t.Fatalf("record %+v %v, want it pending with no approval", rec, err)
	}
	got := make(chan struct{})
	go func() { _, _ = pending.Result(); close(got) }()
	select {
	case <-got:
		d, err := pending.Result()
		t.Fatalf("the agent got %+v %v for a vote that never landed", d, err)
	case <-time.After(100 * time.Millisecond):
	}
}

// askUntilOpen sends a call that asks, from an agent of session that does
// not poll its status (only a published decision reaches it), and returns
// once the question is open in mem.
func askUntilOpen(t *testing.T, ns *testenv.NATSServer, mem *memstore.Store, session, id string) (*client.Client, *brokertest.Pending) {
	t.Helper()
	c, err := client.New(ns.Connect(t), client.WithSession(session), client.WithAgent("pod-1"), client.WithStatusInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	pending := brokertest.Ask(t.Context(), c, id, "bash", brokertest.Bash("make deploy"))
	waitFor(t, func() bool {
		open, _ := mem.ListPendingTeam(context.Background(), "default")
		return len(open) == 1
	})
	return c, pending
}

// lostDecides is a store whose votes fail before reaching the backend.
type lostDecides struct{ session.Store }

func (lostDecides) Decide(context.Context, string, string, session.Vote) (session.Result, error) {
	return session.Result{}, fmt.Errorf("decide: %w", session.ErrUnavailable)
}

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

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/broker"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/engine"
	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
)

// lateWrites is a store whose Prepares reach the backend but report a
// timeout, as when a replica was cut off from Redis with the write already
// on the wire, or Redis froze and ran it after the broker gave up.
type lateWrites struct{ session.Store }

func (s lateWrites) Prepare(ctx context.Context, r session.Request) (*session.Record, bool, error) {
	_, _, _ = s.Store.Prepare(ctx, r)
	return nil, false, fmt.Errorf("prepare: %w", session.ErrUnavailable)
}

// flakyOpens is a store whose Opens fail while fail is set: before reaching
// the backend, or (landed) after it ran them.
type flakyOpens struct {
	session.Store
	fail   *atomic.Bool
	landed bool
}

func (s flakyOpens) Open(ctx context.Context, sessionID, id string) (session.Result, error) {
	if !s.fail.Load() {
		return s.Store.Open(ctx, sessionID, id)
	}
	if s.landed {
		_, _ = s.Store.Open(ctx, sessionID, id)
	}
	return session.Result{}, fmt.Errorf("open: %w", session.ErrUnavailable)
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

// The integration suite's doubled decision: a create whose write landed
// but whose reply was lost got the agent a fail-closed deny, and an approver
// then approved the stored request. Now what it stored is held: no approver
// is asked, lists it or can answer it, and the deny stays the only decision.
func TestARequestStoredAfterItsCreateFailedCannotBeAnswered(t *testing.T) {
	mem := memstore.New(memstore.Options{})
	ns := loneBroker(t, lateWrites{mem})
	devices := ns.Connect(t)
	asks, err := devices.SubscribeSync(messages.Subjects{}.Ask("default"))
	if err != nil {
		t.Fatal(err)
	}
	decisions, err := devices.SubscribeSync(messages.Subjects{}.Decision("s-late", "late-1"))
	if err != nil {
		t.Fatal(err)
	}
	_ = devices.Flush()

	c, err := client.New(ns.Connect(t), client.WithSession("s-late"), client.WithAgent("pod-1"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	d, err := c.Request(ctx, client.Call{RequestID: "late-1", Tool: "bash", Arguments: brokertest.Bash("make deploy")})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.WantDecision(t, d, messages.OutcomeDeny, messages.ReasonUnavailable)

	// The write landed, held.
	look, err := mem.Lookup(context.Background(), session.LookupQuery{SessionID: "s-late", RequestID: "late-1"})
	if err != nil || look.Existing == nil || look.Existing.State != session.StateHeld {
		t.Fatalf("stored %+v %v, want the request held", look.Existing, err)
	}
	if open, _ := mem.ListPendingTeam(context.Background(), "default"); len(open) != 0 {
		t.Fatalf("%d questions listed for approvers", len(open))
	}
	data, _ := json.Marshal(messages.Response{V: 1, RequestID: "late-1", SessionID: "s-late",
		Approver: messages.Approver{ID: "alice", Channel: "test"}, Approved: true})
	reply, err := devices.Request(messages.Subjects{}.Respond(), data, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if rep, ok := messages.IsErrorReply(reply.Data); !ok || rep.Error.Code != messages.CodeNotFound {
		t.Fatalf("an approval of the held request got %s, want a not_found error", reply.Data)
	}
	if m, err := asks.NextMsg(200 * time.Millisecond); err == nil {
		t.Fatalf("approvers were asked: %s", m.Data)
	}
	if m, err := decisions.NextMsg(100 * time.Millisecond); err == nil {
		t.Fatalf("a second decision was published: %s", m.Data)
	}
}

// A retry of a request that an earlier attempt left held (its reply was
// lost, or its replica died between the two steps) opens it: the agent had
// no decision, so it may be asked now.
func TestARetryOpensARequestLeftHeld(t *testing.T) {
	mem := memstore.New(memstore.Options{})
	ns := loneBroker(t, mem)
	q := messages.ApprovalNeeded{V: 1, Type: "approval_needed", Team: "default",
		Request: messages.Request{V: 1, RequestID: "held-1", SessionID: "s-held", AgentID: "pod-1", Tool: "bash",
			Arguments: json.RawMessage(`{"command":"make deploy"}`)}}
	if _, _, err := mem.Prepare(context.Background(), session.Request{ID: "held-1", SessionID: "s-held", AgentID: "pod-1",
		Tool: "bash", Teams: []string{"default"}, ApprovalsRequired: 1, TTL: time.Minute, Question: q}); err != nil {
		t.Fatal(err)
	}
	dev := newDevice(t, ns)
	c, err := client.New(ns.Connect(t), client.WithSession("s-held"), client.WithAgent("pod-1"))
	if err != nil {
		t.Fatal(err)
	}
	pending := brokertest.Ask(t.Context(), c, "held-1", "bash", brokertest.Bash("make deploy"))
	dev.approve(t, dev.nextAsk(t, "held-1"))
	brokertest.WantDecision(t, pending.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
}

// An Open that failed leaves the agent told "pending", never denied: the
// request may be open for approvers. The broker opens it in the background
// and asks the approvers, whether the failed call had landed or not.
func TestAFailedOpenIsRetriedInTheBackground(t *testing.T) {
	for _, landed := range []bool{false, true} {
		t.Run(fmt.Sprintf("landed=%v", landed), func(t *testing.T) {
			mem := memstore.New(memstore.Options{})
			fail := new(atomic.Bool)
			fail.Store(true)
			ns := loneBroker(t, flakyOpens{Store: mem, fail: fail, landed: landed})
			dev := newDevice(t, ns)
			c, err := client.New(ns.Connect(t), client.WithSession("s-open"), client.WithAgent("pod-1"), client.WithStatusInterval(time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			id := fmt.Sprintf("open-%v", landed)
			pending := brokertest.Ask(t.Context(), c, id, "bash", brokertest.Bash("make deploy"))
			// The agent's receipt was "pending": its Request is still waiting.
			waitFor(t, func() bool {
				l, err := mem.Lookup(context.Background(), session.LookupQuery{SessionID: "s-open", RequestID: id})
				return err == nil && l.Existing != nil
			})
			time.Sleep(150 * time.Millisecond) // a background attempt or two fail
			if d, err := pending.Peek(); d != nil || err != nil {
				t.Fatalf("the agent got %+v %v while the request could not be opened", d, err)
			}
			fail.Store(false)
			dev.approve(t, dev.nextAsk(t, id))
			brokertest.WantDecision(t, pending.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
		})
	}
}

// A request that cannot be opened because a reject_hard stopped the session
// meanwhile gets its agent — told it was pending — the hard-stop deny.
func TestARequestOpenedAfterAStopGetsTheHardStop(t *testing.T) {
	mem := memstore.New(memstore.Options{})
	fail := new(atomic.Bool)
	fail.Store(true)
	ns := loneBroker(t, flakyOpens{Store: mem, fail: fail})
	c, err := client.New(ns.Connect(t), client.WithSession("s-stop"), client.WithAgent("pod-1"), client.WithStatusInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	pending := brokertest.Ask(t.Context(), c, "stop-1", "bash", brokertest.Bash("make deploy"))
	waitFor(t, func() bool {
		l, err := mem.Lookup(context.Background(), session.LookupQuery{SessionID: "s-stop", RequestID: "stop-1"})
		return err == nil && l.Existing != nil
	})
	if _, err := mem.Stop(context.Background(), "s-stop", session.StopSignal{Reason: "rejected hard"}, func(*session.Record) messages.Decision { return messages.Decision{} }); err != nil {
		t.Fatal(err)
	}
	fail.Store(false)
	brokertest.WantDecision(t, pending.Wait(t), messages.OutcomeDeny, messages.ReasonHardStop)
	if open, _ := mem.ListPendingSession(context.Background(), "s-stop"); len(open) != 0 {
		t.Fatalf("%d requests opened in a stopped session", len(open))
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
	mem := memstore.New(memstore.Options{EffectLease: 200 * time.Millisecond})
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
		Approver: messages.Approver{ID: "alice", Channel: "test"}, Approved: true, Scope: messages.ScopeSession,
		Digest: openDigest(t, mem, "s-late", "late-ok")})
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
	// The session grant was stored: the next call of the command is allowed.
	next, err := c.Request(t.Context(), client.Call{Tool: "bash", Arguments: brokertest.Bash("make deploy")})
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
		Approver: messages.Approver{ID: "alice", Channel: "test"}, Approved: true, Digest: openDigest(t, mem, "s-lost", "lost-1")})
	if _, err := devices.Request(messages.Subjects{}.Respond(), data, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // anything the failed vote could have set off has run
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

// openDigest is the digest of the open question of request id: what an
// approver of it is shown, and so what their approval names.
func openDigest(t *testing.T, mem *memstore.Store, session, id string) string {
	t.Helper()
	rec, err := mem.Get(context.Background(), session, id)
	if err != nil {
		t.Fatal(err)
	}
	q, err := engine.Question(rec)
	if err != nil {
		t.Fatal(err)
	}
	return q.Digest
}

// lostDecides is a store whose votes fail before reaching the backend.
type lostDecides struct{ session.Store }

func (lostDecides) Decide(context.Context, string, string, session.Vote) (session.Result, error) {
	return session.Result{}, fmt.Errorf("decide: %w", session.ErrUnavailable)
}

// device is an approver device of the default team on a lone broker.
type device struct {
	nc   *nats.Conn
	asks *nats.Subscription
}

func newDevice(t *testing.T, ns *testenv.NATSServer) *device {
	t.Helper()
	nc := ns.Connect(t)
	asks, err := nc.SubscribeSync(messages.Subjects{}.Ask("default"))
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return &device{nc: nc, asks: asks}
}

// nextAsk waits up to 5 s for the question of request id.
func (d *device) nextAsk(t *testing.T, id string) messages.ApprovalNeeded {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		m, err := d.asks.NextMsg(time.Until(deadline))
		if err != nil {
			t.Fatalf("no question for %s: %v", id, err)
		}
		var q messages.ApprovalNeeded
		if err := json.Unmarshal(m.Data, &q); err == nil && q.Request.RequestID == id {
			return q
		}
	}
}

// approve answers q approved as alice and fails the test unless applied.
func (d *device) approve(t *testing.T, q messages.ApprovalNeeded) {
	t.Helper()
	data, _ := json.Marshal(messages.Response{V: 1, RequestID: q.Request.RequestID, SessionID: q.Request.SessionID,
		Approver: messages.Approver{ID: "alice", Channel: "test"}, Approved: true, Digest: q.Digest})
	m, err := d.nc.Request(messages.Subjects{}.Respond(), data, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var rep messages.RespondReply
	if err := json.Unmarshal(m.Data, &rep); err != nil || !rep.Applied {
		t.Fatalf("approval of %s: %s", q.Request.RequestID, m.Data)
	}
}

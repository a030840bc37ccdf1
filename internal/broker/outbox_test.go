package broker_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// outboxPlane is a plane on a real redis-server with a short outbox lease,
// so that effects a dead replica left behind are carried out quickly.
func outboxPlane(t *testing.T) *brokertest.Plane {
	return brokertest.Start(t, brokertest.Options{Redis: true, EffectLease: 300 * time.Millisecond, OutboxInterval: 100 * time.Millisecond})
}

// auditCounts returns how many audit records each request of session has,
// once at least want records are there (or after 5 s).
func auditCounts(t *testing.T, p *brokertest.Plane, session string, want int) map[string]int {
	t.Helper()
	return auditTally(t, p, session, want, func(data []byte) []string {
		recs, err := messages.AuditRecords(data)
		if err != nil {
			t.Fatalf("audit record: %v", err)
		}
		keys := make([]string, len(recs))
		for i, rec := range recs {
			keys[i] = rec.Decision.RequestID + " " + string(rec.Decision.ReasonCode)
		}
		return keys
	})
}

// auditTally counts the audit records on session's audit subject by what
// keys says of each message (nothing, for those it passes over; one key
// per decision of a batch), once at least want are counted (or after 5 s).
func auditTally(t *testing.T, p *brokertest.Plane, session string, want int, keys func(data []byte) []string) map[string]int {
	t.Helper()
	js, err := jetstream.New(p.NATS.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		cons, err := js.OrderedConsumer(t.Context(), messages.AuditStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{p.Subjects.Audit(session)}})
		if err != nil {
			t.Fatalf("audit consumer: %v", err)
		}
		counts, total := map[string]int{}, 0
		for {
			batch, err := cons.Fetch(256, jetstream.FetchMaxWait(300*time.Millisecond))
			if err != nil {
				t.Fatalf("audit fetch: %v", err)
			}
			n := 0
			for m := range batch.Messages() {
				n++
				for _, k := range keys(m.Data()) {
					counts[k]++
					total++
				}
			}
			if n == 0 {
				break
			}
		}
		if total >= want || time.Now().After(deadline) {
			return counts
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// nextAsks waits until dev saw the questions of every id, in any order.
func nextAsks(t *testing.T, dev *brokertest.Approver, ids ...string) {
	t.Helper()
	want := map[string]bool{}
	for _, id := range ids {
		want[id] = true
	}
	timeout := time.After(5 * time.Second)
	for len(want) > 0 {
		select {
		case q := <-dev.Asks:
			delete(want, q.Request.RequestID)
		case <-timeout:
			t.Fatalf("no question for %v", want)
		}
	}
}

// A replica that recorded a hard reject and died before anything else: the
// rejection and its stop are in Redis (one script), and the outbox entry
// the vote recorded makes another replica carry out the rest — the
// decision to the agent (which does not poll), the devices' resolved, the
// sibling's hard_stop, one audit record each.
func TestAHardRejectWhoseReplicaDiedIsCarriedOutByAnother(t *testing.T) {
	p := outboxPlane(t)
	dev := p.Approver("default")
	c := p.Agent("s-died", "pod-1", client.WithStatusInterval(time.Hour))
	first := brokertest.Ask(t.Context(), c, "died-1", "bash", brokertest.Bash("make deploy"))
	second := brokertest.Ask(t.Context(), c, "died-2", "bash", brokertest.Bash("make release"))
	nextAsks(t, dev, "died-1", "died-2")

	// The dead replica's vote, straight into Redis.
	store := p.Store()
	deadReplicaHardReject(t, store, "s-died", "died-1")

	// The stop is part of the vote: the next call is denied at once.
	next, err := c.Request(t.Context(), client.Call{Tool: "bash", Arguments: brokertest.Bash("ls")})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.WantDecision(t, next, messages.OutcomeDeny, messages.ReasonHardStop)

	brokertest.WantDecision(t, first.Wait(t), messages.OutcomeDeny, messages.ReasonRejected)
	brokertest.WantDecision(t, second.Wait(t), messages.OutcomeDeny, messages.ReasonHardStop)
	waitFor(t, func() bool {
		_, ok1 := dev.ResolvedFor("died-1")
		_, ok2 := dev.ResolvedFor("died-2")
		return ok1 && ok2
	})
	counts := auditCounts(t, p, "s-died", 3)
	for _, k := range []string{"died-1 rejected", "died-2 hard_stop"} {
		if counts[k] != 1 {
			t.Errorf("audit records %v: want exactly one %q", counts, k)
		}
	}
}

// An approval whose replica died after its vote: the session grant is
// stored and the cascade runs on another replica, and the agent's next
// call of the command is allowed by the grant.
func TestAnApprovalWhoseReplicaDiedStoresItsGrantAndCascades(t *testing.T) {
	p := outboxPlane(t)
	dev := p.Approver("default")
	c := p.Agent("s-grant", "pod-1", client.WithStatusInterval(time.Hour))
	first := brokertest.Ask(t.Context(), c, "g-1", "bash", brokertest.Bash("make deploy"))
	sibling := brokertest.Ask(t.Context(), c, "g-2", "bash", brokertest.Bash("make deploy"))
	nextAsks(t, dev, "g-1", "g-2")

	store := p.Store()
	rec, err := store.Get(t.Context(), "s-grant", "g-1")
	if err != nil {
		t.Fatal(err)
	}
	dec := messages.Decision{V: 1, RequestID: rec.ID, SessionID: rec.SessionID, Tool: "bash", Outcome: messages.OutcomeAllow,
		ReasonCode: messages.ReasonApproved, Scope: messages.ScopeSession, Reason: "approved (session) by alice",
		DecidedBy: messages.Decider{Kind: messages.DeciderApprover, ID: "alice"}, DecidedAt: time.Now().UTC()}
	if res, err := store.Decide(t.Context(), rec.SessionID, rec.ID, session.Vote{ApproverID: "alice", Approve: true, Decision: dec}); err != nil || !res.Applied {
		t.Fatalf("the dead replica's vote: %+v, %v", res, err)
	}
	brokertest.WantDecision(t, first.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	brokertest.WantDecision(t, sibling.Wait(t), messages.OutcomeAllow, messages.ReasonCascade)
	next, err := c.Request(t.Context(), client.Call{Tool: "bash", Arguments: brokertest.Bash("make deploy")})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.WantDecision(t, next, messages.OutcomeAllow, messages.ReasonScopeGrant)
	if want := "gr_"; !strings.HasPrefix(next.DecidedBy.ID, want) {
		t.Errorf("decided_by = %+v, want the grant's id", next.DecidedBy)
	}
}

// A request opened by a replica that died before asking its teams (its
// Open landed, its reply or its process was lost) is asked by another.
func TestAQuestionWhoseReplicaDiedIsAskedByAnother(t *testing.T) {
	p := outboxPlane(t)
	dev := p.Approver("default")
	store := p.Store()
	q := messages.ApprovalNeeded{V: 1, Type: "approval_needed", Team: "default", ApprovalsRequired: 1,
		Request: messages.Request{V: 1, RequestID: "ask-1", SessionID: "s-ask", AgentID: "pod-1", Tool: "bash",
			Arguments: json.RawMessage(`{"command":"make deploy"}`)}}
	req := session.Request{ID: "ask-1", SessionID: "s-ask", AgentID: "pod-1", Tool: "bash", Teams: []string{"default"},
		ApprovalsRequired: 1, TTL: time.Minute, Question: q}
	if _, _, err := store.Prepare(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	if res, err := store.Open(t.Context(), "s-ask", "ask-1"); err != nil || !res.Applied {
		t.Fatalf("Open: %+v, %v", res, err)
	}
	got := dev.NextAsk("ask-1")
	if got.Request.SessionID != "s-ask" {
		t.Fatalf("question %+v", got)
	}
}

// Effects carried out by the replica that made the transition are
// acknowledged: no other replica carries them out again (no second
// publication of the decision after the lease).
func TestEffectsOfALiveReplicaAreCarriedOutOnce(t *testing.T) {
	p := outboxPlane(t)
	dev := p.Approver("default")
	c := p.Agent("s-once", "pod-1", client.WithStatusInterval(time.Hour))
	decisions := make(chan *nats.Msg, 10)
	sub, err := p.NATS.Connect(t).ChanSubscribe(p.Subjects.Decision("s-once", "once-1"), decisions)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	pending := brokertest.Ask(t.Context(), c, "once-1", "bash", brokertest.Bash("make deploy"))
	q := dev.NextAsk("once-1")
	if rep := dev.Reject(q, "alice", messages.RejectSoft, "not now"); !rep.Applied {
		t.Fatalf("reject: %+v", rep)
	}
	brokertest.WantDecision(t, pending.Wait(t), messages.OutcomeDeny, messages.ReasonRejected)
	time.Sleep(time.Second) // three leases, ten outbox sweeps
	if n := len(decisions); n != 1 {
		t.Fatalf("the decision was published %d times, want once", n)
	}
	if counts := auditCounts(t, p, "s-once", 1); counts["once-1 rejected"] != 1 {
		t.Fatalf("audit records %v, want one rejection", counts)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	if left, err := p.Store().ClaimEffects(ctx, 100); err != nil || len(left) != 0 {
		t.Fatalf("outbox after acknowledged effects: %d entries, %v", len(left), err)
	}
}

// Issue 30: a replica recorded a hard reject and died (or froze during a
// write stall) before anyone told the agent, and the agent begins a new
// turn before the outbox's lease runs out. The turn must not end a stop
// the agent has not heard of: the broker that takes the turn carries the
// rejection out (the agent gets its reject_hard, the sibling its
// hard_stop, before the turn's reply) and the stop holds until the next
// turn.
func TestANewTurnBeforeTheAgentHeardOfAHardRejectDeliversItAndKeepsTheStop(t *testing.T) {
	// A lease far longer than the test: only the turn can carry it out.
	p := brokertest.Start(t, brokertest.Options{Redis: true, EffectLease: time.Minute, OutboxInterval: 100 * time.Millisecond})
	dev := p.Approver("default")
	c := p.Agent("s-owed", "pod-1", client.WithStatusInterval(time.Hour))
	first := brokertest.Ask(t.Context(), c, "owed-1", "bash", brokertest.Bash("make deploy"))
	second := brokertest.Ask(t.Context(), c, "owed-2", "bash", brokertest.Bash("make release"))
	nextAsks(t, dev, "owed-1", "owed-2")

	store := p.Store()
	deadReplicaHardReject(t, store, "s-owed", "owed-1")

	cleared, err := c.NewTurn(t.Context())
	if err != nil || cleared {
		t.Fatalf("NewTurn = %v, %v; want the stop kept (the turn began before the agent heard of the reject)", cleared, err)
	}
	// Published before the turn's reply: the agent has it now.
	got := make(chan *messages.Decision, 2)
	go func() { got <- first.Wait(t) }()
	go func() { got <- second.Wait(t) }()
	for range 2 {
		select {
		case d := <-got:
			switch d.RequestID {
			case "owed-1":
				brokertest.WantDecision(t, d, messages.OutcomeDeny, messages.ReasonRejected)
			default:
				brokertest.WantDecision(t, d, messages.OutcomeDeny, messages.ReasonHardStop)
			}
		case <-time.After(time.Second):
			t.Fatal("the owed decisions did not reach the agent with its new turn")
		}
	}
	next, err := c.Request(t.Context(), client.Call{Tool: "bash", Arguments: brokertest.Bash("ls")})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.WantDecision(t, next, messages.OutcomeDeny, messages.ReasonHardStop)
	// The next turn, after the agent heard of it, ends the stop.
	if cleared, err := c.NewTurn(t.Context()); err != nil || !cleared {
		t.Fatalf("the next NewTurn = %v, %v; want the stop cleared", cleared, err)
	}
	next, err = c.Request(t.Context(), client.Call{Tool: "bash", Arguments: brokertest.Bash("ls")})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.WantDecision(t, next, messages.OutcomeAllow, messages.ReasonPolicyAllow)
	counts := auditCounts(t, p, "s-owed", 4)
	for _, k := range []string{"owed-1 rejected", "owed-2 hard_stop"} {
		if counts[k] != 1 {
			t.Errorf("audit records %v: want exactly one %q", counts, k)
		}
	}
}

// The outbox carries out a hard rejection whose stop is gone (removed by
// hand here; a broker of an earlier version's plain new turn could do it
// during an upgrade): it sets the stop again before the agent hears of the
// reject, rejects the sibling hard_stop, and the agent's next call is
// denied hard_stop. Before issue 30 it published the rejection and left
// the session running.
func TestAnOutboxThatFindsAHardRejectionsStopGoneSetsItAgain(t *testing.T) {
	p := outboxPlane(t)
	dev := p.Approver("default")
	c := p.Agent("s-gone", "pod-1", client.WithStatusInterval(time.Hour))
	first := brokertest.Ask(t.Context(), c, "gone-1", "bash", brokertest.Bash("make deploy"))
	second := brokertest.Ask(t.Context(), c, "gone-2", "bash", brokertest.Bash("make release"))
	nextAsks(t, dev, "gone-1", "gone-2")

	store := p.Store()
	deadReplicaHardReject(t, store, "s-gone", "gone-1")
	rdb := p.Redis.Client()
	defer rdb.Close()
	if n, err := rdb.Del(t.Context(), "signoff:{s-gone}:stop").Result(); err != nil || n != 1 {
		t.Fatalf("removing the stop by hand: %d, %v", n, err)
	}

	brokertest.WantDecision(t, first.Wait(t), messages.OutcomeDeny, messages.ReasonRejected)
	brokertest.WantDecision(t, second.Wait(t), messages.OutcomeDeny, messages.ReasonHardStop)
	next, err := c.Request(t.Context(), client.Call{Tool: "bash", Arguments: brokertest.Bash("ls")})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.WantDecision(t, next, messages.OutcomeDeny, messages.ReasonHardStop)
}

// A turn that names the owed hard rejection (messages.TurnRequest.Seen:
// the agent received its decision, whose outbox entry only was not
// acknowledged yet) came after the agent heard of it: it delivers what is
// owed and ends the stop. A turn that names another id does not.
func TestANewTurnThatNamesTheOwedHardRejectEndsTheStop(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Redis: true, EffectLease: time.Minute, OutboxInterval: 100 * time.Millisecond})
	dev := p.Approver("default")
	c := p.Agent("s-seen", "pod-1", client.WithStatusInterval(time.Hour))
	first := brokertest.Ask(t.Context(), c, "seen-1", "bash", brokertest.Bash("make deploy"))
	nextAsks(t, dev, "seen-1")
	store := p.Store()
	deadReplicaHardReject(t, store, "s-seen", "seen-1")
	turn := func(body string) messages.TurnReply {
		t.Helper()
		var rep messages.TurnReply
		if err := json.Unmarshal(p.RawRequest(messages.Subjects{}.Turn("s-seen"), []byte(body)), &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := turn(`{"v":1,"seen":["other-1"]}`); rep.StopCleared {
		t.Fatal("a turn naming another rejection ended the stop of one the agent had not heard of")
	}
	brokertest.WantDecision(t, first.Wait(t), messages.OutcomeDeny, messages.ReasonRejected)
	// Owed again: a second hard rejection the agent received, and names.
	second := brokertest.Ask(t.Context(), c, "seen-2", "bash", brokertest.Bash("make release"))
	brokertest.WantDecision(t, second.Wait(t), messages.OutcomeDeny, messages.ReasonHardStop)
	if rep := turn(`{"v":1}`); !rep.StopCleared {
		t.Fatal("the turn after the agent heard of the rejection did not end the stop")
	}
	rec2 := brokertest.Ask(t.Context(), c, "seen-3", "bash", brokertest.Bash("make deploy"))
	nextAsks(t, dev, "seen-3")
	deadReplicaHardReject(t, store, "s-seen", "seen-3")
	if rep := turn(`{"v":1,"seen":["seen-3"]}`); !rep.StopCleared {
		t.Fatal("a turn naming the owed hard rejection did not end its stop")
	}
	brokertest.WantDecision(t, rec2.Wait(t), messages.OutcomeDeny, messages.ReasonRejected)
	next, err := c.Request(t.Context(), client.Call{Tool: "bash", Arguments: brokertest.Bash("ls")})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.WantDecision(t, next, messages.OutcomeAllow, messages.ReasonPolicyAllow)
}

// deadReplicaHardReject records alice's reject_hard of a pending request
// as a replica that died right after its vote leaves it: the rejection
// and its stop in the store, its effects owed in the outbox.
func deadReplicaHardReject(t *testing.T, store session.Store, sessionID, requestID string) session.Result {
	t.Helper()
	dec := messages.Decision{V: 1, RequestID: requestID, SessionID: sessionID, Tool: "bash", Outcome: messages.OutcomeDeny,
		ReasonCode: messages.ReasonRejected, RejectMode: messages.RejectHard, Reason: "rejected (reject_hard) by alice",
		DecidedBy: messages.Decider{Kind: messages.DeciderApprover, ID: "alice"}, DecidedAt: time.Now().UTC()}
	res, err := store.Decide(t.Context(), sessionID, requestID, session.Vote{ApproverID: "alice", Decision: dec, Stop: "alice rejected bash (" + requestID + ")"})
	if err != nil || !res.Applied {
		t.Fatalf("the dead replica's vote on %s: %+v, %v", requestID, res, err)
	}
	return res
}

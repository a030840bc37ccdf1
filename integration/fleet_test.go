package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/integration/internal/workload"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// The fleet's safety nets on the containers' plane (docs/OPERATIONS.md
// "Operating a fleet"): several agents of one type hitting the suite's
// deny trip its outbreak breaker (workload.Policy, breaker "outbreak":
// agent type outbreak only, so no other scenario's agents count or are
// covered); every covered agent's allowed calls then ask, on whichever
// replica takes them, until an admin resets it. A canary of a candidate
// policy that asks what the live one allows rolls back past its ask
// bound, and the live policy decides again.

// outbreakType is the agent type the suite's breaker and canary select.
const outbreakType = "outbreak"

// rawCall sends one request of agentID (agent type outbreak) through nc
// and returns its receipt.
func rawCall(t *testing.T, nc *nats.Conn, session, agentID, id, cmd string) messages.Receipt {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"command": cmd})
	data, _ := json.Marshal(messages.Request{V: messages.Version, RequestID: id, SessionID: session, AgentID: agentID,
		AgentType: outbreakType, Tool: "bash", Arguments: args})
	reply, err := nc.Request(messages.Subjects{}.Req(session), data, 10*time.Second)
	if err != nil {
		t.Fatalf("%s: %v", id, err)
	}
	var rc messages.Receipt
	if err := json.Unmarshal(reply.Data, &rc); err != nil || rc.RequestID != id {
		t.Fatalf("%s: receipt %s (%v)", id, reply.Data, err)
	}
	return rc
}

// admin sends an admin request and returns its reply; an error reply
// fails the test.
func admin(t *testing.T, nc *nats.Conn, op string, req messages.AdminRequest) messages.AdminReply {
	t.Helper()
	req.V = messages.Version
	data, _ := json.Marshal(req)
	reply, err := nc.Request(messages.Subjects{}.Admin(op), data, 10*time.Second)
	if err != nil {
		t.Fatalf("admin %s: %v", op, err)
	}
	if e, ok := messages.IsErrorReply(reply.Data); ok {
		t.Fatalf("admin %s: %s: %s", op, e.Error.Code, e.Error.Message)
	}
	var rep messages.AdminReply
	if err := json.Unmarshal(reply.Data, &rep); err != nil {
		t.Fatalf("admin %s reply %s: %v", op, reply.Data, err)
	}
	return rep
}

// questionsOf collects the questions of the default team whose request id
// starts with prefix.
func questionsOf(t *testing.T, nc *nats.Conn, prefix string) <-chan messages.ApprovalNeeded {
	t.Helper()
	ch := make(chan messages.ApprovalNeeded, 256)
	sub, err := nc.Subscribe(messages.Subjects{}.Ask("default"), func(m *nats.Msg) {
		var q messages.ApprovalNeeded
		if json.Unmarshal(m.Data, &q) == nil && strings.HasPrefix(q.Request.RequestID, prefix) {
			ch <- q
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return ch
}

func testBreakerTripsAcrossTheFleet(t *testing.T, h *harness) {
	name := h.name("outbreak")
	// Agents on every NATS node; the queue group spreads their requests
	// over the three replicas.
	conns := make([]*nats.Conn, len(h.p.NATS))
	for i := range conns {
		conns[i] = h.p.ConnectVia(t, i+1, fmt.Sprintf("%s-node%d", name, i+1))
	}
	op := conns[0]
	asks := questionsOf(t, op, name)
	t.Cleanup(func() {
		// Leave no trip behind for the next scenarios, whatever happened
		// (not_found: nothing to reset).
		data, _ := json.Marshal(messages.AdminRequest{V: messages.Version, Breaker: "outbreak", By: "integration"})
		_, _ = op.Request(messages.Subjects{}.Admin(messages.AdminOpBreakerReset), data, 10*time.Second)
	})

	// Two distinct agents hit the deny (one of them twice): one short.
	for i, a := range []int{1, 1, 2} {
		rc := rawCall(t, conns[i%len(conns)], fmt.Sprintf("%s-s%d", name, a), fmt.Sprintf("%s-pod%d", name, a),
			fmt.Sprintf("%s-rm-%d", name, i), "rm -rf /srv/outbreak")
		if rc.Decision == nil || rc.Decision.ReasonCode != messages.ReasonPolicyDeny {
			t.Fatalf("pod%d's rm: %+v, want the policy's deny", a, rc)
		}
	}
	time.Sleep(time.Second) // the replicas flush their hits
	if rep := admin(t, op, messages.AdminOpListBreakers, messages.AdminRequest{}); len(rep.Breakers) != 0 {
		t.Fatalf("tripped after two agents: %+v", rep.Breakers)
	}
	if rc := rawCall(t, conns[1], name+"-s9", name+"-pod9", name+"-ls-before", "ls -la /srv"); rc.Decision == nil ||
		rc.Decision.ReasonCode != messages.ReasonPolicyAllow {
		t.Fatalf("an allowed call before the trip: %+v", rc)
	}

	// The third agent trips it.
	rc := rawCall(t, conns[2], name+"-s3", name+"-pod3", name+"-rm-3", "rm -rf /srv/outbreak")
	if rc.Decision == nil || rc.Decision.ReasonCode != messages.ReasonPolicyDeny {
		t.Fatalf("pod3's rm: %+v", rc)
	}
	var trip *messages.BreakerTrip
	for deadline := time.Now().Add(10 * time.Second); trip == nil; time.Sleep(100 * time.Millisecond) {
		for _, b := range admin(t, op, messages.AdminOpListBreakers, messages.AdminRequest{}).Breakers {
			if b.Breaker == "outbreak" {
				trip = &b
			}
		}
		if trip == nil && time.Now().After(deadline) {
			t.Fatal("the breaker did not trip within 10 s of the third agent's deny")
		}
	}
	if trip.Rule != "bash(rm *)" || len(trip.Agents) != 3 {
		t.Fatalf("trip %+v: want the rm rule and three agents", trip)
	}
	t.Logf("tripped: %s", trip.Describe())

	// A covered agent that never hit the deny: its allowed calls ask,
	// naming the breaker, on every replica that takes them (within a
	// second of the trip). An agent of another type is untouched.
	time.Sleep(time.Second)
	const probes = 12
	for i := range probes {
		id := fmt.Sprintf("%s-ls-tripped-%d", name, i)
		rc := rawCall(t, conns[i%len(conns)], name+"-s9", name+"-pod9", id, "ls -la /srv")
		if rc.State != messages.StatePending {
			t.Fatalf("%s: a covered agent's allowed call got %+v, want a question", id, rc)
		}
	}
	for got := 0; got < probes; got++ {
		select {
		case q := <-asks:
			if q.Risk.Breaker != "outbreak" {
				t.Errorf("%s: question risk %+v does not name the breaker", q.Request.RequestID, q.Risk)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d questions of the covered agent seen", got, probes)
		}
	}
	other := messages.Request{V: messages.Version, RequestID: name + "-other", SessionID: name + "-other", AgentID: name + "-other",
		Tool: "bash", Arguments: json.RawMessage(`{"command":"ls -la /srv"}`)}
	data, _ := json.Marshal(other)
	reply, err := op.Request(messages.Subjects{}.Req(other.SessionID), data, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var orc messages.Receipt
	if err := json.Unmarshal(reply.Data, &orc); err != nil || orc.Decision == nil || orc.Decision.ReasonCode != messages.ReasonPolicyAllow {
		t.Fatalf("an agent the breaker does not select: %s", reply.Data)
	}
	served := map[string]bool{}
	for _, b := range h.p.Brokers {
		lines, err := b.LogLines(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if strings.Contains(l, "approval needed") && strings.Contains(l, name+"-ls-tripped-") {
				served[b.Name] = true
			}
		}
	}
	t.Logf("the covered agent's questions were opened by %d replicas", len(served))

	// Reset: the agent's allowed calls are allowed again.
	admin(t, op, messages.AdminOpBreakerReset, messages.AdminRequest{Breaker: "outbreak", By: "integration"})
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		allowed := 0
		for i := range len(conns) * 2 {
			id := fmt.Sprintf("%s-ls-reset-%d-%d", name, time.Now().UnixNano()%1e6, i)
			if rc := rawCall(t, conns[i%len(conns)], name+"-s9", name+"-pod9", id, "ls -la /srv"); rc.Decision != nil &&
				rc.Decision.ReasonCode == messages.ReasonPolicyAllow {
				allowed++
			}
		}
		if allowed == len(conns)*2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the reset, %d of %d allowed calls were allowed", allowed, len(conns)*2)
		}
	}
}

func testCanaryRollsBack(t *testing.T, h *harness) {
	name := h.name("canary")
	op := h.p.ConnectVia(t, 1, name+"-admin")
	agents := make([]*nats.Conn, len(h.p.NATS))
	for i := range agents {
		agents[i] = h.p.ConnectVia(t, i+1, fmt.Sprintf("%s-node%d", name, i+1))
	}
	t.Cleanup(func() {
		data, _ := json.Marshal(messages.AdminRequest{V: messages.Version})
		_, _ = op.Request(messages.Subjects{}.Admin(messages.AdminOpClearCanary), data, 10*time.Second)
	})
	live := admin(t, op, messages.AdminOpPolicyVersion, messages.AdminRequest{})
	// The candidate asks what the live policy allows.
	candidate := strings.Replace(workload.Policy, `{ rule: "bash(ls *)", action: allow }`, `{ rule: "bash(ls *)", action: ask }`, 1)
	if candidate == workload.Policy {
		t.Fatal("the suite's policy no longer allows bash(ls *): update the candidate")
	}
	set := admin(t, op, messages.AdminOpSetCanary, messages.AdminRequest{Canary: &messages.CanarySpec{
		Policy: candidate, SharePercent: 100, Selector: &messages.Selector{AgentType: outbreakType},
		MaxAskRate: 0.3, MaxDenyRate: 0.5, MinRequests: 9, WindowMS: time.Minute.Milliseconds()}})
	c := set.Canary.Canary
	if c == nil || c.State != messages.CanaryActive {
		t.Fatalf("set_canary: %+v", set.Canary)
	}
	time.Sleep(time.Second) // every replica's watch delivers it

	// Covered calls ask, on whichever replica takes them, until the ask
	// rate past 9 decisions makes one replica roll it back.
	asked := 0
	var st *messages.CanaryStatus
	for i := 0; ; i++ {
		id := fmt.Sprintf("%s-ls-%d", name, i)
		rc := rawCall(t, agents[i%len(agents)], fmt.Sprintf("%s-s%d", name, i), name+"-pod", id, "ls -la /srv")
		if rc.State == messages.StatePending {
			asked++
		}
		st = admin(t, op, messages.AdminOpCanaryStatus, messages.AdminRequest{}).Canary
		if st.Canary != nil && st.Canary.State == messages.CanaryRolledBack {
			break
		}
		if i > 60 {
			t.Fatalf("no rollback after %d calls (%d asked): %+v", i+1, asked, st.Canary)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if asked < 3 {
		t.Errorf("%d covered calls asked before the rollback, want the candidate's asks counted", asked)
	}
	rb := st.Canary
	if rb.ID != c.ID || rb.Rollback == nil || !strings.Contains(rb.Rollback.Reason, "ask rate") {
		t.Fatalf("rolled back %+v, want %s rolled back for its ask rate", rb, c.ID)
	}
	t.Logf("rolled back by %s after %d asks: %s", rb.Rollback.Replica, asked, rb.Rollback.Reason)

	// Within a second every replica decides by the live policy again.
	time.Sleep(time.Second)
	for i := range 9 {
		id := fmt.Sprintf("%s-after-%d", name, i)
		rc := rawCall(t, agents[i%len(agents)], fmt.Sprintf("%s-after-s%d", name, i), name+"-pod", id, "ls -la /srv")
		if rc.Decision == nil || rc.Decision.ReasonCode != messages.ReasonPolicyAllow {
			t.Fatalf("%s after the rollback: %+v, want the live policy's allow", id, rc)
		}
		if live.Policy != nil && rc.Decision.PolicyVersion != live.Policy.PolicyVersion {
			t.Errorf("%s decided by policy %s, want the live %s", id, rc.Decision.PolicyVersion, live.Policy.PolicyVersion)
		}
	}
}

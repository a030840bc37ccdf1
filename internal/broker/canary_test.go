package broker_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/signoff-dev/signoff/internal/broker"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// canaryAsksLs is the live test policy with `ls` asked instead of allowed.
var canaryAsksLs = strings.ReplaceAll(brokertest.DefaultPolicy, `action: allow`, `action: ask`)

// adminOp sends an admin request and decodes the reply; an error reply
// fails the test.
func adminOp(t *testing.T, p *brokertest.Plane, op string, req messages.AdminRequest) messages.AdminReply {
	t.Helper()
	req.V = messages.Version
	data, _ := json.Marshal(req)
	out := p.RawRequest(p.Subjects.Admin(op), data)
	if e, ok := messages.IsErrorReply(out); ok {
		t.Fatalf("%s: %s: %s", op, e.Error.Code, e.Error.Message)
	}
	var rep messages.AdminReply
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%s reply %s: %v", op, out, err)
	}
	return rep
}

// rawLs sends `ls` as a new request of session and returns the receipt.
func rawLs(t *testing.T, p *brokertest.Plane, session, id string) messages.Receipt {
	t.Helper()
	data, _ := json.Marshal(messages.Request{V: messages.Version, RequestID: id, SessionID: session, AgentID: "a1",
		CallID: id, Tool: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)})
	out := p.RawRequest(p.Subjects.Req(session), data)
	var rc messages.Receipt
	if err := json.Unmarshal(out, &rc); err != nil || rc.RequestID != id {
		t.Fatalf("receipt of %s: %s (%v)", id, out, err)
	}
	return rc
}

// canaryEvents returns the canary events of the audit stream.
func canaryEvents(t *testing.T, p *brokertest.Plane) []messages.CanaryEvent {
	t.Helper()
	js, err := jetstream.New(p.NATS.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	cons, err := js.OrderedConsumer(t.Context(), messages.AuditStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{p.Subjects.Audit("canary") + ".>"}})
	if err != nil {
		t.Fatal(err)
	}
	batch, err := cons.FetchNoWait(100)
	if err != nil {
		t.Fatal(err)
	}
	var out []messages.CanaryEvent
	for m := range batch.Messages() {
		var ev messages.CanaryEvent
		if err := json.Unmarshal(m.Data(), &ev); err != nil {
			t.Fatalf("canary event %s: %v", m.Data(), err)
		}
		out = append(out, ev)
	}
	return out
}

func TestACanaryThatAsksPastItsBoundRollsBackOnceAndTheLivePolicyDecidesAgain(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Redis: true, Replicas: 2})
	live := p.Policy.Version()
	set := adminOp(t, p, messages.AdminOpSetCanary, messages.AdminRequest{Canary: &messages.CanarySpec{
		Policy: canaryAsksLs, SharePercent: 100, MaxAskRate: 0.3, MaxDenyRate: 0.5, MinRequests: 8, WindowMS: time.Minute.Milliseconds()}})
	c := set.Canary.Canary
	if c == nil || c.State != messages.CanaryActive || c.PolicyVersion == live {
		t.Fatalf("set_canary: %+v", set)
	}
	time.Sleep(300 * time.Millisecond) // every replica's watch delivers it

	// Under the canary, both replicas judge `ls` by the candidate: it asks.
	for i := range 8 {
		id := fmt.Sprintf("r-canary-%d", i)
		if rc := rawLs(t, p, fmt.Sprintf("s-canary-%d", i), id); rc.State != messages.StatePending {
			t.Fatalf("%s under the canary: %+v, want pending (the candidate asks)", id, rc)
		}
	}

	// Past 8 decisions at an ask rate of 1 > 0.3: one replica rolls back.
	var st *messages.CanaryStatus
	for deadline := time.Now().Add(5 * time.Second); ; {
		st = adminOp(t, p, messages.AdminOpCanaryStatus, messages.AdminRequest{}).Canary
		if (st.Canary != nil && st.Canary.State == messages.CanaryRolledBack) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	rb := st.Canary
	if rb == nil || rb.State != messages.CanaryRolledBack || rb.Rollback == nil || rb.ID != c.ID {
		t.Fatalf("canary status %+v, want %s rolled back", st.Canary, c.ID)
	}
	if rb.Rollback.Counts.Ask < 8 || !strings.Contains(rb.Rollback.Reason, "ask rate") {
		t.Errorf("rollback %+v: want the ask rate named, 8 asks counted", rb.Rollback)
	}

	// Within a second every replica decides by the live policy again.
	time.Sleep(time.Second)
	for i := range 10 {
		id := fmt.Sprintf("r-after-%d", i)
		rc := rawLs(t, p, fmt.Sprintf("s-canary-%d", i), id)
		if rc.Decision == nil || rc.Decision.Outcome != messages.OutcomeAllow || rc.Decision.PolicyVersion != live {
			t.Fatalf("%s after the rollback: %+v, want allowed by the live policy %s", id, rc, live)
		}
	}
	if rec := p.LastAudit("s-canary-0"); rec.Canary != nil {
		t.Errorf("audit record after the rollback marked %+v", rec.Canary)
	}

	// One replica rolled it back: one audit event (each replica's would
	// have its own message id), naming the replica the canary names.
	var evs []messages.CanaryEvent
	for deadline := time.Now().Add(5 * time.Second); len(evs) == 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		evs = canaryEvents(t, p)
	}
	time.Sleep(500 * time.Millisecond)
	if evs = canaryEvents(t, p); len(evs) != 1 {
		t.Fatalf("%d canary events in the audit stream, want 1: %+v", len(evs), evs)
	}
	if ev := evs[0]; ev.Event != messages.CanaryRolledBack || ev.Canary.ID != c.ID || ev.Canary.Rollback == nil ||
		ev.Canary.Rollback.Replica != rb.Rollback.Replica {
		t.Errorf("canary event %+v, want the rollback of %s by %s", ev, c.ID, rb.Rollback.Replica)
	}
}

func TestDecisionsUnderTheCanaryCarryItsPolicyVersionAndMark(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	deny := strings.ReplaceAll(brokertest.DefaultPolicy, `action: allow`, `action: deny`)
	cand, err := policy.Parse([]byte(deny), "c.yaml")
	if err != nil {
		t.Fatal(err)
	}
	set := adminOp(t, p, messages.AdminOpSetCanary, messages.AdminRequest{Canary: &messages.CanarySpec{
		Policy: deny, SharePercent: 50, MaxAskRate: 1, MaxDenyRate: 1, MinRequests: 1, WindowMS: time.Minute.Milliseconds()}})
	c := set.Canary.Canary
	time.Sleep(300 * time.Millisecond)
	in, out := 0, 0
	for i := range 40 {
		session := fmt.Sprintf("s-mark-%d", i)
		rc := rawLs(t, p, session, fmt.Sprintf("r-mark-%d", i))
		covered := messages.InShare(c.ID, session, 50)
		rec := p.LastAudit(session)
		switch {
		case covered:
			in++
			if rc.Decision.Outcome != messages.OutcomeDeny || rc.Decision.PolicyVersion != cand.Version() ||
				rec.Canary == nil || rec.Canary.ID != c.ID || rec.Canary.PolicyVersion != cand.Version() {
				t.Errorf("%s in the canary: decision %+v, audit mark %+v; want denied by %s and marked", session, rc.Decision, rec.Canary, cand.Version())
			}
		default:
			out++
			if rc.Decision.Outcome != messages.OutcomeAllow || rc.Decision.PolicyVersion != p.Policy.Version() || rec.Canary != nil {
				t.Errorf("%s out of the canary: decision %+v, audit mark %+v; want allowed by the live policy, unmarked", session, rc.Decision, rec.Canary)
			}
		}
	}
	if in == 0 || out == 0 {
		t.Fatalf("%d sessions in, %d out of a 50%% canary: want some of each", in, out)
	}
}

func TestACanaryThatCannotBeReadLeavesTheLivePolicyDeciding(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	js, err := jetstream.New(p.NATS.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.KeyValue(t.Context(), broker.ModesBucket)
	if err != nil {
		t.Fatal(err)
	}
	// A canary written by hand whose policy does not parse, then one that
	// does not decode: neither applies.
	bad, _ := json.Marshal(messages.Canary{Spec: messages.CanarySpec{Policy: "rules: [", SharePercent: 100, MaxAskRate: 1,
		MaxDenyRate: 1, MinRequests: 1, WindowMS: 60000}, ID: "c1", State: messages.CanaryActive, SetAt: time.Now()})
	for i, v := range [][]byte{bad, []byte("{not json")} {
		if _, err := kv.Put(t.Context(), "canary.policy", v); err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond)
		id := fmt.Sprintf("r-bad-%d", i)
		if rc := rawLs(t, p, "s-bad", id); rc.Decision == nil || rc.Decision.Outcome != messages.OutcomeAllow || rc.Decision.PolicyVersion != p.Policy.Version() {
			t.Errorf("%s with an unreadable canary: %+v, want allowed by the live policy", id, rc)
		}
		if st := adminOp(t, p, messages.AdminOpCanaryStatus, messages.AdminRequest{}).Canary; st == nil || st.Canary != nil {
			t.Errorf("canary status with an unreadable canary: %+v, want none", st)
		}
	}
}

func TestSetCanaryRefusesABadCandidateAndChangesNothing(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	for _, spec := range []messages.CanarySpec{
		{Policy: "rules: [", SharePercent: 10, MaxAskRate: 0.3, MaxDenyRate: 0.1, MinRequests: 5, WindowMS: 60000},
		{Policy: canaryAsksLs, SharePercent: 0, MaxAskRate: 0.3, MaxDenyRate: 0.1, MinRequests: 5, WindowMS: 60000},
		{Policy: canaryAsksLs, SharePercent: 10, MaxAskRate: 1.5, MaxDenyRate: 0.1, MinRequests: 5, WindowMS: 60000},
	} {
		data, _ := json.Marshal(messages.AdminRequest{V: messages.Version, Canary: &spec})
		out := p.RawRequest(p.Subjects.Admin(messages.AdminOpSetCanary), data)
		if e, ok := messages.IsErrorReply(out); !ok || e.Error.Code != messages.CodeInvalidRequest {
			t.Errorf("set_canary %+v: %s, want invalid_request", spec, out)
		}
	}
	if st := adminOp(t, p, messages.AdminOpCanaryStatus, messages.AdminRequest{}).Canary; st == nil || st.Canary != nil {
		t.Errorf("canary after refused sets: %+v, want none", st)
	}
}

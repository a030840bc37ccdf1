package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/signoff-dev/signoff/internal/engine"
	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
)

// The engine's tests run the procedure on a memory store with recording
// ports: no NATS server, no Redis. The broker's end-to-end tests
// (internal/broker) run the same procedure through NATS and Redis.

const testPolicy = `
mode: auto-edit
rules:
  - { rule: "bash(ls)", action: allow }
  - { rule: "bash(ls *)", action: allow }
  - { rule: "bash(rm -rf /*)", action: deny }
  - { rule: "bash(kubectl *)", action: ask, route: oncall }
teams:
  default: { members: [alice, bob, carol] }
  oncall:  { members: [carol, dave, erin], approvals_required: 2 }
`

// recorder is the engine's Publisher, Audit and Acker: it keeps what the
// engine sent.
type recorder struct {
	mu        sync.Mutex
	asks      []messages.ApprovalNeeded
	decisions []messages.Decision
	resolved  []messages.Resolved
	enqueued  []messages.Decision
	appended  []messages.Decision
	grants    []messages.GrantEvent
	acked     []string

	strict    bool
	appendErr error // every Append fails with it
}

func (r *recorder) Ask(team string, q *messages.ApprovalNeeded) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.asks = append(r.asks, *q)
	return nil
}

func (r *recorder) Decision(dec *messages.Decision, _ string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.decisions = append(r.decisions, *dec)
	return nil
}

func (r *recorder) Resolved(res *messages.Resolved) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.resolved = append(r.resolved, *res)
	return nil
}

func (r *recorder) Enqueue(_ messages.Request, dec messages.Decision, _ messages.Risk) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.enqueued = append(r.enqueued, dec)
}

func (r *recorder) Append(_ context.Context, _ messages.Request, dec messages.Decision, _ messages.Risk, _ []messages.EscalationRun) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.appendErr != nil {
		return r.appendErr
	}
	r.appended = append(r.appended, dec)
	return nil
}

func (r *recorder) Strict() bool { return r.strict }

func (r *recorder) Grant(ev *messages.GrantEvent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.grants = append(r.grants, *ev)
}

func (r *recorder) Ack(_ context.Context, rec *session.Record) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acked = append(r.acked, rec.ID)
}

// decisionFor is the last decision published for request id.
func (r *recorder) decisionFor(id string) (messages.Decision, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.decisions) - 1; i >= 0; i-- {
		if r.decisions[i].RequestID == id {
			return r.decisions[i], true
		}
	}
	return messages.Decision{}, false
}

type noModes struct{}

func (noModes) ModeFor(string, string) policy.Mode { return "" }

type fixedPolicy struct{ p *policy.Policy }

func (f fixedPolicy) Current() *policy.Policy { return f.p }

// rig is one engine on a memory store.
type rig struct {
	eng   *engine.Engine
	store session.Store
	rec   *recorder
	m     engine.Metrics
	logs  *testenv.LogBuffer // the engine's log
}

func newMetrics() engine.Metrics {
	grants := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "grants"}, []string{"event"})
	return engine.Metrics{
		Decisions:   prometheus.NewCounterVec(prometheus.CounterOpts{Name: "decisions"}, []string{"outcome", "reason"}),
		Pending:     prometheus.NewGauge(prometheus.GaugeOpts{Name: "pending"}),
		StoreErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "store_errors"}, []string{"op"}),
		Grants:      grants,
		GrantsUsed:  grants.WithLabelValues("used"),
		FirstAnswer: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "first_answer"}, []string{"team"}),
	}
}

// newRig returns an engine deciding by the policy yaml on store (a new
// memory store when nil); rec's settings apply from the start.
func newRig(t *testing.T, yaml string, store session.Store, rec *recorder) *rig {
	t.Helper()
	return newRigWith(t, yaml, store, rec, nil)
}

// newRigWith is newRig with more of the engine's config set by more (the
// breakers, the fleet stops) before the engine is built.
func newRigWith(t *testing.T, yaml string, store session.Store, rec *recorder, more func(*engine.Config)) *rig {
	t.Helper()
	pol, err := policy.Parse([]byte(yaml), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if store == nil {
		store = memstore.New(memstore.Options{})
	}
	if rec == nil {
		rec = &recorder{}
	}
	m := newMetrics()
	logs := &testenv.LogBuffer{}
	cfg := engine.Config{
		Requests: store, Sessions: store, Grants: store,
		Policy: fixedPolicy{pol}, Modes: noModes{},
		Publisher: rec, Audit: rec, Acker: rec, Metrics: m,
		Logger:       slog.New(slog.NewTextHandler(logs, nil)),
		Replica:      "replica-1",
		StoreTimeout: 2 * time.Second,
	}
	if more != nil {
		more(&cfg)
	}
	eng, err := engine.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	return &rig{eng: eng, store: store, rec: rec, m: m, logs: logs}
}

func bash(session, id, command string) *messages.Request {
	args, _ := json.Marshal(map[string]string{"command": command})
	return &messages.Request{V: messages.Version, RequestID: id, SessionID: session, AgentID: "pod-1",
		RequestedBy: "alice", Tool: "bash", Arguments: args}
}

// receiptOf is res's receipt.
func receiptOf(res engine.Result) messages.Receipt { return res.Receipt() }

// request runs r.eng.Request and Finish, as the broker does.
func (r *rig) request(t *testing.T, req *messages.Request) engine.Result {
	t.Helper()
	res, err := r.eng.Request(t.Context(), req)
	if err != nil {
		t.Fatalf("Request %s: %v", req.RequestID, err)
	}
	r.eng.Finish(req, &res)
	return res
}

// shown is the digest of the last question announced for request id: what
// an approver of it was shown, and so what their response names.
func (r *recorder) shown(t *testing.T, id string) string {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.asks) - 1; i >= 0; i-- {
		if q := r.asks[i]; q.Request.RequestID == id {
			return q.Digest
		}
	}
	t.Fatalf("no question was announced for %s", id)
	return ""
}

func (r *rig) respond(t *testing.T, req *messages.Request, approver string, approved bool, scope messages.Scope, mode messages.RejectMode) messages.RespondReply {
	t.Helper()
	rep, err := r.eng.Respond(t.Context(), &messages.Response{V: messages.Version, RequestID: req.RequestID, SessionID: req.SessionID,
		Approver: messages.Approver{ID: approver, Channel: "test"}, Approved: approved, Scope: scope, RejectMode: mode, Digest: r.rec.shown(t, req.RequestID)})
	if err != nil {
		t.Fatalf("Respond %s by %s: %v", req.RequestID, approver, err)
	}
	return rep
}

func TestAutomaticDecisionsAreRepliedAndRecordedOnce(t *testing.T) {
	tests := []struct {
		name    string
		req     *messages.Request
		code    messages.ReasonCode
		outcome messages.Outcome
	}{
		{"a rule's allow is policy_allow", bash("s-1", "r-1", "ls -la"), messages.ReasonPolicyAllow, messages.OutcomeAllow},
		{"a rule's deny is policy_deny", bash("s-1", "r-2", "rm -rf /etc"), messages.ReasonPolicyDeny, messages.OutcomeDeny},
		{"the mode's allow of a read is mode_allow",
			&messages.Request{V: 1, RequestID: "r-3", SessionID: "s-1", Tool: "read_file", Arguments: json.RawMessage(`{"path":"README.md"}`)},
			messages.ReasonModeAllow, messages.OutcomeAllow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, testPolicy, nil, nil)
			res := r.request(t, tc.req)
			dec := res.Receipt().Decision
			if res.Receipt().State != messages.StateDecided || dec == nil || dec.ReasonCode != tc.code || dec.Outcome != tc.outcome {
				t.Fatalf("receipt %+v, want %s %s", res.Receipt(), tc.outcome, tc.code)
			}
			if res.Label != string(tc.outcome) {
				t.Errorf("label %q, want %q", res.Label, tc.outcome)
			}
			if dec.DecidedBy.ID != "replica-1" || dec.PolicyVersion == "" || dec.Tool != tc.req.Tool {
				t.Errorf("decision %+v: want decided by the replica's policy, with its version and the tool", dec)
			}
			if len(r.rec.enqueued) != 1 || r.rec.enqueued[0].RequestID != tc.req.RequestID {
				t.Errorf("audit records %+v, want one for %s", r.rec.enqueued, tc.req.RequestID)
			}
			if got := testutil.ToFloat64(r.m.Decisions.WithLabelValues(string(tc.outcome), string(tc.code))); got != 1 {
				t.Errorf("decisions{%s,%s} = %v, want 1", tc.outcome, tc.code, got)
			}
			// Automatic decisions are not stored: nothing to find later.
			if _, err := r.store.Get(t.Context(), tc.req.SessionID, tc.req.RequestID); !errors.Is(err, session.ErrNotFound) {
				t.Errorf("stored an automatic decision: %v", err)
			}
		})
	}
}

func TestAnAskIsStoredPendingAndAnnouncedToItsTeam(t *testing.T) {
	r := newRig(t, testPolicy, nil, nil)
	req := bash("s-ask", "r-1", "make deploy")
	res := r.request(t, req)
	if res.Receipt().State != messages.StatePending || res.Label != "pending" || res.Receipt().ExpiresAt.IsZero() {
		t.Fatalf("receipt %+v (label %s), want pending with an expiry", res.Receipt(), res.Label)
	}
	if len(r.rec.asks) != 1 || r.rec.asks[0].Team != "default" || r.rec.asks[0].Request.RequestID != "r-1" {
		t.Fatalf("asks %+v, want one to default", r.rec.asks)
	}
	rec, err := r.store.Get(t.Context(), "s-ask", "r-1")
	if err != nil || rec.State != messages.StatePending {
		t.Fatalf("stored %+v, %v; want pending", rec, err)
	}
	// A retry gets the same receipt and asks again (devices key questions
	// by request id); it creates nothing new.
	again := r.request(t, req)
	if again.Receipt().State != messages.StatePending || again.Label != "retry" || len(r.rec.asks) != 2 {
		t.Fatalf("retry: %+v label %s, %d asks", again.Receipt(), again.Label, len(r.rec.asks))
	}
	// A retry of the id with other content is a conflict, and changes nothing.
	_, err = r.eng.Request(t.Context(), bash("s-ask", "r-1", "make destroy"))
	var fe *messages.FieldError
	if !errors.As(err, &fe) || fe.Field != "request_id" {
		t.Fatalf("conflicting retry: %v, want a request_id field error", err)
	}
}

// A standing answer approves the call its card showed and later calls:
// another call the new grant covers that was already waiting keeps its own
// card (red team AP F7: Session on a SELECT's card ran a DROP TABLE of the
// same tool that was waiting in the approver's queue), and so does the
// same call from another agent that says the same session (AP F2).
func TestASessionApprovalCascadesOnlyTheSameCall(t *testing.T) {
	r := newRig(t, testPolicy, nil, nil)
	query := func(id, agent, sql string) *messages.Request {
		args, _ := json.Marshal(map[string]string{"sql": sql})
		return &messages.Request{V: messages.Version, RequestID: id, SessionID: "s-db", AgentID: agent,
			RequestedBy: "alice", Tool: "mcp__db__query", Arguments: args}
	}
	selectOne := query("q-1", "pod-1", "SELECT count(*) FROM orders")
	drop := query("q-2", "pod-1", "DROP TABLE orders")
	again := query("q-3", "pod-1", "SELECT count(*) FROM orders")
	other := query("q-4", "pod-2", "SELECT count(*) FROM orders")
	for _, q := range []*messages.Request{selectOne, drop, again, other} {
		r.request(t, q)
	}
	if rep := r.respond(t, selectOne, "bob", true, messages.ScopeSession, ""); !rep.Applied {
		t.Fatalf("approval %+v", rep)
	}
	if dec, ok := r.rec.decisionFor("q-3"); !ok || dec.ReasonCode != messages.ReasonCascade {
		t.Errorf("the same call, waiting: %+v (%v), want a cascade", dec, ok)
	}
	for _, id := range []string{"q-2", "q-4"} {
		if dec, ok := r.rec.decisionFor(id); ok {
			t.Errorf("%s was decided by the approval of another card: %+v", id, dec)
		}
	}
	// The grant covers the session's later calls of the tool.
	later := r.request(t, query("q-5", "pod-1", "SELECT 1"))
	if d := later.Receipt().Decision; d == nil || d.ReasonCode != messages.ReasonScopeGrant {
		t.Errorf("a later call: %+v, want a scope_grant allow", later.Receipt())
	}
}

// The cascade decides by the request path's rule (engine.Automatic): an
// approval for the session settles the session's other pending request
// of the same command, and the next such call is allowed by the grant.
func TestASessionApprovalCascadesAndAllowsTheNextCall(t *testing.T) {
	r := newRig(t, testPolicy, nil, nil)
	first, second := bash("s-g", "r-1", "make build"), bash("s-g", "r-2", "make build")
	r.request(t, first)
	r.request(t, second)
	rep := r.respond(t, first, "bob", true, messages.ScopeSession, "")
	if !rep.Applied || rep.State != messages.StateApproved || rep.Decision == nil || rep.Decision.Scope != messages.ScopeSession {
		t.Fatalf("approval reply %+v, want applied with scope session", rep)
	}
	dec, ok := r.rec.decisionFor("r-2")
	if !ok || dec.ReasonCode != messages.ReasonCascade || dec.DecidedBy.ID != "bob" {
		t.Fatalf("r-2's decision %+v (%v), want cascade by bob", dec, ok)
	}
	third := r.request(t, bash("s-g", "r-3", "make build"))
	if d := third.Receipt().Decision; d == nil || d.ReasonCode != messages.ReasonScopeGrant || d.Outcome != messages.OutcomeAllow {
		t.Fatalf("r-3: %+v, want a scope_grant allow", third.Receipt())
	}
	if got := testutil.ToFloat64(r.m.GrantsUsed); got != 1 {
		t.Errorf("grants used %v, want 1", got)
	}
	// The grant is not the requester's own: alice asked, so her approval
	// could not have granted it, and bob's counts for her calls only
	// because he is not their requester.
	if len(r.rec.grants) == 0 || r.rec.grants[0].Event != messages.GrantCreated {
		t.Errorf("grant events %+v, want the grant's creation", r.rec.grants)
	}
}

func TestResponsesThatMayNotDecideAreRefusedAndChangeNothing(t *testing.T) {
	r := newRig(t, testPolicy, nil, nil)
	req := bash("s-r", "r-1", "make deploy")
	r.request(t, req)
	for _, tc := range []struct{ name, approver string }{
		{"the requester may not approve their own call", "alice"},
		{"an approver outside the routed team may not answer", "mallory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := r.respond(t, req, tc.approver, true, messages.ScopeOnce, "")
			if rep.Applied || rep.Reason == "" {
				t.Fatalf("reply %+v, want refused with a reason", rep)
			}
			rec, err := r.store.Get(t.Context(), "s-r", "r-1")
			if err != nil || rec.State != messages.StatePending {
				t.Fatalf("after a refused response: %+v, %v; want still pending", rec, err)
			}
		})
	}
	if _, ok := r.rec.decisionFor("r-1"); ok {
		t.Fatal("a refused response published a decision")
	}
}

func TestAHardRejectStopsTheSession(t *testing.T) {
	r := newRig(t, testPolicy, nil, nil)
	first, second := bash("s-h", "r-1", "make a"), bash("s-h", "r-2", "make b")
	r.request(t, first)
	r.request(t, second)
	rep := r.respond(t, first, "bob", false, "", messages.RejectHard)
	if !rep.Applied || rep.State != messages.StateRejected {
		t.Fatalf("reject reply %+v", rep)
	}
	dec, ok := r.rec.decisionFor("r-2")
	if !ok || dec.ReasonCode != messages.ReasonHardStop || dec.RejectMode != messages.RejectHard {
		t.Fatalf("r-2 after the stop: %+v (%v), want hard_stop", dec, ok)
	}
	// Even what the policy allows is denied until a new turn.
	res := r.request(t, bash("s-h", "r-3", "ls"))
	if d := res.Receipt().Decision; d == nil || d.ReasonCode != messages.ReasonHardStop {
		t.Fatalf("r-3: %+v, want hard_stop", res.Receipt())
	}
	// The pending one and the later one read the same stop signal.
	if dec.Reason != res.Receipt().Decision.Reason {
		t.Errorf("hard_stop reasons differ: %q / %q", dec.Reason, res.Receipt().Decision.Reason)
	}
}

// failingLookup is a store whose Lookup fails: the engine cannot read the
// session's stop signal or grants.
type failingLookup struct{ session.Store }

func (failingLookup) Lookup(context.Context, session.LookupQuery) (session.Lookup, error) {
	return session.Lookup{}, errors.New("connection refused")
}

func TestAStoreThatCannotBeReadDeniesEvenWhatThePolicyAllows(t *testing.T) {
	r := newRig(t, testPolicy, failingLookup{memstore.New(memstore.Options{})}, nil)
	res := r.request(t, bash("s-f", "r-1", "ls"))
	d := res.Receipt().Decision
	if d == nil || d.Outcome != messages.OutcomeDeny || d.ReasonCode != messages.ReasonUnavailable {
		t.Fatalf("receipt %+v, want an unavailable deny", res.Receipt())
	}
	if got := testutil.ToFloat64(r.m.StoreErrors.WithLabelValues("lookup")); got != 1 {
		t.Errorf("store errors{lookup} = %v, want 1", got)
	}
}

func TestStrictAuditWithholdsAnAllowItCannotRecord(t *testing.T) {
	rec := &recorder{strict: true, appendErr: errors.New("no responders")}
	r := newRig(t, testPolicy, nil, rec)
	res := r.request(t, bash("s-a", "r-1", "ls"))
	d := res.Receipt().Decision
	if d == nil || d.Outcome != messages.OutcomeDeny || d.ReasonCode != messages.ReasonUnavailable {
		t.Fatalf("receipt %+v, want the allow withheld as an unavailable deny", res.Receipt())
	}
	// The deny is audited as usual, asynchronously.
	if len(rec.enqueued) != 1 || rec.enqueued[0].ReasonCode != messages.ReasonUnavailable {
		t.Errorf("enqueued %+v, want the deny", rec.enqueued)
	}
	// A deny does not wait for the stream.
	rec.appendErr = nil
	res = r.request(t, bash("s-a", "r-2", "rm -rf /etc"))
	if d := res.Receipt().Decision; d == nil || d.ReasonCode != messages.ReasonPolicyDeny || len(rec.appended) != 0 {
		t.Fatalf("deny: %+v, appended %d; want policy_deny without an acknowledged append", res.Receipt(), len(rec.appended))
	}
}

func TestCancelSettlesTheSessionsPendingRequests(t *testing.T) {
	r := newRig(t, testPolicy, nil, nil)
	r.request(t, bash("s-c", "r-1", "make a"))
	r.request(t, bash("s-c", "r-2", "make b"))
	ids, err := r.eng.Cancel(t.Context(), "s-c", nil, "agent shutting down")
	if err != nil || len(ids) != 2 {
		t.Fatalf("Cancel = %v, %v; want both", ids, err)
	}
	for _, id := range []string{"r-1", "r-2"} {
		dec, ok := r.rec.decisionFor(id)
		if !ok || dec.ReasonCode != messages.ReasonCancelled || dec.DecidedBy.Kind != messages.DeciderAgent || dec.Reason != "agent shutting down" {
			t.Errorf("%s: %+v (%v), want cancelled by the agent with its reason", id, dec, ok)
		}
	}
	rc, err := r.eng.Status(t.Context(), "s-c", "r-1")
	if err != nil || rc.Decision == nil || rc.Decision.ReasonCode != messages.ReasonCancelled {
		t.Fatalf("Status = %+v, %v", rc, err)
	}
	_, err = r.eng.Status(t.Context(), "s-c", "never-sent")
	var se *engine.StoreError
	if !errors.As(err, &se) || !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Status of an unknown id: %v, want a not-found StoreError", err)
	}
}

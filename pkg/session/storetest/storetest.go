package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// Harness builds the stores under test.
type Harness struct {
	// New returns a store for one subtest. The subtest owns it and may Close
	// it (the suite closes every store it gets when the subtest ends), so New
	// must not hand out a client that other subtests share. Stores returned
	// by different calls may share one backend.
	New func(t *testing.T) session.Store
	// Retention is the retention the stores were built with. Keep it short
	// (1–2 s): the retention subtests wait a little longer than it.
	Retention time.Duration
	// EffectLease is the outbox lease the stores were built with. Keep it
	// short (100–500 ms): the outbox subtests wait a little longer than it.
	EffectLease time.Duration
}

// Run runs the conformance suite against the stores h builds.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.New == nil {
		t.Fatal("storetest: Harness.New is nil")
	}
	if h.Retention <= 0 || h.Retention > 10*time.Second {
		t.Fatalf("storetest: Harness.Retention is %v: want a short positive retention (1–2 s)", h.Retention)
	}
	if h.EffectLease <= 0 || h.EffectLease > 2*time.Second {
		t.Fatalf("storetest: Harness.EffectLease is %v: want a short positive lease (100–500 ms)", h.EffectLease)
	}
	r := &runner{h: h, prefix: randomToken()}

	// ClaimExpired, ClaimEffects and ClaimSteps claim across the whole
	// backend, so the subtests of the claiming roles must not overlap: they
	// run one by one, and before any parallel subtest starts.
	t.Run("expiry", func(t *testing.T) {
		for _, g := range r.claimingRoles() {
			t.Run(g.role, func(t *testing.T) {
				for _, tc := range g.tests {
					t.Run(tc.name, func(t *testing.T) { tc.fn(t, r.env(t)) })
				}
			})
		}
	})
	t.Run("contract", func(t *testing.T) {
		for _, g := range r.roles() {
			t.Run(g.role, func(t *testing.T) {
				for _, tc := range g.tests {
					t.Run(tc.name, func(t *testing.T) {
						t.Parallel()
						tc.fn(t, r.env(t))
					})
				}
			})
		}
	})
}

// group is the tests of one role of [session.Store] (or of the promises
// that span roles: retention and races), one file each.
type group struct {
	role  string
	tests []test
}

// claimingRoles are the roles whose claims reach across the backend.
func (r *runner) claimingRoles() []group {
	return []group{
		{"Expiry", r.expiryTests()},
		{"Outbox", r.outboxTests()},
		{"Escalations", r.escalationTests()},
	}
}

// roles are the rest, run in parallel.
func (r *runner) roles() []group {
	return []group{
		{"Requests", append(r.requestTests(), r.heldTests()...)},
		// Sessions with Pending: the lists are what stops and cancels act on.
		{"Sessions", slices.Concat(r.sessionTests(), r.stopVoteTests(), r.turnTests())},
		{"Grants", r.grantTests()},
		{"Escalations", r.escalationContractTests()},
		{"Fleet", r.fleetTests()},
		{"Breakers", r.breakerTests()},
		{"Backend", r.backendTests()},
		{"Retention", r.retentionTests()},
		{"Races", r.raceTests()},
	}
}

type test struct {
	name string
	fn   func(t *testing.T, e *env)
}

type runner struct {
	h      Harness
	prefix string
	n      atomic.Uint64
}

// env is what one subtest works with: its own store, seen through its
// roles (a test names the role of each call it makes: e.grants.AddGrant),
// and a generator of names nobody else uses.
type env struct {
	r *runner

	requests    session.Requests
	pending     session.Pending
	grants      session.Grants
	sessions    session.Sessions
	expiry      session.Expiry
	outbox      session.Outbox
	escalations session.Escalations
	fleet       session.Fleet
	breakers    session.Breakers
	backend     session.Backend

	ctx context.Context
	id  string // unique to the subtest
	seq int
}

func (r *runner) env(t *testing.T) *env {
	t.Helper()
	s := r.h.New(t)
	if s == nil {
		t.Fatal("storetest: Harness.New returned nil")
	}
	t.Cleanup(func() { _ = s.Close() })
	return &env{r: r,
		requests: s, pending: s, grants: s, sessions: s, expiry: s, outbox: s, escalations: s, fleet: s, breakers: s, backend: s,
		ctx: t.Context(), id: fmt.Sprintf("%s-%d", r.prefix, r.n.Add(1))}
}

// name returns a fresh identifier with the given role ("sess", "agent",
// "team", "req"), unique across the suite run and valid as a subject token.
func (e *env) name(role string) string {
	e.seq++
	return fmt.Sprintf("%s-%s-%d", role, e.id, e.seq)
}

func randomToken() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "st" + hex.EncodeToString(b)
}

// request returns a valid request of session sess: one approval, one team,
// a TTL long enough never to expire during the suite.
func (e *env) request(sess string) session.Request {
	id := e.name("req")
	return session.Request{
		ID:                id,
		SessionID:         sess,
		AgentID:           "agent-" + sess,
		RequestedBy:       "alice",
		Tool:              "bash",
		Teams:             []string{"team-" + sess},
		ApprovalsRequired: 1,
		TTL:               time.Minute,
		Question:          question(sess, id),
	}
}

// question is a question as the broker stores it, with every kind of field
// filled, so that a store that loses or shares any part of it fails.
func question(sess, id string) messages.ApprovalNeeded {
	return messages.ApprovalNeeded{
		V:    messages.Version,
		Type: "approval_needed",
		Request: messages.Request{
			V: messages.Version, RequestID: id, SessionID: sess, AgentID: "agent-" + sess, RequestedBy: "alice",
			Tool: "Bash", Arguments: json.RawMessage(`{"command":"git push origin main"}`), Cwd: "/work",
		},
		Team: "team-" + sess,
		Risk: messages.Risk{Tier: "high", Rule: "git-push", Reason: "pushes to a remote",
			Subcommands: []messages.Verdict{{Command: "git push origin main", Words: []string{"git", "push"}, Action: "ask"}}},
		BatchRemaining:    []messages.BatchItem{{Tool: "Bash", Arguments: json.RawMessage(`{"command":"ls"}`)}},
		ApprovalsRequired: 1,
		Always:            &messages.AlwaysGrant{Scope: messages.ScopeAlwaysPrefix, Tool: "bash", Patterns: []string{"git push *"}},
	}
}

// create stores req pending (Prepare, then Open) and fails the test unless
// it was created.
func (e *env) create(t *testing.T, req session.Request) *session.Record {
	t.Helper()
	rec, created, err := Create(e.ctx, e.requests, req)
	if err != nil {
		t.Fatalf("Create(%s/%s): %v", req.SessionID, req.ID, err)
	}
	if !created {
		t.Fatalf("Create(%s/%s): created = false for a new request id", req.SessionID, req.ID)
	}
	return rec
}

// Create stores req pending the way the broker does, in two steps:
// Prepare, then Open. It returns the pending record and true; the stored
// record and false when the request id exists (whatever its state); the
// error of either step (ErrStopped when the session is stopped), or the
// refusal of Open. Tests of other packages use it to make a pending request.
func Create(ctx context.Context, s session.Requests, req session.Request) (*session.Record, bool, error) {
	rec, created, err := s.Prepare(ctx, req)
	if err != nil || !created {
		return rec, false, err
	}
	res, err := s.Open(ctx, req.SessionID, req.ID)
	if err != nil {
		return nil, false, err
	}
	if !res.Applied {
		if res.Refusal != nil {
			return res.Record, false, fmt.Errorf("storetest: open %s/%s after prepare: not applied: %w", req.SessionID, req.ID, res.Refusal)
		}
		return res.Record, false, fmt.Errorf("storetest: open %s/%s after prepare: not applied", req.SessionID, req.ID)
	}
	return res.Record, true, nil
}

func (e *env) get(t *testing.T, rec *session.Record) *session.Record {
	t.Helper()
	got, err := e.requests.Get(e.ctx, rec.SessionID, rec.ID)
	if err != nil {
		t.Fatalf("Get(%s/%s): %v", rec.SessionID, rec.ID, err)
	}
	return got
}

func (e *env) now(t *testing.T) time.Time {
	t.Helper()
	now, err := e.backend.Now(e.ctx)
	if err != nil {
		t.Fatalf("Now: %v", err)
	}
	return now
}

// decision returns a distinctive decision for rec, so that tests can tell
// which caller's decision a store kept.
func decision(rec *session.Record, outcome messages.Outcome, code messages.ReasonCode, by string) messages.Decision {
	return messages.Decision{
		V:          messages.Version,
		RequestID:  rec.ID,
		SessionID:  rec.SessionID,
		Tool:       rec.Tool,
		Outcome:    outcome,
		ReasonCode: code,
		Reason:     string(code) + " by " + by,
		Scope:      messages.ScopeOnce,
		Feedback:   "feedback from " + by,
		Answer:     json.RawMessage(`{"by":"` + by + `"}`),
		DecidedBy:  messages.Decider{Kind: messages.DeciderApprover, ID: by, Channel: "web"},
		DecidedAt:  time.Date(2025, 1, 2, 3, 4, 5, 6000, time.UTC),
	}
}

func approve(rec *session.Record, by string) session.Vote {
	return session.Vote{ApproverID: by, Approve: true, Decision: decision(rec, messages.OutcomeAllow, messages.ReasonApproved, by)}
}

func deny(rec *session.Record, by string) session.Vote {
	d := decision(rec, messages.OutcomeDeny, messages.ReasonRejected, by)
	d.RejectMode = messages.RejectSoft
	return session.Vote{ApproverID: by, Approve: false, Decision: d}
}

// sameDecision compares decisions by their wire form, which is what a store
// must preserve.
func sameDecision(a, b *messages.Decision) bool {
	if a == nil || b == nil {
		return a == b
	}
	return bytes.Equal(wire(a), wire(b))
}

func wire(d *messages.Decision) []byte {
	c := *d
	c.DecidedAt = c.DecidedAt.UTC()
	return jsonOf(&c)
}

// jsonOf is v's JSON encoding, which is what a store must preserve.
func jsonOf(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// checkRequest fails the test unless rec carries every field of req.
func checkRequest(t *testing.T, rec *session.Record, req session.Request) {
	t.Helper()
	got, want := rec.Request, req
	if got.ID != want.ID || got.SessionID != want.SessionID || got.AgentID != want.AgentID ||
		got.RequestedBy != want.RequestedBy || got.Tool != want.Tool ||
		got.ApprovalsRequired != want.ApprovalsRequired || got.TTL != want.TTL ||
		!slices.Equal(got.Teams, want.Teams) {
		t.Errorf("stored request = %+v, want %+v", got, want)
	}
	if rec.QuestionErr != nil {
		t.Errorf("stored question of %s/%s unreadable: %v", rec.SessionID, rec.ID, rec.QuestionErr)
	}
	if g, w := jsonOf(&got.Question), jsonOf(&want.Question); !bytes.Equal(g, w) {
		t.Errorf("stored question of %s/%s =\n %s\nwant\n %s", rec.SessionID, rec.ID, g, w)
	}
}

// checkSame fails the test unless a and b are the same record.
func checkSame(t *testing.T, what string, a, b *session.Record) {
	t.Helper()
	if a == nil || b == nil {
		t.Fatalf("%s: record is nil (%v, %v)", what, a, b)
	}
	checkRequest(t, a, b.Request)
	if a.State != b.State || !a.CreatedAt.Equal(b.CreatedAt) || !a.ExpiresAt.Equal(b.ExpiresAt) ||
		!a.DecidedAt.Equal(b.DecidedAt) || !slices.Equal(a.Approvals, b.Approvals) || !sameDecision(a.Decision, b.Decision) {
		t.Errorf("%s: records differ:\n %s\n %s", what, describe(a), describe(b))
	}
}

func describe(r *session.Record) string {
	d := "nil"
	if r.Decision != nil {
		d = string(wire(r.Decision))
	}
	return fmt.Sprintf("{%s/%s state=%s created=%v expires=%v decided=%v approvals=%v decision=%s}",
		r.SessionID, r.ID, r.State, r.CreatedAt, r.ExpiresAt, r.DecidedAt, r.Approvals, d)
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: error = %v, want %v", what, err, target)
	}
}

// checkApplied fails the test unless res was applied and left rec in state.
func checkApplied(t *testing.T, what string, res session.Result, state messages.State) {
	t.Helper()
	if !res.Applied || res.Refusal != nil {
		t.Fatalf("%s: applied = %v, refusal = %v; want applied", what, res.Applied, res.Refusal)
	}
	if res.Record == nil || res.Record.State != state {
		t.Fatalf("%s: record = %v, want state %s", what, res.Record, state)
	}
}

// checkRefused fails the test unless res was refused for why and reports the
// standing record in state.
func checkRefused(t *testing.T, what string, res session.Result, why error, state messages.State) {
	t.Helper()
	if res.Applied || !errors.Is(res.Refusal, why) {
		t.Fatalf("%s: applied = %v, refusal = %v; want refused with %v", what, res.Applied, res.Refusal, why)
	}
	if res.Record == nil || res.Record.State != state {
		t.Fatalf("%s: record = %v, want the standing record in state %s", what, res.Record, state)
	}
}

// checkStands fails the test unless a call on a request it may not change
// returned no error, was refused for why, and reports the record as it
// stood (standing, in state).
func checkStands(t *testing.T, what string, res session.Result, err, why error, state messages.State, standing *session.Record) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	checkRefused(t, what, res, why, state)
	checkSame(t, what+": standing record", res.Record, standing)
}

// between fails the test unless lo <= got <= hi.
func between(t *testing.T, what string, got, lo, hi time.Time) {
	t.Helper()
	if got.Before(lo) || got.After(hi) {
		t.Errorf("%s = %v, want between %v and %v (store clock)", what, got, lo, hi)
	}
}

// keyOf names a record across sessions.
func keyOf(r *session.Record) string { return r.SessionID + "/" + r.ID }

func ids(recs []*session.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// findIn returns the first of all, what the store's listing call returned
// with err, that match accepts; err fails the test.
func findIn[T any](t *testing.T, call string, all []T, err error, match func(T) bool) (T, bool) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", call, err)
	}
	for _, x := range all {
		if match(x) {
			return x, true
		}
	}
	var zero T
	return zero, false
}

package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// escalationTests cover session.Escalations: steps scheduled with the
// request, handed out once per lease by the store's clock, dropped with
// their request, page watches, and AddTeam. ClaimSteps claims across the
// backend, so they run one at a time, with the expiry tests; each looks
// only at the steps of its own sessions.
func (r *runner) escalationTests() []test {
	return []test{
		{"Steps are handed out at creation + their delay, once, and a finished step never again", testStepsDue},
		{"A held request's steps wait until it is opened", testStepsHeld},
		{"Steps of a request settled, cancelled, stopped or expired before their time are dropped", testStepsDropped},
		{"An unfinished step is handed out again when its lease ends", testStepsReclaim},
		{"A page step finished with a watch comes back to be resolved once its request settles", testStepsWatch},
		{"Concurrent ClaimSteps callers each get different steps", testStepsRace},
		{"StepsDone lists the steps that ran until the request's expiry", testStepsDone},
		{"Prepare refuses a ladder out of order or past the TTL and stores nothing", testStepsInvalid},
	}
}

// escalationContractTests are the AddTeam tests, which do not claim.
func (r *runner) escalationContractTests() []test {
	return []test{
		{"AddTeam routes an open request to one more team once, and refuses a settled one", testAddTeam},
	}
}

// opened stores req held and opens it.
func (e *env) opened(t *testing.T, req session.Request) *session.Record {
	t.Helper()
	e.prepare(t, req)
	res := e.open(t, &session.Record{Request: req})
	if !res.Applied {
		t.Fatalf("Open(%s/%s): %+v", req.SessionID, req.ID, res)
	}
	return res.Record
}

// laddered returns a request of sess with escalation steps at delays.
func (e *env) laddered(sess string, delays ...time.Duration) session.Request {
	req := e.request(sess)
	req.Escalation = delays
	return req
}

// stepName names a claimed step in failure messages and maps.
func stepName(st session.Step) string {
	return fmt.Sprintf("%s/%s#%d:%s", st.SessionID, st.RequestID, st.Index, st.Phase)
}

// steps claims until the steps of sessions stop coming (after the lease,
// when wait is set) and returns them by name; a step claimed twice within
// one lease fails the test.
func (e *env) steps(t *testing.T, wait bool, sessions ...string) map[string]session.Step {
	t.Helper()
	out := claimUntilDry(t, e, wait, "ClaimSteps", "steps", e.escalations.ClaimSteps, sessions,
		func(st session.Step) (string, string) { return st.SessionID, stepName(st) })
	for name, st := range out {
		if st.Record == nil || st.Record.ID != st.RequestID || st.Record.SessionID != st.SessionID {
			t.Fatalf("ClaimSteps returned %s with record %v", name, st.Record)
		}
	}
	return out
}

func stepKeys(m map[string]session.Step) []string {
	return sorted(slices.Collect(func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}))
}

func (e *env) finish(t *testing.T, st session.Step, watch time.Duration) {
	t.Helper()
	if err := e.escalations.FinishStep(e.ctx, st, watch); err != nil {
		t.Fatalf("FinishStep(%s): %v", stepName(st), err)
	}
}

func testStepsDue(t *testing.T, e *env) {
	sess := e.name("sess")
	const first, second = 300 * time.Millisecond, 900 * time.Millisecond
	rec := e.opened(t, e.laddered(sess, first, second))
	one := fmt.Sprintf("%s/%s#0:due", sess, rec.ID)
	two := fmt.Sprintf("%s/%s#1:due", sess, rec.ID)

	// Before its time: nothing (on a slow run the check says nothing).
	got := e.steps(t, false, sess)
	if now := e.now(t); now.Before(rec.CreatedAt.Add(first)) && len(got) != 0 {
		t.Fatalf("ClaimSteps before the first step's time returned %v", stepKeys(got))
	}
	e.waitDue(t, rec.CreatedAt.Add(first))
	got = e.steps(t, false, sess)
	if _, ok := got[one]; !ok {
		t.Fatalf("ClaimSteps at the first step's time returned %v, want %s", stepKeys(got), one)
	}
	if now := e.now(t); now.Before(rec.CreatedAt.Add(second)) && len(got) != 1 {
		t.Fatalf("ClaimSteps before the second step's time returned %v", stepKeys(got))
	}
	st := got[one]
	if st.Record.State != messages.StatePending || st.Phase != session.StepDue {
		t.Errorf("claimed step %s with %s, want the pending record", stepName(st), describe(st.Record))
	}
	e.finish(t, st, 0)
	e.finish(t, st, 0) // a second finish is a no-op
	if done := e.done(t, rec); len(done) != 1 || done[0].Index != 0 {
		t.Fatalf("StepsDone after the first step = %+v, want step 0 alone", done)
	}

	e.waitDue(t, rec.CreatedAt.Add(second))
	got = e.steps(t, false, sess)
	if !slices.Equal(stepKeys(got), []string{two}) {
		t.Fatalf("ClaimSteps at the second step's time returned %v, want %s alone", stepKeys(got), two)
	}
	e.finish(t, got[two], 0)
	if again := e.steps(t, true, sess); len(again) != 0 {
		t.Fatalf("finished steps were handed out again: %v", stepKeys(again))
	}
	done := e.done(t, rec)
	if len(done) != 2 || done[0].Index != 0 || done[1].Index != 1 {
		t.Fatalf("StepsDone = %+v, want steps 0 and 1", done)
	}
	between(t, "step 0's finish", done[0].At, rec.CreatedAt.Add(first), done[1].At)
	between(t, "step 1's finish", done[1].At, rec.CreatedAt.Add(second), e.now(t))
}

// done returns StepsDone of rec.
func (e *env) done(t *testing.T, rec *session.Record) []session.StepDone {
	t.Helper()
	got, err := e.escalations.StepsDone(e.ctx, rec.SessionID, rec.ID)
	if err != nil {
		t.Fatalf("StepsDone(%s/%s): %v", rec.SessionID, rec.ID, err)
	}
	return got
}

func testStepsDone(t *testing.T, e *env) {
	sess := e.name("sess")
	req := e.laddered(sess, 50*time.Millisecond, 100*time.Millisecond)
	req.TTL = 800 * time.Millisecond
	rec := e.opened(t, req)
	other := e.opened(t, e.laddered(sess, 50*time.Millisecond))
	if done := e.done(t, rec); len(done) != 0 {
		t.Fatalf("StepsDone before any step ran = %+v", done)
	}
	e.waitDue(t, rec.CreatedAt.Add(100*time.Millisecond))
	for _, st := range e.steps(t, false, sess) {
		if st.RequestID == rec.ID && st.Index == 1 {
			continue // claimed, never finished: it did not run
		}
		e.finish(t, st, 0)
	}
	if done := e.done(t, rec); len(done) != 1 || done[0].Index != 0 {
		t.Fatalf("StepsDone = %+v, want step 0 alone (step 1 was claimed, not finished)", done)
	}
	if done := e.done(t, other); len(done) != 1 || done[0].Index != 0 {
		t.Fatalf("StepsDone of the other request = %+v, want its own step", done)
	}
	if done, err := e.escalations.StepsDone(e.ctx, sess, e.name("req")); err != nil || len(done) != 0 {
		t.Fatalf("StepsDone of an unknown request = %+v, %v", done, err)
	}
	// Past the request's expiry, the claims drop what it kept.
	e.waitDue(t, rec.ExpiresAt)
	deadline := time.Now().Add(5 * time.Second)
	for len(e.done(t, rec)) != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("StepsDone still lists %+v past the expiry", e.done(t, rec))
		}
		e.steps(t, false, sess)
		time.Sleep(20 * time.Millisecond)
	}
}

func testStepsHeld(t *testing.T, e *env) {
	sess := e.name("sess")
	req := e.laddered(sess, 100*time.Millisecond)
	held := e.prepare(t, req)
	e.waitDue(t, held.CreatedAt.Add(150*time.Millisecond))
	if got := e.steps(t, false, sess); len(got) != 0 {
		t.Fatalf("ClaimSteps returned %v for a held request", stepKeys(got))
	}
	if res := e.open(t, held); !res.Applied {
		t.Fatalf("Open: %+v", res)
	}
	// The held step was put off by a lease.
	got := e.steps(t, true, sess)
	if len(got) != 1 {
		t.Fatalf("ClaimSteps after the Open returned %v, want the step", stepKeys(got))
	}
	for _, st := range got {
		if st.Record.State != messages.StatePending {
			t.Errorf("claimed %s with %s", stepName(st), describe(st.Record))
		}
	}
}

func testStepsDropped(t *testing.T, e *env) {
	sess, stopSess := e.name("sess"), e.name("sess")
	const at = 400 * time.Millisecond
	denied := e.opened(t, e.laddered(sess, at))
	settled := e.opened(t, e.laddered(sess, at))
	cancelled := e.opened(t, e.laddered(sess, at))
	e.opened(t, e.laddered(stopSess, at))
	short := e.laddered(sess, shortTTL/2)
	short.TTL = shortTTL
	expired := e.opened(t, short)
	if res, err := e.requests.Decide(e.ctx, sess, denied.ID, deny(denied, "bob")); err != nil || !res.Applied {
		t.Fatalf("deny: %+v, %v", res, err)
	}
	if res, err := e.requests.Settle(e.ctx, sess, settled.ID, messages.StateApproved, decision(settled, messages.OutcomeAllow, messages.ReasonCascade, "c")); err != nil || !res.Applied {
		t.Fatalf("Settle: %+v, %v", res, err)
	}
	if got, err := e.sessions.CancelSession(e.ctx, sess, []string{cancelled.ID}, (&mkRecorder{code: messages.ReasonCancelled}).mk); err != nil || len(got) != 1 {
		t.Fatalf("CancelSession: %v, %v", ids(got), err)
	}
	if got, err := e.sessions.Stop(e.ctx, stopSess, session.StopSignal{Reason: "stop"}, (&mkRecorder{code: messages.ReasonHardStop}).mk); err != nil || len(got) != 1 {
		t.Fatalf("Stop: %v, %v", ids(got), err)
	}
	// The short request's step came while it was open: claimed, not
	// finished; after its expiry it is dropped, not handed out again.
	e.waitDue(t, expired.CreatedAt.Add(shortTTL/2))
	first := e.steps(t, false, sess)
	e.waitDue(t, expired.ExpiresAt)
	e.waitDue(t, denied.CreatedAt.Add(at))
	got := e.steps(t, true, sess, stopSess)
	if len(got) != 0 {
		t.Fatalf("ClaimSteps returned %v for settled and expired requests (first claim: %v)", stepKeys(got), stepKeys(first))
	}
	for _, st := range first {
		if st.RequestID != expired.ID {
			t.Errorf("ClaimSteps handed out %s of a settled request", stepName(st))
		}
	}
	for _, r := range []*session.Record{denied, settled, cancelled} {
		if done := e.done(t, r); len(done) != 0 {
			t.Errorf("StepsDone of %s = %+v, want none", r.ID, done)
		}
	}
}

func testStepsReclaim(t *testing.T, e *env) {
	sess := e.name("sess")
	rec := e.opened(t, e.laddered(sess, 100*time.Millisecond))
	e.waitDue(t, rec.CreatedAt.Add(100*time.Millisecond))
	got := e.steps(t, false, sess)
	if len(got) != 1 {
		t.Fatalf("ClaimSteps returned %v, want the step", stepKeys(got))
	}
	// The claimer dies: after the lease, another caller gets the step.
	again := e.steps(t, true, sess)
	if !slices.Equal(stepKeys(again), stepKeys(got)) {
		t.Fatalf("ClaimSteps after the lease returned %v, want %v again", stepKeys(again), stepKeys(got))
	}
	for _, st := range again {
		e.finish(t, st, 0)
	}
	if left := e.steps(t, true, sess); len(left) != 0 {
		t.Fatalf("finished step handed out again: %v", stepKeys(left))
	}
}

func testStepsWatch(t *testing.T, e *env) {
	sess := e.name("sess")
	const watch = 150 * time.Millisecond
	rec := e.opened(t, e.laddered(sess, 100*time.Millisecond))
	e.waitDue(t, rec.CreatedAt.Add(100*time.Millisecond))
	got := e.steps(t, false, sess)
	if len(got) != 1 {
		t.Fatalf("ClaimSteps returned %v, want the step", stepKeys(got))
	}
	for _, st := range got {
		e.finish(t, st, watch)
		e.finish(t, st, watch) // a second finish changes nothing
	}
	if done := e.done(t, rec); len(done) != 1 {
		t.Fatalf("StepsDone after the page = %+v, want the page step", done)
	}
	// Pending: the watch is looked at and kept, never handed out.
	if got := e.steps(t, true, sess); len(got) != 0 {
		t.Fatalf("ClaimSteps handed out %v while the request is pending", stepKeys(got))
	}
	if res, err := e.requests.Decide(e.ctx, sess, rec.ID, approve(rec, "bob")); err != nil || !res.Applied {
		t.Fatalf("approve: %+v, %v", res, err)
	}
	got = e.steps(t, true, sess)
	want := fmt.Sprintf("%s/%s#0:resolve", sess, rec.ID)
	if !slices.Equal(stepKeys(got), []string{want}) {
		t.Fatalf("ClaimSteps after the approval returned %v, want %s", stepKeys(got), want)
	}
	st := got[want]
	if st.Record.State != messages.StateApproved {
		t.Errorf("resolve step carries %s, want the approved record", describe(st.Record))
	}
	e.finish(t, st, 0)
	if left := e.steps(t, true, sess); len(left) != 0 {
		t.Fatalf("resolved watch handed out again: %v", stepKeys(left))
	}
	if done := e.done(t, rec); len(done) != 1 || done[0].Index != 0 {
		t.Fatalf("StepsDone after the resolve = %+v, want the page step still", done)
	}
}

func testStepsRace(t *testing.T, e *env) {
	sess := e.name("sess")
	const n = 24
	var last *session.Record
	for range n {
		last = e.opened(t, e.laddered(sess, 100*time.Millisecond))
	}
	e.waitDue(t, last.CreatedAt.Add(100*time.Millisecond))
	claims := claimConcurrently(t, 4, e.r.h.EffectLease, "ClaimSteps",
		func() ([]session.Step, error) { return e.escalations.ClaimSteps(e.ctx, 5) },
		func(st session.Step) (string, bool) { return stepName(st), st.SessionID == sess })
	if len(claims.spans) != n {
		t.Fatalf("concurrent claimers got %d distinct steps, want %d", len(claims.spans), n)
	}
	for _, dup := range claims.withinLease() {
		t.Error(dup)
	}
}

func testStepsInvalid(t *testing.T, e *env) {
	sess := e.name("sess")
	for _, delays := range [][]time.Duration{
		{time.Second, time.Second},
		{2 * time.Second, time.Second},
		{0},
		{-time.Second},
		{time.Minute}, // the TTL
	} {
		req := e.laddered(sess, delays...)
		_, _, err := e.requests.Prepare(e.ctx, req)
		wantErr(t, fmt.Sprintf("Prepare with escalation %v", delays), err, session.ErrInvalid)
		if l, err := e.requests.Lookup(e.ctx, session.LookupQuery{SessionID: sess, RequestID: req.ID, AgentID: req.AgentID, SkipGrants: true}); err != nil || l.Existing != nil {
			t.Fatalf("refused Prepare stored %v (%v)", l.Existing, err)
		}
	}
}

func testAddTeam(t *testing.T, e *env) {
	sess := e.name("sess")
	rec := e.opened(t, e.request(sess))
	extra := e.name("team")
	res, err := e.escalations.AddTeam(e.ctx, sess, rec.ID, extra)
	if err != nil {
		t.Fatalf("AddTeam: %v", err)
	}
	checkApplied(t, "AddTeam", res, messages.StatePending)
	if want := []string{rec.Teams[0], extra}; !slices.Equal(res.Record.Teams, want) {
		t.Fatalf("teams after AddTeam = %v, want %v", res.Record.Teams, want)
	}
	if got := e.get(t, rec); !slices.Equal(got.Teams, res.Record.Teams) || got.ApprovalsRequired != rec.ApprovalsRequired {
		t.Fatalf("stored record after AddTeam: %s teams %v approvals %d", describe(got), got.Teams, got.ApprovalsRequired)
	}
	listed, err := e.pending.ListPendingTeam(e.ctx, extra)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(listed), []string{rec.ID}) {
		t.Fatalf("ListPendingTeam(added team) = %v, want %s", ids(listed), rec.ID)
	}
	again, err := e.escalations.AddTeam(e.ctx, sess, rec.ID, extra)
	if err != nil || again.Applied || again.Refusal != nil || len(again.Record.Teams) != 2 {
		t.Fatalf("second AddTeam: %+v, %v; want not applied, no refusal, two teams", again, err)
	}
	if res, err := e.requests.Decide(e.ctx, sess, rec.ID, deny(rec, "bob")); err != nil || !res.Applied {
		t.Fatalf("deny: %+v, %v", res, err)
	} else if !slices.Equal(res.Record.Teams, []string{rec.Teams[0], extra}) {
		t.Fatalf("settled record's teams = %v, want both (resolved goes to every team)", res.Record.Teams)
	}
	late, err := e.escalations.AddTeam(e.ctx, sess, rec.ID, e.name("team"))
	if err != nil {
		t.Fatal(err)
	}
	checkRefused(t, "AddTeam of a settled request", late, session.ErrSettled, messages.StateRejected)
	if len(late.Record.Teams) != 2 {
		t.Errorf("refused AddTeam changed the teams: %v", late.Record.Teams)
	}
	_, err = e.escalations.AddTeam(e.ctx, sess, e.name("req"), extra)
	wantErr(t, "AddTeam of an unknown request", err, session.ErrNotFound)
	held := e.prepare(t, e.request(sess))
	_, err = e.escalations.AddTeam(e.ctx, sess, held.ID, extra)
	wantErr(t, "AddTeam of a held request", err, session.ErrNotFound)
	_, err = e.escalations.AddTeam(e.ctx, sess, rec.ID, "")
	wantErr(t, "AddTeam of an empty team", err, session.ErrInvalid)
}

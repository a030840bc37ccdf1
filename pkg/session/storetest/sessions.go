package storetest

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// sessionTests cover the pending lists, Lookup, Stop, NewTurn and
// CancelSession.
func (r *runner) sessionTests() []test {
	return []test{
		{"ListPending returns only pending requests, oldest first, by session, agent and team", testLists},
		{"ListPending of an unknown key is empty", testListsUnknown},
		{"ListPending rejects an empty key", testListsInvalid},
		{"Lookup of an unknown request reads no record, no stop signal and no grants", testLookupEmpty},
		{"Lookup returns the existing record, the stop signal and the grants together", testLookupAll},
		{"Lookup requires a session id", testLookupInvalid},
		{"Stop rejects the session's pending requests with mk's decisions and refuses new ones until NewTurn", testStop},
		{"NewTurn reports whether a stop signal was set", testNewTurn},
		{"Stop and CancelSession require a session id and a decision func", testStopCancelInvalid},
		{"CancelSession with no ids cancels every pending request of the session", testCancelAll},
		{"CancelSession with ids cancels only those and skips unknown and settled ids", testCancelSome},
	}
}

// mkRecorder is a decision func for Stop and CancelSession that records
// what it was called with.
type mkRecorder struct {
	mu    sync.Mutex
	calls []*session.Record
	code  messages.ReasonCode
}

func (m *mkRecorder) mk(rec *session.Record) messages.Decision {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, rec.Clone())
	return decision(rec, messages.OutcomeDeny, m.code, "mk")
}

func (m *mkRecorder) called() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return ids(m.calls)
}

// checkSettled checks that op settled the requests with ids want, in any
// order (it fails the test at once otherwise), and called mk for each.
func (m *mkRecorder) checkSettled(t *testing.T, op string, settled []*session.Record, want ...string) {
	t.Helper()
	want = sorted(want)
	if got := sorted(ids(settled)); !slices.Equal(got, want) {
		t.Fatalf("%s settled %v, want %v", op, got, want)
	}
	if got := sorted(m.called()); !slices.Equal(got, want) {
		t.Errorf("mk called for %v, want %v", got, want)
	}
}

func testLists(t *testing.T, e *env) {
	sess, other := e.name("sess"), e.name("sess")
	agentA, agentB := e.name("agent"), e.name("agent")
	team1, team2 := e.name("team"), e.name("team")
	mk := func(sess, agent string, teams ...string) *session.Record {
		req := e.request(sess)
		req.AgentID = agent
		req.Teams = teams
		return e.create(t, req)
	}
	// Created one after the other: each has a later CreatedAt.
	r1 := mk(sess, agentA, team1)
	r2 := mk(sess, agentA, team1, team2)
	r3 := mk(other, agentA, team2)
	r4 := mk(sess, agentB, team1)
	r5 := mk(sess, agentB, team2)
	for _, pair := range [][2]*session.Record{{r1, r2}, {r2, r3}, {r3, r4}, {r4, r5}} {
		if pair[1].CreatedAt.Before(pair[0].CreatedAt) {
			t.Fatalf("CreatedAt goes back: %s then %s", describe(pair[0]), describe(pair[1]))
		}
	}
	if _, err := e.requests.Decide(e.ctx, sess, r4.ID, deny(r4, "ann")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.requests.Settle(e.ctx, sess, r5.ID, messages.StateCancelled, decision(r5, messages.OutcomeDeny, messages.ReasonCancelled, "agent")); err != nil {
		t.Fatal(err)
	}
	quorum := e.request(sess)
	quorum.AgentID, quorum.Teams, quorum.ApprovalsRequired = agentB, []string{team2}, 2
	r6 := e.create(t, quorum)
	if _, err := e.requests.Decide(e.ctx, sess, r6.ID, approve(r6, "ann")); err != nil { // still pending
		t.Fatal(err)
	}

	tests := []struct {
		name string
		list func() ([]*session.Record, error)
		want []*session.Record
	}{
		{"session", func() ([]*session.Record, error) { return e.pending.ListPendingSession(e.ctx, sess) }, []*session.Record{r1, r2, r6}},
		{"other session", func() ([]*session.Record, error) { return e.pending.ListPendingSession(e.ctx, other) }, []*session.Record{r3}},
		{"agent A", func() ([]*session.Record, error) { return e.pending.ListPendingAgent(e.ctx, agentA) }, []*session.Record{r1, r2, r3}},
		{"agent B", func() ([]*session.Record, error) { return e.pending.ListPendingAgent(e.ctx, agentB) }, []*session.Record{r6}},
		{"team 1", func() ([]*session.Record, error) { return e.pending.ListPendingTeam(e.ctx, team1) }, []*session.Record{r1, r2}},
		{"team 2", func() ([]*session.Record, error) { return e.pending.ListPendingTeam(e.ctx, team2) }, []*session.Record{r2, r3, r6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.list()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), ids(tc.want)) {
				t.Fatalf("list = %v, want %v", ids(got), ids(tc.want))
			}
			for _, rec := range got {
				if rec.State != messages.StatePending {
					t.Errorf("listed %s", describe(rec))
				}
				checkRequest(t, rec, e.get(t, rec).Request)
			}
			if got[len(got)-1].ID == r6.ID && !slices.Equal(got[len(got)-1].Approvals, []string{"ann"}) {
				t.Errorf("listed quorum request has approvals %v, want [ann]", got[len(got)-1].Approvals)
			}
		})
	}
}

func testListsUnknown(t *testing.T, e *env) {
	for name, list := range map[string]func(string) ([]*session.Record, error){
		"session": func(k string) ([]*session.Record, error) { return e.pending.ListPendingSession(e.ctx, k) },
		"agent":   func(k string) ([]*session.Record, error) { return e.pending.ListPendingAgent(e.ctx, k) },
		"team":    func(k string) ([]*session.Record, error) { return e.pending.ListPendingTeam(e.ctx, k) },
	} {
		got, err := list(e.name(name))
		if err != nil || len(got) != 0 {
			t.Errorf("ListPending %s of an unknown key = %v, %v; want empty", name, ids(got), err)
		}
	}
}

func testListsInvalid(t *testing.T, e *env) {
	_, err := e.pending.ListPendingSession(e.ctx, "")
	wantErr(t, "ListPendingSession", err, session.ErrInvalid)
	_, err = e.pending.ListPendingAgent(e.ctx, "")
	wantErr(t, "ListPendingAgent", err, session.ErrInvalid)
	_, err = e.pending.ListPendingTeam(e.ctx, "")
	wantErr(t, "ListPendingTeam", err, session.ErrInvalid)
}

func testLookupEmpty(t *testing.T, e *env) {
	l, err := e.requests.Lookup(e.ctx, session.LookupQuery{SessionID: e.name("sess"), RequestID: e.name("req"), AgentID: e.name("agent")})
	if err != nil {
		t.Fatal(err)
	}
	if l.Existing != nil || l.Stopped || l.StopReason != "" || len(l.Grants) != 0 {
		t.Errorf("Lookup = %+v, want nothing", l)
	}
}

func testLookupAll(t *testing.T, e *env) {
	req := e.request(e.name("sess"))
	rec := e.create(t, req)
	grants := e.addGrants(t, e.sessionGrant(req.SessionID, "write"), e.agentGrant(req.AgentID, "bash", "git push *"))
	if _, err := e.sessions.Stop(e.ctx, req.SessionID, session.StopSignal{Reason: "user said stop"}, (&mkRecorder{code: messages.ReasonHardStop}).mk); err != nil {
		t.Fatal(err)
	}
	l, err := e.requests.Lookup(e.ctx, session.LookupQuery{SessionID: req.SessionID, RequestID: req.ID, AgentID: req.AgentID})
	if err != nil {
		t.Fatal(err)
	}
	if l.Existing == nil || l.Existing.State != messages.StateRejected {
		t.Fatalf("Existing = %v, want the request, rejected by Stop", l.Existing)
	}
	checkSame(t, "Existing", l.Existing, e.get(t, rec))
	if !l.Stopped || l.StopReason != "user said stop" {
		t.Errorf("Stopped, StopReason = %v, %q; want true, %q", l.Stopped, l.StopReason, "user said stop")
	}
	if !slices.Equal(grantIDs(l.Grants), grantIDs(grants)) {
		t.Errorf("Grants = %v, want %v", grantIDs(l.Grants), grantIDs(grants))
	}
}

func testLookupInvalid(t *testing.T, e *env) {
	_, err := e.requests.Lookup(e.ctx, session.LookupQuery{RequestID: e.name("req"), AgentID: e.name("agent")})
	wantErr(t, "Lookup without a session id", err, session.ErrInvalid)
}

func testStop(t *testing.T, e *env) {
	sess, other := e.name("sess"), e.name("sess")
	r1, r2, r3 := e.create(t, e.request(sess)), e.create(t, e.request(sess)), e.create(t, e.request(sess))
	r4 := e.create(t, e.request(other))
	won, err := e.requests.Decide(e.ctx, sess, r3.ID, approve(r3, "ann"))
	if err != nil {
		t.Fatal(err)
	}

	m := &mkRecorder{code: messages.ReasonHardStop}
	stopped, err := e.sessions.Stop(e.ctx, sess, session.StopSignal{Reason: "rejected hard by ann"}, m.mk)
	if err != nil {
		t.Fatal(err)
	}
	m.checkSettled(t, "Stop", stopped, r1.ID, r2.ID)
	for _, rec := range m.calls {
		if rec.State != messages.StatePending {
			t.Errorf("mk got %s, want the pending record", describe(rec))
		}
	}
	for _, rec := range stopped {
		want := decision(rec, messages.OutcomeDeny, messages.ReasonHardStop, "mk")
		if rec.State != messages.StateRejected || !sameDecision(rec.Decision, &want) || rec.DecidedAt.IsZero() {
			t.Errorf("Stop returned %s, want rejected with mk's decision", describe(rec))
		}
		checkSame(t, "Get after Stop", e.get(t, rec), rec)
	}
	checkSame(t, "request approved before Stop", e.get(t, r3), won.Record)
	if got := e.get(t, r4); got.State != messages.StatePending {
		t.Errorf("the other session's request is %s after Stop, want pending", got.State)
	}

	refused := e.request(sess)
	_, created, err := Create(e.ctx, e.requests, refused)
	wantErr(t, "Create in a stopped session", err, session.ErrStopped)
	if created {
		t.Error("Create in a stopped session reported created")
	}
	_, err = e.requests.Get(e.ctx, sess, refused.ID)
	wantErr(t, "Get of a request refused by the stop", err, session.ErrNotFound)
	retry, created, err := Create(e.ctx, e.requests, r1.Request)
	if err != nil || created || retry.State != messages.StateRejected {
		t.Errorf("retry of a stopped request = %v, created %v, err %v; want the rejected record", retry, created, err)
	}
	if _, _, err := Create(e.ctx, e.requests, e.request(other)); err != nil {
		t.Errorf("Create in another session: %v", err)
	}
	again, err := e.sessions.Stop(e.ctx, sess, session.StopSignal{Reason: "again"}, m.mk)
	if err != nil || len(again) != 0 {
		t.Errorf("second Stop = %v, %v; want nothing settled", ids(again), err)
	}

	cleared, err := e.sessions.NewTurn(e.ctx, sess, session.Turn{})
	if err != nil || !cleared {
		t.Fatalf("NewTurn = %v, %v; want true", cleared, err)
	}
	e.create(t, refused)
	if l, err := e.requests.Lookup(e.ctx, session.LookupQuery{SessionID: sess}); err != nil || l.Stopped {
		t.Errorf("Lookup after NewTurn: stopped = %v, err = %v", l.Stopped, err)
	}
}

func testNewTurn(t *testing.T, e *env) {
	sess := e.name("sess")
	if cleared, err := e.sessions.NewTurn(e.ctx, sess, session.Turn{}); err != nil || cleared {
		t.Errorf("NewTurn of a session never stopped = %v, %v; want false", cleared, err)
	}
	if _, err := e.sessions.Stop(e.ctx, sess, session.StopSignal{Reason: "stop"}, (&mkRecorder{}).mk); err != nil {
		t.Fatal(err)
	}
	if cleared, err := e.sessions.NewTurn(e.ctx, sess, session.Turn{}); err != nil || !cleared {
		t.Errorf("first NewTurn after Stop = %v, %v; want true", cleared, err)
	}
	if cleared, err := e.sessions.NewTurn(e.ctx, sess, session.Turn{}); err != nil || cleared {
		t.Errorf("second NewTurn = %v, %v; want false", cleared, err)
	}
	_, err := e.sessions.NewTurn(e.ctx, "", session.Turn{})
	wantErr(t, "NewTurn without a session id", err, session.ErrInvalid)
}

func testStopCancelInvalid(t *testing.T, e *env) {
	sess := e.name("sess")
	rec := e.create(t, e.request(sess))
	mk := (&mkRecorder{}).mk
	_, err := e.sessions.Stop(e.ctx, "", session.StopSignal{Reason: "stop"}, mk)
	wantErr(t, "Stop without a session id", err, session.ErrInvalid)
	_, err = e.sessions.Stop(e.ctx, sess, session.StopSignal{Reason: "stop"}, nil)
	wantErr(t, "Stop without mk", err, session.ErrInvalid)
	_, err = e.sessions.CancelSession(e.ctx, "", nil, mk)
	wantErr(t, "CancelSession without a session id", err, session.ErrInvalid)
	_, err = e.sessions.CancelSession(e.ctx, sess, nil, nil)
	wantErr(t, "CancelSession without mk", err, session.ErrInvalid)
	_, err = e.sessions.CancelSession(e.ctx, sess, []string{rec.ID, ""}, mk)
	wantErr(t, "CancelSession with an empty id", err, session.ErrInvalid)
	if got := e.get(t, rec); got.State != messages.StatePending {
		t.Errorf("record after invalid calls is %s, want pending", got.State)
	}
	if l, err := e.requests.Lookup(e.ctx, session.LookupQuery{SessionID: sess}); err != nil || l.Stopped {
		t.Errorf("an invalid Stop set the stop signal (%v, %v)", l.Stopped, err)
	}
}

func testCancelAll(t *testing.T, e *env) {
	sess, other := e.name("sess"), e.name("sess")
	r1, r2, r3 := e.create(t, e.request(sess)), e.create(t, e.request(sess)), e.create(t, e.request(sess))
	r4 := e.create(t, e.request(other))
	if _, err := e.requests.Decide(e.ctx, sess, r3.ID, deny(r3, "ann")); err != nil {
		t.Fatal(err)
	}
	m := &mkRecorder{code: messages.ReasonCancelled}
	got, err := e.sessions.CancelSession(e.ctx, sess, nil, m.mk)
	if err != nil {
		t.Fatal(err)
	}
	m.checkSettled(t, "CancelSession", got, r1.ID, r2.ID)
	for _, rec := range got {
		want := decision(rec, messages.OutcomeDeny, messages.ReasonCancelled, "mk")
		if rec.State != messages.StateCancelled || !sameDecision(rec.Decision, &want) {
			t.Errorf("CancelSession returned %s, want cancelled with mk's decision", describe(rec))
		}
		checkSame(t, "Get after CancelSession", e.get(t, rec), rec)
	}
	if g := e.get(t, r3); g.State != messages.StateRejected {
		t.Errorf("rejected request is %s after CancelSession", g.State)
	}
	if g := e.get(t, r4); g.State != messages.StatePending {
		t.Errorf("the other session's request is %s after CancelSession", g.State)
	}
	if _, _, err := Create(e.ctx, e.requests, e.request(sess)); err != nil {
		t.Errorf("Create after CancelSession: %v (cancel is not a stop)", err)
	}
}

func testCancelSome(t *testing.T, e *env) {
	sess := e.name("sess")
	r1, r2, r3 := e.create(t, e.request(sess)), e.create(t, e.request(sess)), e.create(t, e.request(sess))
	if _, err := e.requests.Decide(e.ctx, sess, r3.ID, approve(r3, "ann")); err != nil {
		t.Fatal(err)
	}
	m := &mkRecorder{code: messages.ReasonCancelled}
	got, err := e.sessions.CancelSession(e.ctx, sess, []string{r1.ID, e.name("req"), r3.ID, r1.ID}, m.mk)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(got), []string{r1.ID}) || !slices.Equal(m.called(), []string{r1.ID}) {
		t.Fatalf("CancelSession settled %v (mk called for %v), want [%s]", ids(got), m.called(), r1.ID)
	}
	if g := e.get(t, r2); g.State != messages.StatePending {
		t.Errorf("request not named is %s, want pending", g.State)
	}
	if g := e.get(t, r3); g.State != messages.StateApproved {
		t.Errorf("approved request is %s after CancelSession", g.State)
	}
}

// stopVoteTests cover a reject_hard vote: its stop signal is part of the
// vote (Vote.Stop), and a stopped session approves nothing.
func (r *runner) stopVoteTests() []test {
	return []test{
		{"A deny with a stop reason sets the session's stop signal in the same call", testStopVote},
		{"A deny without a stop reason, or a stop vote that is not applied, sets no stop signal", testStopVoteNotApplied},
		{"A stopped session approves nothing by vote or Settle until NewTurn, and still takes denies", testStoppedRefusesApproval},
		{"A hard reject racing approvals, Creates and Opens of its siblings: nothing of the session is approved, created or opened after it", testRaceStopVote},
		{"NewTurn keeps the stop of a hard rejection whose effects are owed, names it, and clears the stop once they are acknowledged", testNewTurnOwed},
		{"A hard rejection is recorded only by a vote that carries its stop: a stopless reject_hard vote or Settle is refused and changes nothing", testHardRejectionNeedsStop},
	}
}

// stopDeny is a reject_hard vote of by on rec.
func stopDeny(rec *session.Record, by string) session.Vote {
	v := deny(rec, by)
	v.Decision.RejectMode = messages.RejectHard
	v.Stop = by + " rejected " + rec.Tool + " (" + rec.ID + ")"
	return v
}

func (e *env) lookupStop(t *testing.T, sess string) (bool, string) {
	t.Helper()
	l, err := e.requests.Lookup(e.ctx, session.LookupQuery{SessionID: sess})
	if err != nil {
		t.Fatalf("Lookup(%s): %v", sess, err)
	}
	return l.Stopped, l.StopReason
}

func testStopVote(t *testing.T, e *env) {
	sess := e.name("sess")
	rec := e.create(t, e.request(sess))
	v := stopDeny(rec, "ann")
	res, err := e.requests.Decide(e.ctx, sess, rec.ID, v)
	if err != nil {
		t.Fatal(err)
	}
	checkApplied(t, "hard reject", res, messages.StateRejected)
	if stopped, reason := e.lookupStop(t, sess); !stopped || reason != v.Stop {
		t.Fatalf("after the vote returned: Stopped, StopReason = %v, %q; want true, %q", stopped, reason, v.Stop)
	}
	_, _, err = Create(e.ctx, e.requests, e.request(sess))
	wantErr(t, "Create after a hard reject", err, session.ErrStopped)
	_, _, err = e.requests.Prepare(e.ctx, e.request(sess))
	wantErr(t, "Prepare after a hard reject", err, session.ErrStopped)
	e.ack(t, res.Record)
	if cleared, err := e.sessions.NewTurn(e.ctx, sess, session.Turn{}); err != nil || !cleared {
		t.Fatalf("NewTurn = %v, %v; want the vote's stop cleared", cleared, err)
	}
	e.create(t, e.request(sess))
}

func testStopVoteNotApplied(t *testing.T, e *env) {
	sess := e.name("sess")
	soft := e.create(t, e.request(sess))
	res, err := e.requests.Decide(e.ctx, sess, soft.ID, deny(soft, "ann"))
	if err != nil {
		t.Fatal(err)
	}
	checkApplied(t, "soft reject", res, messages.StateRejected)
	if stopped, _ := e.lookupStop(t, sess); stopped {
		t.Fatal("a deny without a stop reason stopped the session")
	}

	// A hard reject that comes after the request settled is refused, and
	// stops nothing: the standing decision is the approval.
	other := e.name("sess")
	rec := e.create(t, e.request(other))
	if res, err := e.requests.Decide(e.ctx, other, rec.ID, approve(rec, "bob")); err != nil || !res.Applied {
		t.Fatalf("approve = %+v, %v", res, err)
	}
	res, err = e.requests.Decide(e.ctx, other, rec.ID, stopDeny(rec, "ann"))
	if err != nil {
		t.Fatal(err)
	}
	checkRefused(t, "hard reject of a settled request", res, session.ErrSettled, messages.StateApproved)
	if stopped, _ := e.lookupStop(t, other); stopped {
		t.Fatal("a hard reject that was not applied stopped the session")
	}

	// An invalid stop vote is refused before it changes anything.
	bad := approve(rec, "cy")
	bad.Stop = "approval cannot stop"
	_, err = e.requests.Decide(e.ctx, other, rec.ID, bad)
	wantErr(t, "an approval with a stop reason", err, session.ErrInvalid)
}

func testStoppedRefusesApproval(t *testing.T, e *env) {
	sess := e.name("sess")
	first := e.create(t, e.request(sess))
	sibling := e.create(t, e.request(sess))
	quorum := e.request(sess)
	quorum.ApprovalsRequired = 2
	q := e.create(t, quorum)
	if res, err := e.requests.Decide(e.ctx, sess, q.ID, approve(q, "bob")); err != nil || !res.Applied {
		t.Fatalf("first approval of the quorum request = %+v, %v", res, err)
	}
	hard, err := e.requests.Decide(e.ctx, sess, first.ID, stopDeny(first, "ann"))
	if err != nil || !hard.Applied {
		t.Fatalf("hard reject = %+v, %v", hard, err)
	}

	res, err := e.requests.Decide(e.ctx, sess, sibling.ID, approve(sibling, "bob"))
	if err != nil {
		t.Fatal(err)
	}
	checkRefused(t, "approval of a sibling after the hard reject", res, session.ErrStopped, messages.StatePending)
	res, err = e.requests.Decide(e.ctx, sess, q.ID, approve(q, "cy"))
	if err != nil {
		t.Fatal(err)
	}
	checkRefused(t, "the approval that would reach a quorum after the hard reject", res, session.ErrStopped, messages.StatePending)
	res, err = e.requests.Settle(e.ctx, sess, sibling.ID, messages.StateApproved, decision(sibling, messages.OutcomeAllow, messages.ReasonCascade, "cascade"))
	if err != nil {
		t.Fatal(err)
	}
	checkRefused(t, "Settle approved after the hard reject", res, session.ErrStopped, messages.StatePending)
	if got := e.get(t, sibling); got.State != messages.StatePending || got.Decision != nil {
		t.Fatalf("sibling after refused approvals: %s, want pending", describe(got))
	}

	// What a stop's rejections need still works.
	res, err = e.requests.Settle(e.ctx, sess, sibling.ID, messages.StateRejected, decision(sibling, messages.OutcomeDeny, messages.ReasonHardStop, "stop"))
	if err != nil {
		t.Fatal(err)
	}
	checkApplied(t, "Settle rejected in a stopped session", res, messages.StateRejected)
	res, err = e.requests.Decide(e.ctx, sess, q.ID, deny(q, "cy"))
	if err != nil {
		t.Fatal(err)
	}
	checkApplied(t, "a deny in a stopped session", res, messages.StateRejected)

	e.ack(t, hard.Record)
	if _, err := e.sessions.NewTurn(e.ctx, sess, session.Turn{}); err != nil {
		t.Fatal(err)
	}
	after := e.create(t, e.request(sess))
	res, err = e.requests.Decide(e.ctx, sess, after.ID, approve(after, "bob"))
	if err != nil {
		t.Fatal(err)
	}
	checkApplied(t, "approval after NewTurn", res, messages.StateApproved)
}

// testRaceStopVote races one hard reject with approvals of the session's
// other pending requests, Opens of its held ones and Creates of new ones.
// Whatever won before the reject may stand; nothing may win after it: an
// approval that applied settled before the reject did (store time), an
// Open or Create that applied ran before it, and once Decide returned
// every later call sees the stop.
func testRaceStopVote(t *testing.T, e *env) {
	for round := range 3 {
		sess := e.name("sess")
		const n = 12
		target := e.create(t, e.request(sess))
		pending := make([]*session.Record, n)
		held := make([]*session.Record, n)
		fresh := make([]session.Request, n)
		for i := range n {
			pending[i] = e.create(t, e.request(sess))
			held[i] = e.prepare(t, e.request(sess))
			fresh[i] = e.request(sess)
		}
		approvals := make([]outcome, n)
		opens := make([]outcome, n)
		creates := make([]error, n)
		var reject outcome
		race(3*n+1, func(i int) {
			switch {
			case i == 3*n:
				reject.res, reject.err = e.requests.Decide(e.ctx, sess, target.ID, stopDeny(target, "ann"))
			case i < n:
				approvals[i].res, approvals[i].err = e.requests.Decide(e.ctx, sess, pending[i].ID, approve(pending[i], "bob"))
			case i < 2*n:
				opens[i-n].res, opens[i-n].err = e.requests.Open(e.ctx, sess, held[i-n].ID)
			default:
				_, _, creates[i-2*n] = Create(e.ctx, e.requests, fresh[i-2*n])
			}
		})
		if reject.err != nil || !reject.res.Applied {
			t.Fatalf("round %d: hard reject = %+v, %v", round, reject.res, reject.err)
		}
		rejectedAt := reject.res.Record.DecidedAt
		won := 0
		for i, a := range approvals {
			switch {
			case a.err != nil:
				t.Fatalf("round %d: approval %d: %v", round, i, a.err)
			case a.res.Applied:
				won++
				if a.res.Record.DecidedAt.After(rejectedAt) {
					t.Errorf("round %d: %s approved at %v, after the hard reject at %v", round, a.res.Record.ID, a.res.Record.DecidedAt, rejectedAt)
				}
			case !errors.Is(a.res.Refusal, session.ErrStopped):
				t.Errorf("round %d: approval %d refused with %v, want ErrStopped", round, i, a.res.Refusal)
			}
		}
		for i, o := range opens {
			if o.err != nil && !errors.Is(o.err, session.ErrStopped) {
				t.Fatalf("round %d: Open %d: %v, want applied or ErrStopped", round, i, o.err)
			}
		}
		for i, err := range creates {
			if err != nil && !errors.Is(err, session.ErrStopped) {
				t.Fatalf("round %d: Create %d: %v, want created or ErrStopped", round, i, err)
			}
		}
		// After the vote returned, the stop is everywhere.
		if stopped, _ := e.lookupStop(t, sess); !stopped {
			t.Fatalf("round %d: Lookup after the hard reject: not stopped", round)
		}
		_, _, err := Create(e.ctx, e.requests, e.request(sess))
		wantErr(t, "Create after the race", err, session.ErrStopped)
		for _, h := range held {
			if _, err := e.requests.Open(e.ctx, sess, h.ID); err != nil && !errors.Is(err, session.ErrStopped) {
				t.Fatalf("round %d: Open after the race: %v", round, err)
			}
		}
		for _, p := range pending {
			res, err := e.requests.Decide(e.ctx, sess, p.ID, approve(p, "cy"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Applied || (res.Record.State == messages.StatePending && !errors.Is(res.Refusal, session.ErrStopped)) {
				t.Fatalf("round %d: approval after the race: applied %v, refusal %v", round, res.Applied, res.Refusal)
			}
		}
		t.Logf("round %d: %d of %d approvals ran before the hard reject", round, won, n)
	}
}

// ack acknowledges the effects of recs, as the broker does once it has
// carried them out.
func (e *env) ack(t *testing.T, recs ...*session.Record) {
	t.Helper()
	if err := e.outbox.AckEffects(e.ctx, recs...); err != nil {
		t.Fatalf("AckEffects: %v", err)
	}
}

// testNewTurnOwed: the agent asks for a new turn before it has heard of a
// hard rejection (its effects are still in the outbox: the deciding
// replica died, or a vote ran late after a write stall). The turn must
// not end that stop: the rejection would reach the agent after its turn,
// with nothing stopping its next calls.
func testNewTurnOwed(t *testing.T, e *env) {
	sess := e.name("sess")
	rec := e.create(t, e.request(sess))
	sibling := e.create(t, e.request(sess))
	soft := e.create(t, e.request(sess))
	res, err := e.requests.Decide(e.ctx, sess, soft.ID, deny(soft, "bob"))
	if err != nil || !res.Applied {
		t.Fatalf("soft reject = %+v, %v", res, err)
	}
	v := stopDeny(rec, "ann")
	hard, err := e.requests.Decide(e.ctx, sess, rec.ID, v)
	if err != nil || !hard.Applied {
		t.Fatalf("hard reject = %+v, %v", hard, err)
	}

	cleared, err := e.sessions.NewTurn(e.ctx, sess, session.Turn{})
	wantErr(t, "NewTurn while the hard rejection is owed", err, session.ErrStopOwed)
	var owed *session.StopOwedError
	if !errors.As(err, &owed) {
		t.Fatalf("NewTurn error %T %v, want a *session.StopOwedError", err, err)
	}
	if cleared {
		t.Error("NewTurn reported a cleared stop while refusing")
	}
	if owed.SessionID != sess || len(owed.Records) != 1 || owed.Records[0].ID != rec.ID || !owed.Records[0].HardRejection() {
		t.Fatalf("owed = %s %v, want only %s (rejected reject_hard): the soft reject owes no stop", owed.SessionID, ids(owed.Records), rec.ID)
	}
	if got := owed.Records[0]; session.EffectMark(got) != session.EffectMark(hard.Record) || !sameDecision(got.Decision, hard.Record.Decision) {
		t.Fatalf("owed record %s, want the rejection as Decide left it %s", describe(got), describe(hard.Record))
	}
	if stopped, reason := e.lookupStop(t, sess); !stopped || reason != v.Stop {
		t.Fatalf("after the refused NewTurn: Stopped, StopReason = %v, %q; want the vote's stop %q", stopped, reason, v.Stop)
	}
	_, _, err = Create(e.ctx, e.requests, e.request(sess))
	wantErr(t, "Create after the refused NewTurn", err, session.ErrStopped)

	// The stop's rejections are owed too, but they are not hard
	// rejections: only the reject_hard keeps the stop.
	mk := func(r *session.Record) messages.Decision {
		return decision(r, messages.OutcomeDeny, messages.ReasonHardStop, "ann")
	}
	stopped, err := e.sessions.Stop(e.ctx, sess, session.StopSignal{Reason: v.Stop}, mk)
	if err != nil || len(stopped) != 1 || stopped[0].ID != sibling.ID {
		t.Fatalf("Stop = %v, %v; want the sibling rejected", ids(stopped), err)
	}
	// Claimed by another caller after the lease, the entry still owes:
	// acknowledging an older transition's mark does not count.
	e.ack(t, rec)
	if _, err := e.sessions.NewTurn(e.ctx, sess, session.Turn{}); !errors.Is(err, session.ErrStopOwed) {
		t.Fatalf("NewTurn after acknowledging the pending record's mark: %v, want ErrStopOwed", err)
	}
	e.ack(t, owed.Records...)
	if cleared, err := e.sessions.NewTurn(e.ctx, sess, session.Turn{}); err != nil || !cleared {
		t.Fatalf("NewTurn once the rejection is acknowledged = %v, %v; want the stop cleared", cleared, err)
	}
	if stopped, _ := e.lookupStop(t, sess); stopped {
		t.Fatal("still stopped after the NewTurn that cleared")
	}
	e.create(t, e.request(sess))
}

func testHardRejectionNeedsStop(t *testing.T, e *env) {
	sess := e.name("sess")
	rec := e.create(t, e.request(sess))
	v := stopDeny(rec, "ann")
	v.Stop = ""
	_, err := e.requests.Decide(e.ctx, sess, rec.ID, v)
	wantErr(t, "a reject_hard vote without its stop", err, session.ErrInvalid)
	d := stopDeny(rec, "ann").Decision
	_, err = e.requests.Settle(e.ctx, sess, rec.ID, messages.StateRejected, d)
	wantErr(t, "Settle of a reject_hard", err, session.ErrInvalid)
	if got := e.get(t, rec); got.State != messages.StatePending || got.Decision != nil {
		t.Fatalf("after the refused calls: %s, want pending", describe(got))
	}
	if stopped, _ := e.lookupStop(t, sess); stopped {
		t.Fatal("a refused call stopped the session")
	}
	// A soft reject goes either way.
	soft := deny(rec, "ann")
	res, err := e.requests.Settle(e.ctx, sess, rec.ID, messages.StateRejected, soft.Decision)
	if err != nil {
		t.Fatal(err)
	}
	checkApplied(t, "Settle of a reject_soft", res, messages.StateRejected)
}

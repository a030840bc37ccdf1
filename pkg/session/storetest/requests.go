package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// requestTests cover Prepare and Open (Create), Get, Decide and Settle on one request.
func (r *runner) requestTests() []test {
	return []test{
		{"Prepare then Open store a pending request with the store's times and every field unchanged", testCreateStores},
		{"Prepare rejects malformed requests and stores nothing", testCreateInvalid},
		{"A retry with the same request id returns the stored record whatever its state", testCreateRetry},
		{"The same request id in two sessions makes two records", testCreateTwoSessions},
		{"Get of an unknown request is ErrNotFound", testGetUnknown},
		{"Get rejects empty ids", testGetInvalid},
		{"A deny rejects the request with the vote's decision", testDecideDeny},
		{"An approval settles a request that needs one approval", testDecideApprove},
		{"Approvals from distinct approvers settle the request at the quorum", testDecideQuorum},
		{"A deny after approvals rejects and keeps the approvals", testDecideDenyAfterApprovals},
		{"Each counted approval keeps the scope its approver chose; a re-vote changes none", testDecideKeepsScopes},
		{"A second vote from an approver whose approval was counted is refused", testDecideDuplicate},
		{"A vote on a settled request is refused and reports the standing decision", testDecideSettled},
		{"A vote on an unknown request is ErrNotFound", testDecideUnknown},
		{"A vote without an approver id is invalid", testDecideInvalid},
		{"Settle moves a pending request to approved, rejected or cancelled", testSettle},
		{"Settle refuses a target state that is not approved, rejected or cancelled", testSettleInvalidState},
		{"Settle on a settled request is not applied", testSettleSettled},
		{"Settle on an unknown request is ErrNotFound", testSettleUnknown},
		{"Returned records are copies the caller may change", testCopies},
	}
}

func testCreateStores(t *testing.T, e *env) {
	req := e.request(e.name("sess"))
	req.Teams = []string{"team-a-" + e.id, "team-b-" + e.id}
	req.ApprovalsRequired = 2
	req.TTL = 90 * time.Second
	before := e.now(t)
	rec := e.create(t, req)
	after := e.now(t)

	checkRequest(t, rec, req)
	if rec.State != messages.StatePending {
		t.Errorf("State = %s, want pending", rec.State)
	}
	between(t, "CreatedAt", rec.CreatedAt, before, after)
	if d := rec.ExpiresAt.Sub(rec.CreatedAt) - req.TTL; d < -time.Millisecond || d > time.Millisecond {
		t.Errorf("ExpiresAt - CreatedAt = %v, want the TTL %v", rec.ExpiresAt.Sub(rec.CreatedAt), req.TTL)
	}
	if len(rec.Approvals) != 0 || rec.Decision != nil || !rec.DecidedAt.IsZero() {
		t.Errorf("new record has approvals %v, decision %v, decided at %v; want none", rec.Approvals, rec.Decision, rec.DecidedAt)
	}
	checkSame(t, "Get after Create", e.get(t, rec), rec)
}

func testCreateInvalid(t *testing.T, e *env) {
	sess := e.name("sess")
	tests := []struct {
		name   string
		change func(*session.Request)
	}{
		{"empty request id", func(r *session.Request) { r.ID = "" }},
		{"empty session id", func(r *session.Request) { r.SessionID = "" }},
		{"empty agent id", func(r *session.Request) { r.AgentID = "" }},
		{"no teams", func(r *session.Request) { r.Teams = nil }},
		{"an empty team name", func(r *session.Request) { r.Teams = []string{"ops", ""} }},
		{"zero approvals required", func(r *session.Request) { r.ApprovalsRequired = 0 }},
		{"negative approvals required", func(r *session.Request) { r.ApprovalsRequired = -1 }},
		{"zero TTL", func(r *session.Request) { r.TTL = 0 }},
		{"negative TTL", func(r *session.Request) { r.TTL = -time.Second }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := e.request(sess)
			tc.change(&req)
			rec, created, err := Create(e.ctx, e.requests, req)
			wantErr(t, "Create", err, session.ErrInvalid)
			if created || rec != nil {
				t.Errorf("Create = %v, created %v; want nothing", rec, created)
			}
			if req.ID != "" && req.SessionID != "" {
				_, err := e.requests.Get(e.ctx, req.SessionID, req.ID)
				wantErr(t, "Get after a refused Create", err, session.ErrNotFound)
			}
		})
	}
}

func testCreateRetry(t *testing.T, e *env) {
	req := e.request(e.name("sess"))
	first := e.create(t, req)

	retry := req
	retry.Question.Request.Arguments = json.RawMessage(`{"different":true}`)
	retry.TTL = time.Hour
	again, created, err := Create(e.ctx, e.requests, retry)
	if err != nil || created {
		t.Fatalf("retry Create: created = %v, err = %v; want the existing record", created, err)
	}
	checkSame(t, "retry of a pending request", again, first)

	res, err := e.requests.Decide(e.ctx, req.SessionID, req.ID, approve(first, "bob"))
	if err != nil {
		t.Fatal(err)
	}
	checkApplied(t, "Decide", res, messages.StateApproved)
	again, created, err = Create(e.ctx, e.requests, req)
	if err != nil || created {
		t.Fatalf("retry Create after approval: created = %v, err = %v; want the existing record", created, err)
	}
	checkSame(t, "retry of an approved request", again, res.Record)
}

func testCreateTwoSessions(t *testing.T, e *env) {
	a := e.request(e.name("sess"))
	b := a
	b.SessionID = e.name("sess")
	ra, rb := e.create(t, a), e.create(t, b)
	if _, err := e.requests.Decide(e.ctx, a.SessionID, a.ID, deny(ra, "bob")); err != nil {
		t.Fatal(err)
	}
	if got := e.get(t, rb); got.State != messages.StatePending {
		t.Errorf("the other session's record is %s after a deny in the first, want pending", got.State)
	}
	if got := e.get(t, ra); got.State != messages.StateRejected {
		t.Errorf("denied record is %s, want rejected", got.State)
	}
}

func testGetUnknown(t *testing.T, e *env) {
	_, err := e.requests.Get(e.ctx, e.name("sess"), e.name("req"))
	wantErr(t, "Get", err, session.ErrNotFound)
}

func testGetInvalid(t *testing.T, e *env) {
	_, err := e.requests.Get(e.ctx, "", e.name("req"))
	wantErr(t, "Get with an empty session id", err, session.ErrInvalid)
	_, err = e.requests.Get(e.ctx, e.name("sess"), "")
	wantErr(t, "Get with an empty request id", err, session.ErrInvalid)
}

func testDecideDeny(t *testing.T, e *env) {
	rec := e.create(t, e.request(e.name("sess")))
	v := deny(rec, "bob")
	before := e.now(t)
	res, err := e.requests.Decide(e.ctx, rec.SessionID, rec.ID, v)
	after := e.now(t)
	if err != nil {
		t.Fatal(err)
	}
	checkApplied(t, "Decide deny", res, messages.StateRejected)
	if !sameDecision(res.Record.Decision, &v.Decision) {
		t.Errorf("Decision = %s, want the vote's %s", wire(res.Record.Decision), wire(&v.Decision))
	}
	between(t, "DecidedAt", res.Record.DecidedAt, before, after)
	if len(res.Record.Approvals) != 0 {
		t.Errorf("Approvals = %v after a deny, want none", res.Record.Approvals)
	}
	checkSame(t, "Get after deny", e.get(t, rec), res.Record)
}

func testDecideApprove(t *testing.T, e *env) {
	rec := e.create(t, e.request(e.name("sess")))
	v := approve(rec, "bob")
	res, err := e.requests.Decide(e.ctx, rec.SessionID, rec.ID, v)
	if err != nil {
		t.Fatal(err)
	}
	checkApplied(t, "Decide approve", res, messages.StateApproved)
	if !slices.Equal(res.Record.Approvals, []string{"bob"}) {
		t.Errorf("Approvals = %v, want [bob]", res.Record.Approvals)
	}
	if !sameDecision(res.Record.Decision, &v.Decision) || res.Record.DecidedAt.IsZero() {
		t.Errorf("Decision = %v at %v, want the vote's decision and a time", res.Record.Decision, res.Record.DecidedAt)
	}
	checkSame(t, "Get after approval", e.get(t, rec), res.Record)
}

func testDecideQuorum(t *testing.T, e *env) {
	req := e.request(e.name("sess"))
	req.ApprovalsRequired = 3
	rec := e.create(t, req)
	for i, who := range []string{"ann", "bob"} {
		res, err := e.requests.Decide(e.ctx, rec.SessionID, rec.ID, approve(rec, who))
		if err != nil {
			t.Fatal(err)
		}
		checkApplied(t, "approval below the quorum", res, messages.StatePending)
		if want := []string{"ann", "bob"}[:i+1]; !slices.Equal(res.Record.Approvals, want) {
			t.Errorf("Approvals = %v, want %v", res.Record.Approvals, want)
		}
		if res.Record.Decision != nil || !res.Record.DecidedAt.IsZero() {
			t.Errorf("a pending record has decision %v at %v", res.Record.Decision, res.Record.DecidedAt)
		}
	}
	if got, err := e.pending.ListPendingSession(e.ctx, rec.SessionID); err != nil || len(got) != 1 {
		t.Errorf("ListPendingSession below the quorum = %v, %v; want the request", got, err)
	}
	last := approve(rec, "cid")
	res, err := e.requests.Decide(e.ctx, rec.SessionID, rec.ID, last)
	if err != nil {
		t.Fatal(err)
	}
	checkApplied(t, "approval reaching the quorum", res, messages.StateApproved)
	if !slices.Equal(res.Record.Approvals, []string{"ann", "bob", "cid"}) {
		t.Errorf("Approvals = %v, want [ann bob cid]", res.Record.Approvals)
	}
	if !sameDecision(res.Record.Decision, &last.Decision) {
		t.Errorf("Decision = %s, want the deciding vote's %s", wire(res.Record.Decision), wire(&last.Decision))
	}
}

func testDecideDenyAfterApprovals(t *testing.T, e *env) {
	req := e.request(e.name("sess"))
	req.ApprovalsRequired = 2
	rec := e.create(t, req)
	if _, err := e.requests.Decide(e.ctx, rec.SessionID, rec.ID, approve(rec, "ann")); err != nil {
		t.Fatal(err)
	}
	v := deny(rec, "bob")
	res, err := e.requests.Decide(e.ctx, rec.SessionID, rec.ID, v)
	if err != nil {
		t.Fatal(err)
	}
	checkApplied(t, "deny after an approval", res, messages.StateRejected)
	if !slices.Equal(res.Record.Approvals, []string{"ann"}) || !sameDecision(res.Record.Decision, &v.Decision) {
		t.Errorf("record = %s, want approvals [ann] and bob's decision", describe(res.Record))
	}
}

func testDecideKeepsScopes(t *testing.T, e *env) {
	req := e.request(e.name("sess"))
	req.ApprovalsRequired = 4
	rec := e.create(t, req)
	votes := []struct {
		who   string
		scope messages.Scope
		want  messages.Scope
	}{
		{"ann", messages.ScopeSession, messages.ScopeSession},
		{"bob", "", ""},
		{"cid", messages.ScopeAlwaysPrefix, messages.ScopeAlwaysPrefix},
	}
	var want []messages.Scope
	for _, v := range votes {
		vote := approve(rec, v.who)
		vote.Scope = v.scope
		res, err := e.requests.Decide(e.ctx, rec.SessionID, rec.ID, vote)
		if err != nil {
			t.Fatal(err)
		}
		checkApplied(t, "approval with scope "+string(v.scope), res, messages.StatePending)
		want = append(want, v.want)
		if !slices.Equal(res.Record.ApprovalScopes, want) {
			t.Errorf("ApprovalScopes after %s = %v, want %v", v.who, res.Record.ApprovalScopes, want)
		}
	}
	// A re-vote of ann with another scope is refused and changes nothing.
	again := approve(rec, "ann")
	again.Scope = messages.ScopeOnce
	res, err := e.requests.Decide(e.ctx, rec.SessionID, rec.ID, again)
	if err != nil {
		t.Fatal(err)
	}
	checkRefused(t, "re-vote of ann with scope once", res, session.ErrDuplicateVote, messages.StatePending)
	if !slices.Equal(res.Record.ApprovalScopes, want) {
		t.Errorf("ApprovalScopes after a re-vote = %v, want %v", res.Record.ApprovalScopes, want)
	}
	last := approve(rec, "dee")
	last.Scope = messages.ScopeAlways
	last.Decision.Scope = messages.ScopeAlways
	res, err = e.requests.Decide(e.ctx, rec.SessionID, rec.ID, last)
	if err != nil {
		t.Fatal(err)
	}
	checkApplied(t, "approval reaching the quorum", res, messages.StateApproved)
	want = append(want, messages.ScopeAlways)
	got := e.get(t, rec)
	if !slices.Equal(got.Approvals, []string{"ann", "bob", "cid", "dee"}) || !slices.Equal(got.ApprovalScopes, want) {
		t.Errorf("settled record: approvals %v scopes %v, want [ann bob cid dee] %v", got.Approvals, got.ApprovalScopes, want)
	}
	for i, w := range []messages.Scope{messages.ScopeSession, messages.ScopeOnce, messages.ScopeAlwaysPrefix, messages.ScopeAlways} {
		if s := got.ApprovalScope(i); s != w {
			t.Errorf("ApprovalScope(%d) = %s, want %s (a vote without a scope reads as once)", i, s, w)
		}
	}
	// Bad scopes and scoped denies are refused and change nothing.
	other := e.create(t, e.request(e.name("sess")))
	bad := approve(other, "ann")
	bad.Scope = "forever"
	_, err = e.requests.Decide(e.ctx, other.SessionID, other.ID, bad)
	wantErr(t, "Decide with an unknown scope", err, session.ErrInvalid)
	scopedDeny := deny(other, "ann")
	scopedDeny.Scope = messages.ScopeSession
	_, err = e.requests.Decide(e.ctx, other.SessionID, other.ID, scopedDeny)
	wantErr(t, "Decide with a scoped deny", err, session.ErrInvalid)
	spaced := approve(other, "ann session")
	_, err = e.requests.Decide(e.ctx, other.SessionID, other.ID, spaced)
	wantErr(t, "Decide with a space in the approver id", err, session.ErrInvalid)
	if g := e.get(t, other); g.State != messages.StatePending || len(g.Approvals) != 0 {
		t.Errorf("record after invalid votes = %s, want untouched", describe(g))
	}
}

func testDecideDuplicate(t *testing.T, e *env) {
	req := e.request(e.name("sess"))
	req.ApprovalsRequired = 2
	rec := e.create(t, req)
	first, err := e.requests.Decide(e.ctx, rec.SessionID, rec.ID, approve(rec, "ann"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []session.Vote{approve(rec, "ann"), deny(rec, "ann")} {
		res, err := e.requests.Decide(e.ctx, rec.SessionID, rec.ID, v)
		checkStands(t, "second vote of ann", res, err, session.ErrDuplicateVote, messages.StatePending, first.Record)
	}
	checkSame(t, "Get after duplicate votes", e.get(t, rec), first.Record)
}

func testDecideSettled(t *testing.T, e *env) {
	rec := e.create(t, e.request(e.name("sess")))
	won, err := e.requests.Decide(e.ctx, rec.SessionID, rec.ID, deny(rec, "ann"))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []session.Vote{approve(rec, "bob"), deny(rec, "bob"), deny(rec, "ann")} {
		res, err := e.requests.Decide(e.ctx, rec.SessionID, rec.ID, v)
		checkStands(t, "vote on a rejected request", res, err, session.ErrSettled, messages.StateRejected, won.Record)
	}
}

func testDecideUnknown(t *testing.T, e *env) {
	rec := &session.Record{Request: e.request(e.name("sess"))}
	_, err := e.requests.Decide(e.ctx, rec.SessionID, rec.ID, approve(rec, "ann"))
	wantErr(t, "Decide", err, session.ErrNotFound)
}

func testDecideInvalid(t *testing.T, e *env) {
	rec := e.create(t, e.request(e.name("sess")))
	_, err := e.requests.Decide(e.ctx, rec.SessionID, rec.ID, approve(rec, ""))
	wantErr(t, "Decide with an empty approver", err, session.ErrInvalid)
	_, err = e.requests.Decide(e.ctx, rec.SessionID, "", approve(rec, "ann"))
	wantErr(t, "Decide with an empty request id", err, session.ErrInvalid)
	_, err = e.requests.Decide(e.ctx, "", rec.ID, approve(rec, "ann"))
	wantErr(t, "Decide with an empty session id", err, session.ErrInvalid)
	if got := e.get(t, rec); got.State != messages.StatePending || len(got.Approvals) != 0 {
		t.Errorf("record after invalid votes = %s, want untouched", describe(got))
	}
}

func testSettle(t *testing.T, e *env) {
	sess := e.name("sess")
	for _, state := range []messages.State{messages.StateApproved, messages.StateRejected, messages.StateCancelled} {
		t.Run(string(state), func(t *testing.T) {
			rec := e.create(t, e.request(sess))
			d := decision(rec, messages.OutcomeAllow, messages.ReasonCascade, "policy")
			before := e.now(t)
			res, err := e.requests.Settle(e.ctx, rec.SessionID, rec.ID, state, d)
			after := e.now(t)
			if err != nil {
				t.Fatal(err)
			}
			checkApplied(t, "Settle", res, state)
			if !sameDecision(res.Record.Decision, &d) {
				t.Errorf("Decision = %s, want %s", wire(res.Record.Decision), wire(&d))
			}
			between(t, "DecidedAt", res.Record.DecidedAt, before, after)
			checkSame(t, "Get after Settle", e.get(t, rec), res.Record)
			if got, err := e.pending.ListPendingSession(e.ctx, sess); err != nil || slices.Contains(ids(got), rec.ID) {
				t.Errorf("ListPendingSession after Settle = %v, %v; want the request gone", ids(got), err)
			}
		})
	}
}

func testSettleInvalidState(t *testing.T, e *env) {
	rec := e.create(t, e.request(e.name("sess")))
	d := decision(rec, messages.OutcomeDeny, messages.ReasonTimeout, "policy")
	for _, state := range []messages.State{messages.StatePending, messages.StateExpired, messages.StateDecided, "", "approve"} {
		_, err := e.requests.Settle(e.ctx, rec.SessionID, rec.ID, state, d)
		wantErr(t, "Settle to "+string(state), err, session.ErrInvalid)
	}
	if got := e.get(t, rec); got.State != messages.StatePending {
		t.Errorf("record after invalid Settles is %s, want pending", got.State)
	}
}

func testSettleSettled(t *testing.T, e *env) {
	rec := e.create(t, e.request(e.name("sess")))
	won, err := e.requests.Decide(e.ctx, rec.SessionID, rec.ID, approve(rec, "ann"))
	if err != nil {
		t.Fatal(err)
	}
	for _, state := range []messages.State{messages.StateApproved, messages.StateRejected, messages.StateCancelled} {
		res, err := e.requests.Settle(e.ctx, rec.SessionID, rec.ID, state, decision(rec, messages.OutcomeDeny, messages.ReasonCancelled, "agent"))
		checkStands(t, "Settle of an approved request", res, err, session.ErrSettled, messages.StateApproved, won.Record)
	}
}

func testSettleUnknown(t *testing.T, e *env) {
	rec := &session.Record{Request: e.request(e.name("sess"))}
	_, err := e.requests.Settle(e.ctx, rec.SessionID, rec.ID, messages.StateApproved, decision(rec, messages.OutcomeAllow, messages.ReasonCascade, "policy"))
	wantErr(t, "Settle", err, session.ErrNotFound)
}

func testCopies(t *testing.T, e *env) {
	req := e.request(e.name("sess"))
	req.ApprovalsRequired = 2
	rec := e.create(t, req)
	want := rec.Clone()
	scribble := func(r *session.Record) {
		r.State = messages.StateApproved
		r.Teams[0] = "scribbled"
		r.Question.Request.Arguments[0] = 'X'
		r.Question.Risk.Subcommands[0].Words[0] = "scribbled"
		r.Question.BatchRemaining[0].Arguments[0] = 'X'
		r.Question.Always.Patterns[0] = "scribbled"
		r.ExpiresAt = r.ExpiresAt.Add(time.Hour)
		if len(r.Approvals) > 0 {
			r.Approvals[0] = "scribbled"
		}
		r.Approvals = append(r.Approvals, "mallory")
		if r.Decision != nil {
			r.Decision.Reason = "scribbled"
			r.Decision.Answer[0] = 'X'
		}
	}
	scribble(rec)
	scribble(e.get(t, want))
	res, err := e.requests.Decide(e.ctx, want.SessionID, want.ID, approve(want, "ann"))
	if err != nil {
		t.Fatal(err)
	}
	want.Approvals = []string{"ann"}
	checkSame(t, "Decide after changing returned copies", res.Record, want)
	scribble(res.Record)
	list, err := e.pending.ListPendingSession(e.ctx, want.SessionID)
	if err != nil || len(list) != 1 {
		t.Fatalf("ListPendingSession = %v, %v", list, err)
	}
	scribble(list[0])
	l, err := e.requests.Lookup(e.ctx, session.LookupQuery{SessionID: want.SessionID, RequestID: want.ID})
	if err != nil || l.Existing == nil {
		t.Fatalf("Lookup = %+v, %v", l, err)
	}
	scribble(l.Existing)
	again, _, err := Create(e.ctx, e.requests, req)
	if err != nil {
		t.Fatal(err)
	}
	scribble(again)
	checkSame(t, "Get after changing returned copies", e.get(t, want), want)

	v := deny(want, "bob")
	res, err = e.requests.Decide(e.ctx, want.SessionID, want.ID, v)
	if err != nil {
		t.Fatal(err)
	}
	scribble(res.Record)
	v.Decision.Answer[0] = 'X' // the caller reuses its vote
	got := e.get(t, want)
	wantD := deny(want, "bob").Decision
	if got.State != messages.StateRejected || !sameDecision(got.Decision, &wantD) {
		t.Errorf("record after changing copies = %s, want rejected with bob's decision", describe(got))
	}
}

// ctxCancelled returns a context that is already cancelled.
func ctxCancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// heldTests cover the two-step create: Prepare stores a request nobody can
// answer, Open makes it pending.
func (r *runner) heldTests() []test {
	return []test{
		{"Prepare stores a held request that only Lookup returns", testPrepareHidden},
		{"Nobody can answer, settle, stop or cancel a held request", testHeldUnanswerable},
		{"Open makes a held request pending, listed and answerable", testOpen},
		{"Open of a pending or settled request is not applied", testOpenAgain},
		{"Open refuses while the session is stopped and works after a new turn", testOpenStopped},
		{"Prepare returns the existing record of its id and refuses a stopped session", testPrepareExisting},
		{"Open of an unknown request is ErrNotFound", testOpenUnknown},
		{"Concurrent Opens of one held request apply exactly once", testRaceOpen},
	}
}

// prepare stores req held and fails the test unless it was created.
func (e *env) prepare(t *testing.T, req session.Request) *session.Record {
	t.Helper()
	rec, created, err := e.requests.Prepare(e.ctx, req)
	if err != nil {
		t.Fatalf("Prepare(%s/%s): %v", req.SessionID, req.ID, err)
	}
	if !created {
		t.Fatalf("Prepare(%s/%s): created = false for a new request id", req.SessionID, req.ID)
	}
	if rec.State != session.StateHeld {
		t.Fatalf("Prepare returned %s, want state %s", describe(rec), session.StateHeld)
	}
	return rec
}

func (e *env) open(t *testing.T, rec *session.Record) session.Result {
	t.Helper()
	res, err := e.requests.Open(e.ctx, rec.SessionID, rec.ID)
	if err != nil {
		t.Fatalf("Open(%s/%s): %v", rec.SessionID, rec.ID, err)
	}
	return res
}

// pendingIDs returns the ids every ListPending method returns for rec's
// session, agent and first team.
func (e *env) pendingIDs(t *testing.T, rec *session.Record) [3][]string {
	t.Helper()
	var out [3][]string
	for i, list := range []func() ([]*session.Record, error){
		func() ([]*session.Record, error) { return e.pending.ListPendingSession(e.ctx, rec.SessionID) },
		func() ([]*session.Record, error) { return e.pending.ListPendingAgent(e.ctx, rec.AgentID) },
		func() ([]*session.Record, error) { return e.pending.ListPendingTeam(e.ctx, rec.Teams[0]) },
	} {
		recs, err := list()
		if err != nil {
			t.Fatalf("ListPending: %v", err)
		}
		for _, r := range recs {
			out[i] = append(out[i], r.ID)
		}
	}
	return out
}

func testPrepareHidden(t *testing.T, e *env) {
	req := e.request(e.name("sess"))
	rec := e.prepare(t, req)
	checkRequest(t, rec, req)
	if _, err := e.requests.Get(e.ctx, rec.SessionID, rec.ID); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Get of a held request: %v, want ErrNotFound", err)
	}
	l, err := e.requests.Lookup(e.ctx, session.LookupQuery{SessionID: rec.SessionID, RequestID: rec.ID, AgentID: rec.AgentID})
	if err != nil {
		t.Fatalf("Lookup: %v", err)
	}
	if l.Existing == nil || l.Existing.State != session.StateHeld {
		t.Fatalf("Lookup of a held request: %s, want it held", describe(l.Existing))
	}
	checkRequest(t, l.Existing, req)
	for i, ids := range e.pendingIDs(t, rec) {
		if len(ids) != 0 {
			t.Errorf("list %d returned %v for a held request, want nothing", i, ids)
		}
	}
}

func testHeldUnanswerable(t *testing.T, e *env) {
	sess := e.name("sess")
	rec := e.prepare(t, e.request(sess))
	if _, err := e.requests.Decide(e.ctx, sess, rec.ID, approve(rec, "bob")); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Decide on a held request: %v, want ErrNotFound", err)
	}
	if _, err := e.requests.Settle(e.ctx, sess, rec.ID, messages.StateCancelled, cancelled(rec)); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Settle on a held request: %v, want ErrNotFound", err)
	}
	mk := func(r *session.Record) messages.Decision { return cancelled(r) }
	if got, err := e.sessions.CancelSession(e.ctx, sess, []string{rec.ID}, mk); err != nil || len(got) != 0 {
		t.Errorf("CancelSession of a held request by id: %d settled, %v; want none", len(got), err)
	}
	if got, err := e.sessions.CancelSession(e.ctx, sess, nil, mk); err != nil || len(got) != 0 {
		t.Errorf("CancelSession of the session: %d settled, %v; want none", len(got), err)
	}
	if got, err := e.sessions.Stop(e.ctx, sess, session.StopSignal{Reason: "stop"}, mk); err != nil || len(got) != 0 {
		t.Errorf("Stop: %d settled, %v; want none", len(got), err)
	}
	if _, err := e.sessions.NewTurn(e.ctx, sess, session.Turn{}); err != nil {
		t.Fatal(err)
	}
	// Still held, still openable: none of the above touched it.
	res := e.open(t, rec)
	if !res.Applied || res.Record.State != messages.StatePending || len(res.Record.Approvals) != 0 {
		t.Fatalf("Open after the refused calls: applied=%v %s, want it opened with no approval", res.Applied, describe(res.Record))
	}
}

func testOpen(t *testing.T, e *env) {
	req := e.request(e.name("sess"))
	held := e.prepare(t, req)
	res := e.open(t, held)
	if !res.Applied || res.Refusal != nil || res.Record.State != messages.StatePending {
		t.Fatalf("Open: applied=%v refusal=%v %s, want applied and pending", res.Applied, res.Refusal, describe(res.Record))
	}
	checkRequest(t, res.Record, req)
	if !res.Record.CreatedAt.Equal(held.CreatedAt) || !res.Record.ExpiresAt.Equal(held.ExpiresAt) {
		t.Errorf("Open changed the times: %s, prepared %s", describe(res.Record), describe(held))
	}
	checkSame(t, "Get after Open", e.get(t, held), res.Record)
	for i, ids := range e.pendingIDs(t, held) {
		if len(ids) != 1 || ids[0] != held.ID {
			t.Errorf("list %d returned %v, want [%s]", i, ids, held.ID)
		}
	}
	vote, err := e.requests.Decide(e.ctx, held.SessionID, held.ID, approve(held, "bob"))
	if err != nil || !vote.Applied || vote.Record.State != messages.StateApproved {
		t.Fatalf("Decide after Open: %+v %v, want it approved", vote, err)
	}
}

func testOpenAgain(t *testing.T, e *env) {
	held := e.prepare(t, e.request(e.name("sess")))
	first := e.open(t, held)
	again := e.open(t, held)
	if again.Applied || again.Refusal != nil || again.Record.State != messages.StatePending {
		t.Fatalf("second Open: applied=%v refusal=%v %s, want not applied, no refusal, pending", again.Applied, again.Refusal, describe(again.Record))
	}
	checkSame(t, "second Open's record", again.Record, first.Record)
	if _, err := e.requests.Decide(e.ctx, held.SessionID, held.ID, deny(held, "bob")); err != nil {
		t.Fatal(err)
	}
	settled := e.open(t, held)
	if settled.Applied || !errors.Is(settled.Refusal, session.ErrSettled) || settled.Record.State != messages.StateRejected {
		t.Fatalf("Open of a rejected request: applied=%v refusal=%v %s, want ErrSettled and the rejection", settled.Applied, settled.Refusal, describe(settled.Record))
	}
}

func testOpenStopped(t *testing.T, e *env) {
	sess := e.name("sess")
	held := e.prepare(t, e.request(sess))
	if _, err := e.sessions.Stop(e.ctx, sess, session.StopSignal{Reason: "stop"}, func(r *session.Record) messages.Decision { return cancelled(r) }); err != nil {
		t.Fatal(err)
	}
	if _, err := e.requests.Open(e.ctx, sess, held.ID); !errors.Is(err, session.ErrStopped) {
		t.Fatalf("Open in a stopped session: %v, want ErrStopped", err)
	}
	l, err := e.requests.Lookup(e.ctx, session.LookupQuery{SessionID: sess, RequestID: held.ID})
	if err != nil || l.Existing == nil || l.Existing.State != session.StateHeld {
		t.Fatalf("after the refused Open: %s %v, want it still held", describe(l.Existing), err)
	}
	if ids := e.pendingIDs(t, held); len(ids[0]) != 0 {
		t.Fatalf("listed %v after the refused Open", ids[0])
	}
	if _, err := e.sessions.NewTurn(e.ctx, sess, session.Turn{}); err != nil {
		t.Fatal(err)
	}
	if res := e.open(t, held); !res.Applied {
		t.Fatalf("Open after a new turn: %s, want it opened", describe(res.Record))
	}
}

func testPrepareExisting(t *testing.T, e *env) {
	sess := e.name("sess")
	req := e.request(sess)
	held := e.prepare(t, req)
	again, created, err := e.requests.Prepare(e.ctx, req)
	if err != nil || created {
		t.Fatalf("second Prepare: created=%v %v, want the existing record", created, err)
	}
	checkSame(t, "second Prepare's record", again, held)
	e.open(t, held)
	again, created, err = e.requests.Prepare(e.ctx, req)
	if err != nil || created || again.State != messages.StatePending {
		t.Fatalf("Prepare of an opened id: created=%v %s %v, want the pending record", created, describe(again), err)
	}
	if _, err := e.sessions.Stop(e.ctx, sess, session.StopSignal{Reason: "stop"}, func(r *session.Record) messages.Decision { return cancelled(r) }); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.requests.Prepare(e.ctx, e.request(sess)); !errors.Is(err, session.ErrStopped) {
		t.Fatalf("Prepare in a stopped session: %v, want ErrStopped", err)
	}
}

func testOpenUnknown(t *testing.T, e *env) {
	if _, err := e.requests.Open(e.ctx, e.name("sess"), e.name("req")); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Open of an unknown request: %v, want ErrNotFound", err)
	}
	if _, err := e.requests.Open(e.ctx, "", "x"); !errors.Is(err, session.ErrInvalid) {
		t.Fatalf("Open with an empty session id: %v, want ErrInvalid", err)
	}
}

func testRaceOpen(t *testing.T, e *env) {
	held := e.prepare(t, e.request(e.name("sess")))
	const n = 30
	res := make([]session.Result, n)
	errs := make([]error, n)
	race(n, func(i int) { res[i], errs[i] = e.requests.Open(e.ctx, held.SessionID, held.ID) })
	applied := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("Open %d: %v", i, errs[i])
		}
		if res[i].Record.State != messages.StatePending {
			t.Fatalf("Open %d: %s, want pending", i, describe(res[i].Record))
		}
		if res[i].Applied {
			applied++
		}
	}
	if applied != 1 {
		t.Fatalf("%d of %d concurrent Opens applied, want exactly 1", applied, n)
	}
}

// testHeldExpiry: a held request that reaches its expiry is not opened, is
// never returned by ClaimExpired and is gone afterwards; an opened one
// next to it expires as usual.
func testHeldExpiry(t *testing.T, e *env) {
	sess := e.name("sess")
	held := e.prepare(t, e.shortRequest(sess, shortTTL))
	opened := e.prepare(t, e.shortRequest(sess, shortTTL))
	e.open(t, opened)
	e.waitDue(t, held.ExpiresAt)
	res, err := e.requests.Open(e.ctx, sess, held.ID)
	if err != nil || res.Applied || !errors.Is(res.Refusal, session.ErrExpired) {
		t.Fatalf("Open after the expiry: applied=%v refusal=%v %v, want ErrExpired", res.Applied, res.Refusal, err)
	}
	c := newClaims(opened)
	c.forbid(held)
	e.drain(t, c, 10)
	c.checkOnce(t)
	l, err := e.requests.Lookup(e.ctx, session.LookupQuery{SessionID: sess, RequestID: held.ID})
	if err != nil {
		t.Fatal(err)
	}
	if l.Existing != nil {
		t.Fatalf("after ClaimExpired the held request is still stored: %s", describe(l.Existing))
	}
	if _, err := e.requests.Open(e.ctx, sess, held.ID); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Open after the drop: %v, want ErrNotFound", err)
	}
}

func cancelled(rec *session.Record) messages.Decision {
	return decision(rec, messages.OutcomeDeny, messages.ReasonCancelled, "agent")
}

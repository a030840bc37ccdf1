package storetest

import (
	"errors"
	"testing"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

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
	rec, created, err := e.s.Prepare(e.ctx, req)
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
	res, err := e.s.Open(e.ctx, rec.SessionID, rec.ID)
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
		func() ([]*session.Record, error) { return e.s.ListPendingSession(e.ctx, rec.SessionID) },
		func() ([]*session.Record, error) { return e.s.ListPendingAgent(e.ctx, rec.AgentID) },
		func() ([]*session.Record, error) { return e.s.ListPendingTeam(e.ctx, rec.Teams[0]) },
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
	if _, err := e.s.Get(e.ctx, rec.SessionID, rec.ID); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Get of a held request: %v, want ErrNotFound", err)
	}
	l, err := e.s.Lookup(e.ctx, session.LookupQuery{SessionID: rec.SessionID, RequestID: rec.ID, AgentID: rec.AgentID})
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
	if _, err := e.s.Decide(e.ctx, sess, rec.ID, approve(rec, "bob")); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Decide on a held request: %v, want ErrNotFound", err)
	}
	if _, err := e.s.Settle(e.ctx, sess, rec.ID, messages.StateCancelled, cancelled(rec)); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("Settle on a held request: %v, want ErrNotFound", err)
	}
	mk := func(r *session.Record) messages.Decision { return cancelled(r) }
	if got, err := e.s.CancelSession(e.ctx, sess, []string{rec.ID}, mk); err != nil || len(got) != 0 {
		t.Errorf("CancelSession of a held request by id: %d settled, %v; want none", len(got), err)
	}
	if got, err := e.s.CancelSession(e.ctx, sess, nil, mk); err != nil || len(got) != 0 {
		t.Errorf("CancelSession of the session: %d settled, %v; want none", len(got), err)
	}
	if got, err := e.s.Stop(e.ctx, sess, "stop", mk); err != nil || len(got) != 0 {
		t.Errorf("Stop: %d settled, %v; want none", len(got), err)
	}
	if _, err := e.s.NewTurn(e.ctx, sess); err != nil {
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
	vote, err := e.s.Decide(e.ctx, held.SessionID, held.ID, approve(held, "bob"))
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
	if _, err := e.s.Decide(e.ctx, held.SessionID, held.ID, deny(held, "bob")); err != nil {
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
	if _, err := e.s.Stop(e.ctx, sess, "stop", func(r *session.Record) messages.Decision { return cancelled(r) }); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.Open(e.ctx, sess, held.ID); !errors.Is(err, session.ErrStopped) {
		t.Fatalf("Open in a stopped session: %v, want ErrStopped", err)
	}
	l, err := e.s.Lookup(e.ctx, session.LookupQuery{SessionID: sess, RequestID: held.ID})
	if err != nil || l.Existing == nil || l.Existing.State != session.StateHeld {
		t.Fatalf("after the refused Open: %s %v, want it still held", describe(l.Existing), err)
	}
	if ids := e.pendingIDs(t, held); len(ids[0]) != 0 {
		t.Fatalf("listed %v after the refused Open", ids[0])
	}
	if _, err := e.s.NewTurn(e.ctx, sess); err != nil {
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
	again, created, err := e.s.Prepare(e.ctx, req)
	if err != nil || created {
		t.Fatalf("second Prepare: created=%v %v, want the existing record", created, err)
	}
	checkSame(t, "second Prepare's record", again, held)
	e.open(t, held)
	again, created, err = e.s.Prepare(e.ctx, req)
	if err != nil || created || again.State != messages.StatePending {
		t.Fatalf("Prepare of an opened id: created=%v %s %v, want the pending record", created, describe(again), err)
	}
	if _, err := e.s.Stop(e.ctx, sess, "stop", func(r *session.Record) messages.Decision { return cancelled(r) }); err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.s.Prepare(e.ctx, e.request(sess)); !errors.Is(err, session.ErrStopped) {
		t.Fatalf("Prepare in a stopped session: %v, want ErrStopped", err)
	}
}

func testOpenUnknown(t *testing.T, e *env) {
	if _, err := e.s.Open(e.ctx, e.name("sess"), e.name("req")); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Open of an unknown request: %v, want ErrNotFound", err)
	}
	if _, err := e.s.Open(e.ctx, "", "x"); !errors.Is(err, session.ErrInvalid) {
		t.Fatalf("Open with an empty session id: %v, want ErrInvalid", err)
	}
}

func testRaceOpen(t *testing.T, e *env) {
	held := e.prepare(t, e.request(e.name("sess")))
	const n = 30
	res := make([]session.Result, n)
	errs := make([]error, n)
	race(n, func(i int) { res[i], errs[i] = e.s.Open(e.ctx, held.SessionID, held.ID) })
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
	res, err := e.s.Open(e.ctx, sess, held.ID)
	if err != nil || res.Applied || !errors.Is(res.Refusal, session.ErrExpired) {
		t.Fatalf("Open after the expiry: applied=%v refusal=%v %v, want ErrExpired", res.Applied, res.Refusal, err)
	}
	c := newClaims(opened)
	c.forbid(held)
	e.drain(t, c, 10)
	c.checkOnce(t)
	l, err := e.s.Lookup(e.ctx, session.LookupQuery{SessionID: sess, RequestID: held.ID})
	if err != nil {
		t.Fatal(err)
	}
	if l.Existing != nil {
		t.Fatalf("after ClaimExpired the held request is still stored: %s", describe(l.Existing))
	}
	if _, err := e.s.Open(e.ctx, sess, held.ID); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Open after the drop: %v, want ErrNotFound", err)
	}
}

func cancelled(rec *session.Record) messages.Decision {
	return decision(rec, messages.OutcomeDeny, messages.ReasonCancelled, "agent")
}

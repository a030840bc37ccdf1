package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// outboxTests cover the outbox (session.DefaultEffectLease): which
// transitions record an entry, the lease of the transition's caller,
// ClaimEffects after it and AckEffects. ClaimEffects claims across the
// backend, so they run one at a time, with the expiry tests; each looks
// only at the entries of its own sessions.
func (r *runner) outboxTests() []test {
	return []test{
		{"Open, votes, Settle, Stop, CancelSession and ClaimExpired each record an entry that is claimed once its lease ends", testOutboxRecords},
		{"Transitions that are not applied record nothing, and acknowledged entries are never claimed", testOutboxNothingOwed},
		{"An acknowledgement of an older transition leaves the entry of a newer one", testOutboxNewerStays},
		{"A claimed entry is leased to its claimer and claimed again when that lease ends unacknowledged", testOutboxReclaim},
		{"Concurrent ClaimEffects callers each get a different share of the ripe entries", testOutboxRaceClaim},
	}
}

// effects claims until the entries of sessions stop coming (after the
// lease, when wait is set) and returns the records claimed, by request.
func (e *env) effects(t *testing.T, wait bool, sessions ...string) map[string]*session.Record {
	t.Helper()
	return claimUntilDry(t, e, wait, "ClaimEffects", "records", e.outbox.ClaimEffects, sessions,
		func(r *session.Record) (string, string) { return r.SessionID, r.ID })
}

// claimUntilDry calls claim (named name, returning noun) with a limit of
// 100 until it returns nothing (after the lease, when wait is set) and
// returns what it claimed of sessions, by its key (ident returns its
// session and key); more than 100, or one claimed twice within one lease,
// fails the test.
func claimUntilDry[T any](t *testing.T, e *env, wait bool, name, noun string, claim func(context.Context, int) ([]T, error),
	sessions []string, ident func(T) (sess, key string)) map[string]T {
	t.Helper()
	if wait {
		time.Sleep(e.r.h.EffectLease + 50*time.Millisecond)
	}
	out := map[string]T{}
	first := map[string]time.Time{} // when the claim that first returned each key started
	for calls := 0; ; calls++ {
		if calls == 100 {
			t.Fatalf("%s still returned %s after %d calls", name, noun, calls)
		}
		start := time.Now()
		got, err := claim(e.ctx, 100)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if len(got) > 100 {
			t.Fatalf("%s(100) returned %d %s", name, len(got), noun)
		}
		for _, v := range got {
			sess, key := ident(v)
			if !slices.Contains(sessions, sess) {
				continue
			}
			if at, dup := first[key]; dup {
				// Again after its lease ran out (a slow machine) is a lease
				// doing its work.
				if time.Now().Before(at.Add(e.r.h.EffectLease)) {
					t.Fatalf("%s returned %s twice within one lease", name, key)
				}
				continue
			}
			first[key] = start
			out[key] = v
		}
		if len(got) == 0 {
			return out
		}
	}
}

// claimExpiredOf claims expired requests until some of session sess come
// back (for up to 5 s) and returns those.
func (e *env) claimExpiredOf(t *testing.T, sess string) []*session.Record {
	t.Helper()
	var claimed []*session.Record
	for deadline := time.Now().Add(5 * time.Second); len(claimed) == 0 && time.Now().Before(deadline); {
		got, err := e.expiry.ClaimExpired(e.ctx, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range got {
			if r.SessionID == sess {
				claimed = append(claimed, r)
			}
		}
	}
	return claimed
}

func testOutboxRecords(t *testing.T, e *env) {
	sess, other := e.name("sess"), e.name("sess")
	// The expiry first: its wait is longer than the lease.
	expired := e.createShort(t, sess, shortTTL)
	e.waitDue(t, expired.ExpiresAt)
	first := time.Now() // no entry of this test is older
	if claimed := e.claimExpiredOf(t, sess); len(claimed) != 1 {
		t.Fatalf("ClaimExpired returned %v of the session, want the expired request", ids(claimed))
	}

	opened := e.prepare(t, e.request(sess))
	if res := e.open(t, opened); !res.Applied {
		t.Fatalf("Open: %+v", res)
	}
	q := e.request(sess)
	q.ApprovalsRequired = 2
	counted := e.create(t, q)
	if res, err := e.requests.Decide(e.ctx, sess, counted.ID, approve(counted, "bob")); err != nil || !res.Applied {
		t.Fatalf("counted vote: %+v, %v", res, err)
	}
	voted := e.create(t, e.request(sess))
	if res, err := e.requests.Decide(e.ctx, sess, voted.ID, deny(voted, "bob")); err != nil || !res.Applied {
		t.Fatalf("deny: %+v, %v", res, err)
	}
	settled := e.create(t, e.request(sess))
	if res, err := e.requests.Settle(e.ctx, sess, settled.ID, messages.StateApproved, decision(settled, messages.OutcomeAllow, messages.ReasonCascade, "c")); err != nil || !res.Applied {
		t.Fatalf("Settle: %+v, %v", res, err)
	}
	cancelled := e.create(t, e.request(other))
	stopped := e.create(t, e.request(other))
	if got, err := e.sessions.CancelSession(e.ctx, other, []string{cancelled.ID}, (&mkRecorder{code: messages.ReasonCancelled}).mk); err != nil || len(got) != 1 {
		t.Fatalf("CancelSession: %v, %v", ids(got), err)
	}
	if got, err := e.sessions.Stop(e.ctx, other, session.StopSignal{Reason: "stop"}, (&mkRecorder{code: messages.ReasonHardStop}).mk); err != nil || len(got) != 1 {
		t.Fatalf("Stop: %v, %v", ids(got), err)
	}
	// Within the lease only the callers of the transitions may act (on a
	// slow run, -race say, the lease may be over already: then the check
	// says nothing, and the entries come back after another lease).
	got := e.effects(t, false, sess, other)
	if within := time.Since(first); within < e.r.h.EffectLease && len(got) != 0 {
		t.Fatalf("ClaimEffects %v into the lease returned %v", within, keys(got))
	}
	got = e.effects(t, true, sess, other)
	want := map[string]messages.State{
		opened.ID: messages.StatePending, counted.ID: messages.StatePending, voted.ID: messages.StateRejected,
		settled.ID: messages.StateApproved, cancelled.ID: messages.StateCancelled, stopped.ID: messages.StateRejected,
		expired.ID: messages.StateExpired,
	}
	if !slices.Equal(sorted(keys(got)), sorted(keys(want))) {
		t.Fatalf("ClaimEffects after the lease returned %v, want %v", sorted(keys(got)), sorted(keys(want)))
	}
	for id, r := range got {
		if r.State != want[id] {
			t.Errorf("claimed %s, want state %s", describe(r), want[id])
		}
	}
	if r := got[counted.ID]; len(r.Approvals) != 1 {
		t.Errorf("claimed counted request has approvals %v, want bob's", r.Approvals)
	}
	recs := make([]*session.Record, 0, len(got))
	for _, r := range got {
		recs = append(recs, r)
	}
	if err := e.outbox.AckEffects(e.ctx, recs...); err != nil {
		t.Fatal(err)
	}
	if again := e.effects(t, true, sess, other); len(again) != 0 {
		t.Fatalf("acknowledged entries were claimed again: %v", keys(again))
	}
}

func testOutboxNothingOwed(t *testing.T, e *env) {
	sess := e.name("sess")
	// Prepare announces nothing yet; the Open's entry is replaced by the
	// approval's, acknowledged below.
	rec := e.create(t, e.request(sess))
	e.prepare(t, e.request(sess))
	res, err := e.requests.Decide(e.ctx, sess, rec.ID, approve(rec, "bob"))
	if err != nil || !res.Applied {
		t.Fatalf("approve: %+v, %v", res, err)
	}
	if err := e.outbox.AckEffects(e.ctx, res.Record); err != nil {
		t.Fatal(err)
	}
	// Refused: settled already, and an Open of a settled request.
	if res, err := e.requests.Decide(e.ctx, sess, rec.ID, deny(rec, "cy")); err != nil || res.Applied {
		t.Fatalf("late deny: %+v, %v", res, err)
	}
	if res, err := e.requests.Settle(e.ctx, sess, rec.ID, messages.StateCancelled, decision(rec, messages.OutcomeDeny, messages.ReasonCancelled, "x")); err != nil || res.Applied {
		t.Fatalf("late settle: %+v, %v", res, err)
	}
	if res := e.open(t, rec); res.Applied {
		t.Fatalf("Open of a settled request applied")
	}
	if got := e.effects(t, true, sess); len(got) != 0 {
		t.Fatalf("ClaimEffects returned %v, want nothing owed", keys(got))
	}
	err = e.outbox.AckEffects(e.ctx, &session.Record{Request: session.Request{SessionID: sess}})
	wantErr(t, "AckEffects of a record without an id", err, session.ErrInvalid)
	if err := e.outbox.AckEffects(e.ctx); err != nil {
		t.Errorf("AckEffects of nothing: %v", err)
	}
}

func testOutboxNewerStays(t *testing.T, e *env) {
	sess := e.name("sess")
	q := e.request(sess)
	q.ApprovalsRequired = 2
	rec := e.create(t, q)
	first, err := e.requests.Decide(e.ctx, sess, rec.ID, approve(rec, "bob"))
	if err != nil || !first.Applied {
		t.Fatalf("first approval: %+v, %v", first, err)
	}
	second, err := e.requests.Decide(e.ctx, sess, rec.ID, approve(rec, "cy"))
	if err != nil || !second.Applied || second.Record.State != messages.StateApproved {
		t.Fatalf("second approval: %+v, %v", second, err)
	}
	// The replica that counted the first approval acknowledges late.
	if err := e.outbox.AckEffects(e.ctx, first.Record); err != nil {
		t.Fatal(err)
	}
	got := e.effects(t, true, sess)
	if r, ok := got[rec.ID]; !ok || r.State != messages.StateApproved {
		t.Fatalf("ClaimEffects returned %v, want the approval's entry", keys(got))
	}
	if err := e.outbox.AckEffects(e.ctx, second.Record); err != nil {
		t.Fatal(err)
	}
	if got := e.effects(t, true, sess); len(got) != 0 {
		t.Fatalf("entry claimed after its acknowledgement: %v", keys(got))
	}
}

func testOutboxReclaim(t *testing.T, e *env) {
	sess := e.name("sess")
	rec := e.create(t, e.request(sess))
	if res, err := e.requests.Decide(e.ctx, sess, rec.ID, deny(rec, "bob")); err != nil || !res.Applied {
		t.Fatalf("deny: %+v, %v", res, err)
	}
	first := e.effects(t, true, sess)
	if _, ok := first[rec.ID]; !ok {
		t.Fatalf("first claim: %v, want %s", keys(first), rec.ID)
	}
	// Leased to the first claimer, which dies without acknowledging.
	if got := e.effects(t, false, sess); len(got) != 0 {
		t.Fatalf("claimed again within the claimer's lease: %v", keys(got))
	}
	second := e.effects(t, true, sess)
	r, ok := second[rec.ID]
	if !ok {
		t.Fatalf("not claimed again after the claimer's lease: %v", keys(second))
	}
	checkSame(t, "reclaimed record", r, first[rec.ID])
	if err := e.outbox.AckEffects(e.ctx, r); err != nil {
		t.Fatal(err)
	}
	if got := e.effects(t, true, sess); len(got) != 0 {
		t.Fatalf("claimed after its acknowledgement: %v", keys(got))
	}
}

func testOutboxRaceClaim(t *testing.T, e *env) {
	const n, claimers = 60, 6
	var sessions []string
	want := map[string]bool{}
	for i := range n {
		if i%4 == 0 {
			sessions = append(sessions, e.name("sess"))
		}
		sess := sessions[len(sessions)-1]
		rec := e.create(t, e.request(sess))
		if res, err := e.requests.Decide(e.ctx, sess, rec.ID, deny(rec, "bob")); err != nil || !res.Applied {
			t.Fatalf("deny: %+v, %v", res, err)
		}
		want[rec.ID] = true
	}
	time.Sleep(e.r.h.EffectLease + 50*time.Millisecond)
	claims := claimConcurrently(t, claimers, e.r.h.EffectLease, "ClaimEffects",
		func() ([]*session.Record, error) { return e.outbox.ClaimEffects(e.ctx, 7) },
		func(r *session.Record) (string, bool) { return r.ID, slices.Contains(sessions, r.SessionID) })
	// A claimer that found only sessions without a share stopped early:
	// what is left is claimed now, and nothing claimed above comes back
	// within its lease.
	start := time.Now()
	left := e.effects(t, false, sessions...)
	end := time.Now()
	for id := range left {
		claims.add(id, start, end)
	}
	for id := range want {
		if claims.count(id) == 0 {
			t.Errorf("%s was never claimed", id)
		}
	}
	for _, dup := range claims.withinLease() {
		t.Error(dup)
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

package storetest

import (
	"errors"
	"testing"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

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
	l, err := e.s.Lookup(e.ctx, session.LookupQuery{SessionID: sess})
	if err != nil {
		t.Fatalf("Lookup(%s): %v", sess, err)
	}
	return l.Stopped, l.StopReason
}

func testStopVote(t *testing.T, e *env) {
	sess := e.name("sess")
	rec := e.create(t, e.request(sess))
	v := stopDeny(rec, "ann")
	res, err := e.s.Decide(e.ctx, sess, rec.ID, v)
	if err != nil {
		t.Fatal(err)
	}
	checkApplied(t, "hard reject", res, messages.StateRejected)
	if stopped, reason := e.lookupStop(t, sess); !stopped || reason != v.Stop {
		t.Fatalf("after the vote returned: Stopped, StopReason = %v, %q; want true, %q", stopped, reason, v.Stop)
	}
	_, _, err = Create(e.ctx, e.s, e.request(sess))
	wantErr(t, "Create after a hard reject", err, session.ErrStopped)
	_, _, err = e.s.Prepare(e.ctx, e.request(sess))
	wantErr(t, "Prepare after a hard reject", err, session.ErrStopped)
	e.ack(t, res.Record)
	if cleared, err := e.s.NewTurn(e.ctx, sess); err != nil || !cleared {
		t.Fatalf("NewTurn = %v, %v; want the vote's stop cleared", cleared, err)
	}
	e.create(t, e.request(sess))
}

func testStopVoteNotApplied(t *testing.T, e *env) {
	sess := e.name("sess")
	soft := e.create(t, e.request(sess))
	res, err := e.s.Decide(e.ctx, sess, soft.ID, deny(soft, "ann"))
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
	if res, err := e.s.Decide(e.ctx, other, rec.ID, approve(rec, "bob")); err != nil || !res.Applied {
		t.Fatalf("approve = %+v, %v", res, err)
	}
	res, err = e.s.Decide(e.ctx, other, rec.ID, stopDeny(rec, "ann"))
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
	_, err = e.s.Decide(e.ctx, other, rec.ID, bad)
	wantErr(t, "an approval with a stop reason", err, session.ErrInvalid)
}

func testStoppedRefusesApproval(t *testing.T, e *env) {
	sess := e.name("sess")
	first := e.create(t, e.request(sess))
	sibling := e.create(t, e.request(sess))
	quorum := e.request(sess)
	quorum.ApprovalsRequired = 2
	q := e.create(t, quorum)
	if res, err := e.s.Decide(e.ctx, sess, q.ID, approve(q, "bob")); err != nil || !res.Applied {
		t.Fatalf("first approval of the quorum request = %+v, %v", res, err)
	}
	hard, err := e.s.Decide(e.ctx, sess, first.ID, stopDeny(first, "ann"))
	if err != nil || !hard.Applied {
		t.Fatalf("hard reject = %+v, %v", hard, err)
	}

	res, err := e.s.Decide(e.ctx, sess, sibling.ID, approve(sibling, "bob"))
	if err != nil {
		t.Fatal(err)
	}
	checkRefused(t, "approval of a sibling after the hard reject", res, session.ErrStopped, messages.StatePending)
	res, err = e.s.Decide(e.ctx, sess, q.ID, approve(q, "cy"))
	if err != nil {
		t.Fatal(err)
	}
	checkRefused(t, "the approval that would reach a quorum after the hard reject", res, session.ErrStopped, messages.StatePending)
	res, err = e.s.Settle(e.ctx, sess, sibling.ID, messages.StateApproved, decision(sibling, messages.OutcomeAllow, messages.ReasonCascade, "cascade"))
	if err != nil {
		t.Fatal(err)
	}
	checkRefused(t, "Settle approved after the hard reject", res, session.ErrStopped, messages.StatePending)
	if got := e.get(t, sibling); got.State != messages.StatePending || got.Decision != nil {
		t.Fatalf("sibling after refused approvals: %s, want pending", describe(got))
	}

	// What a stop's rejections need still works.
	res, err = e.s.Settle(e.ctx, sess, sibling.ID, messages.StateRejected, decision(sibling, messages.OutcomeDeny, messages.ReasonHardStop, "stop"))
	if err != nil {
		t.Fatal(err)
	}
	checkApplied(t, "Settle rejected in a stopped session", res, messages.StateRejected)
	res, err = e.s.Decide(e.ctx, sess, q.ID, deny(q, "cy"))
	if err != nil {
		t.Fatal(err)
	}
	checkApplied(t, "a deny in a stopped session", res, messages.StateRejected)

	e.ack(t, hard.Record)
	if _, err := e.s.NewTurn(e.ctx, sess); err != nil {
		t.Fatal(err)
	}
	after := e.create(t, e.request(sess))
	res, err = e.s.Decide(e.ctx, sess, after.ID, approve(after, "bob"))
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
				reject.res, reject.err = e.s.Decide(e.ctx, sess, target.ID, stopDeny(target, "ann"))
			case i < n:
				approvals[i].res, approvals[i].err = e.s.Decide(e.ctx, sess, pending[i].ID, approve(pending[i], "bob"))
			case i < 2*n:
				opens[i-n].res, opens[i-n].err = e.s.Open(e.ctx, sess, held[i-n].ID)
			default:
				_, _, creates[i-2*n] = Create(e.ctx, e.s, fresh[i-2*n])
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
		_, _, err := Create(e.ctx, e.s, e.request(sess))
		wantErr(t, "Create after the race", err, session.ErrStopped)
		for _, h := range held {
			if _, err := e.s.Open(e.ctx, sess, h.ID); err != nil && !errors.Is(err, session.ErrStopped) {
				t.Fatalf("round %d: Open after the race: %v", round, err)
			}
		}
		for _, p := range pending {
			res, err := e.s.Decide(e.ctx, sess, p.ID, approve(p, "cy"))
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
	if err := e.s.AckEffects(e.ctx, recs...); err != nil {
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
	res, err := e.s.Decide(e.ctx, sess, soft.ID, deny(soft, "bob"))
	if err != nil || !res.Applied {
		t.Fatalf("soft reject = %+v, %v", res, err)
	}
	v := stopDeny(rec, "ann")
	hard, err := e.s.Decide(e.ctx, sess, rec.ID, v)
	if err != nil || !hard.Applied {
		t.Fatalf("hard reject = %+v, %v", hard, err)
	}

	cleared, err := e.s.NewTurn(e.ctx, sess)
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
	_, _, err = Create(e.ctx, e.s, e.request(sess))
	wantErr(t, "Create after the refused NewTurn", err, session.ErrStopped)

	// The stop's rejections are owed too, but they are not hard
	// rejections: only the reject_hard keeps the stop.
	mk := func(r *session.Record) messages.Decision {
		return decision(r, messages.OutcomeDeny, messages.ReasonHardStop, "ann")
	}
	stopped, err := e.s.Stop(e.ctx, sess, v.Stop, mk)
	if err != nil || len(stopped) != 1 || stopped[0].ID != sibling.ID {
		t.Fatalf("Stop = %v, %v; want the sibling rejected", ids(stopped), err)
	}
	// Claimed by another caller after the lease, the entry still owes:
	// acknowledging an older transition's mark does not count.
	e.ack(t, rec)
	if _, err := e.s.NewTurn(e.ctx, sess); !errors.Is(err, session.ErrStopOwed) {
		t.Fatalf("NewTurn after acknowledging the pending record's mark: %v, want ErrStopOwed", err)
	}
	e.ack(t, owed.Records...)
	if cleared, err := e.s.NewTurn(e.ctx, sess); err != nil || !cleared {
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
	_, err := e.s.Decide(e.ctx, sess, rec.ID, v)
	wantErr(t, "a reject_hard vote without its stop", err, session.ErrInvalid)
	d := stopDeny(rec, "ann").Decision
	_, err = e.s.Settle(e.ctx, sess, rec.ID, messages.StateRejected, d)
	wantErr(t, "Settle of a reject_hard", err, session.ErrInvalid)
	if got := e.get(t, rec); got.State != messages.StatePending || got.Decision != nil {
		t.Fatalf("after the refused calls: %s, want pending", describe(got))
	}
	if stopped, _ := e.lookupStop(t, sess); stopped {
		t.Fatal("a refused call stopped the session")
	}
	// A soft reject goes either way.
	soft := deny(rec, "ann")
	res, err := e.s.Settle(e.ctx, sess, rec.ID, messages.StateRejected, soft.Decision)
	if err != nil {
		t.Fatal(err)
	}
	checkApplied(t, "Settle of a reject_soft", res, messages.StateRejected)
}

package storetest

import (
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/signoff-dev/signoff/pkg/session"
)

// turnTests cover the rejections a stop keeps and the tracked turn that
// must name them all to end it (docs/STATE.md "Hard stops and turns").
func (r *runner) turnTests() []test {
	return []test{
		{"A hard rejection's stop names it: a tracked turn that does not name it keeps the stop and names what it missed; one that names it ends the stop", testTrackedTurn},
		{"An untracked turn ends a stop whatever it names", testUntrackedTurn},
		{"A stop behind two hard rejections ends only with a tracked turn that names both, and keeps the first one's reason", testTrackedTurnTwoRejections},
		{"A stop keeps the newest MaxStopRejections rejections, and a tracked turn that names those ends it", testStopKeepsNewestRejections},
		{"A stop that names no rejection (set by Stop without any, or by an older version) is ended by any turn", testStopWithoutRejections},
		{"Stop adds its rejections to a stop in force, which keeps its reason", testStopAddsRejections},
		{"A stop reason with a NUL byte is refused by Stop and Decide and changes nothing", testStopReasonNUL},
	}
}

// tracked is a tracked turn that names seen.
func tracked(seen ...string) session.Turn {
	return session.Turn{Tracked: true, Seen: seen}
}

// hardReject rejects rec with a stop and acknowledges its effects (the
// agent was told), returning the rejection.
func (e *env) hardReject(t *testing.T, rec *session.Record, by string) session.Vote {
	t.Helper()
	v := stopDeny(rec, by)
	res, err := e.requests.Decide(e.ctx, rec.SessionID, rec.ID, v)
	if err != nil || !res.Applied {
		t.Fatalf("hard reject of %s = %+v, %v", rec.ID, res, err)
	}
	e.ack(t, res.Record)
	return v
}

// stopOf reads the session's stop signal; ok is false without one.
func (e *env) stopOf(t *testing.T, sess string) (session.StopSignal, bool) {
	t.Helper()
	l, err := e.requests.Lookup(e.ctx, session.LookupQuery{SessionID: sess})
	if err != nil {
		t.Fatalf("Lookup(%s): %v", sess, err)
	}
	return l.Stop(), l.Stopped
}

// wantUnheard checks that turn is refused with unheard named, and that the
// stop is still in force.
func (e *env) wantUnheard(t *testing.T, sess string, turn session.Turn, unheard ...string) {
	t.Helper()
	cleared, err := e.sessions.NewTurn(e.ctx, sess, turn)
	var ue *session.StopUnheardError
	if !errors.As(err, &ue) || !errors.Is(err, session.ErrStopUnheard) {
		t.Fatalf("NewTurn(%+v) = %v, %v; want a *session.StopUnheardError", turn, cleared, err)
	}
	if cleared || ue.SessionID != sess || !slices.Equal(ue.Unheard, unheard) {
		t.Fatalf("NewTurn(%+v) = %v, unheard %s %v; want not cleared, unheard %s %v", turn, cleared, ue.SessionID, ue.Unheard, sess, unheard)
	}
	if _, stopped := e.stopOf(t, sess); !stopped {
		t.Fatalf("the stop was cleared by the refused turn %+v", turn)
	}
	_, _, err = Create(e.ctx, e.requests, e.request(sess))
	wantErr(t, "Create after a refused turn", err, session.ErrStopped)
}

// wantCleared checks that turn ends the session's stop.
func (e *env) wantCleared(t *testing.T, sess string, turn session.Turn) {
	t.Helper()
	if cleared, err := e.sessions.NewTurn(e.ctx, sess, turn); err != nil || !cleared {
		t.Fatalf("NewTurn(%+v) = %v, %v; want the stop cleared", turn, cleared, err)
	}
	if _, stopped := e.stopOf(t, sess); stopped {
		t.Fatalf("still stopped after NewTurn(%+v) cleared", turn)
	}
	e.create(t, e.request(sess))
}

func testTrackedTurn(t *testing.T, e *env) {
	sess := e.name("sess")
	rec := e.create(t, e.request(sess))
	v := stopDeny(rec, "ann")
	res, err := e.requests.Decide(e.ctx, sess, rec.ID, v)
	if err != nil || !res.Applied {
		t.Fatalf("hard reject = %+v, %v", res, err)
	}
	if st, stopped := e.stopOf(t, sess); !stopped || st.Reason != v.Stop || !slices.Equal(st.Rejections, []string{rec.ID}) {
		t.Fatalf("stop after the hard reject = %v %+v; want %q naming [%s]", stopped, st, v.Stop, rec.ID)
	}
	// Owed first: even a turn that names it waits for its effects.
	if _, err := e.sessions.NewTurn(e.ctx, sess, tracked(rec.ID)); !errors.Is(err, session.ErrStopOwed) {
		t.Fatalf("tracked NewTurn while the rejection is owed: %v, want ErrStopOwed", err)
	}
	e.ack(t, res.Record)
	// The delayed turn: sent before the agent heard, it names nothing.
	e.wantUnheard(t, sess, tracked(), rec.ID)
	e.wantUnheard(t, sess, tracked(e.name("req"), e.name("req")), rec.ID)
	e.wantCleared(t, sess, tracked(e.name("req"), rec.ID))
	if cleared, err := e.sessions.NewTurn(e.ctx, sess, tracked()); err != nil || cleared {
		t.Fatalf("tracked NewTurn of a session with no stop = %v, %v; want false, nil", cleared, err)
	}
}

func testUntrackedTurn(t *testing.T, e *env) {
	sess := e.name("sess")
	e.hardReject(t, e.create(t, e.request(sess)), "ann")
	e.wantCleared(t, sess, session.Turn{})
	e.hardReject(t, e.create(t, e.request(sess)), "ann")
	e.wantCleared(t, sess, session.Turn{Seen: []string{e.name("req")}})
}

func testTrackedTurnTwoRejections(t *testing.T, e *env) {
	sess := e.name("sess")
	r1, r2 := e.create(t, e.request(sess)), e.create(t, e.request(sess))
	first := e.hardReject(t, r1, "ann")
	e.hardReject(t, r2, "bob")
	if st, _ := e.stopOf(t, sess); st.Reason != first.Stop || !slices.Equal(st.Rejections, []string{r1.ID, r2.ID}) {
		t.Fatalf("stop = %+v; want the first reason %q naming [%s %s]", st, first.Stop, r1.ID, r2.ID)
	}
	e.wantUnheard(t, sess, tracked(r1.ID), r2.ID)
	e.wantUnheard(t, sess, tracked(r2.ID), r1.ID)
	e.wantUnheard(t, sess, tracked(), r1.ID, r2.ID)
	e.wantCleared(t, sess, tracked(r2.ID, r1.ID))
}

func testStopKeepsNewestRejections(t *testing.T, e *env) {
	sess := e.name("sess")
	// Created first: the first rejection stops the session.
	recs := make([]*session.Record, session.MaxStopRejections+2)
	for i := range recs {
		recs[i] = e.create(t, e.request(sess))
	}
	var all []string
	for i, rec := range recs {
		e.hardReject(t, rec, "ann"+strconv.Itoa(i))
		all = append(all, rec.ID)
	}
	newest := all[2:]
	st, _ := e.stopOf(t, sess)
	if !slices.Equal(st.Rejections, newest) {
		t.Fatalf("stop rejections = %v; want the newest %d %v", st.Rejections, session.MaxStopRejections, newest)
	}
	e.wantUnheard(t, sess, tracked(all[:len(all)-1]...), all[len(all)-1])
	e.wantCleared(t, sess, tracked(newest...))
}

func testStopWithoutRejections(t *testing.T, e *env) {
	sess := e.name("sess")
	if _, err := e.sessions.Stop(e.ctx, sess, session.StopSignal{Reason: "old stop"}, (&mkRecorder{}).mk); err != nil {
		t.Fatal(err)
	}
	if st, stopped := e.stopOf(t, sess); !stopped || st.Reason != "old stop" || len(st.Rejections) != 0 {
		t.Fatalf("stop = %v %+v; want %q naming none", stopped, st, "old stop")
	}
	e.wantCleared(t, sess, tracked())
}

func testStopAddsRejections(t *testing.T, e *env) {
	sess := e.name("sess")
	rec := e.create(t, e.request(sess))
	v := e.hardReject(t, rec, "ann")
	other := e.name("req")
	if _, err := e.sessions.Stop(e.ctx, sess, session.StopSignal{Reason: "later", Rejections: []string{rec.ID, other}}, (&mkRecorder{}).mk); err != nil {
		t.Fatal(err)
	}
	if st, _ := e.stopOf(t, sess); st.Reason != v.Stop || !slices.Equal(st.Rejections, []string{rec.ID, other}) {
		t.Fatalf("stop = %+v; want %q naming [%s %s]", st, v.Stop, rec.ID, other)
	}
	e.wantUnheard(t, sess, tracked(rec.ID), other)
	e.wantCleared(t, sess, tracked(rec.ID, other))

	// A Stop of a session with no stop sets its reason and rejections.
	if _, err := e.sessions.Stop(e.ctx, sess, session.StopSignal{Reason: "set again", Rejections: []string{rec.ID}}, (&mkRecorder{}).mk); err != nil {
		t.Fatal(err)
	}
	if st, _ := e.stopOf(t, sess); st.Reason != "set again" || !slices.Equal(st.Rejections, []string{rec.ID}) {
		t.Fatalf("stop set again = %+v; want %q naming [%s]", st, "set again", rec.ID)
	}
}

func testStopReasonNUL(t *testing.T, e *env) {
	sess := e.name("sess")
	rec := e.create(t, e.request(sess))
	_, err := e.sessions.Stop(e.ctx, sess, session.StopSignal{Reason: "a\x00b"}, (&mkRecorder{}).mk)
	wantErr(t, "Stop with a NUL in its reason", err, session.ErrInvalid)
	v := stopDeny(rec, "ann")
	v.Stop = "a\x00b"
	_, err = e.requests.Decide(e.ctx, sess, rec.ID, v)
	wantErr(t, "a hard reject with a NUL in its stop reason", err, session.ErrInvalid)
	if _, stopped := e.stopOf(t, sess); stopped {
		t.Fatal("a refused stop stopped the session")
	}
	if got := e.get(t, rec); got.Decision != nil {
		t.Fatalf("the refused vote settled %s", describe(got))
	}
}

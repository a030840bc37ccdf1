package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// retentionTests cover how long records, grants and stop signals live. They
// wait in real time a little longer than Harness.Retention.
func (r *runner) retentionTests() []test {
	return []test{
		{"A settled request stays readable for the retention period, then is gone", r.testRetention},
		{"Session grants lapse after the retention period without use; agent grants and stop signals stay", r.testGrantLapse},
		{"A Lookup keeps the session's grants alive", r.testGrantRefresh},
	}
}

// margin is how long after a deadline the suite checks that it passed.
func (r *runner) margin() time.Duration { return r.h.Retention/4 + 200*time.Millisecond }

func sleepUntil(t *testing.T, deadline time.Time) {
	t.Helper()
	select {
	case <-time.After(time.Until(deadline)):
	case <-t.Context().Done():
		t.Fatal("test ended while waiting")
	}
}

// lifetime judges whether something with a deadline of at least
// minStart+d and at most maxStart+d must still be there or gone for a read
// that ran from callStart to callEnd. Reads the scheduler delayed across the
// deadline prove nothing either way, so the suite cannot fail on a slow
// machine by accident.
type lifetime struct {
	minStart, maxStart time.Time // around the call that set the deadline
	d                  time.Duration
}

// slack covers backends that keep deadlines in milliseconds.
const slack = 10 * time.Millisecond

func (l lifetime) mustLive(callEnd time.Time) bool {
	return callEnd.Before(l.minStart.Add(l.d - slack))
}

func (l lifetime) mustBeGone(callStart time.Time) bool {
	return callStart.After(l.maxStart.Add(l.d + slack))
}

func (r *runner) testRetention(t *testing.T, e *env) {
	sess := e.name("sess")
	denied, cancelled, pending := e.create(t, e.request(sess)), e.create(t, e.request(sess)), e.create(t, e.request(sess))
	before := time.Now()
	if _, err := e.requests.Decide(e.ctx, sess, denied.ID, deny(denied, "ann")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.requests.Settle(e.ctx, sess, cancelled.ID, messages.StateCancelled, decision(cancelled, messages.OutcomeDeny, messages.ReasonCancelled, "agent")); err != nil {
		t.Fatal(err)
	}
	life := lifetime{minStart: before, maxStart: time.Now(), d: r.h.Retention}
	check := func(rec *session.Record) {
		t.Helper()
		callStart := time.Now()
		got, err := e.requests.Get(e.ctx, sess, rec.ID)
		l, lerr := e.requests.Lookup(e.ctx, session.LookupQuery{SessionID: sess, RequestID: rec.ID})
		callEnd := time.Now()
		if lerr != nil {
			t.Fatalf("Lookup: %v", lerr)
		}
		age := callStart.Sub(life.maxStart)
		switch {
		case life.mustLive(callEnd):
			if err != nil || l.Existing == nil {
				t.Errorf("%s is gone (Get: %v, Lookup existing: %v) %v after it settled, within the retention %v", rec.ID, err, l.Existing, age, r.h.Retention)
				return
			}
			checkSame(t, "Lookup existing", l.Existing, got)
		case life.mustBeGone(callStart):
			if err == nil {
				t.Errorf("%s is still readable (%s) %v after it settled, past the retention %v", rec.ID, describe(got), age, r.h.Retention)
				return
			}
			wantErr(t, "Get after the retention", err, session.ErrNotFound)
			if l.Existing != nil {
				t.Errorf("Lookup still returns %s past the retention", describe(l.Existing))
			}
		default:
			t.Logf("read of %s straddled the end of its retention; no conclusion", rec.ID)
		}
	}
	check(denied)
	check(cancelled)
	sleepUntil(t, life.maxStart.Add(r.h.Retention/2))
	check(denied)
	check(cancelled)
	sleepUntil(t, life.maxStart.Add(r.h.Retention+r.margin()))
	check(denied)
	check(cancelled)
	if got := e.get(t, pending); got.State != messages.StatePending {
		t.Errorf("pending request is %s after the retention of its siblings", got.State)
	}
}

func (r *runner) testGrantLapse(t *testing.T, e *env) {
	sess, agent := e.name("sess"), e.name("agent")
	stored := e.addGrants(t, e.sessionGrant(sess, "write"), e.agentGrant(agent, "bash", "git push *"))
	if _, err := e.sessions.Stop(e.ctx, sess, session.StopSignal{Reason: "stop"}, (&mkRecorder{}).mk); err != nil {
		t.Fatal(err)
	}
	added := time.Now()
	sleepUntil(t, added.Add(r.h.Retention+r.margin()))
	l, err := e.requests.Lookup(e.ctx, session.LookupQuery{SessionID: sess, AgentID: agent})
	if err != nil {
		t.Fatal(err)
	}
	if got := grantIDs(l.Grants); !slices.Equal(got, grantIDs(stored[1:])) {
		t.Errorf("grants = %v after the retention, want only the agent's %v: session grants lapse without use, agent grants last", got, grantIDs(stored[1:]))
	}
	if !l.Stopped {
		t.Error("the stop signal lapsed with the retention; it must last until NewTurn")
	}
}

func (r *runner) testGrantRefresh(t *testing.T, e *env) {
	sess := e.name("sess")
	before := time.Now()
	e.addGrants(t, e.sessionGrant(sess, "write"))
	added := lifetime{minStart: before, maxStart: time.Now(), d: r.h.Retention}
	step := r.h.Retention * 6 / 10

	sleepUntil(t, added.maxStart.Add(step))
	refreshStart := time.Now()
	tools := toolsOf(e.lookupGrants(t, sess, ""))
	refreshed := lifetime{minStart: refreshStart, maxStart: time.Now(), d: r.h.Retention}
	if !added.mustLive(refreshed.maxStart) {
		t.Fatalf("the first Lookup ended %v after AddGrant, past the retention %v: the test could not run on time", refreshed.maxStart.Sub(before), r.h.Retention)
	}
	if !slices.Equal(tools, []string{"write"}) {
		t.Fatalf("session tools = %v within the retention, want [write]", tools)
	}

	sleepUntil(t, refreshed.maxStart.Add(step))
	callStart := time.Now()
	tools = toolsOf(e.lookupGrants(t, sess, ""))
	callEnd := time.Now()
	switch {
	case !added.mustBeGone(callStart):
		t.Logf("second Lookup ran before the first deadline passed; no conclusion")
	case !refreshed.mustLive(callEnd):
		t.Logf("second Lookup straddled the refreshed deadline; no conclusion")
	case !slices.Equal(tools, []string{"write"}):
		t.Errorf("session tools = %v %v after a Lookup, want [write]: a Lookup must refresh them", tools, callStart.Sub(refreshStart))
	}
}

// toolsOf returns the tools of gs, in order.
func toolsOf(gs []session.Grant) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.Tool
	}
	return out
}

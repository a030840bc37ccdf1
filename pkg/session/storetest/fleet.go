package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// fleetTests cover the fleet stops and the agents' last seen. The backend
// is shared by parallel subtests: each names its own agents and selectors
// and looks only for those.
func (r *runner) fleetTests() []test {
	return []test{
		{"PutFleetStop stores a stop with the store's time, and FleetStops lists it until DeleteFleetStop", testFleetStopLife},
		{"PutFleetStop of the same selector replaces the stop", testFleetStopReplace},
		{"PutFleetStop refuses an invalid selector or an id that is not its key, storing nothing", testFleetStopInvalid},
		{"RecordSeen keeps the latest request's fields, the earliest first seen and the sum of requests", testSeenMerge},
		{"RecordSeen from many callers at once loses no request count", testSeenConcurrent},
		{"RecordSeen refuses an entry without an agent id or a last seen", testSeenInvalid},
	}
}

func fleetStop(sel messages.Selector, reason string) messages.FleetStop {
	return messages.FleetStop{ID: sel.Key(), Selector: sel, Reason: reason, By: "ops"}
}

func findStop(t *testing.T, e *env, id string) (messages.FleetStop, bool) {
	t.Helper()
	all, err := e.fleet.FleetStops(e.ctx)
	return findIn(t, "FleetStops", all, err, func(s messages.FleetStop) bool { return s.ID == id })
}

func testFleetStopLife(t *testing.T, e *env) {
	st := fleetStop(messages.Selector{Agent: e.name("agent") + "*"}, "incident 7")
	before, err := e.backend.Now(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	stored, err := e.fleet.PutFleetStop(e.ctx, st)
	if err != nil {
		t.Fatalf("PutFleetStop: %v", err)
	}
	if stored.CreatedAt.Before(before.Add(-time.Second)) || stored.Reason != "incident 7" {
		t.Fatalf("stored %+v: want the reason and created_at from the store's clock (≥ %v)", stored, before)
	}
	got, ok := findStop(t, e, st.ID)
	if !ok || got.Selector != st.Selector || got.By != "ops" || !got.CreatedAt.Equal(stored.CreatedAt) {
		t.Fatalf("FleetStops has %+v (found %v), want %+v", got, ok, stored)
	}
	del, err := e.fleet.DeleteFleetStop(e.ctx, st.ID)
	if err != nil || del.ID != st.ID || del.Reason != "incident 7" {
		t.Fatalf("DeleteFleetStop = %+v, %v; want the stop", del, err)
	}
	if _, ok := findStop(t, e, st.ID); ok {
		t.Fatal("the stop is still listed after DeleteFleetStop")
	}
	if _, err := e.fleet.DeleteFleetStop(e.ctx, st.ID); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("second DeleteFleetStop: %v, want ErrNotFound", err)
	}
}

func testFleetStopReplace(t *testing.T, e *env) {
	sel := messages.Selector{Session: e.name("sess")}
	if _, err := e.fleet.PutFleetStop(e.ctx, fleetStop(sel, "first")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.fleet.PutFleetStop(e.ctx, fleetStop(sel, "second")); err != nil {
		t.Fatal(err)
	}
	got, ok := findStop(t, e, sel.Key())
	if !ok || got.Reason != "second" {
		t.Fatalf("stop after two puts: %+v (found %v), want reason second", got, ok)
	}
	t.Cleanup(func() { _, _ = e.fleet.DeleteFleetStop(e.ctx, sel.Key()) })
}

func testFleetStopInvalid(t *testing.T, e *env) {
	agent := e.name("agent")
	bad := []messages.FleetStop{
		{ID: "", Selector: messages.Selector{}},
		{ID: "agent=" + agent + "[", Selector: messages.Selector{Agent: agent + "["}},
		{ID: "other", Selector: messages.Selector{Agent: agent}},
	}
	for _, st := range bad {
		if _, err := e.fleet.PutFleetStop(e.ctx, st); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("PutFleetStop(%+v) = %v, want ErrInvalid", st, err)
		}
		if _, ok := findStop(t, e, st.ID); ok {
			t.Errorf("invalid stop %q was stored", st.ID)
		}
	}
}

func findSeen(t *testing.T, e *env, agent string) (messages.AgentSeen, bool) {
	t.Helper()
	all, err := e.fleet.ListSeen(e.ctx)
	return findIn(t, "ListSeen", all, err, func(a messages.AgentSeen) bool { return a.AgentID == agent })
}

func testSeenMerge(t *testing.T, e *env) {
	agent := e.name("agent")
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	newer := messages.AgentSeen{AgentID: agent, SessionID: "s2", RequestID: "r2", Tool: "bash", Gate: messages.GateCodex,
		GateVersion: "v2", FirstSeen: t0.Add(time.Minute), LastSeen: t0.Add(2 * time.Minute), Requests: 3}
	older := messages.AgentSeen{AgentID: agent, SessionID: "s1", RequestID: "r1", Tool: "write", Gate: messages.GateSDK,
		FirstSeen: t0, LastSeen: t0.Add(time.Minute), Requests: 2}
	if err := e.fleet.RecordSeen(e.ctx, []messages.AgentSeen{newer}); err != nil {
		t.Fatalf("RecordSeen: %v", err)
	}
	// A replica's older batch arrives late: it adds its count and its first
	// seen, not its last request.
	if err := e.fleet.RecordSeen(e.ctx, []messages.AgentSeen{older}); err != nil {
		t.Fatalf("RecordSeen: %v", err)
	}
	got, ok := findSeen(t, e, agent)
	if !ok {
		t.Fatal("agent not listed")
	}
	if got.RequestID != "r2" || got.Gate != messages.GateCodex || got.GateVersion != "v2" || got.Requests != 5 ||
		!got.FirstSeen.Equal(t0) || !got.LastSeen.Equal(t0.Add(2*time.Minute)) {
		t.Fatalf("merged %+v: want r2 by codex-hook v2, 5 requests, first %v, last %v", got, t0, t0.Add(2*time.Minute))
	}
}

func testSeenConcurrent(t *testing.T, e *env) {
	agent := e.name("agent")
	const callers, each = 8, 5
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	var wg sync.WaitGroup
	errs := make(chan error, callers*each)
	for c := range callers {
		wg.Go(func() {
			for i := range each {
				at := t0.Add(time.Duration(c*each+i) * time.Millisecond)
				errs <- e.fleet.RecordSeen(e.ctx, []messages.AgentSeen{{AgentID: agent, SessionID: "s", RequestID: "r", Tool: "bash",
					Gate: messages.GateSDK, FirstSeen: at, LastSeen: at, Requests: 1}})
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("RecordSeen: %v", err)
		}
	}
	got, _ := findSeen(t, e, agent)
	if got.Requests != callers*each || !got.FirstSeen.Equal(t0) {
		t.Fatalf("after %d concurrent records: %+v, want %d requests and first seen %v", callers*each, got, callers*each, t0)
	}
}

func testSeenInvalid(t *testing.T, e *env) {
	for _, a := range []messages.AgentSeen{
		{AgentID: "", LastSeen: time.Now()},
		{AgentID: "a.b", LastSeen: time.Now()},
		{AgentID: e.name("agent")},
	} {
		if err := e.fleet.RecordSeen(e.ctx, []messages.AgentSeen{a}); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("RecordSeen(%+v) = %v, want ErrInvalid", a, err)
		}
	}
}

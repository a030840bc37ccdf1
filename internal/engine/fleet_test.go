package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/engine"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// fleetStops is an engine.FleetStops that covers the agent ids in stopped
// and fails when err is set.
type fleetStops struct {
	stopped map[string]*messages.FleetStop
	err     error
}

func (f fleetStops) StopFor(agentID, _, _ string) (*messages.FleetStop, error) {
	return f.stopped[agentID], f.err
}

func newFleetEngine(t *testing.T, fs engine.FleetStops) (*engine.Engine, *recorder) {
	t.Helper()
	r := newRigWith(t, testPolicy, nil, nil, func(c *engine.Config) { c.FleetStops = fs })
	return r.eng, r.rec
}

func TestAFleetStopDeniesTheAgentsCallsHardStopNamingTheStop(t *testing.T) {
	sel := messages.Selector{Agent: "pod-1"}
	st := &messages.FleetStop{ID: sel.Key(), Selector: sel, By: "jane", Reason: "incident 42"}
	eng, _ := newFleetEngine(t, fleetStops{stopped: map[string]*messages.FleetStop{"pod-1": st}})
	res, err := eng.Request(t.Context(), bash("s1", "r1", "ls"))
	if err != nil {
		t.Fatal(err)
	}
	d := res.Receipt().Decision
	if d == nil || d.ReasonCode != messages.ReasonHardStop || d.Outcome != messages.OutcomeDeny ||
		!strings.Contains(d.Reason, "fleet stop agent=pod-1 by jane: incident 42") || strings.Contains(d.Reason, "new user turn") {
		t.Fatalf("decision %+v: want hard_stop naming the fleet stop (and not a new turn)", d)
	}
	other := bash("s2", "r2", "ls")
	other.AgentID = "pod-2"
	res, err = eng.Request(t.Context(), other)
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Receipt().Decision; d == nil || d.Outcome != messages.OutcomeAllow {
		t.Fatalf("another agent's call: %+v, want allowed", d)
	}
}

func TestFleetStopsThatCannotBeReadDenyEveryCall(t *testing.T) {
	eng, _ := newFleetEngine(t, fleetStops{err: errors.New("not read for 3s")})
	res, err := eng.Request(t.Context(), bash("s1", "r1", "ls"))
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Receipt().Decision; d == nil || d.Outcome != messages.OutcomeDeny || !strings.Contains(d.Reason, "fleet stops cannot be read") {
		t.Fatalf("decision %+v: want a fail-closed deny that says the fleet stops cannot be read", d)
	}
}

// switchStops is an engine.FleetStops whose stop can come into force later.
type switchStops struct{ st *messages.FleetStop }

func (s *switchStops) StopFor(agentID, _, _ string) (*messages.FleetStop, error) {
	if s.st != nil && s.st.Selector.Matches(agentID, "", "") {
		return s.st, nil
	}
	return nil, nil
}

// A request that was pending when a stop came into force, and that the
// stop's sweep missed, cannot be approved: the approval is refused and the
// request denied hard_stop naming the stop (red team: a held request opened
// after the sweeps became pending and was approved under the stop).
func TestAnApprovalOfARequestAStopCoversIsRefusedAndTheRequestDenied(t *testing.T) {
	stops := &switchStops{}
	eng, rec := newFleetEngine(t, stops)
	req := bash("s1", "r1", "git push")
	res, err := eng.Request(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if rc := res.Receipt(); rc.State != messages.StatePending {
		t.Fatalf("receipt %+v, want pending", rc)
	}
	sel := messages.Selector{Agent: "pod-*"}
	stops.st = &messages.FleetStop{ID: sel.Key(), Selector: sel, By: "jane", Reason: "incident 42"}
	rep, err := eng.Respond(t.Context(), &messages.Response{V: messages.Version, RequestID: "r1", SessionID: "s1",
		Approver: messages.Approver{ID: "bob", Channel: "test"}, Approved: true, Digest: rec.shown(t, "r1")})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Applied || !strings.Contains(rep.Reason, "fleet stop") {
		t.Fatalf("reply %+v: want the approval refused, naming the fleet stop", rep)
	}
	st, err := eng.Status(t.Context(), "s1", "r1")
	if err != nil {
		t.Fatal(err)
	}
	if st.Decision == nil || st.Decision.ReasonCode != messages.ReasonHardStop || st.Decision.Outcome != messages.OutcomeDeny {
		t.Fatalf("the request after the refused approval: %+v, want denied hard_stop", st.Decision)
	}
}

package engine_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/engine"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
)

const breakerEnginePolicy = `
mode: auto-edit
rules:
  - { rule: "bash", action: allow }
  - { rule: "bash(curl *)", action: deny }
  - { rule: "bash(wget *)", action: deny }
teams:
  default: { members: [alice] }
breakers:
  - { name: curl, rules: ["bash(curl *)"], agents: 2, window: 1m, select: { agent: "pod-*" } }
  - { name: safety, safety_overrides: true, agents: 2, window: 1m }
`

// breakers is an engine.Breakers that keeps the hits, covers the agents
// of trips and fails when err is set.
type breakers struct {
	mu    sync.Mutex
	hits  []session.BreakerHit
	trips map[string]*messages.BreakerTrip
	err   error
}

func (b *breakers) Hit(h session.BreakerHit) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hits = append(b.hits, h)
}

func (b *breakers) TripFor(agentID, _ string) (*messages.BreakerTrip, error) {
	return b.trips[agentID], b.err
}

func newBreakerRig(t *testing.T, bs *breakers) (*engine.Engine, *recorder) {
	t.Helper()
	r := newRigWith(t, breakerEnginePolicy, nil, nil, func(c *engine.Config) { c.Breakers = bs })
	return r.eng, r.rec
}

func agentCall(agent, id, command string) *messages.Request {
	r := bash("s-"+agent, id, command)
	r.AgentID = agent
	return r
}

func TestDeniesAndSafetyOverridesOfWatchedRulesCountTowardTheirBreakers(t *testing.T) {
	bs := &breakers{}
	eng, _ := newBreakerRig(t, bs)
	for _, req := range []*messages.Request{
		agentCall("pod-1", "r1", "curl http://x"),    // curl: counts
		agentCall("pod-1", "r2", "ls"),               // allowed: nothing
		agentCall("pod-1", "r3", "wget http://x"),    // a deny curl does not watch
		agentCall("worker-1", "r4", "curl http://x"), // not covered by curl's selector
		agentCall("worker-1", "r5", "rm -rf /"),      // safety: counts
	} {
		if _, err := eng.Request(t.Context(), req); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for _, h := range bs.hits {
		got = append(got, h.Breaker+" "+h.AgentID+" "+h.Rule)
	}
	want := []string{"curl pod-1 bash(curl *)", "safety worker-1 " + policy.SafetyHit}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("hits %q, want %q (every safety override under one rule)", got, want)
	}
	if h := bs.hits[0]; h.Threshold != 2 || h.Window != time.Minute || h.Selector.Agent != "pod-*" || h.SessionID != "s-pod-1" {
		t.Fatalf("hit %+v does not carry the breaker's settings and the session", h)
	}
}

func TestATrippedBreakerMakesItsAgentsAllowedCallsAskAndLeavesDeniesAlone(t *testing.T) {
	trip := &messages.BreakerTrip{Breaker: "curl", Rule: "bash(curl *)", Agents: []string{"pod-1", "pod-2"}, WindowMS: 60_000,
		Selector: messages.Selector{Agent: "pod-*"}, TrippedAt: time.Now()}
	eng, rec := newBreakerRig(t, &breakers{trips: map[string]*messages.BreakerTrip{"pod-3": trip}})
	res, err := eng.Request(t.Context(), agentCall("pod-3", "r1", "ls"))
	if err != nil {
		t.Fatal(err)
	}
	if rc := res.Receipt(); rc.State != messages.StatePending {
		t.Fatalf("a covered agent's allowed call: receipt %+v, want pending", rc)
	}
	if len(rec.asks) != 1 || rec.asks[0].Risk.Breaker != "curl" || !strings.Contains(rec.asks[0].Risk.Reason, "breaker curl tripped") {
		t.Fatalf("questions %+v: want one whose risk names breaker curl", rec.asks)
	}
	for _, o := range rec.asks[0].Offers {
		if o.Offered {
			t.Fatalf("a breaker's question offers a grant: %+v", o)
		}
	}
	res, err = eng.Request(t.Context(), agentCall("pod-3", "r2", "curl http://x"))
	if d := res.Receipt().Decision; err != nil || d == nil || d.ReasonCode != messages.ReasonPolicyDeny {
		t.Fatalf("a covered agent's denied call: %+v, %v; want policy_deny", d, err)
	}
	res, err = eng.Request(t.Context(), agentCall("pod-4", "r3", "ls"))
	if d := res.Receipt().Decision; err != nil || d == nil || d.ReasonCode != messages.ReasonPolicyAllow {
		t.Fatalf("another agent's allowed call: %+v, %v; want policy_allow", d, err)
	}
}

func TestBreakerTripsThatCannotBeReadMakeAllowedCallsAsk(t *testing.T) {
	eng, rec := newBreakerRig(t, &breakers{err: errors.New("not read for 3s")})
	res, err := eng.Request(t.Context(), agentCall("pod-1", "r1", "ls"))
	if err != nil {
		t.Fatal(err)
	}
	if rc := res.Receipt(); rc.State != messages.StatePending {
		t.Fatalf("receipt %+v, want pending (fail closed asks)", rc)
	}
	if len(rec.asks) != 1 || !strings.Contains(rec.asks[0].Risk.Reason, "breakers cannot be read") {
		t.Fatalf("questions %+v: want one saying the breakers cannot be read", rec.asks)
	}
	res, err = eng.Request(t.Context(), agentCall("pod-1", "r2", "curl http://x"))
	if d := res.Receipt().Decision; err != nil || d == nil || d.Outcome != messages.OutcomeDeny {
		t.Fatalf("a deny with the trips unknown: %+v, %v; want the deny", d, err)
	}
}

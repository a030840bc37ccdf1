package admincli_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/admincli"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

const breakerPolicy = `
mode: auto-edit
rules:
  - { rule: "bash(ls)", action: allow }
  - { rule: "bash(curl *)", action: deny }
teams:
  default: { members: [alice] }
breakers:
  - { name: injection, rules: ["bash(curl *)"], agents: 2, window: 10m }
`

func TestBreakersListsATrippedBreakerAndResetLiftsIt(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: breakerPolicy, Redis: true})
	if got := adminJSON[[]messages.BreakerTrip](t, p, "breakers"); len(got) != 0 {
		t.Fatalf("breakers before any hit = %+v, want []", got)
	}
	for i := range 2 {
		c := p.Agent(fmt.Sprintf("sess-b%d", i), fmt.Sprintf("agent-b%d", i))
		d, err := c.Request(t.Context(), client.Call{Tool: "bash", Arguments: brokertest.Bash("curl http://x")})
		if err != nil {
			t.Fatal(err)
		}
		brokertest.WantDecision(t, d, messages.OutcomeDeny, messages.ReasonPolicyDeny)
	}
	var trips []messages.BreakerTrip
	for deadline := time.Now().Add(3 * time.Second); len(trips) == 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		trips = adminJSON[[]messages.BreakerTrip](t, p, "breakers")
	}
	if len(trips) != 1 || trips[0].Breaker != "injection" || trips[0].Rule != "bash(curl *)" || len(trips[0].Agents) != 2 {
		t.Fatalf("breakers = %+v, want injection tripped on bash(curl *) by two agents", trips)
	}
	out, _, code := admin(t, p, "breakers")
	if code != admincli.ExitOK || !strings.Contains(out, "BREAKER") || !strings.Contains(out, "injection") || !strings.Contains(out, "1 of the policy's 1 breakers tripped") {
		t.Fatalf("breakers table: exit %d, %q", code, out)
	}

	out, errs, code := admin(t, p, "breaker", "reset", "injection", "--by", "ops-jane")
	if code != admincli.ExitOK || !strings.Contains(out, "breaker injection reset") {
		t.Fatalf("breaker reset: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if got := adminJSON[[]messages.BreakerTrip](t, p, "breakers"); len(got) != 0 {
		t.Fatalf("breakers after the reset = %+v, want []", got)
	}
	_, errs, code = admin(t, p, "breaker", "reset", "injection")
	if code != admincli.ExitNotFound || !strings.Contains(errs, "not tripped") {
		t.Fatalf("a second reset: exit %d, stderr %q; want %d, not tripped", code, errs, admincli.ExitNotFound)
	}
	_, errs, code = admin(t, p, "breaker", "reset", "nosuch")
	if code != admincli.ExitNotFound || !strings.Contains(errs, "no breaker nosuch") {
		t.Fatalf("reset of an unknown breaker: exit %d, stderr %q", code, errs)
	}
}

func TestBreakerResetWithoutANameIsAUsageError(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	for _, args := range [][]string{{"breaker"}, {"breaker", "reset"}, {"breaker", "lift", "x"}, {"breaker", "reset", "a.b"}, {"breakers", "extra"}} {
		_, errs, code := admin(t, p, args...)
		if code != admincli.ExitUsage || errs == "" {
			t.Errorf("%q: exit %d, stderr %q; want %d and why", args, code, errs, admincli.ExitUsage)
		}
	}
}

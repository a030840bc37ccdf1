package policy_test

import (
	"fmt"
	"strings"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// A team's escalation ladder applies to the questions routed to it, unless
// the deciding rule has its own.
func ExamplePolicy_Escalation() {
	p, err := policy.Parse([]byte(`
ttl: 15m
pagers:
  oncall-pd: {kind: pagerduty, routing_key_env: PD_ROUTING_KEY}
teams:
  ops:
    members: [alice, bob]
    escalation:
      - {after: 2m, remind: true}
      - {after: 5m, add_team: oncall-secondary}
      - {after: 10m, page: oncall-pd}
  oncall-secondary: {members: [sam]}
rules:
  - {rule: "bash(deploy *)", action: ask, route: ops}
`), "policy.yaml")
	if err != nil {
		fmt.Println(err)
		return
	}
	d := p.Evaluate(policy.Call{Tool: "bash", Arguments: []byte(`{"command":"deploy prod"}`)})
	for _, s := range p.Escalation(&d, d.Route) {
		fmt.Println(strings.TrimSpace(fmt.Sprintf("after %dms: %s %s", s.AfterMS, s.Kind(), s.Target())))
	}
	fmt.Println(p.Pagers()["oncall-pd"].Kind)
	// Output:
	// after 120000ms: remind
	// after 300000ms: add_team oncall-secondary
	// after 600000ms: page oncall-pd
	// pagerduty
}

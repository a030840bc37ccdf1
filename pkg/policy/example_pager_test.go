package policy_test

import (
	"fmt"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// A pager entry is checked as the policy loader checks it: with its
// defaults, and without reading its key.
func ExamplePagerSpec_Check() {
	ok := policy.PagerSpec{Name: "oncall-og", Kind: policy.PagerOpsgenie, APIKeyEnv: "OG_KEY", Region: "eu"}
	fmt.Println(ok.Check(), ok.WithDefaults().BaseURL)
	mixed := policy.PagerSpec{Name: "oncall-pd", Kind: policy.PagerDuty, RoutingKeyEnv: "PD_KEY", Tags: []string{"prod"}}
	fmt.Println(mixed.Check())
	// Output:
	// <nil> https://api.eu.opsgenie.com
	// pager: invalid config: pager "oncall-pd": tags is an opsgenie setting; this pager is kind pagerduty
}

func ExampleParseResponder() {
	typ, name, err := policy.ParseResponder("user:ana@example.com")
	fmt.Println(typ, name, err)
	_, _, err = policy.ParseResponder("group:ops")
	fmt.Println(err)
	// Output:
	// user ana@example.com <nil>
	// "group:ops": responder type "group" is not team, user, escalation or schedule
}

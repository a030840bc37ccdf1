package broker

import (
	"slices"
	"testing"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
)

// A grant is approved for the question's own team: teams an escalation
// added answer for it, and an answer from one of them must not make the
// grant usable for that team's other questions.
func TestAGrantIsForTheQuestionsTeamNotTheTeamsAnEscalationAdded(t *testing.T) {
	rec := &session.Record{Request: session.Request{Teams: []string{"default", "oncall"}}}
	q := &messages.ApprovalNeeded{Team: "default"}
	if got := grantTeams(rec, q); !slices.Equal(got, []string{"default"}) {
		t.Errorf("grantTeams = %v, want [default]", got)
	}
}

// Offers follow the grant rule: a grantable ask offers both scopes with
// the command's patterns; an explicit ask rule, or a request without an
// agent id for Always, says why not.
func TestOffersFollowTheGrantRule(t *testing.T) {
	pol, err := policy.Parse([]byte(`
mode: always-ask
teams:
  default: { members: [alice, bob] }
rules:
  - { rule: "bash(kubectl *)", action: ask }
`), "offers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	eval := func(cmd string) policy.Decision {
		return pol.Evaluate(policy.Call{Tool: "bash", Arguments: []byte(`{"command":"` + cmd + `"}`), Cwd: "/w"})
	}
	d := eval("npm install")
	o := offersFor(pol, &d, "bash", "pod-1")
	if len(o) != 2 || o[0].Scope != messages.ScopeSession || !o[0].Offered || !slices.Equal(o[0].Patterns, []string{"npm install"}) ||
		o[1].Scope != messages.ScopeAlwaysPrefix || !o[1].Offered || !slices.Equal(o[1].Patterns, []string{"npm install"}) {
		t.Errorf("offers = %+v", o)
	}
	if a := alwaysOf(o); a == nil || a.Scope != messages.ScopeAlwaysPrefix {
		t.Errorf("alwaysOf = %+v, want the always_prefix offer", a)
	}
	if o := offersFor(pol, &d, "bash", ""); o[1].Offered || o[1].WhyNot == "" || !o[0].Offered {
		t.Errorf("offers without an agent id = %+v, want Session only", o)
	}
	d = eval("kubectl get pods")
	for _, o := range offersFor(pol, &d, "bash", "pod-1") {
		if o.Offered || o.WhyNot == "" || len(o.Patterns) != 0 {
			t.Errorf("offer for an explicit ask rule = %+v, want refused with a reason", o)
		}
	}
	if a := alwaysOf(offersFor(pol, &d, "bash", "pod-1")); a != nil {
		t.Errorf("alwaysOf for an explicit ask rule = %+v, want nil", a)
	}
}

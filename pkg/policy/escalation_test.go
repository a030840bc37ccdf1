package policy

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

const ladderBase = `ttl: 10m
pagers:
  oncall-pd: {kind: pagerduty, routing_key_file: /run/secrets/pd}
teams:
  ops:
    members: [alice]
    escalation:
      - {after: 2m, remind: true}
      - {after: 5m, add_team: secondary}
      - {after: 9m, page: oncall-pd}
  secondary: {members: [sam]}
`

func TestEscalationLadders(t *testing.T) {
	p, err := Parse([]byte(ladderBase+`rules:
  - {rule: "bash(deploy *)", action: ask, route: ops}
  - {rule: "bash(kubectl *)", action: ask, route: ops, ttl: 3m, escalation: [{after: 1m, page: oncall-pd}]}
  - {rule: "bash(helm *)", action: ask, route: ops, escalation: []}
`), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	team := []messages.EscalationStep{{AfterMS: 120000, Remind: true}, {AfterMS: 300000, AddTeam: "secondary"}, {AfterMS: 540000, Page: "oncall-pd"}}
	for _, tc := range []struct {
		cmd  string
		want []messages.EscalationStep
	}{
		{"deploy prod", team},
		{"kubectl delete pod x", []messages.EscalationStep{{AfterMS: 60000, Page: "oncall-pd"}}},
		{"helm upgrade", nil},
	} {
		d := p.Evaluate(Call{Tool: "bash", Arguments: []byte(`{"command":"` + tc.cmd + `"}`)})
		if d.Action != Ask || d.Route != "ops" {
			t.Fatalf("%s: %s route %q", tc.cmd, d.Action, d.Route)
		}
		if got := p.Escalation(&d, d.Route); !slices.Equal(got, tc.want) {
			t.Errorf("%s: ladder %+v, want %+v", tc.cmd, got, tc.want)
		}
	}
	if got := p.Pagers()["oncall-pd"]; got.Kind != "pagerduty" || got.RoutingKeyFile != "/run/secrets/pd" || got.Name != "oncall-pd" {
		t.Errorf("pager: %+v", got)
	}
	// A safety override that turns an allow into an ask carries no rule's ladder.
	d := Decision{Action: Ask}
	if got := p.Escalation(&d, "secondary"); got != nil {
		t.Errorf("team without a ladder: %+v", got)
	}
}

func TestEscalationErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want string
	}{
		{"a step that does two things", "teams:\n  ops:\n    members: [a]\n    escalation: [{after: 1m, remind: true, page: x}]\n",
			`policy.yaml:4:18: teams.ops.escalation[0]: a step does exactly one thing, this one says remind and page`},
		{"a step that does nothing", "teams:\n  ops:\n    members: [a]\n    escalation: [{after: 1m}]\n",
			`policy.yaml:4:18: teams.ops.escalation[0]: a step must do one thing`},
		{"steps out of order", "teams:\n  ops:\n    members: [a]\n    escalation: [{after: 2m, remind: true}, {after: 1m, remind: true}]\n",
			`policy.yaml:4:53: teams.ops.escalation[1].after: after 1m0s must be later than the previous step's 2m0s`},
		{"a step at the ttl", "ttl: 5m\nteams:\n  ops:\n    members: [a]\n    escalation: [{after: 5m, remind: true}]\n",
			`policy.yaml:5:26: teams.ops.escalation[0].after: 5m0s is at or after the question's ttl 5m0s (the policy's ttl)`},
		{"an unknown team", "teams:\n  ops:\n    members: [a]\n    escalation: [{after: 1m, add_team: nobody}]\n",
			`policy.yaml:4:40: teams.ops.escalation[0].add_team: unknown team "nobody"`},
		{"an unknown pager", "teams:\n  ops:\n    members: [a]\n    escalation: [{after: 1m, page: nobody}]\n",
			`policy.yaml:4:36: teams.ops.escalation[0].page: unknown pager "nobody" (defined: none: add a pagers: section)`},
		{"a missing after", "teams:\n  ops:\n    members: [a]\n    escalation: [{remind: true}]\n",
			`missing after:`},
		{"remind false", "teams:\n  ops:\n    members: [a]\n    escalation: [{after: 1m, remind: false}]\n",
			`remind: false does nothing`},
		{"a rule ttl shorter than its team's ladder", ladderBase + "rules:\n  - {rule: \"bash(x)\", action: ask, route: ops, ttl: 4m}\n",
			`rules[0].ttl: team ops escalates at 9m0s, at or after this rule's ttl 4m0s`},
		{"a rule step past the rule ttl", ladderBase + "rules:\n  - {rule: \"bash(x)\", action: ask, route: ops, ttl: 4m, escalation: [{after: 4m, remind: true}]}\n",
			`is at or after the question's ttl 4m0s (this rule's ttl)`},
		{"escalation on an allow rule", "rules:\n  - {rule: \"bash(x)\", action: allow, escalation: []}\n",
			`escalation only applies to ask rules`},
		{"a pager with the other vendor's key", "pagers:\n  pd: {kind: pagerduty, routing_key_env: X, api_key_env: Y}\n",
			`api_key_env is an opsgenie setting`},
		{"a plain http pager", "pagers:\n  pd: {kind: pagerduty, routing_key_env: X, base_url: http://pd.example.com}\n",
			`must be https`},
		{"a misspelt pager key", "pagers:\n  pd: {kind: pagerduty, routing_key_env: X, severty: info}\n",
			`pagers.pd: unknown key "severty"`},
		{"adding the question's own team", "teams:\n  ops:\n    members: [a]\n    escalation: [{after: 1m, add_team: ops}]\n",
			`is the question's own team`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.src), "policy.yaml")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestEscalationDelaysAreMilliseconds(t *testing.T) {
	_, err := Parse([]byte("teams:\n  ops:\n    members: [a]\n    escalation: [{after: 1500us, remind: true}]\n"), "policy.yaml")
	if err == nil || !strings.Contains(err.Error(), "whole milliseconds") {
		t.Fatalf("error = %v", err)
	}
	p, err := Parse([]byte("teams:\n  ops:\n    members: [a]\n    escalation: [{after: 1500ms, remind: true}]\n"), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Teams()["ops"].Escalation; len(got) != 1 || time.Duration(got[0].AfterMS)*time.Millisecond != 1500*time.Millisecond {
		t.Fatalf("ladder %+v", got)
	}
}

func TestCheckShowsTheLadderOfAQuestion(t *testing.T) {
	p, err := Parse([]byte(ladderBase+"rules:\n  - {rule: \"bash(deploy *)\", action: ask, route: ops}\n"), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	in := strings.NewReader(`{"tool":"bash","arguments":{"command":"deploy prod"}}` + "\n" + `{"tool":"bash","arguments":{"command":"ls"}}` + "\n")
	if err := RunCheck(in, &out, p, ""); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"escalation":[{"after_ms":120000,"remind":true},{"after_ms":300000,"add_team":"secondary"},{"after_ms":540000,"page":"oncall-pd"}]`) {
		t.Fatalf("check output:\n%s", out.String())
	}
	if strings.Contains(lines[1], "escalation") {
		t.Errorf("an allowed call shows a ladder: %s", lines[1])
	}
}

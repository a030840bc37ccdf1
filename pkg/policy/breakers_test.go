package policy

import (
	"strings"
	"testing"
	"time"
)

// breakerBase is a policy with the rules and teams breakers may name.
const breakerBase = `
mode: auto-edit
rules:
  - { rule: "bash(ls *)", action: allow }
  - { rule: "bash(curl *)", action: deny }
agents:
  coder:
    rules:
      - { rule: "bash(wget *)", action: deny }
pagers:
  sec-pd: { kind: pagerduty, routing_key_env: SEC_PD_KEY }
teams:
  default: { members: [alice] }
  quiet: { members: [bob] }
  security:
    members: [sam]
    escalation:
      - { after: 1m, page: sec-pd }
`

func TestBreakersAreParsedWithTheirSettings(t *testing.T) {
	p := mustParse(t, breakerBase+`
breakers:
  - name: injection
    rules: ["bash(curl *)", "bash(wget *)"]
    agents: 3
    window: 10m
    select: { agent_type: coder }
    team: security
  - { name: safety, safety_overrides: true, any_deny: true, agents: 2, window: 30s }
`)
	bs := p.Breakers()
	if len(bs) != 2 {
		t.Fatalf("breakers %+v, want 2", bs)
	}
	b := bs[0]
	if b.Name != "injection" || len(b.Rules) != 2 || b.Agents != 3 || b.Window != 10*time.Minute ||
		b.Select.AgentType != "coder" || b.Select.All || b.Team != "security" || b.AnyDeny || b.SafetyOverrides {
		t.Fatalf("injection = %+v", b)
	}
	if s := bs[1]; !s.Select.All || !s.AnyDeny || !s.SafetyOverrides || s.Window != 30*time.Second {
		t.Fatalf("safety = %+v: want every agent, any deny and safety overrides", s)
	}
	if got := p.TeamPagers("security"); len(got) != 1 || got[0] != "sec-pd" {
		t.Fatalf("TeamPagers(security) = %v", got)
	}
}

func TestBreakerHitNamesWhatWasHit(t *testing.T) {
	b := Breaker{Rules: []string{"bash(curl *)"}}
	for _, tc := range []struct {
		name string
		b    Breaker
		d    Decision
		want string // "" : no hit
	}{
		{"a watched deny rule", b, Decision{Action: Deny, Rule: "bash(curl *)"}, "bash(curl *)"},
		{"another deny rule", b, Decision{Action: Deny, Rule: "bash(wget *)"}, ""},
		{"an allow of a watched rule's text", b, Decision{Action: Allow, Rule: "bash(curl *)"}, ""},
		{"any deny", Breaker{AnyDeny: true}, Decision{Action: Deny, Rule: "bash(wget *)"}, "bash(wget *)"},
		{"any deny, no rule", Breaker{AnyDeny: true}, Decision{Action: Deny, Layer: "input"}, "deny: input"},
		{"a safety override", Breaker{SafetyOverrides: true}, Decision{Action: Ask, SafetyOverride: "rm -rf /"}, SafetyHit},
		{"another safety override counts the same", Breaker{SafetyOverrides: true}, Decision{Action: Ask, SafetyOverride: "writes /tmp/a1, outside the workspace"}, SafetyHit},
		{"a safety override not watched", b, Decision{Action: Ask, SafetyOverride: "rm -rf /"}, ""},
	} {
		got, ok := tc.b.Hit(&tc.d)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s: Hit = %q, %v; want %q", tc.name, got, ok, tc.want)
		}
	}
}

func TestAskForBreakerAsksWithoutGrantsAndKeepsDenies(t *testing.T) {
	d := Decision{Action: Allow, Rule: "bash(ls *)", Reason: "rule bash(ls *)", Grantable: true, Always: []string{"ls *"}}
	d.AskForBreaker("injection", "breaker injection tripped")
	if name, ok := d.Breaker(); d.Action != Ask || !ok || name != "injection" || d.Grantable || d.Always != nil ||
		!strings.HasPrefix(d.Reason, "breaker injection tripped; without it: allow") {
		t.Fatalf("after AskForBreaker: %+v", d)
	}
	p := mustParse(t, breakerBase)
	if n := p.NeedOf(&d); !strings.Contains(n.NotGrantable, "breaker") {
		t.Fatalf("NeedOf a breaker's ask: %+v, want not grantable because of the breaker", n)
	}
	deny := Decision{Action: Deny, Rule: "bash(curl *)"}
	deny.AskForBreaker("injection", "x")
	if deny.Action != Deny {
		t.Fatalf("a deny became %s", deny.Action)
	}
}

func TestBadBreakersAreRefusedWithTheReason(t *testing.T) {
	for _, tc := range []struct {
		name, breakers, want string
	}{
		{"an unknown rule", `[{name: b, rules: ["bash(nc *)"], agents: 3, window: 10m}]`, `unknown rule "bash(nc *)"`},
		{"an allow rule", `[{name: b, rules: ["bash(ls *)"], agents: 3, window: 10m}]`, `rule "bash(ls *)" is an allow rule: only denies and safety overrides count`},
		{"one agent", `[{name: b, any_deny: true, agents: 1, window: 10m}]`, "agents must be between 2 and 1000, got 1"},
		{"too many agents", `[{name: b, any_deny: true, agents: 5000, window: 10m}]`, "agents must be between 2 and 1000"},
		{"a window too short", `[{name: b, any_deny: true, agents: 2, window: 1s}]`, "window must be between 10s and 24h0m0s, got 1s"},
		{"a window too long", `[{name: b, any_deny: true, agents: 2, window: 48h}]`, "window must be between"},
		{"no window", `[{name: b, any_deny: true, agents: 2}]`, "breaker b needs window:"},
		{"no agents", `[{name: b, any_deny: true, window: 10m}]`, "breaker b needs agents:"},
		{"nothing watched", `[{name: b, agents: 2, window: 10m}]`, "breaker b watches nothing"},
		{"no name", `[{any_deny: true, agents: 2, window: 10m}]`, "a breaker needs a name"},
		{"a name with a dot", `[{name: a.b, any_deny: true, agents: 2, window: 10m}]`, `breaker name "a.b" must be a NATS subject token`},
		{"a duplicate name", `[{name: b, any_deny: true, agents: 2, window: 10m}, {name: b, any_deny: true, agents: 2, window: 10m}]`, `breaker "b" is defined twice`},
		{"an unknown key", `[{name: b, any_deny: true, agents: 2, window: 10m, agent: x}]`, `unknown key "agent"`},
		{"a selector with a session", `[{name: b, any_deny: true, agents: 2, window: 10m, select: {session: s1}}]`, `unknown key "session"`},
		{"an empty selector", `[{name: b, any_deny: true, agents: 2, window: 10m, select: {all: false}}]`, "select: "},
		{"an unknown team", `[{name: b, any_deny: true, agents: 2, window: 10m, team: red}]`, `unknown team "red"`},
		{"a team that pages nobody", `[{name: b, any_deny: true, agents: 2, window: 10m, team: quiet}]`, "team quiet's escalation ladder has no page: step"},
	} {
		_, err := Parse([]byte("home: "+testHome+"\n"+breakerBase+"breakers: "+tc.breakers+"\n"), "policy.yaml")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Parse = %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

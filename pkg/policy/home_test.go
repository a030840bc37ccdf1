package policy

import (
	"encoding/json"
	"fmt"
	"testing"
)

// A policy that sets no home: judges a call that says its agent's home with
// that home: ~ in its rules and in the call is the agent's (a broker in a
// container guarding its own /home/nonroot/.ssh while the agent's
// /home/dev/.ssh went unguarded, red team S14). A policy that sets home:
// keeps it for every call; a call that says no home keeps the broker's.
func TestCallHomeStandsForTildeWhenThePolicySetsNone(t *testing.T) {
	t.Setenv("HOME", "/home/nonroot")
	const rules = `
mode: auto-edit
rules:
  - { rule: "bash(cat *)", action: allow }
  - { rule: "@files(~/.ssh/**)", action: deny }
  - { rule: "@write(~/proj/**)", action: allow }
`
	open := parseNoHome(t, rules)
	set := mustParse(t, "home: /home/dev\n"+rules)
	eval := func(p *Policy, tool, args, home string) Action {
		return p.Evaluate(Call{Tool: tool, Arguments: json.RawMessage(args), Cwd: "/home/dev/proj", Home: home}).Action
	}
	tests := []struct {
		name       string
		p          *Policy
		tool, args string
		home       string
		want       Action
	}{
		{"a path reached without ~, with the agent's home", open, "bash", `{"command":"cat ../.ssh/id_rsa"}`, "/home/dev", Deny},
		{"an absolute path, with the agent's home", open, "bash", `{"command":"cat /home/dev/.ssh/id_rsa"}`, "/home/dev", Deny},
		{"~ in the call is the agent's home", open, "bash", `{"command":"cat ~/.ssh/id_rsa"}`, "/home/dev", Deny},
		{"a home the agent says does not unguard the broker's", open, "bash", `{"command":"cat /home/nonroot/.ssh/id_rsa"}`, "/home/dev", Deny},
		{"a lied home does not unguard the real one (the policy's)", open, "bash", `{"command":"cat /home/nonroot/.ssh/id_rsa"}`, "/nowhere", Deny},
		{"an allow rule under ~ is the agent's", open, "write", `{"file_path":"/home/dev/proj/a.go","content":"x"}`, "/home/dev", Allow},
		{"no home: the broker's", open, "bash", `{"command":"cat ../.ssh/id_rsa"}`, "", Allow},
		{"no home: the broker's, guarded", open, "bash", `{"command":"cat /home/nonroot/.ssh/id_rsa"}`, "", Deny},
		{"home: set wins", set, "bash", `{"command":"cat /home/other/.ssh/id_rsa"}`, "/home/other", Allow},
		{"home: set guards its own", set, "bash", `{"command":"cat ../.ssh/id_rsa"}`, "/home/other", Deny},
		{"a home with a glob is not used", open, "bash", `{"command":"cat /home/dev/.ssh/id_rsa"}`, "/home/*", Allow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := eval(tt.p, tt.tool, tt.args, tt.home); got != tt.want {
				t.Errorf("%s %s with home %q → %s, want %s", tt.tool, tt.args, tt.home, got, tt.want)
			}
		})
	}
}

// The compiled variants are bounded, and a variant dropped from the cache
// is compiled again with the same verdicts.
func TestHomeVariantsAreBounded(t *testing.T) {
	t.Setenv("HOME", "/home/nonroot")
	p := parseNoHome(t, "mode: auto-edit\nrules:\n  - { rule: \"bash(cat *)\", action: allow }\n  - { rule: \"@files(~/.ssh/**)\", action: deny }\n")
	for round := 0; round < 2; round++ {
		for i := range maxHomeVariants + 10 {
			home := fmt.Sprintf("/home/u%d", i)
			d := p.Evaluate(Call{Tool: "bash", Arguments: json.RawMessage(`{"command":"cat .ssh/id_rsa"}`), Cwd: home, Home: home})
			if d.Action != Deny {
				t.Fatalf("round %d, home %s: %s (%s), want deny", round, home, d.Action, d.Reason)
			}
		}
	}
	p.homes.mu.RLock()
	n, order := len(p.homes.m), len(p.homes.order)
	p.homes.mu.RUnlock()
	if n != maxHomeVariants || order != maxHomeVariants {
		t.Errorf("%d variants (%d in order), want %d", n, order, maxHomeVariants)
	}
}

// parseNoHome parses a policy that sets no home: (mustParse adds one).
func parseNoHome(t *testing.T, src string) *Policy {
	t.Helper()
	p, err := Parse([]byte(src), "nohome.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

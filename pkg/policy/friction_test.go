package policy_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// TestFrictionCorpus evaluates testdata/friction.txt against the built-in
// policy, with git commit allowed as a project would allow it: ordinary
// work must pass where the policy means it to (issue 24, item 10).
func TestFrictionCorpus(t *testing.T) {
	src := string(policy.DefaultYAML())
	src = strings.Replace(src, "\nrules:\n", "\nrules:\n  - { rule: \"@shell(git commit *)\", action: allow }\n", 1)
	p, err := policy.Parse([]byte(src), "friction.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := readCorpus(t, "testdata/friction.txt")
	if len(cases) < 30 {
		t.Fatalf("the friction corpus has %d cases, want at least 30", len(cases))
	}
	var bad []string
	for _, c := range cases {
		args, _ := json.Marshal(map[string]string{"command": c.command})
		d := p.Evaluate(policy.Call{Tool: "bash", Arguments: args})
		if d.Action != c.want {
			bad = append(bad, fmt.Sprintf("friction.txt:%d: %q: want %s, got %s (%s)", c.line, c.command, c.want, d.Action, d.Reason))
		}
	}
	if len(bad) > 0 {
		t.Errorf("%d of %d ordinary commands are not %s as they should be:\n%s", len(bad), len(cases), "decided", strings.Join(bad, "\n"))
	}
}

// TestEnvDenyDoesNotDenyGoGlob: a read deny rule *.env.* meets a glob
// operand only where the glob spells part of the rule's name (".env"), not
// only the separator after it: wc -l *.go is allowed, while every read
// that spells the name — a literal secret, .env.*, *.en* — stays denied.
func TestEnvDenyDoesNotDenyGoGlob(t *testing.T) {
	p, err := policy.Parse([]byte(`mode: auto-edit
rules:
  - { rule: "@shell(wc *)", action: allow }
  - { rule: "@shell(cat *)", action: allow }
  - { rule: "@files(*.env.*)", action: deny, reason: ".env files hold secrets" }
`), "env.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for cmd, want := range map[string]policy.Action{
		"wc -l *.go":                           policy.Allow,
		"wc -l src/*.txt":                      policy.Allow,
		"for f in *.go; do wc -l \"$f\"; done": policy.Allow,
		"cat .env.local":                       policy.Deny,
		"cat x.env.go":                         policy.Deny,
		"cat .env.*":                           policy.Deny,
		"cat *.en*":                            policy.Deny,
		"cat .*":                               policy.Deny,
		"cat < *.go":                           policy.Deny, // a redirection is judged strictly
	} {
		args, _ := json.Marshal(map[string]string{"command": cmd})
		if d := p.Evaluate(policy.Call{Tool: "bash", Arguments: args}); d.Action != want {
			t.Errorf("%q: want %s, got %s (%s)", cmd, want, d.Action, d.Reason)
		}
	}
}

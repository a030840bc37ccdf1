package policy_test

import (
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// TestTargetDirectoryOperandsAreSources (red team Z3): with -t DIR (cp,
// mv, install, ln) every operand is a source — the last one too, which
// without the option is the destination — and each lands as DIR/NAME,
// which a rule on NAME meets (cp -t sub HEAD writes sub/HEAD).
func TestTargetDirectoryOperandsAreSources(t *testing.T) {
	p, err := policy.Parse([]byte(`mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(cp *)", action: allow }
  - { rule: "bash(install *)", action: allow }
  - { rule: "bash(ln *)", action: allow }
  - { rule: "@read(**/*.pem)", action: deny }
  - { rule: "@write(**/HEAD)", action: ask }
  - { rule: "@write(**/.mcp.json)", action: ask }
`), "target.yaml")
	if err != nil {
		t.Fatal(err)
	}
	wantActions(t, p, []bashCase{
		{`cp -t out key.pem`, policy.Deny},
		{`cp -t out a.txt key.pem`, policy.Deny},
		{`cp --target-directory=out key.pem`, policy.Deny},
		{`install -t out key.pem`, policy.Deny},
		{`cp -t sub HEAD`, policy.Ask},
		{`cp -t sub x/.mcp.json`, policy.Ask},
		{`install -t bin x/HEAD`, policy.Ask},
		{`ln -t sub x/HEAD`, policy.Ask},
		{`cp -t out a.txt b.txt`, policy.Allow},
		{`cp -t out key.txt`, policy.Allow},
		{`cp a.txt out/`, policy.Allow},
	})
}

package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

// A call of an agent's own tool that asks its host to run it otherwise
// than by default (sandbox off, escalated permissions, another shell,
// another environment) asks, whatever rule allows its command, and no
// grant answers it; the default values change nothing (red team: these
// keys rode along on an allow rule).
func TestArgumentsThatChangeHowACallRunsAsk(t *testing.T) {
	p := mustParse(t, `
mode: auto-edit
rules:
  - { rule: "bash(ls *)", action: allow }
  - { rule: "bash(rm *)", action: deny }
`)
	tests := []struct {
		name, tool, args string
		want             Action
	}{
		{"an allowed command", "bash", `{"command":"ls -la"}`, Allow},
		{"the sandbox left on", "bash", `{"command":"ls -la","dangerouslyDisableSandbox":false}`, Allow},
		{"the default sandbox permissions", "bash", `{"command":"ls -la","sandbox_permissions":"use_default"}`, Allow},
		{"the sandbox turned off", "bash", `{"command":"ls -la","dangerouslyDisableSandbox":true}`, Ask},
		{"the sandbox turned off in another spelling", "bash", `{"command":"ls -la","dangerously-disable-sandbox":true}`, Ask},
		{"escalated permissions", "bash", `{"command":"ls -la","with_escalated_permissions":true}`, Ask},
		{"sandbox permissions beyond the default", "bash", `{"command":"ls -la","sandbox_permissions":"require_escalated"}`, Ask},
		{"another shell", "exec_command", `{"cmd":"ls -la","shell":"/tmp/evil"}`, Ask},
		{"an environment", "bash", `{"command":"ls -la","env":{"LD_PRELOAD":"/tmp/x.so"}}`, Ask},
		{"a file tool outside its sandbox", "write_file", `{"path":"src/a.go","dangerouslyDisableSandbox":true}`, Ask},
		{"a deny stands", "bash", `{"command":"rm -rf x","dangerouslyDisableSandbox":true}`, Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := p.Evaluate(Call{Tool: tt.tool, Arguments: json.RawMessage(tt.args), Cwd: "/home/dev/project"})
			if d.Action != tt.want {
				t.Fatalf("%s %s → %s (%s), want %s", tt.tool, tt.args, d.Action, d.Reason, tt.want)
			}
			if tt.want == Ask && (d.Grantable || !strings.Contains(d.Reason, "otherwise than by default")) {
				t.Errorf("ask is grantable %v or its reason %q does not say why", d.Grantable, d.Reason)
			}
		})
	}
}

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

// A shell tool's call is understood by its command, its working directory,
// the execution arguments above and the keys hosts send that change
// nothing (description, timeouts…). Any other key may be a host's option
// the policy does not know — a working directory under a new name, a
// sandbox switch —: the call asks, its reason names the key, and no
// grant answers it (red team T7: a closed set of keys, not a list of
// dangerous ones).
func TestShellToolKeysTheEngineDoesNotKnowAsk(t *testing.T) {
	p := mustParse(t, `
mode: auto-edit
rules:
  - { rule: "bash(ls *)", action: allow }
  - { rule: "shell(ls *)", action: allow }
  - { rule: "exec_command(ls *)", action: allow }
  - { rule: "run_shell_command(ls *)", action: allow }
  - { rule: "run_shell_command(cat *)", action: allow }
  - { rule: "bash(rm *)", action: deny }
  - { rule: "read(/home/dev/.ssh/**)", action: deny }
`)
	tests := []struct {
		name, tool, args string
		want             Action
	}{
		{"Claude Code's keys", "bash", `{"command":"ls -la","description":"List files","timeout":120000,"run_in_background":false}`, Allow},
		{"Codex's keys", "shell", `{"command":["bash","-lc","ls -la"],"workdir":"/home/dev/project","timeout_ms":5000,"justification":"look"}`, Allow},
		{"Codex exec_command's keys", "exec_command", `{"cmd":"ls -la","yield_time_ms":1000,"max_output_tokens":2000,"login":true,"prefix_rule":["ls"]}`, Allow},
		{"Gemini's keys", "run_shell_command", `{"command":"ls -la","description":"d","is_background":false}`, Allow},
		{"an unknown key", "bash", `{"command":"ls -la","sandbox":"off"}`, Ask},
		{"an unknown key whatever its value", "bash", `{"command":"ls -la","chroot":"/"}`, Ask},
		{"an escaped unknown key", "bash", `{"command":"ls -la","\u0070ty":true}`, Ask},
		{"a deny stands", "bash", `{"command":"rm -rf x","sandbox":"off"}`, Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := p.Evaluate(Call{Tool: tt.tool, Arguments: json.RawMessage(tt.args), Cwd: "/home/dev/project"})
			if d.Action != tt.want {
				t.Fatalf("%s %s → %s (%s), want %s", tt.tool, tt.args, d.Action, d.Reason, tt.want)
			}
			if tt.want == Ask && (d.Grantable || !strings.Contains(d.Reason, "not one the policy knows")) {
				t.Errorf("ask is grantable %v or its reason %q does not name the key", d.Grantable, d.Reason)
			}
		})
	}
	// Gemini's dir_path says where the command runs: with no working
	// directory in the request, relative paths resolve against it.
	d := p.Evaluate(Call{Tool: "run_shell_command", Arguments: json.RawMessage(`{"command":"cat id_rsa","dir_path":"/home/dev/.ssh"}`)})
	if d.Action != Deny {
		t.Errorf("cat id_rsa in dir_path ~/.ssh → %s (%s), want deny", d.Action, d.Reason)
	}
}

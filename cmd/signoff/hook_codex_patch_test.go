package main

import (
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// Codex's apply_patch, as Codex sends it to its hooks, through the signoff
// binary against a broker running the built-in policy (auto-edit).
func TestCodexApplyPatchIsJudgedByItsPaths(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: string(policy.DefaultYAML())})
	env := hookEnv(p)
	tests := []struct {
		name, patch string
		deny        string // the reason, when denied
	}{
		{"an edit of src/main.go passes", "", ""},
		{"a patch adding .env is denied",
			"*** Begin Patch\n*** Add File: .env\n+OPENAI_API_KEY=sk-test\n*** End Patch\n", ".env files hold secrets"},
		{"an edit that also moves a file onto .env is denied",
			"*** Begin Patch\n*** Update File: src/main.go\n@@\n-a\n+b\n*** Update File: env.txt\n*** Move to: .env\n*** End Patch\n", ".env files hold secrets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, id := ids()
			set := map[string]any{"session_id": s, "tool_use_id": id}
			if tt.patch != "" {
				set["command"] = tt.patch
			}
			r := runBin(t, fixture(t, "codex/pre_tool_use_apply_patch.json", set), env, "hook", "codex")
			audit := p.LastAudit(s)
			if tt.deny == "" {
				if r.code != 0 || r.stdout != "" {
					t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
				}
				if audit.Decision.Outcome != messages.OutcomeAllow || audit.Request.Tool != "apply_patch" {
					t.Fatalf("audit %+v", audit.Decision)
				}
				return
			}
			out := r.json(t)
			reason, _ := field(out, "hookSpecificOutput", "permissionDecisionReason").(string)
			if field(out, "hookSpecificOutput", "permissionDecision") != "deny" || !strings.Contains(reason, tt.deny) {
				t.Fatalf("answer %s", r.stdout)
			}
			if audit.Decision.ReasonCode != messages.ReasonPolicyDeny {
				t.Fatalf("audit %+v", audit.Decision)
			}
		})
	}
}

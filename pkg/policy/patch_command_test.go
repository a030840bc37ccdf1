package policy

import (
	"encoding/json"
	"testing"
)

// Codex's hooks send apply_patch with the patch text in tool_input.command
// (openai/codex codex-rs/core/src/hook_runtime.rs): the built-in policy
// judges every path of that patch as a write.
func TestBuiltinPolicyJudgesCodexApplyPatchCommand(t *testing.T) {
	p := Default()
	tests := []struct {
		name, patch string
		want        Action
	}{
		{"an edit of a source file in the project passes in auto-edit",
			"*** Begin Patch\n*** Update File: src/main.go\n@@\n-a\n+b\n*** End Patch\n", Allow},
		{"a patch adding .env is denied",
			"*** Begin Patch\n*** Add File: .env\n+TOKEN=x\n*** End Patch\n", Deny},
		{"a patch adding .env next to an edit is denied",
			"*** Begin Patch\n*** Update File: src/main.go\n@@\n-a\n+b\n*** Add File: config/.env\n+TOKEN=x\n*** End Patch\n", Deny},
		{"a move onto .env is denied",
			"*** Begin Patch\n*** Update File: notes.txt\n*** Move to: .env\n*** End Patch\n", Deny},
		{"deleting a file outside the project asks",
			"*** Begin Patch\n*** Delete File: /etc/hosts\n*** End Patch\n", Ask},
		{"a patch that names no file asks",
			"rm -rf /", Ask},
		// Codex trims a line before reading it as a hunk header (red team):
		// an indented header is judged like any other.
		{"an Add File header indented by a space is judged",
			"*** Begin Patch\n*** Add File: notes.txt\n+hi\n *** Add File: .env\n+TOKEN=x\n*** End Patch\n", Deny},
		{"an Add File header indented by a tab is judged",
			"*** Begin Patch\n*** Update File: src/main.go\n@@\n-a\n+b\n\t*** Add File: config/.env\n+x\n*** End Patch\n", Deny},
		{"an Add File header indented by a no-break space is judged",
			"*** Begin Patch\n*** Add File: notes.txt\n+hi\n\u00a0*** Add File: .env\n+x\n*** End Patch\n", Deny},
		{"a *** line that is no header Signoff knows asks",
			"*** Begin Patch\n*** Update File: src/main.go\n*** Copy File: /etc/cron.d/x\n*** End Patch\n", Ask},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args, _ := json.Marshal(map[string]string{"command": tt.patch})
			d := p.Evaluate(Call{Tool: "apply_patch", Arguments: args, Cwd: "/home/dev/project"})
			if d.Action != tt.want {
				t.Errorf("%q → %s (layer %s: %s), want %s", tt.patch, d.Action, d.Layer, d.Reason, tt.want)
			}
		})
	}
	t.Run("a command that is not a string asks", func(t *testing.T) {
		d := p.Evaluate(Call{Tool: "apply_patch", Arguments: json.RawMessage(`{"command":["apply_patch","*** Begin Patch\n*** Add File: .env\n*** End Patch"]}`), Cwd: "/home/dev/project"})
		if d.Action == Allow {
			t.Errorf("→ %s (%s)", d.Action, d.Reason)
		}
	})
}

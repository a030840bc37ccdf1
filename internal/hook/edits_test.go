package hook

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

func TestAnswerOfAnApprovalWithChanges(t *testing.T) {
	edited := func() *messages.Decision {
		return &messages.Decision{V: 1, RequestID: "r1", SessionID: "s1", Tool: "Bash", Outcome: messages.OutcomeAllow,
			ReasonCode: messages.ReasonApproved, Reason: "approved with changes (once) by bob", Scope: messages.ScopeOnce,
			UpdatedArguments: json.RawMessage(`{"command":"make plan"}`),
			DecidedBy:        messages.Decider{Kind: messages.DeciderApprover, ID: "bob"}, DecidedAt: time.Now()}
	}
	tests := []struct {
		name, event string
		host        Host
		want        []string // substrings of the output
		not         []string
	}{
		{"Claude Code PreToolUse allows the edited input", "PreToolUse", ClaudeCode,
			[]string{`"permissionDecision":"allow"`, `"updatedInput":{"command":"make plan"}`}, nil},
		{"Claude Code PermissionRequest allows the edited input", "PermissionRequest", ClaudeCode,
			[]string{`"behavior":"allow"`, `"updatedInput":{"command":"make plan"}`}, []string{"interrupt"}},
		{"Codex PreToolUse denies, quoting the edit", "PreToolUse", Codex,
			[]string{`"permissionDecision":"deny"`, `changed arguments`, `make plan`}, []string{"updatedInput", "systemMessage"}},
		{"Codex PermissionRequest denies, quoting the edit", "PermissionRequest", Codex,
			[]string{`"behavior":"deny"`, `make plan`}, []string{"updatedInput", "interrupt"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := edited()
			out, err := tt.host.answer(tt.event, d)
			if err != nil {
				t.Fatal(err)
			}
			s := string(out)
			for _, w := range tt.want {
				if !strings.Contains(s, w) {
					t.Errorf("answer %s lacks %s", s, w)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(s, w) {
					t.Errorf("answer %s holds %s", s, w)
				}
			}
			if string(d.UpdatedArguments) != `{"command":"make plan"}` || d.Outcome != messages.OutcomeAllow {
				t.Errorf("answer changed the caller's decision: %+v", d)
			}
		})
	}
}

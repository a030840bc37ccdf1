package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// writeEvent is Claude Code's PreToolUse of a Write of content to path.
func writeEvent(t *testing.T, session, id, path, content string) []byte {
	t.Helper()
	data := fixture(t, "claude-code/pre_tool_use_write.json", map[string]any{"session_id": session, "tool_use_id": id})
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m["tool_input"] = map[string]any{"file_path": path, "content": content}
	out, _ := json.Marshal(m)
	return out
}

// A 100 KB Write is over the test broker's 64 KiB message limit: the hook
// sends its path with the content's size, digest and head, and the policy
// decides by the path. A shell command that large cannot be shortened: it
// is refused, naming the setting.
func TestHookDecidesLargeWritesByTheirPath(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: string(policy.DefaultYAML())})
	env := hookEnv(p)
	content := strings.Repeat("0123456789abcdef", 100_000/16) // 100 KB

	t.Run("a 100 KB Write in the project is allowed", func(t *testing.T) {
		s, id := ids()
		r := runBin(t, writeEvent(t, s, id, "/workspace/app/data.txt", content), env, "hook", "claude-code")
		if r.code != 0 || field(r.json(t), "hookSpecificOutput", "permissionDecision") != "allow" {
			t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		audit := p.LastAudit(s)
		var args struct {
			FilePath, Content string
		}
		_ = json.Unmarshal(audit.Request.Arguments, &args)
		if !strings.Contains(string(audit.Request.Arguments), "/workspace/app/data.txt") ||
			!strings.HasPrefix(args.Content, "[Signoff: 100000 bytes not sent (the call is over the broker's --max-message-bytes") ||
			!strings.Contains(args.Content, "SHA-256 ") || !strings.HasSuffix(args.Content, content[:2048]) {
			t.Fatalf("the broker saw %.300s", audit.Request.Arguments)
		}
	})

	t.Run("a 100 KB Write of .env is denied", func(t *testing.T) {
		s, id := ids()
		r := runBin(t, writeEvent(t, s, id, "/workspace/app/.env", content), env, "hook", "claude-code")
		out := r.json(t)
		reason, _ := field(out, "hookSpecificOutput", "permissionDecisionReason").(string)
		if field(out, "hookSpecificOutput", "permissionDecision") != "deny" || !strings.Contains(reason, ".env files hold secrets") {
			t.Fatalf("answer %s", r.stdout)
		}
		if p.LastAudit(s).Decision.ReasonCode != messages.ReasonPolicyDeny {
			t.Fatal("not a policy deny")
		}
	})

	t.Run("a person's approval of a summarised Write does not run it", func(t *testing.T) {
		// The approver saw the content's size, hash and first 2 KB, not
		// what the host would write (red team V2).
		p := brokertest.Start(t, brokertest.Options{})
		env := hookEnv(p)
		dev := p.Approver("default")
		s, id := ids()
		done := make(chan result, 1)
		go func() { done <- runBin(t, writeEvent(t, s, id, "/tmp/notes.txt", content), env, "hook", "claude-code") }()
		q := <-dev.Asks
		if rep := dev.Approve(q, "alice", messages.ScopeOnce); !rep.Applied {
			t.Fatalf("approve: %+v", rep)
		}
		r := <-done
		out := r.json(t)
		reason, _ := field(out, "hookSpecificOutput", "permissionDecisionReason").(string)
		if field(out, "hookSpecificOutput", "permissionDecision") != "deny" || !strings.Contains(reason, "smaller calls") {
			t.Fatalf("answer %s", r.stdout)
		}
	})

	t.Run("a 100 KB shell command is refused, naming the setting", func(t *testing.T) {
		s, id := ids()
		r := runBin(t, fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id, "command": "echo " + content}), env, "hook", "claude-code")
		if r.code != 2 || !strings.Contains(r.stderr, "over the largest request Signoff takes (the broker's --max-message-bytes") {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
	})
}

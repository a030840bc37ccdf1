package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/agentcfg"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// approveWithChanges answers q approved (once) by alice with args.
func approveWithChanges(t *testing.T, a *brokertest.Approver, q messages.ApprovalNeeded, args string) {
	t.Helper()
	rep := a.Respond(messages.Response{RequestID: q.Request.RequestID, SessionID: q.Request.SessionID,
		Approver: messages.Approver{ID: "alice", Channel: "test"}, Approved: true, UpdatedArguments: json.RawMessage(args), Digest: q.Digest})
	if !rep.Applied {
		t.Fatalf("approval with changes not applied: %+v", rep)
	}
}

// nextAsk waits for the next question the approver sees.
func nextAsk(t *testing.T, a *brokertest.Approver) messages.ApprovalNeeded {
	t.Helper()
	select {
	case q := <-a.Asks:
		return q
	case <-time.After(10 * time.Second):
		t.Fatal("no question")
	}
	return messages.ApprovalNeeded{}
}

func TestHooksRunTheCallAsTheApproverChangedItOrNotAtAll(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: hookPolicy})
	approver := p.Approver("default")
	env := hookEnv(p)
	const edit = `{"command":"make deploy ENV=staging","description":"Deploy to staging"}`

	t.Run("Claude Code PreToolUse allows with updatedInput", func(t *testing.T) {
		s, id := ids()
		ch := start(t, fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id, "command": "make deploy ENV=prod"}), env, "hook", "claude-code")
		approveWithChanges(t, approver, approver.NextAsk(agentcfg.Token(id)), edit)
		r := wait(t, ch)
		out := r.json(t)
		if r.code != 0 || field(out, "hookSpecificOutput", "permissionDecision") != "allow" {
			t.Fatalf("exit %d, answer %s, stderr %q", r.code, r.stdout, r.stderr)
		}
		got, _ := json.Marshal(field(out, "hookSpecificOutput", "updatedInput"))
		if string(got) != edit {
			t.Fatalf("updatedInput %s, want the approver's arguments %s", got, edit)
		}
		if reason, _ := field(out, "hookSpecificOutput", "permissionDecisionReason").(string); !strings.Contains(reason, "with changes") {
			t.Errorf("the user is not told the call was changed: %q", reason)
		}
	})

	t.Run("Claude Code PermissionRequest allows with updatedInput", func(t *testing.T) {
		s, _ := ids()
		ch := start(t, fixture(t, "claude-code/permission_request.json", map[string]any{"session_id": s, "command": "make deploy ENV=prod"}), env, "hook", "claude-code")
		approveWithChanges(t, approver, nextAsk(t, approver), edit)
		r := wait(t, ch)
		out := r.json(t)
		if field(out, "hookSpecificOutput", "decision", "behavior") != "allow" {
			t.Fatalf("answer %s", r.stdout)
		}
		got, _ := json.Marshal(field(out, "hookSpecificOutput", "decision", "updatedInput"))
		if string(got) != edit {
			t.Fatalf("updatedInput %s, want %s", got, edit)
		}
	})

	t.Run("a plain approval carries no updatedInput", func(t *testing.T) {
		s, id := ids()
		ch := start(t, fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id, "command": "make deploy ENV=prod"}), env, "hook", "claude-code")
		approver.Approve(approver.NextAsk(agentcfg.Token(id)), "alice", messages.ScopeOnce)
		r := wait(t, ch)
		if strings.Contains(r.stdout, "updatedInput") {
			t.Fatalf("answer %s", r.stdout)
		}
	})

	t.Run("Codex PreToolUse denies an edited approval and tells the model the edit", func(t *testing.T) {
		s, id := ids()
		ch := start(t, fixture(t, "codex/pre_tool_use.json", map[string]any{"session_id": s, "tool_use_id": id, "command": "make deploy ENV=prod"}), env, "hook", "codex")
		approveWithChanges(t, approver, approver.NextAsk(agentcfg.Token(id)), edit)
		r := wait(t, ch)
		out := r.json(t)
		if field(out, "hookSpecificOutput", "permissionDecision") != "deny" {
			t.Fatalf("Codex ran the original of an edited call: exit %d, answer %q", r.code, r.stdout)
		}
		for k := range out["hookSpecificOutput"].(map[string]any) {
			if k != "hookEventName" && k != "permissionDecision" && k != "permissionDecisionReason" {
				t.Fatalf("undocumented field %q in %s", k, r.stdout)
			}
		}
		reason, _ := field(out, "hookSpecificOutput", "permissionDecisionReason").(string)
		if !strings.Contains(reason, "was not run") || !strings.Contains(reason, "changed arguments") || !strings.Contains(reason, "make deploy ENV=staging") {
			t.Fatalf("reason %q does not tell the model what was approved", reason)
		}
	})

	t.Run("Codex PermissionRequest denies an edited approval", func(t *testing.T) {
		s, _ := ids()
		ch := start(t, fixture(t, "codex/permission_request.json", map[string]any{"session_id": s, "command": "cargo publish"}), env, "hook", "codex")
		approveWithChanges(t, approver, nextAsk(t, approver), `{"command":"cargo publish --dry-run"}`)
		r := wait(t, ch)
		out := r.json(t)
		if field(out, "hookSpecificOutput", "decision", "behavior") != "deny" || strings.Contains(r.stdout, "updatedInput") || strings.Contains(r.stdout, "interrupt") {
			t.Fatalf("answer %s", r.stdout)
		}
		if msg, _ := field(out, "hookSpecificOutput", "decision", "message").(string); !strings.Contains(msg, "cargo publish --dry-run") {
			t.Fatalf("message %q", msg)
		}
	})
}

// After the call ran (PostToolUse), the hook checks that an approval with
// changes ran with the approver's arguments: a host that dropped
// updatedInput ran the agent's own call in the approver's name (red team
// AT F5). The model is told (block) and the user warned; a call that ran
// as approved, and one without changes, pass in silence.
func TestPostToolUseSaysWhenAnApprovalWithChangesRanOtherArguments(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: hookPolicy})
	approver := p.Approver("default")
	env := hookEnv(p)
	const edit = `{"command":"make deploy ENV=staging","description":"Deploy to staging"}`
	approvedWithChanges := func(t *testing.T) (session, id string) {
		s, id := ids()
		ch := start(t, fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id, "command": "make deploy ENV=prod"}), env, "hook", "claude-code")
		approveWithChanges(t, approver, approver.NextAsk(agentcfg.Token(id)), edit)
		if r := wait(t, ch); r.code != 0 || !strings.Contains(r.stdout, "updatedInput") {
			t.Fatalf("PreToolUse: exit %d, %s", r.code, r.stdout)
		}
		return s, id
	}
	post := func(t *testing.T, s, id, toolInput string) result {
		var input map[string]any
		if err := json.Unmarshal([]byte(toolInput), &input); err != nil {
			t.Fatal(err)
		}
		in := fixture(t, "claude-code/post_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id, "tool_input": input})
		return wait(t, start(t, in, env, "hook", "claude-code"))
	}
	const original = `{"command":"make deploy ENV=prod","description":"List the files of the project","timeout":120000}`

	t.Run("the host ran the agent's call", func(t *testing.T) {
		s, id := approvedWithChanges(t)
		r := post(t, s, id, original)
		out := r.json(t)
		if r.code != 0 || out["decision"] != "block" {
			t.Fatalf("exit %d, answer %s, stderr %q", r.code, r.stdout, r.stderr)
		}
		if reason, _ := out["reason"].(string); !strings.Contains(reason, "not approved") || !strings.Contains(reason, "ENV=staging") {
			t.Errorf("the model reads %q", reason)
		}
		if msg, _ := out["systemMessage"].(string); !strings.Contains(msg, "did not approve") {
			t.Errorf("the user reads %q", msg)
		}
	})
	t.Run("the host ran the approver's call", func(t *testing.T) {
		s, id := approvedWithChanges(t)
		if r := post(t, s, id, edit); r.code != 0 || strings.TrimSpace(r.stdout) != "" {
			t.Fatalf("exit %d, answer %s", r.code, r.stdout)
		}
	})
	t.Run("the host kept an argument the approver took out", func(t *testing.T) {
		// The approver's change was the removal of timeout (red team AU
		// F7): a host that dropped it still ran with it.
		s, id := approvedWithChanges(t)
		if r := post(t, s, id, `{"command":"make deploy ENV=staging","description":"Deploy to staging","timeout":120000}`); r.json(t)["decision"] != "block" {
			t.Fatalf("exit %d, answer %s", r.code, r.stdout)
		}
	})
	t.Run("a call without changes", func(t *testing.T) {
		s, id := ids()
		ch := start(t, fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id, "command": "make deploy ENV=prod"}), env, "hook", "claude-code")
		approver.Approve(approver.NextAsk(agentcfg.Token(id)), "alice", messages.ScopeOnce)
		wait(t, ch)
		if r := post(t, s, id, original); r.code != 0 || strings.TrimSpace(r.stdout) != "" {
			t.Fatalf("exit %d, answer %s", r.code, r.stdout)
		}
	})
}

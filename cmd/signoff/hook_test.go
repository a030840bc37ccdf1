package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nuid"

	"github.com/signoff-dev/signoff/internal/agentcfg"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// hookPolicy allows ls, denies rm -rf of absolute paths and asks the
// default team about every other command (auto-edit mode) and about the
// questions the agent has for its user.
const hookPolicy = `
mode: auto-edit
rules:
  - { rule: "Bash(ls)", action: allow }
  - { rule: "Bash(ls *)", action: allow }
  - { rule: "Bash(rm -rf /*)", action: deny }
  - { tool: AskUserQuestion, action: ask }
  - { rule: "@write(**/.claude/**)", action: deny }
teams:
  default: { members: [alice, bob] }
`

// hookEnv points the hook at plane as agent pod-1.
func hookEnv(p *brokertest.Plane, extra ...string) []string {
	return append([]string{"SIGNOFF_NATS=" + p.URL(), "SIGNOFF_AGENT=pod-1", "SIGNOFF_REQUESTED_BY=carol"}, extra...)
}

// ids returns a fresh session id and tool-use id for one case.
func ids() (session, toolUse string) {
	return "sess-" + nuid.Next(), "toolu_" + nuid.Next()
}

func TestClaudeCodeHookAnswersWithTheDecision(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: hookPolicy})
	approver := p.Approver("default")
	env := hookEnv(p)

	t.Run("a call the policy allows is allowed", func(t *testing.T) {
		s, id := ids()
		r := runBin(t, fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id}), env, "hook", "claude-code")
		if r.code != 0 {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
		out := r.json(t)
		if got := field(out, "hookSpecificOutput", "permissionDecision"); got != "allow" {
			t.Fatalf("permissionDecision %v, want allow: %s", got, r.stdout)
		}
		if got := field(out, "hookSpecificOutput", "hookEventName"); got != "PreToolUse" {
			t.Fatalf("hookEventName %v", got)
		}
	})

	t.Run("a call the policy denies is denied with the text the model reads", func(t *testing.T) {
		s, id := ids()
		r := runBin(t, fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id, "command": "rm -rf /etc"}), env, "hook", "claude-code")
		if r.code != 0 {
			t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
		}
		out := r.json(t)
		if got := field(out, "hookSpecificOutput", "permissionDecision"); got != "deny" {
			t.Fatalf("permissionDecision %v, want deny: %s", got, r.stdout)
		}
		reason, _ := field(out, "hookSpecificOutput", "permissionDecisionReason").(string)
		if !strings.Contains(reason, "Tool 'Bash' was denied by policy") {
			t.Fatalf("reason %q is not the decision's llm_message", reason)
		}
		if msg, _ := out["systemMessage"].(string); !strings.Contains(msg, "Signoff denied Bash") {
			t.Fatalf("systemMessage %q does not tell the user", msg)
		}
	})

	t.Run("an asked call approved after a wait is allowed, with the host's call in the question", func(t *testing.T) {
		s, id := ids()
		ch := start(t, fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id, "command": "make deploy"}), env, "hook", "claude-code")
		q := approver.NextAsk(agentcfg.Token(id))
		req := q.Request
		if req.Tool != "Bash" || req.SessionID != s || req.AgentID != "pod-1" || req.RequestedBy != "carol" ||
			req.Cwd != "/workspace/app" || req.Description != "List the files of the project" || req.CallID != id {
			t.Fatalf("question carries %+v", req)
		}
		if !strings.Contains(string(req.Arguments), `"command":"make deploy"`) {
			t.Fatalf("arguments %s", req.Arguments)
		}
		time.Sleep(300 * time.Millisecond)
		select {
		case r := <-ch:
			t.Fatalf("the hook answered before the approver: %+v", r)
		default:
		}
		approver.Approve(q, "alice", messages.ScopeOnce)
		r := wait(t, ch)
		if got := field(r.json(t), "hookSpecificOutput", "permissionDecision"); r.code != 0 || got != "allow" {
			t.Fatalf("exit %d, decision %v, stderr %q", r.code, got, r.stderr)
		}
	})

	t.Run("a hard rejection denies this call and the next until the user speaks", func(t *testing.T) {
		s, id := ids()
		ch := start(t, fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id, "command": "make deploy"}), env, "hook", "claude-code")
		approver.Reject(approver.NextAsk(agentcfg.Token(id)), "bob", messages.RejectHard, "wrong cluster")
		r := wait(t, ch)
		out := r.json(t)
		reason, _ := field(out, "hookSpecificOutput", "permissionDecisionReason").(string)
		if field(out, "hookSpecificOutput", "permissionDecision") != "deny" || !strings.Contains(reason, "wrong cluster") {
			t.Fatalf("rejection answered %s", r.stdout)
		}

		_, id2 := ids()
		r = runBin(t, fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id2}), env, "hook", "claude-code")
		out = r.json(t)
		reason, _ = field(out, "hookSpecificOutput", "permissionDecisionReason").(string)
		if field(out, "hookSpecificOutput", "permissionDecision") != "deny" || !strings.Contains(reason, "stopped this turn") {
			t.Fatalf("an allowed call after a hard stop answered %s", r.stdout)
		}

		r = runBin(t, fixture(t, "claude-code/user_prompt_submit.json", map[string]any{"session_id": s}), env, "hook", "claude-code")
		if r.code != 0 || r.stdout != "" {
			t.Fatalf("UserPromptSubmit: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}

		_, id3 := ids()
		r = runBin(t, fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id3}), env, "hook", "claude-code")
		if got := field(r.json(t), "hookSpecificOutput", "permissionDecision"); got != "allow" {
			t.Fatalf("after a new turn: %v (%s)", got, r.stdout)
		}
	})

	t.Run("the deadline denies before the host times out and cancels the pending request", func(t *testing.T) {
		s, id := ids()
		r := runBin(t, fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id, "command": "make deploy"}),
			hookEnv(p, "SIGNOFF_DEADLINE=2s"), "hook", "claude-code")
		if r.took > 3*time.Second { // the deadline, plus process start on a loaded machine
			t.Fatalf("answered after %s, deadline 2s", r.took)
		}
		out := r.json(t)
		reason, _ := field(out, "hookSpecificOutput", "permissionDecisionReason").(string)
		if r.code != 0 || field(out, "hookSpecificOutput", "permissionDecision") != "deny" || !strings.Contains(reason, "deadline") {
			t.Fatalf("exit %d, answer %s, stderr %q", r.code, r.stdout, r.stderr)
		}
		rc, err := p.Agent(s, "pod-1").Status(t.Context(), agentcfg.Token(id))
		if err != nil {
			t.Fatal(err)
		}
		if rc.State != messages.StateCancelled {
			t.Fatalf("the request is %s after the deadline, want cancelled", rc.State)
		}
	})

	t.Run("SessionEnd cancels the session's pending requests", func(t *testing.T) {
		s, id := ids()
		ch := start(t, fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id, "command": "make deploy"}), env, "hook", "claude-code")
		approver.NextAsk(agentcfg.Token(id))
		r := runBin(t, fixture(t, "claude-code/session_end.json", map[string]any{"session_id": s}), env, "hook", "claude-code")
		if r.code != 0 || r.stdout != "" {
			t.Fatalf("SessionEnd: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		r = wait(t, ch)
		if got := field(r.json(t), "hookSpecificOutput", "permissionDecision"); got != "deny" {
			t.Fatalf("the pending call answered %s after SessionEnd", r.stdout)
		}
	})

	t.Run("a hook the host interrupts denies and withdraws its question", func(t *testing.T) {
		s, id := ids()
		ch, proc := startProc(t, fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id, "command": "make deploy"}), env, "hook", "claude-code")
		approver.NextAsk(agentcfg.Token(id))
		if err := proc.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		r := wait(t, ch)
		if r.code != 2 || r.stdout != "" {
			t.Fatalf("interrupted hook: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		rc, err := p.Agent(s, "pod-1").Status(t.Context(), agentcfg.Token(id))
		if err != nil || rc.State != messages.StateCancelled {
			t.Fatalf("the request is %s (%v) after the interrupt, want cancelled", rc.State, err)
		}
	})

	t.Run("PermissionRequest is answered in its own shape", func(t *testing.T) {
		s, _ := ids()
		r := runBin(t, fixture(t, "claude-code/permission_request.json", map[string]any{"session_id": s}), env, "hook", "claude-code")
		out := r.json(t)
		if field(out, "hookSpecificOutput", "hookEventName") != "PermissionRequest" || field(out, "hookSpecificOutput", "decision", "behavior") != "allow" {
			t.Fatalf("allowed PermissionRequest answered %s", r.stdout)
		}
		r = runBin(t, fixture(t, "claude-code/permission_request.json", map[string]any{"session_id": s, "command": "rm -rf /"}), env, "hook", "claude-code")
		out = r.json(t)
		msg, _ := field(out, "hookSpecificOutput", "decision", "message").(string)
		if field(out, "hookSpecificOutput", "decision", "behavior") != "deny" || !strings.Contains(msg, "denied by policy") {
			t.Fatalf("denied PermissionRequest answered %s", r.stdout)
		}
	})

	t.Run("a host that runs the hook twice for one call gets one request and one decision", func(t *testing.T) {
		s, id := ids()
		event := fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id, "command": "make deploy"})
		first := start(t, event, env, "hook", "claude-code")
		q := approver.NextAsk(agentcfg.Token(id))
		second := start(t, event, env, "hook", "claude-code")
		time.Sleep(300 * time.Millisecond) // the retry reaches the broker
		approver.Approve(q, "alice", messages.ScopeOnce)
		for _, ch := range []<-chan result{first, second} {
			r := wait(t, ch)
			if got := field(r.json(t), "hookSpecificOutput", "permissionDecision"); got != "allow" {
				t.Fatalf("answer %s, stderr %q", r.stdout, r.stderr)
			}
		}
		// The broker may show the question again on the retry, but as the
		// same request: never a second one to answer.
		for len(approver.Asks) > 0 {
			if extra := <-approver.Asks; extra.Request.SessionID == s && extra.Request.RequestID != q.Request.RequestID {
				t.Fatalf("a second request for the same call: %+v", extra.Request)
			}
		}
	})

	t.Run("a pinned session replaces the host's", func(t *testing.T) {
		_, id := ids()
		ch := start(t, fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"tool_use_id": id, "command": "make lint"}),
			hookEnv(p, "SIGNOFF_SESSION=pod-1-session"), "hook", "claude-code")
		q := approver.NextAsk(agentcfg.Token(id))
		if q.Request.SessionID != "pod-1-session" {
			t.Fatalf("session %q, want the pinned one", q.Request.SessionID)
		}
		approver.Approve(q, "alice", messages.ScopeOnce)
		wait(t, ch)
	})

	t.Run("an ask-user tool answered through Signoff hands the answer to the model", func(t *testing.T) {
		s, id := ids()
		event := fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id,
			"tool_name": "AskUserQuestion", "tool_input": map[string]any{"questions": []any{map[string]any{"question": "Which database?", "header": "DB"}}}})
		ch := start(t, event, env, "hook", "claude-code")
		q := approver.NextAsk(agentcfg.Token(id))
		approver.Respond(messages.Response{RequestID: q.Request.RequestID, SessionID: q.Request.SessionID,
			Approver: messages.Approver{ID: "alice", Channel: "test"}, Approved: true, Answer: []byte(`"Postgres, please"`), Digest: q.Digest})
		r := wait(t, ch)
		out := r.json(t)
		// Claude Code's documented answer: allow, the tool's input with
		// the answers by question (the tool returns them without asking).
		answers, _ := field(out, "hookSpecificOutput", "updatedInput", "answers").(map[string]any)
		if field(out, "hookSpecificOutput", "permissionDecision") != "allow" || answers["Which database?"] != "Postgres, please" {
			t.Fatalf("answer %s", r.stdout)
		}
	})

	t.Run("a file tool keeps its host name and path", func(t *testing.T) {
		s, id := ids()
		r := runBin(t, fixture(t, "claude-code/pre_tool_use_write.json", map[string]any{"session_id": s, "tool_use_id": id}), env, "hook", "claude-code")
		if got := field(r.json(t), "hookSpecificOutput", "permissionDecision"); got != "allow" {
			t.Fatalf("a Write in auto-edit mode answered %s (stderr %q)", r.stdout, r.stderr)
		}
		_, id = ids()
		ch := start(t, fixture(t, "claude-code/pre_tool_use_write.json", map[string]any{"session_id": s, "tool_use_id": id,
			"tool_input": map[string]any{"file_path": "/etc/passwd", "content": "root::0:0::/:/bin/sh\n"}}), env, "hook", "claude-code")
		q := approver.NextAsk(agentcfg.Token(id))
		if q.Request.Tool != "Write" || !strings.Contains(string(q.Request.Arguments), `"file_path":"/etc/passwd"`) {
			t.Fatalf("question about %s %s", q.Request.Tool, q.Request.Arguments)
		}
		approver.Reject(q, "bob", messages.RejectSoft, "no")
		r = wait(t, ch)
		if got := field(r.json(t), "hookSpecificOutput", "permissionDecision"); got != "deny" {
			t.Fatalf("rejected write answered %s", r.stdout)
		}
	})

	t.Run("the agent cannot rewrite its own hook configuration (docs/AGENTS.md rule)", func(t *testing.T) {
		s, _ := ids()
		for _, ev := range [][]byte{
			fixture(t, "claude-code/pre_tool_use_write.json", map[string]any{"session_id": s, "tool_use_id": "toolu_" + nuid.Next(),
				"tool_input": map[string]any{"file_path": "/workspace/app/.claude/settings.local.json", "content": "{}"}}),
			fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": "toolu_" + nuid.Next(),
				"command": "echo '{}' > /workspace/app/.claude/settings.json"}),
		} {
			r := runBin(t, ev, env, "hook", "claude-code")
			if got := field(r.json(t), "hookSpecificOutput", "permissionDecision"); got != "deny" {
				t.Fatalf("answer %s for %s", r.stdout, ev)
			}
		}
	})

	t.Run("the host's cwd is the workspace: a write outside it asks", func(t *testing.T) {
		s, id := ids()
		ch := start(t, fixture(t, "claude-code/pre_tool_use_write.json", map[string]any{"session_id": s, "tool_use_id": id,
			"tool_input": map[string]any{"file_path": "/etc/hosts", "content": "127.0.0.1 evil\n"}}), env, "hook", "claude-code")
		q := approver.NextAsk(agentcfg.Token(id))
		if q.Request.Cwd != "/workspace/app" || !strings.Contains(q.Risk.Reason, "outside the workspace") {
			t.Fatalf("question: cwd %q, risk %+v", q.Request.Cwd, q.Risk)
		}
		approver.Reject(q, "bob", messages.RejectSoft, "")
		wait(t, ch)
	})

	t.Run("a subagent's type goes with its calls", func(t *testing.T) {
		s, id := ids()
		ch := start(t, fixture(t, "claude-code/pre_tool_use_subagent.json", map[string]any{"session_id": s, "tool_use_id": id, "command": "make lint"}), env, "hook", "claude-code")
		q := approver.NextAsk(agentcfg.Token(id))
		if q.Request.AgentType != "Explore" {
			t.Fatalf("agent_type %q, want Explore", q.Request.AgentType)
		}
		approver.Approve(q, "alice", messages.ScopeOnce)
		wait(t, ch)
	})

	t.Run("a host session id that is not a subject token is mapped, not refused", func(t *testing.T) {
		_, id := ids()
		r := runBin(t, fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": "team.alpha run 7", "tool_use_id": id}), env, "hook", "claude-code")
		if got := field(r.json(t), "hookSpecificOutput", "permissionDecision"); got != "allow" {
			t.Fatalf("answered %s, stderr %q", r.stdout, r.stderr)
		}
	})

	t.Run("the log file records each decision and each refusal", func(t *testing.T) {
		s, id := ids()
		logFile := filepath.Join(t.TempDir(), "hook.log")
		runBin(t, fixture(t, "claude-code/pre_tool_use_bash.json", map[string]any{"session_id": s, "tool_use_id": id}), hookEnv(p, "SIGNOFF_LOG_FILE="+logFile), "hook", "claude-code")
		runBin(t, []byte(`{"hook_event_name":"PreToolUse"`), hookEnv(p, "SIGNOFF_LOG_FILE="+logFile), "hook", "claude-code")
		data, err := os.ReadFile(logFile)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if len(lines) != 2 || !strings.Contains(lines[0], `"outcome":"allow"`) || !strings.Contains(lines[0], `"request_id":"`+id+`"`) ||
			!strings.Contains(lines[1], `"msg":"refused"`) {
			t.Fatalf("log:\n%s", data)
		}
	})

	t.Run("an event that decides nothing is answered with silence", func(t *testing.T) {
		s, _ := ids()
		r := runBin(t, fixture(t, "claude-code/stop.json", map[string]any{"session_id": s}), env, "hook", "claude-code")
		if r.code != 0 || r.stdout != "" {
			t.Fatalf("Stop: exit %d, stdout %q", r.code, r.stdout)
		}
	})
}

func TestCodexHookGatesOnDeny(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: hookPolicy})
	approver := p.Approver("default")
	env := hookEnv(p)

	t.Run("an allowed call is answered with silence, so Codex's own settings apply", func(t *testing.T) {
		s, id := ids()
		r := runBin(t, fixture(t, "codex/pre_tool_use.json", map[string]any{"session_id": s, "tool_use_id": id}), env, "hook", "codex")
		if r.code != 0 || r.stdout != "" {
			t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("a denied call is answered with only the documented fields", func(t *testing.T) {
		s, id := ids()
		r := runBin(t, fixture(t, "codex/pre_tool_use.json", map[string]any{"session_id": s, "tool_use_id": id, "command": "rm -rf /"}), env, "hook", "codex")
		out := r.json(t)
		if len(out) != 1 || field(out, "hookSpecificOutput", "permissionDecision") != "deny" {
			t.Fatalf("answer %s", r.stdout)
		}
		for k := range out["hookSpecificOutput"].(map[string]any) {
			if k != "hookEventName" && k != "permissionDecision" && k != "permissionDecisionReason" {
				t.Fatalf("undocumented field %q in %s", k, r.stdout)
			}
		}
	})

	t.Run("a PermissionRequest approved by a person is allowed", func(t *testing.T) {
		s, _ := ids()
		ch := start(t, fixture(t, "codex/permission_request.json", map[string]any{"session_id": s, "command": "cargo publish"}), env, "hook", "codex")
		var q messages.ApprovalNeeded
		select {
		case q = <-approver.Asks:
		case <-time.After(10 * time.Second):
			t.Fatal("no question")
		}
		if q.Request.Description != "List the files to find the build script" || q.Request.SessionID != s {
			t.Fatalf("question %+v", q.Request)
		}
		approver.Approve(q, "alice", messages.ScopeOnce)
		r := wait(t, ch)
		if got := field(r.json(t), "hookSpecificOutput", "decision", "behavior"); got != "allow" {
			t.Fatalf("answer %s", r.stdout)
		}
	})

	t.Run("UserPromptSubmit starts a new turn silently", func(t *testing.T) {
		s, _ := ids()
		r := runBin(t, fixture(t, "codex/user_prompt_submit.json", map[string]any{"session_id": s}), env, "hook", "codex")
		if r.code != 0 || r.stdout != "" {
			t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
	})
}

// closedPort returns a local port nothing listens on.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func TestHookFailsClosed(t *testing.T) {
	noBroker := brokertest.Start(t, brokertest.Options{NoBroker: true})
	good := fixture(t, "claude-code/pre_tool_use_bash.json", nil)
	tests := []struct {
		name      string
		host      string
		stdin     []byte
		env       []string
		wantCode  int
		wantInErr string
		within    time.Duration
	}{
		{"no NATS server denies", "claude-code", good, []string{"SIGNOFF_NATS=nats://" + closedPort(t)}, 2, "connect to NATS", 10 * time.Second},
		{"NATS without a broker denies", "claude-code", good, []string{"SIGNOFF_NATS=" + noBroker.URL(), "SIGNOFF_RECEIPT_TIMEOUT=1s"}, 2, "no decision from Signoff", 5 * time.Second},
		{"NATS without a broker denies a Codex call", "codex", fixture(t, "codex/pre_tool_use.json", nil), []string{"SIGNOFF_NATS=" + noBroker.URL(), "SIGNOFF_RECEIPT_TIMEOUT=1s"}, 2, "no decision from Signoff", 5 * time.Second},
		{"a broker that answers nothing before the deadline denies", "claude-code", good, []string{"SIGNOFF_NATS=" + noBroker.URL(), "SIGNOFF_DEADLINE=1500ms"}, 0, "", 3 * time.Second},
		{"malformed JSON denies", "claude-code", []byte(`{"hook_event_name": "PreToolUse", `), nil, 2, "not a JSON object", 5 * time.Second},
		{"empty stdin denies", "claude-code", nil, nil, 2, "stdin is empty", 5 * time.Second},
		{"two JSON values deny", "codex", []byte(`{"hook_event_name":"PreToolUse"} {}`), nil, 2, "more than one JSON value", 5 * time.Second},
		{"an unknown event denies", "claude-code", []byte(`{"hook_event_name":"PreToolUseV2","session_id":"s","tool_name":"Bash","tool_input":{}}`), nil, 2, `unknown claude-code hook event "PreToolUseV2"`, 5 * time.Second},
		{"a Claude-only event sent to the Codex hook denies", "codex", fixture(t, "claude-code/session_end.json", nil), nil, 2, "unknown codex hook event", 5 * time.Second},
		{"tool_input that is not an object denies", "claude-code", []byte(`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":"rm -rf /"}`), nil, 2, "tool_input must be a JSON object", 5 * time.Second},
		{"a call without a tool name denies", "claude-code", []byte(`{"hook_event_name":"PreToolUse","session_id":"s","tool_input":{}}`), nil, 2, "tool_name is missing", 5 * time.Second},
		{"a call in a working directory the protocol refuses denies", "claude-code", []byte(`{"hook_event_name":"PreToolUse","session_id":"s","cwd":"/home/dev/proj/x\u0001y","tool_name":"Bash","tool_input":{"command":"cat ../../.kube/config"}}`), nil, 2, "working directory", 5 * time.Second},
		{"a call without a session denies", "claude-code", []byte(`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{}}`), nil, 2, "session_id is missing", 5 * time.Second},
		{"an invalid setting denies", "claude-code", good, []string{"SIGNOFF_DEADLINE=soon"}, 2, "SIGNOFF_DEADLINE", 5 * time.Second},
		{"an unknown host denies", "cursor", good, nil, 2, "unknown host", 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := append([]string{"SIGNOFF_AGENT=pod-1", "SIGNOFF_NATS=nats://" + closedPort(t)}, tt.env...)
			r := runBin(t, tt.stdin, env, "hook", tt.host)
			if r.code != tt.wantCode {
				t.Fatalf("exit %d, want %d; stdout %q, stderr %q", r.code, tt.wantCode, r.stdout, r.stderr)
			}
			if r.took > tt.within {
				t.Fatalf("answered after %s, want within %s", r.took, tt.within)
			}
			if tt.wantCode == 2 {
				if r.stdout != "" {
					t.Fatalf("a refusal wrote %q on stdout", r.stdout)
				}
				if !strings.Contains(r.stderr, tt.wantInErr) ||
					!strings.Contains(r.stderr, "Signoff denied this tool call: ") && !strings.Contains(r.stderr, "Signoff blocked this hook event: ") {
					t.Fatalf("stderr %q does not say %q", r.stderr, tt.wantInErr)
				}
				return
			}
			if got := field(r.json(t), "hookSpecificOutput", "permissionDecision"); got != "deny" {
				t.Fatalf("answer %s, want a deny", r.stdout)
			}
		})
	}
}

package quickstart

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/signoff-dev/signoff/internal/testenv"
)

// claudeQuickstart is what the test takes from docs/AGENTS.md's "Gate a
// Claude Code agent in two minutes".
type claudeQuickstart struct {
	install, broker, bot string // shell command lines
	botConfig            string // the bot's --config file
	hook                 string // the hook command of settings.json
	env                  map[string]string
}

var jsonBlock = regexp.MustCompile("(?s)```json\n(.*?)```")

func readClaudeQuickstart(t *testing.T) claudeQuickstart {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "docs", "AGENTS.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "\n## Gate a Claude Code agent in two minutes\n")
	if start < 0 {
		t.Fatal("docs/AGENTS.md has no '## Gate a Claude Code agent in two minutes' section")
	}
	section := text[start+1:]
	section = section[:strings.Index(section[3:], "\n## ")+3]
	var q claudeQuickstart
	for _, block := range shellBlock.FindAllStringSubmatch(section, -1) {
		for _, line := range strings.Split(block[1], "\n") {
			line = strings.TrimSuffix(strings.TrimSpace(commentRE.ReplaceAllString(line, "")), "&")
			line = strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(line, "go install ./cmd/signoff"):
				q.install = line
			case strings.Contains(line, "./cmd/broker --dev"):
				q.broker = line
			case strings.Contains(line, "approver-bot") && strings.Contains(line, "terminal.yaml"):
				q.bot = line
			}
		}
	}
	if m := botConfRE.FindStringSubmatch(q.bot); m != nil {
		q.botConfig = m[1]
	}
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string }
		}
		Env map[string]string
	}
	if m := jsonBlock.FindStringSubmatch(section); m == nil {
		t.Fatal("the section shows no settings.json")
	} else if err := json.Unmarshal([]byte(m[1]), &settings); err != nil {
		t.Fatalf("the section's settings.json: %v", err)
	}
	if pre := settings.Hooks["PreToolUse"]; len(pre) > 0 && len(pre[0].Hooks) > 0 {
		q.hook = pre[0].Hooks[0].Command
	}
	q.env = settings.Env
	for what, v := range map[string]string{"go install ./cmd/signoff": q.install, "the dev broker": q.broker,
		"the terminal approver bot": q.bot, "its --config": q.botConfig, "the PreToolUse hook command": q.hook} {
		if v == "" {
			t.Fatalf("docs/AGENTS.md's two-minute section does not show %s", what)
		}
	}
	return q
}

// claudeEvent is Claude Code's PreToolUse event for tool with input, in
// session.
func claudeEvent(session, tool string, input map[string]any) []byte {
	ev, _ := json.Marshal(map[string]any{
		"session_id": session, "transcript_path": "/tmp/t.jsonl", "cwd": "/workspace/app", "permission_mode": "default",
		"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input, "tool_use_id": "toolu_" + strings.ReplaceAll(tool+session, "-", ""),
	})
	return ev
}

// TestTheAgentsQuickstartRunsAsWritten types what docs/AGENTS.md's
// two-minute Claude Code section says — go install ./cmd/signoff, the dev
// broker, the terminal approver bot — then plays Claude Code: it runs the
// hook command of the section's settings.json with its env for the three
// calls the section promises outcomes of, and compares: `ls` runs at once,
// a `.env` read is denied with the reason, `rm -rf build` appears in the
// approver's terminal and waits for the answer typed there.
//
// As in the README test, only addresses differ from the docs: free ports
// through SIGNOFF_LISTEN/SIGNOFF_HTTP (broker), SIGNOFF_NATS (hook) and a
// copy of the bot's config; `go install` installs into a temporary GOBIN,
// which is put first on PATH as the section asks.
func TestTheAgentsQuickstartRunsAsWritten(t *testing.T) {
	q := readClaudeQuickstart(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	gobin := t.TempDir()
	install := exec.CommandContext(ctx, "sh", "-c", q.install)
	install.Dir, install.Env = repoRoot, append(userEnv(), "GOBIN="+gobin)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", q.install, err, out)
	}
	path := "PATH=" + gobin + string(os.PathListSeparator) + os.Getenv("PATH")

	natsPort, httpPort, botPort := freePort(t), freePort(t), freePort(t)
	broker := start(t, q.broker, "SIGNOFF_LISTEN=127.0.0.1:"+natsPort, "SIGNOFF_HTTP=127.0.0.1:"+httpPort)
	waitOK(ctx, t, broker, "http://127.0.0.1:"+httpPort+"/readyz", "the dev broker")

	conf, err := os.ReadFile(filepath.Join(repoRoot, q.botConfig))
	if err != nil {
		t.Fatal(err)
	}
	conf = bytes.ReplaceAll(conf, []byte("127.0.0.1:4222"), []byte("127.0.0.1:"+natsPort))
	conf = bytes.ReplaceAll(conf, []byte("127.0.0.1:8091"), []byte("127.0.0.1:"+botPort))
	confCopy := filepath.Join(t.TempDir(), "terminal.yaml")
	if err := os.WriteFile(confCopy, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	screen, keys := startInTerminal(t, strings.Replace(q.bot, q.botConfig, confCopy, 1))
	waitFor(ctx, t, screen, "answering as")

	hookEnv := []string{path, "SIGNOFF_NATS=nats://127.0.0.1:" + natsPort}
	for k, v := range q.env {
		hookEnv = append(hookEnv, k+"="+v)
	}
	hook := func(event []byte) (map[string]any, string) {
		cmd := exec.CommandContext(ctx, "sh", "-c", q.hook)
		cmd.Env = append(userEnv(), hookEnv...)
		cmd.Stdin = bytes.NewReader(event)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var answer map[string]any
		if err != nil || json.Unmarshal(out, &answer) != nil {
			t.Fatalf("%s: %v, stdout %q, stderr %q", q.hook, err, out, stderr.String())
		}
		spec, _ := answer["hookSpecificOutput"].(map[string]any)
		reason, _ := spec["permissionDecisionReason"].(string)
		decision, _ := spec["permissionDecision"].(string)
		return map[string]any{"decision": decision}, reason
	}

	// "ls runs at once (the built-in policy allows it)"
	t0 := time.Now()
	if got, reason := hook(claudeEvent("s-docs", "Bash", map[string]any{"command": "ls"})); got["decision"] != "allow" {
		t.Errorf("ls: %v (%s), the docs say it runs at once", got, reason)
	} else if took := time.Since(t0); took > 10*time.Second {
		t.Errorf("ls took %s", took)
	}
	// "a .env read is denied, and Claude reads why"
	if got, reason := hook(claudeEvent("s-docs", "Read", map[string]any{"file_path": "/workspace/app/.env"})); got["decision"] != "deny" || !strings.Contains(reason, ".env") {
		t.Errorf("the .env read: %v (%q), the docs say it is denied with the reason", got, reason)
	}
	// "ask it to run rm -rf build: the question appears in the approver's
	// terminal, and Claude waits for the answer"
	done := make(chan string, 1)
	go func() {
		got, reason := hook(claudeEvent("s-docs", "Bash", map[string]any{"command": "rm -rf build"}))
		done <- got["decision"].(string) + " " + reason
	}()
	waitFor(ctx, t, screen, "rm -rf build")
	waitFor(ctx, t, screen, "› ")
	select {
	case got := <-done:
		t.Fatalf("the hook answered %q before anyone did", got)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := keys.WriteString("y"); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-done:
		if !strings.HasPrefix(got, "allow ") {
			t.Errorf("rm -rf build after the approver's y: %s", got)
		}
	case <-ctx.Done():
		t.Fatal("the hook did not answer after the approval")
	}
}

// startInTerminal runs line with sh in the repository root on a
// pseudo-terminal, as a user's shell would, and returns what it prints and
// the terminal's keyboard.
func startInTerminal(t *testing.T, line string) (*testenv.LogBuffer, *os.File) {
	t.Helper()
	cmd := exec.Command("sh", "-c", line)
	cmd.Dir, cmd.Env = repoRoot, userEnv()
	keys, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 100, Rows: 40})
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	out := &testenv.LogBuffer{}
	copied := make(chan struct{})
	go func() { defer close(copied); _, _ = io.Copy(out, keys) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		waited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-waited
		}
		_ = keys.Close()
		<-copied
		if t.Failed() {
			t.Logf("output of %q:\n%s", line, out.String())
		}
	})
	return out, keys
}

// waitFor waits until the terminal printed want.
func waitFor(ctx context.Context, t *testing.T, out *testenv.LogBuffer, want string) {
	t.Helper()
	for !strings.Contains(out.String(), want) {
		select {
		case <-ctx.Done():
			t.Fatalf("the terminal never printed %q:\n%s", want, out.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

func TestTheStateFileIsPrivateNamedByAHashAndValidated(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", dir)
	st := loadSeen("s/1:x")
	if st.err != nil || st.loaded != nil {
		t.Fatalf("a missing file: %v %v; want nothing heard, no error", st.loaded, st.err)
	}
	if filepath.Dir(st.path) != filepath.Join(dir, "signoff") || strings.Contains(filepath.Base(st.path), "s/1") {
		t.Fatalf("path %s: want a hashed name under %s/signoff", st.path, dir)
	}
	if err := st.keep([]string{"r-1", "r-2"}); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(st.path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("state file %v, %v; want mode 0600", fi, err)
	}
	if di, _ := os.Stat(filepath.Dir(st.path)); di.Mode().Perm() != 0o700 {
		t.Fatalf("state directory mode %v; want 0700", di.Mode().Perm())
	}
	// A turn dropped r-1 while another process added r-3: both count.
	again := loadSeen("s/1:x")
	other := loadSeen("s/1:x")
	if err := other.keep([]string{"r-1", "r-2", "r-3"}); err != nil {
		t.Fatal(err)
	}
	if err := again.keep([]string{"r-2"}); err != nil {
		t.Fatal(err)
	}
	if got := loadSeen("s/1:x").loaded; !slices.Equal(got, []string{"r-2", "r-3"}) {
		t.Fatalf("after a drop racing an add: %v; want [r-2 r-3]", got)
	}
	if loadSeen("another").loaded != nil {
		t.Fatal("another session read this session's ids")
	}

	for name, bad := range map[string]func(){
		"a world-readable file": func() { _ = os.Chmod(st.path, 0o644) },
		"another session's state": func() {
			_ = os.WriteFile(st.path, []byte(`{"v":1,"session_id":"another","seen":["r-1"]}`), 0o600)
		},
		"an id that is not a token": func() { _ = os.WriteFile(st.path, []byte(`{"v":1,"session_id":"s/1:x","seen":["a b"]}`), 0o600) },
		"not JSON":                  func() { _ = os.WriteFile(st.path, []byte(`{`), 0o600) },
	} {
		_ = st.write([]string{"r-1"})
		bad()
		if got := loadSeen("s/1:x"); got.err == nil || got.loaded != nil {
			t.Errorf("%s: read %v, %v; want an error and nothing heard", name, got.loaded, got.err)
		}
	}
	t.Setenv("XDG_STATE_HOME", "relative/dir")
	if got := loadSeen("s/1:x"); got.err == nil || !strings.Contains(got.err.Error(), "not an absolute path") {
		t.Fatalf("a relative XDG_STATE_HOME: %v; want refused", got.err)
	}
}

// The hooks keep what their agent heard between processes, so their turns
// are tracked: the prompt after a reject_hard the agent was told of ends
// the stop; with a state file it cannot read, the prompt ends nothing and
// the user is told, the next tool call is denied hard_stop naming the
// rejection (which the hook keeps), and the prompt after that ends it.
func TestHookTurnsNameTheRejectionsTheAgentHeardOf(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	p := brokertest.Start(t, brokertest.Options{})
	dev := p.Approver("default")
	cfg := testConfig(nil)
	cfg.Agent.NATSURL = p.URL()
	cfg.Connect = nil
	run := func(in string) string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if code := Run(context.Background(), cfg, strings.NewReader(in), &stdout, &stderr); code != ExitOK {
			t.Fatalf("hook exit %d, stderr %q", code, stderr.String())
		}
		return stdout.String()
	}
	call := func(id, command string) string {
		in, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "session_id": "s-hook", "tool_name": "bash",
			"tool_input": map[string]string{"command": command}, "tool_use_id": id})
		return run(string(in))
	}
	prompt := `{"hook_event_name":"UserPromptSubmit","session_id":"s-hook","prompt":"go on"}`
	denied := func(out string) bool { return strings.Contains(out, `"permissionDecision":"deny"`) }

	rejectHard := func(id string) {
		t.Helper()
		done := make(chan string, 1)
		go func() { done <- call(id, "make deploy") }()
		if rep := dev.Reject(<-dev.Asks, "alice", messages.RejectHard, "no"); !rep.Applied {
			t.Fatalf("reject: %+v", rep)
		}
		if out := <-done; !denied(out) {
			t.Fatalf("the rejected call answered %s", out)
		}
	}
	rejectHard("toolu_1")
	if out := call("toolu_2", "ls"); !denied(out) {
		t.Fatalf("a call after the reject_hard answered %s; want denied", out)
	}
	if out := run(prompt); out != "" {
		t.Fatalf("prompt answered %q", out)
	}
	if out := call("toolu_3", "ls"); denied(out) {
		t.Fatalf("a call after the prompt answered %s; want allowed", out)
	}

	rejectHard("toolu_4")
	path, _ := seenPath("s-hook")
	if err := os.WriteFile(path, []byte("damaged"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := run(prompt); !strings.Contains(out, "could not read what this session heard") {
		t.Fatalf("prompt with a damaged state file answered %q; want the user told", out)
	}
	if out := call("toolu_5", "ls"); !denied(out) || !strings.Contains(out, "stopped") {
		t.Fatalf("a call after a prompt that could not name the rejection answered %s; want denied hard_stop", out)
	}
	if out := run(prompt); out != "" {
		t.Fatalf("prompt answered %q", out)
	}
	if out := call("toolu_6", "ls"); denied(out) {
		t.Fatalf("a call after the agent heard and the user spoke answered %s; want allowed", out)
	}
	rejectHard("toolu_7")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("state file after a reject_hard: %v", err)
	}
	run(`{"hook_event_name":"SessionEnd","session_id":"s-hook","reason":"exit"}`)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("state file after SessionEnd: %v; want it removed", err)
	}
}

package hook

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
)

// FuzzRunNeverAllowsWithoutADecision feeds the hook arbitrary input while
// Signoff cannot be reached: whatever the input, the hook must not answer
// allow, and a gated event must not exit 0.
func FuzzRunNeverAllowsWithoutADecision(f *testing.F) {
	for _, s := range []string{
		preToolUse,
		`{"hook_event_name":"PermissionRequest","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"}}`,
		`{"hook_event_name":"UserPromptSubmit","session_id":"s","prompt":"hi"}`,
		`{"hook_event_name":"SessionEnd","session_id":"s"}`,
		`{"hook_event_name":"Stop","session_id":"s"}`,
		`{"hook_event_name":"PreToolUse","session_id":"s","tool_name":"Bash","tool_input":null}`,
		`{"hook_event_name":"PreToolUse"}{"hook_event_name":"Stop"}`,
		`[]`, `null`, ``, "\xff",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	noNATS := func(context.Context, string) (*nats.Conn, error) { return nil, errors.New("no servers") }
	f.Fuzz(func(t *testing.T, stdin string, codex bool) {
		cfg := testConfig(noNATS)
		if codex {
			cfg.Host = Codex
		}
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), cfg, strings.NewReader(stdin), &stdout, &stderr)
		if strings.Contains(stdout.String(), `"allow"`) {
			t.Fatalf("allowed without a decision: %q → %q", stdin, stdout.String())
		}
		in, err := ReadInput(strings.NewReader(stdin))
		if (err != nil || cfg.Host.eventKind(in.HookEventName) == kindGate) && code != ExitBlock {
			t.Fatalf("input %q: exit %d, want 2 (stdout %q)", stdin, code, stdout.String())
		}
	})
}

package hook

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/agentcfg"
	"github.com/signoff-dev/signoff/internal/brokertest"
)

const preToolUse = `{"hook_event_name":"PreToolUse","session_id":"s-1","tool_name":"Bash","tool_input":{"command":"ls"},"tool_use_id":"toolu_1"}`

func testConfig(connect func(context.Context, string) (*nats.Conn, error)) Config {
	return Config{Host: ClaudeCode, Agent: agentcfg.Config{Agent: "pod-1", Prefix: "signoff.v1", AttemptTimeout: time.Second, ReceiptTimeout: time.Second},
		Deadline: 2 * time.Second, Connect: connect}
}

// Faults no real server produces: the hook must deny on each.
func TestRunDeniesOnInternalFaults(t *testing.T) {
	tests := []struct {
		name    string
		connect func(context.Context, string) (*nats.Conn, error)
		stdin   string
		want    string
		says    string // how the refusal begins
	}{
		{"a panic is recovered and denies", func(context.Context, string) (*nats.Conn, error) { panic("boom") }, preToolUse, "internal error (boom)", "Signoff denied this tool call: "},
		{"a connection that hangs past the deadline is answered by the watchdog", func(context.Context, string) (*nats.Conn, error) {
			select {} // ignores its context, as a stuck library call would
		}, preToolUse, "no answer within the hook deadline of 2s", "Signoff denied this tool call: "},
		{"a connection error denies", func(context.Context, string) (*nats.Conn, error) { return nil, errors.New("authorization violation") }, preToolUse, "authorization violation", "Signoff denied this tool call: "},
		{"a panic while the event is unknown yet still denies", func(context.Context, string) (*nats.Conn, error) { return nil, nil }, "", "stdin is empty", "Signoff blocked this hook event: "},
		{"an unknown event is not called a tool call", func(context.Context, string) (*nats.Conn, error) { return nil, nil },
			`{"hook_event_name":"PostCompactSummary","session_id":"s-1"}`, "unknown claude-code hook event", "Signoff blocked this hook event: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			t0 := time.Now()
			code := Run(context.Background(), testConfig(tt.connect), strings.NewReader(tt.stdin), &stdout, &stderr)
			if took := time.Since(t0); took > 2*time.Second+500*time.Millisecond {
				t.Fatalf("answered after %s, deadline 2s", took)
			}
			if code != ExitBlock || stdout.Len() != 0 {
				t.Fatalf("exit %d, stdout %q: want exit 2 and nothing on stdout", code, stdout.String())
			}
			if !strings.Contains(stderr.String(), tt.want) || !strings.HasPrefix(stderr.String(), "signoff: "+tt.says) {
				t.Fatalf("stderr %q does not say %q", stderr.String(), tt.want)
			}
		})
	}
}

func TestRunRefusesAnInvalidConfig(t *testing.T) {
	cfg := testConfig(nil)
	cfg.CancelGrace = 3 * time.Second
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), cfg, strings.NewReader(preToolUse), &stdout, &stderr); code != ExitBlock {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), "cancel grace") {
		t.Fatalf("stderr %q", stderr.String())
	}
}

func TestSessionEndErrorsDoNotClaimToBlock(t *testing.T) {
	var stdout, stderr bytes.Buffer
	cfg := testConfig(func(context.Context, string) (*nats.Conn, error) { return nil, errors.New("no servers") })
	code := Run(context.Background(), cfg, strings.NewReader(`{"hook_event_name":"SessionEnd","session_id":"s-1"}`), &stdout, &stderr)
	if code != ExitError {
		t.Fatalf("exit %d, want 1 (SessionEnd cannot block)", code)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// A deny the host cannot read is no deny: the hook must block instead.
func TestAnAnswerThatCannotBeWrittenBlocks(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	cfg := testConfig(nil)
	cfg.Agent.NATSURL = p.URL()
	cfg.Connect = nil // the default: the real connection
	var stderr bytes.Buffer
	in := `{"hook_event_name":"PreToolUse","session_id":"s-w","tool_name":"bash","tool_input":{"command":"rm -rf /etc"},"tool_use_id":"toolu_w"}`
	code := Run(context.Background(), cfg, strings.NewReader(in), failingWriter{}, &stderr)
	if code != ExitBlock || !strings.Contains(stderr.String(), "writing the answer failed") {
		t.Fatalf("exit %d, stderr %q", code, stderr.String())
	}
}

// A failed new turn must not block the user's prompt (calls stay stopped,
// the safe side), but the user is told.
func TestANewTurnThatFailsTellsTheUserWithoutBlockingThePrompt(t *testing.T) {
	var stdout, stderr bytes.Buffer
	cfg := testConfig(func(context.Context, string) (*nats.Conn, error) { return nil, errors.New("no servers") })
	code := Run(context.Background(), cfg, strings.NewReader(`{"hook_event_name":"UserPromptSubmit","session_id":"s-1","prompt":"go on"}`), &stdout, &stderr)
	if code != ExitOK || !strings.Contains(stdout.String(), `"systemMessage":"Signoff could not start a new turn`) {
		t.Fatalf("exit %d, stdout %q", code, stdout.String())
	}
}

func TestCwdIsCleanedOrDropped(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"a clean absolute path is kept", "/workspace/app", "/workspace/app"},
		{"a trailing slash is cleaned away", "/workspace/app/", "/workspace/app"},
		{"dot segments are cleaned away", "/workspace/./app/../app", "/workspace/app"},
		{"a relative path is dropped", "workspace/app", ""},
		{"a path with a terminal escape is dropped", "/tmp/\x1b[2J", ""},
		{"a path with a newline is dropped", "/tmp\n/etc", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := Input{Cwd: tt.in}
			if got := in.cwd(); got != tt.want {
				t.Fatalf("cwd(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// The hook sends its $HOME as the request's home: a policy that sets no
// home: guards the agent's ~ as well as the broker's, even for a path
// reached without ~ (the broker here started with another HOME).
func TestTheHookSendsTheAgentsHome(t *testing.T) {
	t.Setenv("HOME", "/home/broker")
	p := brokertest.Start(t, brokertest.Options{Policy: `
mode: auto-edit
rules:
  - { rule: "bash(cat *)", action: allow }
  - { rule: "@files(~/.ssh/**)", action: deny }
`})
	t.Setenv("HOME", "/home/agent")
	cfg := testConfig(nil)
	cfg.Agent.NATSURL = p.URL()
	cfg.Connect = nil
	for _, tt := range []struct{ command, want string }{
		{"cat ../.ssh/id_rsa", "deny"},
		{"cat /home/broker/.ssh/id_rsa", "deny"},
		{"cat ../README.md", "allow"},
	} {
		var stdout, stderr bytes.Buffer
		in, _ := json.Marshal(map[string]any{"hook_event_name": "PreToolUse", "session_id": "s-home", "tool_name": "bash",
			"tool_input": map[string]string{"command": tt.command}, "tool_use_id": "toolu_h", "cwd": "/home/agent/proj"})
		if code := Run(context.Background(), cfg, bytes.NewReader(in), &stdout, &stderr); code != ExitOK {
			t.Fatalf("hook exit %d, stderr %q", code, stderr.String())
		}
		if !strings.Contains(stdout.String(), `"permissionDecision":"`+tt.want+`"`) {
			t.Errorf("%s answered %s, want %s", tt.command, stdout.String(), tt.want)
		}
	}
}

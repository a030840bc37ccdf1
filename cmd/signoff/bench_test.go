package main

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/signoff-dev/signoff/internal/brokertest"
)

// BenchmarkHookOverhead measures what a host pays per tool call for the
// hook: process start, reading the event, connecting to NATS, one request
// the policy allows at once, and the answer. The baseline is starting the
// same binary for `signoff version` in the same run, so the difference is
// the hook's own work. docs/BENCHMARKS.md quotes the medians.
func BenchmarkHookOverhead(b *testing.B) {
	p := brokertest.Start(b, brokertest.Options{Policy: hookPolicy})
	event := fixture(b, "claude-code/pre_tool_use_bash.json", nil)
	env := hostEnv(hookEnv(p)...)
	run := func(b *testing.B, stdin []byte, args ...string) {
		for b.Loop() {
			cmd := exec.Command(signoffBin, args...)
			cmd.Env = env
			cmd.Stdin = bytes.NewReader(stdin)
			out, err := cmd.Output()
			if err != nil {
				b.Fatalf("%v: %s", err, out)
			}
			if len(args) > 1 && !bytes.Contains(out, []byte(`"permissionDecision":"allow"`)) {
				b.Fatalf("not allowed: %s", out)
			}
		}
	}
	b.Run("baseline=version", func(b *testing.B) { run(b, nil, "version") })
	b.Run("hook=PreToolUse-allow", func(b *testing.B) { run(b, event, "hook", "claude-code") })
}

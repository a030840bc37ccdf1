package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/buildinfo"
)

// signoffBin is the signoff binary the tests run as a host would.
var (
	signoffBin string
	stateHome  string // XDG_STATE_HOME of the binaries the tests run
)

func TestMain(m *testing.M) {
	if os.Getenv(upstreamEnv) != "" {
		os.Exit(serveTestUpstream())
	}
	dir, err := os.MkdirTemp("", "signoff-test-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	signoffBin = filepath.Join(dir, "signoff")
	// The hooks keep a state file per session (internal/hook/seen.go):
	// here, not in the user's home.
	stateHome = filepath.Join(dir, "state")
	build := exec.Command("go", "build", "-o", signoffBin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building signoff: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// result is what a host sees of one run of the binary.
type result struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// json decodes stdout.
func (r result) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &m); err != nil {
		t.Fatalf("stdout is not a JSON object (%v): %q (stderr %q, exit %d)", err, r.stdout, r.stderr, r.code)
	}
	return m
}

// hostEnv is the environment of a hook run: the test's own, without any
// SIGNOFF_* setting that could leak in, plus env.
func hostEnv(env ...string) []string {
	out := []string{"XDG_STATE_HOME=" + stateHome}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SIGNOFF_") && !strings.HasPrefix(kv, "XDG_STATE_HOME=") {
			out = append(out, kv)
		}
	}
	return append(out, env...)
}

// start runs the binary with args, stdin and env in the background.
func start(t *testing.T, stdin []byte, env []string, args ...string) <-chan result {
	t.Helper()
	ch, _ := startProc(t, stdin, env, args...)
	return ch
}

// startProc is start that also returns the running process.
func startProc(t *testing.T, stdin []byte, env []string, args ...string) (<-chan result, *os.Process) {
	t.Helper()
	ch := make(chan result, 1)
	cmd := exec.Command(signoffBin, args...)
	cmd.Env = hostEnv(env...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start signoff: %v", err)
	}
	go func() {
		err := cmd.Wait()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			code = -1
		}
		ch <- result{stdout: stdout.String(), stderr: stderr.String(), code: code, took: time.Since(t0)}
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return ch, cmd.Process
}

// wait returns the run's result; none in 30 s fails the test.
func wait(t *testing.T, ch <-chan result) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("signoff did not exit within 30 s")
	}
	return result{}
}

func runBin(t *testing.T, stdin []byte, env []string, args ...string) result {
	t.Helper()
	return wait(t, start(t, stdin, env, args...))
}

// fixture loads testdata/name and sets top-level fields; "command" sets
// tool_input.command.
func fixture(t testing.TB, name string, set map[string]any) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	for k, v := range set {
		if k == "command" {
			m["tool_input"].(map[string]any)["command"] = v
			continue
		}
		m[k] = v
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// field walks nested objects of m along keys.
func field(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		o, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = o[k]
	}
	return v
}

func TestUnknownCommandIsAUsageError(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"frobnicate"}, nil, &stdout, &stderr); code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(stderr.String(), `unknown command "frobnicate"`) {
		t.Fatalf("stderr %q does not name the command", stderr.String())
	}
}

func TestVersionNamesTheModuleAndRevision(t *testing.T) {
	want, err := buildinfo.Of(signoffBin)
	if err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{"--version", "version"} {
		r := runBin(t, nil, hostEnv(), arg)
		if r.code != 0 || r.stdout != "signoff "+want+"\n" {
			t.Errorf("signoff %s: exit %d, %q, want %q", arg, r.code, r.stdout, "signoff "+want)
		}
	}
}

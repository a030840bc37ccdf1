package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// buildBroker compiles this command into a temporary directory.
func buildBroker(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "broker")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func TestDevModeRunsThePlaneAndStopsCleanlyOnSIGTERM(t *testing.T) {
	bin := buildBroker(t)
	cmd := exec.Command(bin, "--dev", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0")
	// The JetStream directory goes to $TMPDIR and must be gone after a
	// clean SIGTERM (--help says so).
	tmp := t.TempDir()
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if testing.Verbose() {
		cmd.Stderr = os.Stderr
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	natsURL, httpURL := readAddresses(t, stdout)
	go func() { _, _ = io.Copy(io.Discard, stdout) }()

	// Ready once it serves its subjects, as a readiness probe would see.
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(httpURL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz = %d after 10 s", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond)
	}

	nc, err := nats.Connect(natsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c, err := client.New(nc, client.WithSession("dev-1"), client.WithAgent("pod-1"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d, err := c.Request(ctx, client.Call{Tool: "bash", Arguments: map[string]any{"command": "ls -la && git status"}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome != messages.OutcomeAllow {
		t.Fatalf("built-in policy on ls && git status: %s (%s)", d.Outcome, d.Reason)
	}
	d, err = c.Request(ctx, client.Call{Tool: "read_file", Arguments: map[string]any{"path": "app/.env"}})
	if err != nil {
		t.Fatal(err)
	}
	if d.Outcome != messages.OutcomeDeny {
		t.Fatalf("built-in policy on app/.env: %s (%s)", d.Outcome, d.Reason)
	}
	metrics, err := http.Get(httpURL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(metrics.Body)
	metrics.Body.Close()
	if !strings.Contains(string(body), `signoff_decisions_total{outcome="deny",reason="policy_deny"} 1`) {
		t.Errorf("/metrics does not count the deny:\n%s", body)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("broker exited with %v after SIGTERM, want status 0", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("broker did not stop within 15 s of SIGTERM")
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "signoff-dev-*")); len(left) > 0 {
		t.Errorf("dev mode left its JetStream directory behind after SIGTERM: %v", left)
	}
}

func TestDevModeWritesItsJetStreamDirectoryUnderTMPDIR(t *testing.T) {
	// The other half of the SIGTERM test: the directory is made where the
	// test looks for it, so "nothing left" is not vacuous.
	bin := buildBroker(t)
	tmp := t.TempDir()
	cmd := exec.Command(bin, "--dev", "--listen", "127.0.0.1:0", "--http", "")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && !strings.Contains(sc.Text(), "NATS:") {
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "signoff-dev-*")); len(left) != 1 {
		t.Fatalf("running dev broker: %v in TMPDIR, want its one JetStream directory", left)
	}
	// SIGKILL leaves it (nothing runs at exit); SIGTERM is tested above.
	_ = cmd.Process.Kill()
}

var addrLine = regexp.MustCompile(`(NATS|HTTP):\s+(\S+)`)

// readAddresses reads the addresses the dev broker prints at start.
func readAddresses(t *testing.T, r io.Reader) (natsURL, httpURL string) {
	t.Helper()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(30 * time.Second)
	for natsURL == "" || httpURL == "" {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("broker exited before printing its addresses")
			}
			if m := addrLine.FindStringSubmatch(line); m != nil {
				if m[1] == "NATS" {
					natsURL = m[2]
				} else {
					httpURL = strings.TrimSuffix(m[2], "/healthz")
				}
			}
		case <-timeout:
			t.Fatal("broker printed no addresses in 30 s")
		}
	}
	return natsURL, httpURL
}

func TestProductionModeNeedsNATSRedisAndAPolicy(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"without Redis", []string{"--nats", "nats://127.0.0.1:4222"}, "--redis"},
		{"without a policy", []string{"--nats", "nats://127.0.0.1:4222", "--redis", "redis://127.0.0.1:6379/0"},
			`production mode needs --policy FILE (or SIGNOFF_POLICY): without one the broker would run the built-in dev policy, whose team "default" lists no members`},
		{"the fix is named", []string{"--nats", "nats://127.0.0.1:4222", "--redis", "redis://127.0.0.1:6379/0"}, "or --policy builtin to run the built-in policy on purpose"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SIGNOFF_POLICY", "")
			os.Unsetenv("SIGNOFF_POLICY")
			var stderr strings.Builder
			if code := run(tc.args, nil, io.Discard, &stderr); code != 2 {
				t.Fatalf("exit %d, want 2", code)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("stderr %q does not say %q", stderr.String(), tc.want)
			}
		})
	}
}

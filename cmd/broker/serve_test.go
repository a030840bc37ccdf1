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

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
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

	// `broker health`, the image's healthcheck, sees the same readiness.
	var hout, herr strings.Builder
	if code := run([]string{"health", "--url", httpURL + "/readyz"}, nil, &hout, &herr); code != 0 {
		t.Errorf("broker health on a ready broker: exit %d, stderr %q", code, herr.String())
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
	herr.Reset()
	if code := run([]string{"health", "--url", httpURL + "/readyz"}, nil, &hout, &herr); code != 1 || !strings.Contains(herr.String(), "unhealthy") {
		t.Errorf("broker health on a stopped broker: exit %d, stderr %q; want 1 and why", code, herr.String())
	}
}

func TestBrokerHealthProbesTheAddressOfSIGNOFFHTTP(t *testing.T) {
	t.Setenv("SIGNOFF_HTTP", "0.0.0.0:18081")
	if got := brokerHealthURL(); got != "http://127.0.0.1:18081/readyz" {
		t.Errorf("with SIGNOFF_HTTP=0.0.0.0:18081: %s", got)
	}
	t.Setenv("SIGNOFF_HTTP", "")
	if got := brokerHealthURL(); got != "http://127.0.0.1:8080/readyz" {
		t.Errorf("without SIGNOFF_HTTP: %s", got)
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

func TestProductionModeNeedsNATSRedisAPolicyAndNATSCredentials(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"without Redis", []string{"--nats", "nats://127.0.0.1:4222"}, "--redis"},
		{"without a policy", []string{"--nats", "nats://127.0.0.1:4222", "--redis", "redis://127.0.0.1:6379/0"},
			`production mode needs --policy FILE (or SIGNOFF_POLICY): without one the broker would run the built-in dev policy, whose team "default" lists no members`},
		{"the fix is named", []string{"--nats", "nats://127.0.0.1:4222", "--redis", "redis://127.0.0.1:6379/0"}, "or --policy builtin to run the built-in policy on purpose"},
		{"without NATS credentials", []string{"--nats", "nats://127.0.0.1:4222", "--redis", "redis://127.0.0.1:6379/0", "--policy", "builtin"},
			"production mode needs NATS credentials"},
		{"the credentials' fix is named", []string{"--nats", "nats://127.0.0.1:4222", "--redis", "redis://127.0.0.1:6379/0", "--policy", "builtin"},
			"pass --insecure-nats (SIGNOFF_INSECURE_NATS=true) to connect without credentials on purpose"},
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

// TestFileReloadsShowInTheMetrics edits the policy file of a running broker
// and reads /metrics after each step: reload counts by result, the version
// in force, and whether the file on disk is rejected.
func TestFileReloadsShowInTheMetrics(t *testing.T) {
	bin := buildBroker(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "policy.yaml")
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(path+".tmp", []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(path+".tmp", path); err != nil {
			t.Fatal(err)
		}
	}
	const good, better = "mode: auto-edit\n", "mode: always-ask\n"
	write(good)
	v1 := mustVersion(t, path)
	cmd := exec.Command(bin, "--dev", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0",
		"--policy", path, "--policy-interval", "20ms", "--log-format", "json")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &testenv.LogBuffer{} // the child's stderr, read by the test
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	_, httpURL := readAddresses(t, stdout)
	go func() { _, _ = io.Copy(io.Discard, stdout) }()

	// At start: the version in force, every series at 0.
	waitMetrics(t, httpURL,
		`signoff_policy_info{version="`+v1+`"} 1`,
		`signoff_policy_reloads_total{result="ok"} 0`,
		`signoff_policy_reloads_total{result="error"} 0`,
		`signoff_policy_file_rejected 0`,
		`signoff_store_errors_total{op="create"} 0`,
		`signoff_nats_errors_total{kind="audit"} 0`)

	// A bad file: counted once, flagged, the old version stays.
	write("mode: wild\n")
	waitMetrics(t, httpURL,
		`signoff_policy_reloads_total{result="error"} 1`,
		`signoff_policy_file_rejected 1`,
		`signoff_policy_info{version="`+v1+`"} 1`)

	// The good file back: ok, no longer flagged, and a log line says so.
	write(good)
	waitMetrics(t, httpURL,
		`signoff_policy_reloads_total{result="ok"} 1`,
		`signoff_policy_file_rejected 0`)
	if !strings.Contains(stderr.String(), "policy file restored to the policy in force") {
		t.Errorf("restoring the good file was not logged:\n%s", stderr.String())
	}

	// A new policy: its version replaces the old one (one series).
	write(better)
	v2 := mustVersion(t, path)
	body := waitMetrics(t, httpURL,
		`signoff_policy_reloads_total{result="ok"} 2`,
		`signoff_policy_info{version="`+v2+`"} 1`)
	if strings.Contains(body, v1) {
		t.Errorf("/metrics still lists the old version %s:\n%s", v1, body)
	}
	if n := strings.Count(body, `signoff_policy_reloads_total{result="error"} 1`); n != 1 {
		t.Errorf("the bad file was counted more than once (polled every 20 ms):\n%s", body)
	}
}

func mustVersion(t *testing.T, path string) string {
	t.Helper()
	p, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return p.Version()
}

// waitMetrics polls /metrics until it holds every line of want, and
// returns the body.
func waitMetrics(t *testing.T, httpURL string, want ...string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	var body string
	for {
		resp, err := http.Get(httpURL + "/metrics")
		if err == nil {
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(data)
			missing := ""
			for _, w := range want {
				if !strings.Contains(body, w+"\n") {
					missing = w
					break
				}
			}
			if missing == "" {
				return body
			}
			if time.Now().After(deadline) {
				t.Fatalf("/metrics has no line %q after 10 s:\n%s", missing, grepLines(body, "signoff_"))
			}
		} else if time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func grepLines(s, prefix string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

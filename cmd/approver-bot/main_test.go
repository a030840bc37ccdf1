package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/crypto/bcrypt"

	"github.com/signoff-dev/signoff/internal/approverbot/webhook"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/buildinfo"
	"github.com/signoff-dev/signoff/pkg/messages"
)

const waitFor = 15 * time.Second

// runCmd runs the command in-process with stdin.
func runCmd(args []string, stdin string, env map[string]string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb, func(k string) string { return env[k] })
	return code, out.String(), errb.String()
}

func TestHelpDocumentsEveryFlagAndCommand(t *testing.T) {
	code, out, _ := runCmd([]string{"--help"}, "", nil)
	if code != exitOK {
		t.Fatalf("--help exit %d", code)
	}
	for _, want := range []string{"-config", "-nats", "SIGNOFF_NATS", "--version", "-log-level", "-log-format", "hash-password", "enroll-code", "SIGNOFF_BOT_CONFIG",
		"SIGNOFF_BOT_LOG_LEVEL", "SIGNOFF_BOT_LOG_FORMAT", "/healthz", "/readyz", "docs/APPROVERS.md", "SIGTERM"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help does not mention %s:\n%s", want, out)
		}
	}
	code, out, _ = runCmd([]string{"hash-password", "--help"}, "", nil)
	if code != exitOK || !strings.Contains(out, "-cost") || !strings.Contains(out, "password_hash") {
		t.Errorf("hash-password --help exit %d:\n%s", code, out)
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBadInvocationsExitWithStatus2AndSayWhy(t *testing.T) {
	good := writeFile(t, "bot.yaml", "nats: {url: \"nats://127.0.0.1:1\"}\napprovers: {alice: {}}\nterminal: {approver: alice}\n")
	bad := writeFile(t, "bad.yaml", "approvers: {alice: {}}\nterminal: {approver: mallory}\n")
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"no config", nil, nil, "--config FILE (or SIGNOFF_BOT_CONFIG) is required"},
		{"a missing config file", []string{"--config", "/nonexistent/bot.yaml"}, nil, "no such file"},
		{"an invalid config", []string{"--config", bad}, nil, bad + `:2: terminal.approver: "mallory" is not in approvers`},
		{"an invalid config named by the environment", nil, map[string]string{"SIGNOFF_BOT_CONFIG": bad}, bad + ":2: terminal.approver"},
		{"a flag wins over the environment", []string{"--config", bad}, map[string]string{"SIGNOFF_BOT_CONFIG": good}, bad + ":2: terminal.approver"},
		{"an unknown flag", []string{"--colour"}, nil, "flag provided but not defined: -colour"},
		{"a stray argument", []string{"--config", good, "extra"}, nil, `unexpected argument "extra"`},
		{"a bad log level", []string{"--config", good, "--log-level", "loud"}, nil, `--log-level "loud"`},
		{"a bad log level from the environment", []string{"--config", good}, map[string]string{"SIGNOFF_BOT_LOG_LEVEL": "loud"}, `--log-level "loud"`},
		{"a bad log format", []string{"--config", good, "--log-format", "xml"}, nil, `--log-format "xml": want text or json`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCmd(tt.args, "", tt.env)
			if code != exitUsage || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant 2 and %q", code, errOut, tt.want)
			}
		})
	}
}

func TestAnUnreachablePlaneIsAClearError(t *testing.T) {
	cfg := writeFile(t, "bot.yaml", "nats: {url: \"nats://bot:s3cret@127.0.0.1:1\"}\napprovers: {alice: {}}\nterminal: {approver: alice}\n")
	code, _, errOut := runCmd([]string{"--config", cfg}, "", nil)
	if code != exitError || !strings.Contains(errOut, "connect to NATS at nats://bot:REDACTED@127.0.0.1:1 (is the plane running?)") {
		t.Errorf("exit %d, stderr:\n%s\nwant 1 and the redacted URL", code, errOut)
	}
	if strings.Contains(errOut, "s3cret") {
		t.Errorf("the NATS password is in the output:\n%s", errOut)
	}
}

func TestHashPasswordPrintsABcryptHash(t *testing.T) {
	code, out, errOut := runCmd([]string{"hash-password", "--cost", "4"}, "correct horse\n", nil)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	hash := strings.TrimSpace(out)
	if err := bcrypt.CompareHashAndPassword([]byte(hash), []byte("correct horse")); err != nil {
		t.Errorf("the printed hash %q does not match the password: %v", hash, err)
	}
	if cost, _ := bcrypt.Cost([]byte(hash)); cost != 4 {
		t.Errorf("cost %d, want 4", cost)
	}

	tests := []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{"an empty password", nil, "\n", "use at least 8"},
		{"a short password", nil, "short\n", "the password has 5 bytes; use at least 8"},
		{"a password bcrypt would cut", nil, strings.Repeat("x", 73) + "\n", "bcrypt uses at most 72"},
		{"a password on the command line", []string{"hunter22"}, "", "never from the command line"},
		{"a cost out of range", []string{"--cost", "99"}, "correct horse\n", "--cost 99"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCmd(append([]string{"hash-password"}, tt.args...), tt.stdin, nil)
			if code != exitUsage || out != "" || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing, %q", code, out, errOut, tt.want)
			}
		})
	}
}

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	buildDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// binary builds the command once per test run.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "approver-bot-test-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(buildDir, "approver-bot")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = errors.New(err.Error() + ": " + string(out))
		}
	})
	if buildErr != nil {
		t.Fatalf("go build: %v", buildErr)
	}
	return binPath
}

// logLines reads a JSON log stream and hands each line out; it keeps
// reading so the process never blocks on a full pipe.
func logLines(t *testing.T, r io.Reader) <-chan map[string]any {
	c := make(chan map[string]any, 100)
	go func() {
		defer close(c)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) != nil {
				m = map[string]any{"msg": sc.Text()}
			}
			select {
			case c <- m:
			default: // nobody is waiting for it
			}
		}
	}()
	return c
}

func waitLog(t *testing.T, lines <-chan map[string]any, msg string) map[string]any {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		select {
		case m, ok := <-lines:
			if !ok {
				t.Fatalf("the bot exited before logging %q", msg)
			}
			if m["msg"] == msg {
				return m
			}
		case <-deadline:
			t.Fatalf("the bot never logged %q", msg)
		}
	}
}

// waitExit waits for cmd and returns its exit code.
func waitExit(t *testing.T, cmd *exec.Cmd) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(waitFor):
		_ = cmd.Process.Kill()
		t.Fatal("the bot did not exit")
	}
	return -1
}

func TestBinaryServesTheWebhookAndStopsOnSIGTERM(t *testing.T) {
	bin := binary(t)
	p := brokertest.Start(t, brokertest.Options{})
	const secret = "0123456789abcdef-webhook"
	posted := make(chan messages.ApprovalNeeded, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := webhook.Verify(secret, r.Header, body, time.Now()); err != nil {
			t.Errorf("the bot's POST is not signed: %v", err)
		}
		if r.Header.Get(webhook.HeaderEvent) == "approval_needed" {
			var q messages.ApprovalNeeded
			if err := json.Unmarshal(body, &q); err != nil {
				t.Errorf("bad question: %v", err)
			}
			posted <- q
		}
	}))
	defer receiver.Close()
	cfg := writeFile(t, "bot.yaml", `
nats: {url: "`+p.URL()+`"}
teams: [default]
http: {listen: "127.0.0.1:0"}
approvers:
  alice: {display: Alice}
webhook: {url: "`+receiver.URL+`/hook", secret: "`+secret+`"}
`)
	cmd := exec.Command(bin, "--config", cfg, "--log-format", "json")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	lines := logLines(t, stderr)
	started := waitLog(t, lines, "approver bot started")
	base := "http://" + started["http"].(string)

	for _, path := range []string{"/healthz", "/readyz"} {
		// Ready once the first pending replay is in: poll.
		var resp *http.Response
		var body []byte
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			resp, err = http.Get(base + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ = io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 || time.Now().After(deadline) {
				break
			}
		}
		if resp.StatusCode != 200 {
			t.Errorf("GET %s = %d %s", path, resp.StatusCode, body)
		}
		if path == "/readyz" && string(body) != "nats: ok\nwebhook: ok\n" {
			t.Errorf("GET /readyz body %q", body)
		}
	}

	// A question reaches the webhook; an answer posted back settles it.
	req := brokertest.Ask(context.Background(), p.Agent("s-bin", "a1"), "r-bin", "bash", brokertest.Bash("make deploy"))
	var digest string
	select {
	case q := <-posted:
		if q.Request.RequestID != "r-bin" {
			t.Fatalf("posted question %s, want r-bin", q.Request.RequestID)
		}
		digest = q.Digest
	case <-time.After(waitFor):
		t.Fatal("the question never reached the webhook")
	}
	answer := []byte(`{"request_id":"r-bin","approver":"alice","approved":true,"scope":"once","device":"pager","digest":"` + digest + `"}`)
	post, _ := http.NewRequest("POST", base+webhook.RespondPath, bytes.NewReader(answer))
	post.Header.Set("Content-Type", "application/json")
	webhook.Sign(post.Header, secret, time.Now(), answer)
	resp, err := http.DefaultClient.Do(post)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("POST %s = %d", webhook.RespondPath, resp.StatusCode)
	}
	d := req.Wait(t)
	if d.DecidedBy.ID != "alice" || d.DecidedBy.Display != "Alice" || d.DecidedBy.Channel != "webhook" {
		t.Errorf("decided by %+v, want alice (Alice) via webhook", d.DecidedBy)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd); code != 0 {
		t.Errorf("exit %d after SIGTERM, want 0", code)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the HTTP listener still answers after the bot exited")
	}
}

// ptyOutput collects a pseudo-terminal's output.
type ptyOutput struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	done chan struct{}
	mark int
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

func readPTY(f *os.File) *ptyOutput {
	o := &ptyOutput{done: make(chan struct{})}
	go func() {
		defer close(o.done)
		b := make([]byte, 4096)
		for {
			n, err := f.Read(b)
			o.mu.Lock()
			o.buf.Write(b[:n])
			o.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return o
}

func (o *ptyOutput) text() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.ReplaceAll(ansi.ReplaceAllString(o.buf.String(), ""), "\r", "")
}

func (o *ptyOutput) expect(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for time.Now().Before(deadline) {
		s := o.text()
		if i := strings.Index(s[o.mark:], want); i >= 0 {
			o.mark += i + len(want)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("never printed %q; the terminal shows:\n%s", want, o.text())
}

func TestBinaryAnswersFromATerminalAndCtrlCStopsIt(t *testing.T) {
	bin := binary(t)
	p := brokertest.Start(t, brokertest.Options{})
	device := p.Approver("default")
	req := brokertest.Ask(context.Background(), p.Agent("s-tty", "a1"), "r-tty", "bash", brokertest.Bash("make deploy"))
	device.NextAsk("r-tty")
	cfg := writeFile(t, "terminal.yaml", `
nats: {url: "`+p.URL()+`"}
http: {listen: "127.0.0.1:0"}
approvers: {alice: {}}
terminal: {approver: alice}
`)
	cmd := exec.Command(bin, "--config", cfg)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	defer func() { _ = cmd.Process.Kill() }()
	out := readPTY(tty)
	out.expect(t, `command: "make deploy"`)
	out.expect(t, "› ")
	if _, err := tty.WriteString("s"); err != nil {
		t.Fatal(err)
	}
	d := req.Wait(t)
	if d.Scope != messages.ScopeSession || d.DecidedBy.ID != "alice" || d.DecidedBy.Channel != "terminal" {
		t.Errorf("decision %+v, want session by alice via terminal", d)
	}
	out.expect(t, `✓ bash make deploy approved (session: 1 bash pattern for agent a1 in session s-tty: "bash(make deploy)")`)
	// (The bracketed-paste switches are no colour.)
	if strings.Contains(strings.NewReplacer("\x1b[?2004h", "", "\x1b[?2004l", "").Replace(out.text()), "\x1b[") {
		t.Error("colours with NO_COLOR set")
	}
	if _, err := tty.WriteString("\x03"); err != nil {
		t.Fatal(err)
	}
	if code := waitExit(t, cmd); code != 0 {
		t.Errorf("exit %d after Ctrl-C, want 0; the terminal shows:\n%s", code, out.text())
	}
}

func TestBinaryHashPasswordDoesNotEchoOnATerminal(t *testing.T) {
	bin := binary(t)
	cmd := exec.Command(bin, "hash-password", "--cost", "4")
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	out := readPTY(tty)
	out.expect(t, "Password: ")
	_, _ = tty.WriteString("tr0ub4dor&3\r")
	out.expect(t, "Again: ")
	_, _ = tty.WriteString("tr0ub4dor&3\r")
	if code := waitExit(t, cmd); code != 0 {
		t.Fatalf("exit %d:\n%s", code, out.text())
	}
	<-out.done
	text := out.text()
	if strings.Contains(text, "tr0ub4dor") {
		t.Errorf("the password was echoed:\n%s", text)
	}
	hash := regexp.MustCompile(`\$2a\$04\$\S+`).FindString(text)
	if err := bcrypt.CompareHashAndPassword([]byte(hash), []byte("tr0ub4dor&3")); err != nil {
		t.Errorf("hash %q does not match: %v\n%s", hash, err, text)
	}
}

func TestJSONLogsWriteDurationsAsGoDurations(t *testing.T) {
	var buf strings.Builder
	log, err := newLogger("info", "json", &buf)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("webhook delivery failed; retrying", "retry_in", 1500*time.Millisecond)
	if !strings.Contains(buf.String(), `"retry_in":"1.5s"`) {
		t.Errorf("a duration is logged as %s", buf.String())
	}
}

func TestVersionNamesTheModuleAndRevision(t *testing.T) {
	bin := binary(t)
	want, err := buildinfo.Of(bin)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || string(out) != "approver-bot "+want+"\n" {
		t.Fatalf("approver-bot --version: %v, %q, want %q", err, out, "approver-bot "+want)
	}
}

// --nats (or SIGNOFF_NATS) names the plane instead of the config's
// nats.url; the flag wins over the variable.
func TestNATSFlagAndVariableOverrideTheConfig(t *testing.T) {
	cfg := writeFile(t, "bot.yaml", "nats: {url: \"nats://127.0.0.1:1\"}\napprovers: {alice: {}}\nterminal: {approver: alice}\n")
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"the flag", []string{"--config", cfg, "--nats", "nats://127.0.0.1:2"}, nil, "nats://127.0.0.1:2"},
		{"the variable", []string{"--config", cfg}, map[string]string{"SIGNOFF_NATS": "nats://127.0.0.1:3"}, "nats://127.0.0.1:3"},
		{"the flag over the variable", []string{"--config", cfg, "--nats", "nats://127.0.0.1:2"}, map[string]string{"SIGNOFF_NATS": "nats://127.0.0.1:3"}, "nats://127.0.0.1:2"},
		{"the config without either", []string{"--config", cfg}, nil, "nats://127.0.0.1:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, errOut := runCmd(tt.args, "", tt.env)
			if code != exitError || !strings.Contains(errOut, "connect to NATS at "+tt.want+" ") {
				t.Errorf("exit %d, stderr:\n%s\nwant 1 and %s", code, errOut, tt.want)
			}
		})
	}
}

// enroll-code prints a fresh code of 80 random bits and a bcrypt hash of
// it for approvers.<id>.enroll_code_hash; two runs never print the same.
func TestEnrollCodePrintsACodeAndItsHash(t *testing.T) {
	codeLine := regexp.MustCompile(`^code: ([A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4}-[A-Z2-7]{4})\nenroll_code_hash: (\$2a\$04\$\S+)\n$`)
	seen := map[string]bool{}
	for range 2 {
		code, out, errOut := runCmd([]string{"enroll-code", "--cost", "4"}, "", nil)
		if code != exitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		m := codeLine.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("output %q, want a code line and a hash line", out)
		}
		if err := bcrypt.CompareHashAndPassword([]byte(m[2]), []byte(m[1])); err != nil {
			t.Errorf("the hash does not match the code %s: %v", m[1], err)
		}
		if seen[m[1]] {
			t.Errorf("the same code twice: %s", m[1])
		}
		seen[m[1]] = true
	}
	for _, args := range [][]string{{"--cost", "99"}, {"alice"}} {
		if code, out, errOut := runCmd(append([]string{"enroll-code"}, args...), "", nil); code != exitUsage || out != "" || errOut == "" {
			t.Errorf("enroll-code %v: exit %d, stdout %q, stderr %q; want 2, nothing, why", args, code, out, errOut)
		}
	}
}

package quickstart

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot/web/webtest"
	"github.com/signoff-dev/signoff/internal/testenv"
)

// repoRoot is where the README's commands run.
const repoRoot = "../.."

// quickstart is what the test takes from README.md's Quickstart section.
type quickstart struct {
	broker, agent, webBot, check string // shell command lines
	botConfig                    string // the web bot's --config file
	approver, password           string // who signs in on the page
}

var (
	commentRE  = regexp.MustCompile(`\s+#\s.*$`)
	signInRE   = regexp.MustCompile(`Sign in as \*\*(\S+)\*\* with the password \*\*(\S+)\*\*`)
	botConfRE  = regexp.MustCompile(`--config (\S+)`)
	shellBlock = regexp.MustCompile("(?s)```sh\n(.*?)```")
)

// readQuickstart extracts the commands of the README's Quickstart section:
// each ```sh block, continuation lines joined, trailing comments dropped.
func readQuickstart(t *testing.T) quickstart {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "\n## Quickstart\n")
	if start < 0 {
		t.Fatal("README.md has no ## Quickstart section")
	}
	section := text[start+1:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	var q quickstart
	for _, block := range shellBlock.FindAllStringSubmatch(section, -1) {
		var cmd string
		for _, line := range strings.Split(block[1], "\n") {
			line = commentRE.ReplaceAllString(line, "")
			if strings.TrimSpace(line) == "" {
				continue
			}
			cmd += strings.TrimSuffix(line, "\\")
			if strings.HasSuffix(line, "|") || strings.HasSuffix(line, "\\") {
				cmd += " "
				continue
			}
			cmd = strings.TrimSpace(cmd)
			switch {
			case strings.HasPrefix(cmd, "make run") || strings.Contains(cmd, "./cmd/broker --dev"):
				q.broker = cmd
			case strings.HasPrefix(cmd, "go run ./examples/agent") && !strings.Contains(cmd, "-nats"):
				q.agent = cmd
			case strings.Contains(cmd, "approver-bot") && strings.Contains(cmd, "web.yaml"):
				q.webBot = cmd
			case strings.Contains(cmd, "policy check"):
				q.check = cmd
			}
			cmd = ""
		}
	}
	if m := signInRE.FindStringSubmatch(section); m != nil {
		q.approver, q.password = m[1], m[2]
	}
	if m := botConfRE.FindStringSubmatch(q.webBot); m != nil {
		q.botConfig = m[1]
	}
	for what, v := range map[string]string{"the dev broker": q.broker, "the demo agent": q.agent, "the web approver bot": q.webBot,
		"policy check": q.check, "the approver to sign in as": q.approver, "the bot's --config": q.botConfig} {
		if v == "" {
			t.Fatalf("README.md's Quickstart does not show %s", what)
		}
	}
	return q
}

// process is one README command running in its own process group.
type process struct {
	cmd  *exec.Cmd
	out  *testenv.LogBuffer
	done chan struct{} // closed when the command has exited
}

// start runs line with sh in the repository root; env adds to the
// environment. The process group is stopped at the end of the test.
func start(t *testing.T, line string, env ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command("sh", "-c", line), out: &testenv.LogBuffer{}, done: make(chan struct{})}
	p.cmd.Dir = repoRoot
	p.cmd.Env = append(userEnv(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
		if t.Failed() {
			t.Logf("output of %q:\n%s", line, p.out.String())
		}
	})
	return p
}

// userEnv is the environment of a user at a shell: this process's, without
// what a surrounding `make test` adds (its MAKEFLAGS would reach `make run`).
func userEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES":
			continue
		}
		out = append(out, kv)
	}
	return out
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// waitOK polls url until it answers 200; p exiting first fails t.
func waitOK(ctx context.Context, t *testing.T, p *process, url, what string) {
	t.Helper()
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s: %s never answered 200", what, url)
		case <-p.done:
			t.Fatalf("%s exited before %s answered 200", what, url)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestTheREADMEQuickstartRunsAsWritten runs the Quickstart's commands from
// README.md: `make run`, the web approver bot, the demo agent; signs in on
// the bot's page as the README says, approves the question the agent's rm
// call asks, and checks what the agent prints against what the README says
// of each call. Then runs the README's `policy check` line as written.
//
// The commands run as written, with one change so that the test never
// fights a developer's own plane (or another test) for the README's fixed
// ports: the ports are free ones, given through the environment
// (SIGNOFF_LISTEN and SIGNOFF_HTTP for the broker, NATS_URL for the agent)
// and, for the bot, in a copy of its config where only the two addresses
// differ.
func TestTheREADMEQuickstartRunsAsWritten(t *testing.T) {
	for _, tool := range []string{"make", "go", "sh"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is not installed: the README's commands need it", tool)
		}
	}
	q := readQuickstart(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	natsPort, httpPort, webPort := freePort(t), freePort(t), freePort(t)
	broker := start(t, q.broker, "SIGNOFF_LISTEN=127.0.0.1:"+natsPort, "SIGNOFF_HTTP=127.0.0.1:"+httpPort)
	waitOK(ctx, t, broker, "http://127.0.0.1:"+httpPort+"/readyz", "the dev broker")

	conf, err := os.ReadFile(filepath.Join(repoRoot, q.botConfig))
	if err != nil {
		t.Fatalf("the README's bot config: %v", err)
	}
	for _, addr := range []string{"127.0.0.1:4222", "127.0.0.1:8090"} {
		if !bytes.Contains(conf, []byte(addr)) {
			t.Fatalf("%s does not use %s, as the README says", q.botConfig, addr)
		}
	}
	conf = bytes.ReplaceAll(conf, []byte("127.0.0.1:4222"), []byte("127.0.0.1:"+natsPort))
	conf = bytes.ReplaceAll(conf, []byte("127.0.0.1:8090"), []byte("127.0.0.1:"+webPort))
	confCopy := filepath.Join(t.TempDir(), "web.yaml")
	if err := os.WriteFile(confCopy, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(confCopy)
	bot := start(t, strings.Replace(q.webBot, q.botConfig, abs, 1))
	web := "http://127.0.0.1:" + webPort
	waitOK(ctx, t, bot, web+"/readyz", "the web approver bot")

	agent := start(t, q.agent, "NATS_URL=nats://127.0.0.1:"+natsPort)

	// The question the rm call asks, on the web page, approved as the
	// README says.
	page := signIn(ctx, t, web, q.approver, q.password)
	id := page.waitQuestion(ctx, t, "rm -rf build")
	rep, err := page.Respond(ctx, id, "approve")
	if err != nil {
		t.Fatalf("%s approves: %v", q.approver, err)
	}
	if !rep.Applied || rep.State != "approved" {
		t.Fatalf("respond reply %+v, want applied and approved", rep)
	}
	select {
	case <-agent.done:
	case <-ctx.Done():
		t.Fatal("the demo agent did not finish after the approval")
	}
	if !agent.cmd.ProcessState.Success() {
		t.Fatalf("the demo agent exited with %v", agent.cmd.ProcessState)
	}
	out := agent.out.String()
	// What the README says of each call.
	for _, want := range []string{
		"✓ bash allowed (policy_allow",    // ls
		"✗ read_file denied (policy_deny", // the .env read
		"✓ bash allowed (approved",        // rm -rf build && make build, after the answer
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the demo agent's output has no %q:\n%s", want, out)
		}
	}

	// The policy check line, exactly as written.
	check := exec.CommandContext(ctx, "sh", "-c", q.check)
	check.Dir, check.Env = repoRoot, userEnv()
	checkOut, err := check.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", q.check, err, checkOut)
	}
	if !bytes.Contains(checkOut, []byte(`"action":"deny"`)) {
		t.Errorf("the README's policy check printed no deny for rm -rf /:\n%s", checkOut)
	}
}

// page is a browser signed in to the bot's web page.
type page struct{ *webtest.Client }

func signIn(ctx context.Context, t *testing.T, base, approver, password string) *page {
	t.Helper()
	p := &page{webtest.New(base)}
	if err := p.Login(ctx, approver, password); err != nil {
		t.Fatalf("%s signs in with the README's password: %v", approver, err)
	}
	return p
}

// waitQuestion waits for a question whose arguments mention command and
// returns its request id.
func (p *page) waitQuestion(ctx context.Context, t *testing.T, command string) string {
	t.Helper()
	for {
		list, err := p.Questions(ctx)
		if err != nil {
			t.Fatalf("list questions: %v", err)
		}
		for _, q := range list {
			if bytes.Contains(q.Question, []byte(command)) {
				return q.RequestID
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no question about %q reached the web page", command)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

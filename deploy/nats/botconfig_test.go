package nats_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gopkg.in/yaml.v3"

	"github.com/signoff-dev/signoff/internal/approverbot/web/webtest"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
)

// shippedBotConfig is the approver bot's config as deploy/kubernetes ships
// it (the signoff-approver-bot Secret's approver-bot.yaml).
const shippedSecrets = "../kubernetes/secrets.example.yaml"

// TestTheShippedBotConfigWorksUnderTheShippedPermissions runs the approver
// bot binary with the config deploy/kubernetes ships, against a server with
// the permissions of deploy/nats: a question asked before the bot started
// reaches its web page (the pending replay), and alice's answer is reported
// applied. Only what a test must change is changed: the server URL and the
// seed file, a free listen address, a password hash and cookies for plain
// HTTP (the Ingress terminates TLS in the cluster), and no Slack or Telegram
// (internet services). The NATS settings, inbox prefix included, are the
// shipped ones.
func TestTheShippedBotConfigWorksUnderTheShippedPermissions(t *testing.T) {
	cfg := loadShippedBotConfig(t)
	nc, _ := cfg["nats"].(map[string]any)
	if nc["inbox_prefix"] != "_INBOX.approver" {
		t.Errorf("the shipped bot config's nats.inbox_prefix is %v; deploy/nats lets the approver subscribe to _INBOX.approver.> only", nc["inbox_prefix"])
	}
	web := runShippedBot(t, cfg)
	if !web.ok {
		t.Fatalf("the bot did not serve its page:\n%s", web.logs())
	}
	if id := web.answer(t); id == "" {
		t.Fatalf("see above; bot logs:\n%s", web.logs())
	}
	if resp, err := http.Get(web.base + "/readyz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("/readyz with the shipped config: %v %v, want 200", resp, err)
	} else {
		resp.Body.Close()
	}
	if strings.Contains(web.logs(), "Permissions Violation") {
		t.Errorf("the server refused something of the bot:\n%s", web.logs())
	}
}

// TestWithoutTheInboxPrefixTheBotCannotWork is the control: the same config
// without nats.inbox_prefix gets its replay refused by the same server, so
// the test above can fail.
func TestWithoutTheInboxPrefixTheBotCannotWork(t *testing.T) {
	cfg := loadShippedBotConfig(t)
	delete(cfg["nats"].(map[string]any), "inbox_prefix")
	bot := runShippedBot(t, cfg)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(bot.logs(), "Permissions Violation") {
		if time.Now().After(deadline) {
			t.Fatalf("no permissions violation in the bot's logs without inbox_prefix:\n%s", bot.logs())
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Its readiness says so (a Kubernetes probe would keep it out).
	for {
		resp, err := http.Get(bot.base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz %d without inbox_prefix, want 503", resp.StatusCode)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func loadShippedBotConfig(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile(shippedSecrets)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc struct {
			Kind     string                `yaml:"kind"`
			Metadata struct{ Name string } `yaml:"metadata"`
			Data     map[string]string     `yaml:"stringData"`
		}
		if err := dec.Decode(&doc); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", shippedSecrets, err)
		}
		if doc.Kind == "Secret" && doc.Metadata.Name == "signoff-approver-bot" {
			var cfg map[string]any
			if err := yaml.Unmarshal([]byte(doc.Data["approver-bot.yaml"]), &cfg); err != nil {
				t.Fatalf("%s: approver-bot.yaml: %v", shippedSecrets, err)
			}
			return cfg
		}
	}
	t.Fatalf("%s has no Secret signoff-approver-bot", shippedSecrets)
	return nil
}

// shippedBot is a running approver bot and the plane around it.
type shippedBot struct {
	ok      bool
	base    string
	id      string // asked before the bot started
	pending *brokertest.Pending
	cancel  context.CancelFunc
	out     *testenv.LogBuffer
}

func (b *shippedBot) logs() string { return b.out.String() }

const botPassword = "correct horse battery staple"

// runShippedBot starts a server with deploy/nats's permissions and a
// broker; asks one question as an agent and waits until it is pending; then
// starts the bot binary with
// cfg (adapted as TestTheShippedBotConfigWorksUnderTheShippedPermissions
// says) and waits for its page to answer.
func runShippedBot(t *testing.T, cfg map[string]any) *shippedBot {
	t.Helper()
	ring := newKeyring(t, roles...)
	srv := startServer(t, "nats-server.conf")
	startBroker(t, srv, ring, memstore.New(memstore.Options{}), "replica-1")
	agentConn := connect(t, srv, ring, "agent", "_INBOX.agent")
	agent, err := client.New(agentConn.Conn, client.WithSession("s-bot"), client.WithAgent("pod-1"))
	if err != nil {
		t.Fatal(err)
	}
	// The question is open before the bot starts: only the bot's pending
	// replay can show it.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	id := "bot-" + fmt.Sprint(time.Now().UnixNano())
	pending := brokertest.Ask(ctx, agent, id, "bash", brokertest.Bash("make deploy"))
	open := connect(t, srv, ring, "approver", "_INBOX.approver")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var rep messages.PendingReply
		request(t, open, subj.Pending("default"), messages.PendingRequest{V: 1}, &rep)
		if len(rep.Questions) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the question never became pending: %+v", rep)
		}
	}

	dir := t.TempDir()
	hash, err := bcrypt.GenerateFromPassword([]byte(botPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	nc := cfg["nats"].(map[string]any)
	nc["url"] = srv.ClientURL()
	nc["nkey_seed"] = ring.seedFile(t, "approver")
	cfg["http"] = map[string]any{"listen": freeAddr(t)}
	cfg["web"] = map[string]any{"insecure_cookies": true}
	delete(cfg, "slack")
	delete(cfg, "telegram")
	approvers := cfg["approvers"].(map[string]any)
	alice := approvers["alice"].(map[string]any)
	alice["password_hash"] = string(hash)
	delete(alice, "slack")
	delete(alice, "telegram")
	for id, a := range approvers {
		if id != "alice" {
			delete(a.(map[string]any), "password_hash")
		}
	}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	confFile := filepath.Join(dir, "approver-bot.yaml")
	if err := os.WriteFile(confFile, data, 0o600); err != nil {
		t.Fatal(err)
	}

	bin := filepath.Join(dir, "approver-bot")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/approver-bot").CombinedOutput(); err != nil {
		t.Fatalf("go build approver-bot: %v\n%s", err, out)
	}
	b := &shippedBot{base: "http://" + cfg["http"].(map[string]any)["listen"].(string), id: id, pending: pending, cancel: cancel, out: &testenv.LogBuffer{}}
	cmd := exec.Command(bin, "--config", confFile, "--log-level", "debug")
	cmd.Stdout, cmd.Stderr = b.out, b.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(b.base + "/healthz")
		if err == nil {
			resp.Body.Close()
			b.ok = resp.StatusCode == http.StatusOK
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return b
}

// answer waits for the question asked before the bot started on the bot's
// page, approves it as alice and checks the agent's decision; it returns the
// request id, or "" after failing t.
func (b *shippedBot) answer(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	id, pending := b.id, b.pending

	page := webtest.New(b.base)
	if err := page.Login(ctx, "alice", botPassword); err != nil {
		t.Errorf("alice signs in: %v", err)
		return ""
	}
	for {
		list, err := page.Questions(ctx)
		if err != nil {
			t.Errorf("list questions: %v", err)
			return ""
		}
		found := false
		for _, q := range list {
			found = found || q.RequestID == id
		}
		if found {
			break
		}
		select {
		case <-ctx.Done():
			t.Errorf("the question %s never reached the bot's page", id)
			return ""
		case <-time.After(100 * time.Millisecond):
		}
	}
	rep, err := page.Respond(ctx, id, "approve")
	if err != nil {
		t.Errorf("alice approves: %v", err)
		return ""
	}
	if !rep.Applied || rep.State != messages.StateApproved {
		t.Errorf("respond reply %+v, want applied and approved", rep)
		return ""
	}
	brokertest.WantDecision(t, pending.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	return id
}

// freeAddr returns a loopback address with a port free right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

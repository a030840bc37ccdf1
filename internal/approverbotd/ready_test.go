package approverbotd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// approverPermissions are deploy/nats/permissions.conf's APPROVER_PERMISSIONS.
func approverPermissions() *server.Permissions {
	return &server.Permissions{
		Publish:   &server.SubjectPermission{Allow: []string{"signoff.v1.respond", "signoff.v1.pending.*"}},
		Subscribe: &server.SubjectPermission{Allow: []string{"signoff.v1.ask.*", "signoff.v1.resolved.*", "_INBOX.approver.>"}},
	}
}

// permissionedNATS starts NATS with a "bot" user holding perms and a
// "broker" user who may do anything; a stand-in broker answers the pending
// replay of team default with no questions (the test is about what the
// server lets the bot do, not about the broker).
func permissionedNATS(t *testing.T, perms *server.Permissions) *testenv.NATSServer {
	t.Helper()
	s := testenv.NATS(t, testenv.WithoutJetStream(), func(o *server.Options) {
		o.Users = []*server.User{
			{Username: "bot", Password: "bot-pw", Permissions: perms},
			{Username: "broker", Password: "broker-pw"},
		}
	})
	nc, err := nats.Connect(s.ClientURL(), nats.UserInfo("broker", "broker-pw"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	if _, err := nc.Subscribe("signoff.v1.pending.default", func(m *nats.Msg) {
		data, _ := json.Marshal(messages.PendingReply{V: messages.Version})
		_ = m.Respond(data)
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return s
}

// runAssembled runs the whole bot (Run, as the binary does) with a web
// channel until the test ends; it returns the HTTP base URL, the logs, and
// a function that stops it and returns Run's error.
func runAssembled(t *testing.T, natsURL, extra string) (string, *testenv.LogBuffer, func() error) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg, err := approverbot.ParseConfig([]byte(fmt.Sprintf(`
nats: {url: %q, user: bot, password: bot-pw%s}
http: {listen: %q}
approvers: {alice: {}}
web: {trusted_header: X-User, insecure_cookies: true}
`, natsURL, extra, addr)), "bot.yaml")
	if err != nil {
		t.Fatal(err)
	}
	logs := &testenv.LogBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg, strings.NewReader(""), io.Discard, log, nil) }()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(20 * time.Second):
				runErr = fmt.Errorf("Run did not return")
			}
		})
		return runErr
	}
	t.Cleanup(func() { _ = stop() })
	return "http://" + addr, logs, stop
}

// readyzUntil polls /readyz until its status is want and its body holds
// says; it returns the body. Readiness passes through states on its way
// (a bot not ready because its replay has not answered yet is later not
// ready because the server refused a subscription), so a test waits for the
// state it is about, not for the first answer with the right status.
func readyzUntil(t *testing.T, base string, want int, says string) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var last string
	for {
		res, err := http.Get(base + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			last = fmt.Sprintf("%d %s", res.StatusCode, body)
			if res.StatusCode == want && strings.Contains(string(body), says) {
				return string(body)
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never answered %d; last: %s (err %v)", want, last, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestReadyzTellsWhetherTheServerAcceptsTheBotsSubjects(t *testing.T) {
	t.Run("the shipped approver permissions with the inbox prefix they expect: ready", func(t *testing.T) {
		s := permissionedNATS(t, approverPermissions())
		base, _, _ := runAssembled(t, s.ClientURL(), ", inbox_prefix: _INBOX.approver")
		if body := readyzUntil(t, base, http.StatusOK, "nats: ok\n"); !strings.HasPrefix(body, "nats: ok\n") {
			t.Errorf("/readyz body %q", body)
		}
	})
	t.Run("no inbox prefix: replies are refused, and readiness says so", func(t *testing.T) {
		s := permissionedNATS(t, approverPermissions())
		base, _, _ := runAssembled(t, s.ClientURL(), "")
		body := readyzUntil(t, base, http.StatusServiceUnavailable, "permissions violation")
		if !strings.Contains(body, "nats: connected, but") || !strings.Contains(body, "permissions violation") ||
			!strings.Contains(body, `Subscription to "_INBOX.`) || !strings.Contains(body, "team default: ") {
			t.Errorf("/readyz does not say what is refused: %q", body)
		}
		metrics := get(t, base+"/metrics")
		for _, want := range []string{"signoff_bot_nats_ready 0", `signoff_bot_nats_errors_total{kind="permission"} `} {
			if !strings.Contains(metrics, want) {
				t.Errorf("/metrics lacks %q", want)
			}
		}
		if strings.Contains(metrics, `signoff_bot_nats_errors_total{kind="permission"} 0`) {
			t.Error("the refused subscription is not counted")
		}
	})
	t.Run("the questions subject refused: not ready", func(t *testing.T) {
		perms := approverPermissions()
		perms.Subscribe.Allow = []string{"signoff.v1.resolved.*", "_INBOX.approver.>"}
		s := permissionedNATS(t, perms)
		base, _, _ := runAssembled(t, s.ClientURL(), ", inbox_prefix: _INBOX.approver")
		body := readyzUntil(t, base, http.StatusServiceUnavailable, "permissions violation")
		if !strings.Contains(body, `signoff.v1.ask.default`) {
			t.Errorf("/readyz does not name the refused subject: %q", body)
		}
	})
}

func TestMetricsExistFromTheStartAndCleanShutdownLogsNoWarning(t *testing.T) {
	s := permissionedNATS(t, approverPermissions())
	base, logs, stop := runAssembled(t, s.ClientURL(), ", inbox_prefix: _INBOX.approver")
	readyzUntil(t, base, http.StatusOK, "nats: ok\n")
	m := get(t, base+"/metrics")
	for _, want := range []string{
		`signoff_bot_answers_total{channel="web",result="applied"} 0`,
		`signoff_bot_answers_total{channel="web",result="refused"} 0`,
		`signoff_bot_answers_total{channel="web",result="failed"} 0`,
		`signoff_bot_questions_shown_total{channel="web"} 0`,
		`signoff_bot_delivery_failures_total{channel="web"} 0`,
		`signoff_bot_channel_up{channel="web"} 1`,
		`signoff_bot_nats_errors_total{kind="permission"} 0`,
		`signoff_bot_nats_ready 1`,
		"go_goroutines",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "level=WARN") || strings.Contains(line, "level=ERROR") {
			t.Errorf("a clean shutdown logged: %s", line)
		}
	}
}

func get(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return string(body)
}

package approverbotd

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/testenv"
)

// fakeStatus is a NATS connection's status.
type fakeStatus nats.Status

func (f fakeStatus) Status() nats.Status { return nats.Status(f) }

// healthChannel is a channel with a given health.
type healthChannel struct {
	approverbot.Channel
	name string
	err  error
}

func (h healthChannel) Name() string                      { return h.name }
func (h healthChannel) CheckHealth(context.Context) error { return h.err }

func TestReadyzNeedsNATSAndEveryChannel(t *testing.T) {
	ok := healthChannel{name: "web"}
	broken := healthChannel{name: "slack", err: errors.New("slack: auth.test: invalid_auth")}
	tests := []struct {
		name     string
		nats     nats.Status
		channels []approverbot.Channel
		code     int
		body     string
	}{
		{"all healthy", nats.CONNECTED, []approverbot.Channel{ok}, 200, "nats: ok\nweb: ok\n"},
		{"a channel failing", nats.CONNECTED, []approverbot.Channel{ok, broken}, 503, "nats: ok\nweb: ok\nslack: slack: auth.test: invalid_auth\n"},
		{"NATS reconnecting", nats.RECONNECTING, []approverbot.Channel{ok}, 503, "nats: not connected (RECONNECTING)\nweb: ok\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			readyz(fakeStatus(tt.nats), &fakeBot{}, tt.channels).ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
			if rec.Code != tt.code || rec.Body.String() != tt.body {
				t.Errorf("readyz = %d %q, want %d %q", rec.Code, rec.Body.String(), tt.code, tt.body)
			}
		})
	}
}

func TestNATSOptionsRefuseHalfSettings(t *testing.T) {
	seed := writeFile(t, "bot.nk", "not a seed")
	tests := []struct {
		name string
		c    approverbot.NATSConfig
		want string
	}{
		{"creds and an nkey", approverbot.NATSConfig{Creds: "a.creds", NKeySeed: "b.nk"}, "creds or nkey_seed, not both"},
		{"a password without a user", approverbot.NATSConfig{Password: "p"}, "password is set without user"},
		{"a certificate without its key", approverbot.NATSConfig{Cert: "c.pem"}, "cert and key go together"},
		{"a key without its certificate", approverbot.NATSConfig{Key: "k.pem"}, "cert and key go together"},
		{"an unreadable nkey seed", approverbot.NATSConfig{NKeySeed: seed}, "nats.nkey_seed"},
		{"a negative ping interval", approverbot.NATSConfig{PingInterval: -time.Second}, "nats.ping_interval"},
		{"negative pings out", approverbot.NATSConfig{MaxPingsOut: -1}, "nats.max_pings_out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := natsOptions(tt.c); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("natsOptions = %v, want %q", err, tt.want)
			}
		})
	}
}

// A bot without credentials connects only to a NATS server on this machine
// (the dev plane's) or with nats.insecure set on purpose; run against a
// real server elsewhere it stops before connecting and names the fix.
func TestTheBotRefusesARemoteNATSWithoutCredentials(t *testing.T) {
	refused := []string{"nats://nats-1:4222", "nats://127.0.0.1:4222,nats://nats-2:4222", "10.0.0.7:4222", "nats://[::ffff:10.0.0.7]:4222"}
	for _, u := range refused {
		_, err := natsOptions(approverbot.NATSConfig{URL: u})
		if err == nil || !strings.Contains(err.Error(), "no credentials") || !strings.Contains(err.Error(), "nats.insecure") {
			t.Errorf("%s without credentials: %v, want refused naming nats.insecure", u, err)
		}
	}
	allowed := map[string]approverbot.NATSConfig{
		"loopback (the dev plane)":   {URL: "nats://127.0.0.1:4222,nats://localhost:4223,nats://[::1]:4224"},
		"host:port on loopback":      {URL: "127.0.0.1:4222"},
		"insecure on purpose":        {URL: "nats://nats-1:4222", Insecure: true},
		"a user":                     {URL: "nats://nats-1:4222", User: "bot", Password: "p"},
		"a creds file":               {URL: "nats://nats-1:4222", Creds: "bot.creds"},
		"a token in the URL":         {URL: "nats://s3cr3t@nats-1:4222"},
		"a user and password in URL": {URL: "nats://bot:p@nats-1:4222"},
	}
	for name, c := range allowed {
		if _, err := natsOptions(c); err != nil {
			t.Errorf("%s: %v, want accepted", name, err)
		}
	}

	// The bot itself: refused before it connects, as a usage error (exit
	// 2), at an address of this machine that is not loopback.
	cfg, err := approverbot.ParseConfig([]byte("nats:\n  url: nats://"+nonLoopbackName(t)+":4222\nteams: [default]\napprovers:\n  alice: {}\nterminal:\n  approver: alice\nhttp:\n  listen: 127.0.0.1:0\n"), "bot.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = Run(ctx, cfg, strings.NewReader(""), io.Discard, slog.New(slog.DiscardHandler), nil)
	var usage UsageError
	if !errors.As(err, &usage) || !strings.Contains(err.Error(), "no credentials") {
		t.Fatalf("Run = %v, want a usage error about missing credentials", err)
	}
}

// nonLoopbackName is a name of this machine that is not a loopback
// address: its host name when that resolves elsewhere, else an address of
// one of its interfaces.
func nonLoopbackName(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() {
			return ipn.IP.String()
		}
	}
	t.Fatal("this machine has no IPv4 address but loopback")
	return ""
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// fakeBot is a bot whose NATS traffic is as ready as err says.
type fakeBot struct {
	err    error
	mu     sync.Mutex
	health map[string]error
}

func (f *fakeBot) Ready() error { return f.err }
func (f *fakeBot) RecordHealth(ch string, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.health == nil {
		f.health = map[string]error{}
	}
	f.health[ch] = err
}

// The bot's connection leaves a frozen NATS server after its pings go
// unanswered (nats.ping_interval × (nats.max_pings_out + 1)), and the
// defaults replace nats.go's minutes.
func TestTheBotLeavesAFrozenNATSServer(t *testing.T) {
	ns := testenv.NATS(t, testenv.WithoutJetStream())
	fr := testenv.NewFreezer(t, strings.TrimPrefix(ns.ClientURL(), "nats://"))
	logs := &testenv.LogBuffer{}
	nc, _, err := connectNATS(approverbot.NATSConfig{URL: "nats://" + fr.Addr(), Name: "bot", PingInterval: 200 * time.Millisecond, MaxPingsOut: 2},
		slog.New(slog.NewTextHandler(logs, nil)), func() {}, func(*nats.Subscription, error) {})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	fr.Freeze()
	deadline := time.Now().Add(5 * time.Second)
	for nc.IsConnected() {
		if time.Now().After(deadline) {
			t.Fatal("the bot's connection to a frozen server still counts as connected after 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !logs.WaitFor("stale connection", 2*time.Second) {
		t.Errorf("no WARN naming the stale connection:\n%s", logs.String())
	}
	fr.Thaw()
	opts, err := natsOptions(approverbot.NATSConfig{URL: "nats://127.0.0.1:4222"})
	if err != nil {
		t.Fatal(err)
	}
	var o nats.Options
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			t.Fatal(err)
		}
	}
	if o.PingInterval != defaultPingInterval || o.MaxPingsOut != defaultMaxPingsOut {
		t.Errorf("defaults: ping every %s, %d out; want %s, %d", o.PingInterval, o.MaxPingsOut, defaultPingInterval, defaultMaxPingsOut)
	}
}

func TestOpsEndpointsNeedTheOpsTokenWhenOneIsSet(t *testing.T) {
	ready := readyz(fakeStatus(nats.CONNECTED), &fakeBot{}, []approverbot.Channel{healthChannel{name: "web"}})
	for _, c := range []struct {
		name, token, auth string
		code              int
	}{
		{"no token configured: open, as before", "", "", 200},
		{"a token configured, none sent", "s3cret-ops", "", 401},
		{"a wrong token", "s3cret-ops", "Bearer s3cret-opz", 401},
		{"the token as a bearer token", "s3cret-ops", "Bearer s3cret-ops", 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest("GET", "/readyz", nil)
			if c.auth != "" {
				req.Header.Set("Authorization", c.auth)
			}
			rec := httptest.NewRecorder()
			opsOnly(c.token, ready).ServeHTTP(rec, req)
			if rec.Code != c.code {
				t.Errorf("GET /readyz = %d %q, want %d", rec.Code, rec.Body.String(), c.code)
			}
			if c.code == 401 && strings.Contains(rec.Body.String(), "web: ok") {
				t.Error("a refused request was told the channels' health")
			}
		})
	}
}

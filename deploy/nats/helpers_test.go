package nats_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/signoff-dev/signoff/internal/broker"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
)

// testPolicy routes everything that asks to the default team, where alice
// answers.
const testPolicy = `
mode: auto-edit
rules:
  - { rule: "bash(ls *)", action: allow }
teams:
  default: { members: [alice] }
`

// keyring holds the nkey users of one test server, by user name.
type keyring map[string]nkeys.KeyPair

// envVar is the variable the config reads name's public key from (the
// names deploy/nats/genkeys writes).
func envVar(name string) string {
	return "SIGNOFF_NKEY_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// newKeyring creates a user key per name and exports its public key the
// way nkeys.env does. t.Setenv: these tests do not run in parallel.
func newKeyring(t *testing.T, names ...string) keyring {
	t.Helper()
	ring := keyring{}
	for _, n := range names {
		kp, err := nkeys.CreateUser()
		if err != nil {
			t.Fatal(err)
		}
		pub, _ := kp.PublicKey()
		t.Setenv(envVar(n), pub)
		ring[n] = kp
	}
	return ring
}

func (r keyring) public(t *testing.T, name string) string {
	t.Helper()
	pub, err := r[name].PublicKey()
	if err != nil {
		t.Fatalf("no key %s: %v", name, err)
	}
	return pub
}

// seedFile writes name's seed as genkeys does and returns the file.
func (r keyring) seedFile(t *testing.T, name string) string {
	t.Helper()
	seed, err := r[name].Seed()
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), name+".nk")
	if err := os.WriteFile(f, append(seed, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// startServer runs nats-server with conf, processed exactly as
// `nats-server -c conf` does. Only where it listens and stores changes:
// a free loopback port, no monitoring port, a temporary JetStream directory.
func startServer(t *testing.T, conf string) *server.Server {
	t.Helper()
	opts, err := server.ProcessConfigFile(conf)
	if err != nil {
		t.Fatalf("%s: %v", conf, err)
	}
	opts.Host, opts.Port = "127.0.0.1", -1
	opts.HTTPPort = 0
	opts.StoreDir = t.TempDir()
	opts.NoLog, opts.NoSigs = true, true
	srv, err := server.NewServer(opts)
	if err != nil {
		t.Fatalf("%s: %v", conf, err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		t.Fatalf("%s: server not ready", conf)
	}
	t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
	return srv
}

// conn is a connection as one user that records every error the server
// sends it (permission violations arrive asynchronously).
type conn struct {
	*nats.Conn
	user string
	errs chan error
}

// connect connects as user; inbox is its custom inbox prefix ("" for the
// nats.go default, _INBOX).
func connect(t *testing.T, srv *server.Server, ring keyring, user, inbox string) *conn {
	t.Helper()
	c := &conn{user: user, errs: make(chan error, 100)}
	kp := ring[user]
	pub, _ := kp.PublicKey()
	opts := []nats.Option{
		nats.Name("test-" + user),
		nats.Nkey(pub, kp.Sign),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { c.errs <- err }),
	}
	if inbox != "" {
		opts = append(opts, nats.CustomInboxPrefix(inbox))
	}
	nc, err := nats.Connect(srv.ClientURL(), opts...)
	if err != nil {
		t.Fatalf("connect as %s: %v", user, err)
	}
	t.Cleanup(nc.Close)
	c.Conn = nc
	return c
}

// wantViolation waits for the server to refuse what: `Publish to "x"` or
// `Subscription to "x"`.
func (c *conn) wantViolation(t *testing.T, what string) {
	t.Helper()
	if err := c.Flush(); err != nil {
		t.Fatalf("%s: flush: %v", c.user, err)
	}
	timeout := time.After(5 * time.Second)
	for {
		select {
		case err := <-c.errs:
			if strings.Contains(err.Error(), "Permissions Violation for "+what) {
				return
			}
			t.Errorf("%s: unexpected error while waiting for a refused %s: %v", c.user, what, err)
		case <-timeout:
			t.Fatalf("%s: the server allowed %s", c.user, what)
		}
	}
}

// noViolations fails the test if the server refused anything of c so far.
func (c *conn) noViolations(t *testing.T) {
	t.Helper()
	if err := c.Flush(); err != nil {
		t.Fatalf("%s: flush: %v", c.user, err)
	}
	// The error callback runs on its own goroutine after the read loop.
	time.Sleep(50 * time.Millisecond)
	for {
		select {
		case err := <-c.errs:
			t.Errorf("%s: refused: %v", c.user, err)
		default:
			return
		}
	}
}

func (c *conn) refusePublish(t *testing.T, subject string) {
	t.Helper()
	if err := c.Publish(subject, []byte(`{"v":1}`)); err != nil {
		t.Fatalf("%s: publish %s: %v", c.user, subject, err)
	}
	c.wantViolation(t, fmt.Sprintf("Publish to %q", subject))
}

func (c *conn) refuseSubscribe(t *testing.T, subject, queue string) {
	t.Helper()
	var sub *nats.Subscription
	var err error
	want := fmt.Sprintf("Subscription to %q", subject)
	if queue == "" {
		sub, err = c.SubscribeSync(subject)
	} else {
		sub, err = c.QueueSubscribeSync(subject, queue)
		want += fmt.Sprintf(" using queue %q", queue)
	}
	if err != nil {
		t.Fatalf("%s: subscribe %s: %v", c.user, subject, err)
	}
	c.wantViolation(t, want)
	_ = sub.Unsubscribe()
}

// startBroker runs a broker replica as the broker user on store, with
// signed responses required from the approver's key.
func startBroker(t *testing.T, srv *server.Server, ring keyring, store session.Store, name string) *replica {
	t.Helper()
	c := connect(t, srv, ring, "broker", "")
	pol, err := policy.Parse([]byte(testPolicy), "test-policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("SIGNOFF_TEST_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	b, err := broker.New(broker.Config{
		Conn:                   c.Conn,
		Store:                  store,
		Policy:                 broker.StaticPolicy{P: pol},
		Logger:                 log,
		Replica:                name,
		RequireSignedResponses: true,
		ApproverKeys:           []string{ring.public(t, "approver")},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	r := &replica{conn: c}
	r.stop = sync.OnceValue(func() error { cancel(); return <-done })
	t.Cleanup(func() {
		if err := r.stop(); err != nil {
			t.Errorf("broker %s: %v", name, err)
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for b.Ready(context.Background()) != nil {
		select {
		case err := <-done:
			t.Fatalf("broker stopped: %v", err)
		case err := <-c.errs:
			t.Fatalf("broker refused while starting: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("broker not ready: %v", b.Ready(context.Background()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	return r
}

// replica is a running broker replica.
type replica struct {
	*conn
	// stop shuts it down gracefully (once) and returns Run's error.
	stop func() error
}

// watcher collects the messages of one subscription.
type watcher struct {
	mu   sync.Mutex
	msgs []*nats.Msg
}

func watch(t *testing.T, c *conn, subject string) *watcher {
	t.Helper()
	w := &watcher{}
	if _, err := c.Subscribe(subject, func(m *nats.Msg) {
		w.mu.Lock()
		w.msgs = append(w.msgs, m)
		w.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	return w
}

// find waits for a message whose JSON has request_id id (at the top or in
// "request") and decodes it into out.
func (w *watcher) find(t *testing.T, id string, out any) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		w.mu.Lock()
		msgs := append([]*nats.Msg(nil), w.msgs...)
		w.mu.Unlock()
		for _, m := range msgs {
			var probe struct {
				RequestID string `json:"request_id"`
				Request   struct {
					RequestID string `json:"request_id"`
				} `json:"request"`
			}
			if json.Unmarshal(m.Data, &probe) == nil && (probe.RequestID == id || probe.Request.RequestID == id) {
				if err := json.Unmarshal(m.Data, out); err != nil {
					t.Fatal(err)
				}
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no message for %s", id)
}

// request sends v to subject and decodes the reply into out; an error reply
// fails the test.
func request(t *testing.T, c *conn, subject string, v, out any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := c.Request(subject, data, 5*time.Second)
	if err != nil {
		t.Fatalf("%s: request %s: %v", c.user, subject, err)
	}
	if e, ok := messages.IsErrorReply(msg.Data); ok {
		t.Fatalf("%s: request %s: error reply %s: %s", c.user, subject, e.Error.Code, e.Error.Message)
	}
	if err := json.Unmarshal(msg.Data, out); err != nil {
		t.Fatalf("%s: reply %s: %v", c.user, msg.Data, err)
	}
}

package brokerd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nuid"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

func TestJSONLogsWriteDurationsWithTheirUnit(t *testing.T) {
	for _, format := range []string{"json", "text"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			log, err := NewLogger(&Options{LogLevel: "info", LogFormat: format}, &buf)
			if err != nil {
				t.Fatal(err)
			}
			log.Info("x", "grace", 15*time.Second, slog.Group("g", "took", 250*time.Millisecond))
			out := buf.String()
			want := []string{`"grace":"15s"`, `"took":"250ms"`}
			if format == "text" {
				want = []string{"grace=15s", "g.took=250ms"}
			}
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("log line %q does not contain %s", out, w)
				}
			}
		})
	}
}

// syncBuffer is a log sink safe for the broker's goroutines and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// lines returns the JSON log lines written so far.
func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	data := bytes.Clone(s.b.Bytes())
	s.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// find returns the first log line with message msg, or nil.
func find(lines []map[string]any, msg string) map[string]any {
	for _, l := range lines {
		if l["msg"] == msg {
			return l
		}
	}
	return nil
}

// TestAProductionReplicaLogsWhatOperatorsNeed runs a production replica
// (real NATS, real Redis) with JSON logs: "approval needed" names the agent,
// durations carry their unit, go-redis's own lines go through slog, and a
// clean shutdown warns about nothing.
func TestAProductionReplicaLogsWhatOperatorsNeed(t *testing.T) {
	ns := testenv.NATS(t)
	rs := testenv.Redis(t)
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(pol, []byte("mode: auto-edit\nrules:\n  - { rule: \"bash(make deploy)\", action: ask }\nteams:\n  default: { members: [alice] }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := Options{
		NATSURL: ns.ClientURL(), InsecureNATS: true, RedisURL: rs.URL(), PolicyFile: pol, HTTPAddr: "127.0.0.1:0",
		LogLevel: "debug", LogFormat: "json", NoAudit: true,
		NATSName: "test-broker", Prefix: messages.DefaultPrefix, MaxBytes: 64 << 10, Workers: 16,
		StoreTimeout: 500 * time.Millisecond, ReapInterval: 100 * time.Millisecond, ShutdownGrace: 5 * time.Second,
		PolicyInterval: time.Second, RedisRetention: time.Hour, AuditReplicas: 1,
	}
	logs := &syncBuffer{}
	log, err := NewLogger(&o, logs)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, o, pw, log); pw.Close() }()
	httpURL := ""
	sc := bufio.NewScanner(pr)
	for httpURL == "" && sc.Scan() {
		if m := regexp.MustCompile(`HTTP:\s+(http://\S+)/healthz`).FindStringSubmatch(sc.Text()); m != nil {
			httpURL = m[1]
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if httpURL == "" {
		t.Fatalf("the broker printed no HTTP address: %v", <-done)
	}
	waitReady(t, httpURL)

	// 1. "approval needed" names the agent.
	nc := ns.Connect(t)
	c, err := client.New(nc, client.WithSession("s-1"), client.WithAgent("agent-7"))
	if err != nil {
		t.Fatal(err)
	}
	id := nuid.Next()
	rctx, rcancel := context.WithTimeout(ctx, 3*time.Second)
	defer rcancel()
	go func() {
		_, _ = c.Request(rctx, client.Call{RequestID: id, Tool: "bash", Arguments: map[string]any{"command": "make deploy"}})
	}()
	var l map[string]any
	for deadline := time.Now().Add(5 * time.Second); l == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		l = find(logs.lines(t), "approval needed")
	}
	if l == nil || l["agent_id"] != "agent-7" || l["request_id"] != id {
		t.Errorf("approval needed line %v, want agent_id agent-7 and request_id %s", l, id)
	}
	rcancel()

	// 2. Redis goes away: go-redis's own lines come through slog, never raw.
	rs.Stop()
	sctx, scancel := context.WithTimeout(ctx, 2*time.Second)
	_, _ = c.Request(sctx, client.Call{RequestID: nuid.Next(), Tool: "bash", Arguments: map[string]any{"command": "make deploy"}})
	scancel()
	routed, surfaced := 0, false
	for _, l := range logs.lines(t) {
		msg, _ := l["msg"].(string)
		if strings.HasPrefix(msg, "redis:") {
			routed++
			if l["component"] != "go-redis" || l["level"] != "DEBUG" {
				t.Errorf("a go-redis line not routed as a debug line: %v", l)
			}
		}
		surfaced = surfaced || (strings.HasPrefix(msg, "store ") && l["level"] == "ERROR")
	}
	if routed == 0 || !surfaced {
		t.Errorf("with Redis down: %d go-redis lines through slog, Signoff's own store error logged: %v; want both", routed, surfaced)
	}
	rs.Start()

	// 3. A clean shutdown: no warning, and the grace in seconds.
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return 15 s after its context ended")
	}
	lines := logs.lines(t)
	if l := find(lines, "shutting down"); l == nil || l["grace"] != "5s" {
		t.Errorf("shutting down line %v, want grace \"5s\"", l)
	}
	// The test's NATS has no users: --insecure-nats is warned about once,
	// at the start.
	if l := find(lines, "--insecure-nats: connecting to NATS without credentials; whoever reaches the NATS servers can answer questions and administer the plane unless their authorization stops them"); l == nil || l["level"] != "WARN" || l["nats"] != o.NATSURL {
		t.Errorf("--insecure-nats line %v, want a warning naming the NATS URL", l)
	}
	for _, l := range lines {
		if l["level"] == "WARN" || l["level"] == "ERROR" {
			if msg := l["msg"].(string); strings.Contains(msg, "NATS") && !strings.HasPrefix(msg, "--insecure-nats") {
				t.Errorf("a clean shutdown logged %v", l)
			}
		}
	}
}

func waitReady(t *testing.T, httpURL string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(httpURL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		} else if !errors.Is(err, io.EOF) && time.Now().After(deadline) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz not 200 after 15 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestARefusedSubscriptionMakesTheReplicaUnready: a broker user whose
// permissions refuse the request subjects (a wrong --prefix, a permissions
// file without the broker's queue subscriptions) cannot receive requests;
// /readyz must say so instead of "ready" from a connected client.
func TestARefusedSubscriptionMakesTheReplicaUnready(t *testing.T) {
	srv, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		Users: []*server.User{{
			Username: "broker", Password: "secret",
			Permissions: &server.Permissions{
				Publish:   &server.SubjectPermission{Allow: []string{">"}},
				Subscribe: &server.SubjectPermission{Allow: []string{">"}, Deny: []string{"signoff.v1.req.*"}},
			},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS server not ready")
	}
	t.Cleanup(srv.Shutdown)
	rs := testenv.Redis(t)
	o := Options{
		NATSURL: srv.ClientURL(), NATSUser: "broker", NATSPass: "secret", RedisURL: rs.URL(), PolicyFile: BuiltinPolicy,
		HTTPAddr: "127.0.0.1:0", LogLevel: "info", LogFormat: "json", NoAudit: true,
		NATSName: "test-broker", Prefix: messages.DefaultPrefix, MaxBytes: 64 << 10, Workers: 4,
		StoreTimeout: 500 * time.Millisecond, ReapInterval: 100 * time.Millisecond, ShutdownGrace: 5 * time.Second,
		PolicyInterval: time.Second, RedisRetention: time.Hour, AuditReplicas: 1,
	}
	log, _ := NewLogger(&o, io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, o, pw, log); pw.Close() }()
	httpURL := ""
	sc := bufio.NewScanner(pr)
	for httpURL == "" && sc.Scan() {
		if m := regexp.MustCompile(`HTTP:\s+(http://\S+)/healthz`).FindStringSubmatch(sc.Text()); m != nil {
			httpURL = m[1]
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if httpURL == "" {
		t.Fatalf("the broker printed no HTTP address: %v", <-done)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Get(httpURL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(body), `NATS refused a subscription`) &&
			strings.Contains(string(body), `signoff.v1.req.*`) {
			break
		}
		if resp.StatusCode == http.StatusOK && time.Now().After(deadline) {
			t.Fatalf("/readyz says %q although NATS refused the request subscription", body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz: %d %q", resp.StatusCode, body)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// /healthz stays up: liveness never depends on NATS.
	resp, err := http.Get(httpURL + "/healthz")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/healthz: %v %v", resp, err)
	}
	resp.Body.Close()
}

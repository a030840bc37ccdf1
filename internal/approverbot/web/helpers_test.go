package web

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Test passwords; the hashes use bcrypt's minimum cost to keep tests fast.
const (
	alicePassword = "correct horse battery staple"
	bobPassword   = "hunter2-but-longer"
	// One-time enrollment codes of alice's and bob's first keys
	// (approvers.<id>.enroll_code_hash, firstkey.go).
	aliceEnrollCode = "ALIC-EFIR-STKE-Y001"
	bobEnrollCode   = "BOBF-IRST-KEY0-0002"
)

var (
	hashOnce            sync.Once
	aliceHash, bobHash  string
	carolHash, daveHash string
	// aliceCodeHash and bobCodeHash are the enrollment codes' hashes.
	aliceCodeHash, bobCodeHash string
)

func hashes(t testing.TB) {
	t.Helper()
	hashOnce.Do(func() {
		mk := func(pw string) string {
			h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
			if err != nil {
				panic(err)
			}
			return string(h)
		}
		aliceHash, bobHash = mk(alicePassword), mk(bobPassword)
		carolHash, daveHash = mk("carol-password"), mk("dave-password")
		aliceCodeHash, bobCodeHash = mk(aliceEnrollCode), mk(bobEnrollCode)
	})
}

// testConfig is a bot config with a web channel and four approvers; web is
// the YAML of the web section's body.
func testConfig(t testing.TB, teams, web string) *approverbot.Config {
	t.Helper()
	hashes(t)
	if teams == "" {
		teams = "[default]"
	}
	y := `
teams: ` + teams + `
approvers:
  alice: { display: Alice, password_hash: "` + aliceHash + `", enroll_code_hash: "` + aliceCodeHash + `" }
  bob:   { display: Bob, password_hash: "` + bobHash + `", enroll_code_hash: "` + bobCodeHash + `" }
  carol: { display: Carol, password_hash: "` + carolHash + `" }
  dave:  { display: Dave, password_hash: "` + daveHash + `" }
  erin:  { display: Erin }
web: ` + web + `
`
	cfg, err := approverbot.ParseConfig([]byte(y), "test.yaml")
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// fakeResponder stands in for the bot in tests of the HTTP layer: it lists
// the questions it was given and records the answers it gets.
type fakeResponder struct {
	mu      sync.Mutex
	qs      map[string]approverbot.Question
	order   []string
	answers []approverbot.Answer
	reply   messages.RespondReply
	err     error
}

func newFakeResponder(qs ...approverbot.Question) *fakeResponder {
	f := &fakeResponder{qs: map[string]approverbot.Question{}}
	for _, q := range qs {
		f.add(q)
	}
	f.reply = messages.RespondReply{V: 1, Applied: true, State: messages.StateApproved,
		Decision: &messages.Decision{Outcome: messages.OutcomeAllow, ReasonCode: messages.ReasonApproved, Scope: messages.ScopeOnce,
			DecidedBy: messages.Decider{Kind: messages.DeciderApprover, ID: "alice", Display: "Alice", Channel: "web"}}}
	return f
}

func (f *fakeResponder) add(q approverbot.Question) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.qs[q.Request.RequestID]; !ok {
		f.order = append(f.order, q.Request.RequestID)
	}
	f.qs[q.Request.RequestID] = q
}

func (f *fakeResponder) Respond(_ context.Context, a approverbot.Answer) (messages.RespondReply, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, a)
	return f.reply, f.err
}

func (f *fakeResponder) lastAnswer(t *testing.T) approverbot.Answer {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.answers) == 0 {
		t.Fatal("the responder got no answer")
	}
	return f.answers[len(f.answers)-1]
}

func (f *fakeResponder) answerCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.answers)
}

func (f *fakeResponder) Open() []approverbot.Question {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []approverbot.Question
	for _, id := range f.order {
		if q := f.qs[id]; q.Open() {
			out = append(out, q)
		}
	}
	return out
}

func (f *fakeResponder) Lookup(id string) (approverbot.Question, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q, ok := f.qs[id]
	return q, ok
}

func (f *fakeResponder) Approver(_, user string) (approverbot.Approver, bool) {
	return approverbot.Approver{ID: user}, true
}

// question is an open bash question routed to team default.
func question(id, command string) approverbot.Question {
	args, _ := json.Marshal(map[string]string{"command": command})
	return approverbot.Question{
		ApprovalNeeded: messages.ApprovalNeeded{
			V: 1, Type: "approval_needed",
			Request: messages.Request{V: 1, RequestID: id, SessionID: "sess-1", AgentID: "pod-7", Tool: "bash",
				Arguments: args},
			Team: "default",
			Risk: messages.Risk{Shell: true, Tier: "exec", Reason: "exec tools ask in auto-edit mode",
				Subcommands: []messages.Verdict{{Command: command, Action: "ask"}}},
			ExpiresAt:         time.Now().Add(5 * time.Minute),
			ApprovalsRequired: 1,
			Always:            &messages.AlwaysGrant{Scope: messages.ScopeAlwaysPrefix, Tool: "bash", Patterns: []string{"make *"}},
		},
		Seen: time.Now(),
	}
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// server is a web channel running on an httptest server.
type server struct {
	ch   *Channel
	srv  *httptest.Server
	resp *fakeResponder
}

// startServer runs a channel for cfg with resp (nil: an empty fake).
func startServer(t *testing.T, cfg *approverbot.Config, o Options, resp *fakeResponder) *server {
	t.Helper()
	if o.Logger == nil {
		o.Logger = quietLogger()
	}
	ch, err := New(cfg, o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if resp == nil {
		resp = newFakeResponder()
	}
	mux := http.NewServeMux()
	ch.Register(mux)
	srv := httptest.NewServer(mux)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ch.Run(ctx, resp) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
		srv.Close()
	})
	// Run has started once the channel has its responder.
	for ch.responder() == nil {
		time.Sleep(time.Millisecond)
	}
	return &server{ch: ch, srv: srv, resp: resp}
}

// client returns an HTTP client with its own cookie jar that does not
// follow redirects.
func (s *server) client(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := *s.srv.Client() // a copy: the server's client is shared
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// login signs in through the JSON API and returns the client and its CSRF
// token.
func (s *server) login(t *testing.T, id, password string) (*http.Client, string) {
	t.Helper()
	c := s.client(t)
	res := s.do(t, c, "POST", "/login", `{"approver":"`+id+`","password":"`+password+`"}`,
		"Content-Type", "application/json", "Accept", "application/json")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("login %s: %s: %s", id, res.Status, readBody(t, res))
	}
	var rep loginReply
	decodeJSON(t, res, &rep)
	if rep.CSRFToken == "" {
		t.Fatal("login: no csrf_token")
	}
	return c, rep.CSRFToken
}

// do sends a request with headers given as name, value pairs.
func (s *server) do(t *testing.T, c *http.Client, method, path, body string, headers ...string) *http.Response {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

func readBody(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func decodeJSON(t *testing.T, res *http.Response, v any) {
	t.Helper()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatalf("decode %s reply: %v", res.Request.URL.Path, err)
	}
}

// errorCode returns the code of a JSON error reply.
func errorCode(t *testing.T, res *http.Response) string {
	t.Helper()
	var b errorBody
	decodeJSON(t, res, &b)
	return b.Error.Code
}

// sseEvent is one event read from an event stream.
type sseEvent struct {
	name string
	data string
}

// readEvents parses an event stream into events (comments become events
// named ":") on a channel that closes when the stream ends.
func readEvents(r io.Reader) <-chan sseEvent {
	out := make(chan sseEvent, 64)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" {
					out <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				out <- sseEvent{name: ":", data: strings.TrimSpace(line[1:])}
			case strings.HasPrefix(line, "event: "):
				ev.name = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				ev.data += line[len("data: "):]
			}
		}
	}()
	return out
}

// nextEvent returns the next event named name, skipping others.
func nextEvent(t *testing.T, events <-chan sseEvent, name string) sseEvent {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("the stream ended before a %q event", name)
			}
			if ev.name == name {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %q event within 5 s", name)
		}
	}
}

// The actions of POST /api/respond, as the tests send them.
const (
	actionApprove    = string(approverbot.ChoiceOnce)
	actionSession    = string(approverbot.ChoiceSession)
	actionRejectSoft = string(approverbot.ChoiceReject)
	actionRejectHard = string(approverbot.ChoiceRejectStop)
)

package web

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// fakeGrants is a responder with a grants side, for tests of the HTTP
// layer (the browser test runs the real bot against real brokers).
type fakeGrants struct {
	*fakeResponder
	mu      sync.Mutex
	grants  []messages.Grant
	err     error // returned by both calls when set
	listBy  []string
	revoked []string
}

func (f *fakeGrants) Grants(_ context.Context, approver string) ([]messages.Grant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.listBy = append(f.listBy, approver)
	return f.grants, f.err
}

func (f *fakeGrants) RevokeGrant(_ context.Context, approver, id string) (messages.Grant, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revoked = append(f.revoked, approver+":"+id)
	if f.err != nil {
		return messages.Grant{}, f.err
	}
	for _, g := range f.grants {
		if g.ID == id {
			return g, nil
		}
	}
	return messages.Grant{}, &messages.ReplyError{Code: messages.CodeNotFound, Message: "no grant " + id}
}

func (f *fakeGrants) calls() (list []string, revoked []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.listBy...), append([]string(nil), f.revoked...)
}

// startGrantsServer runs a channel whose responder has a grants side.
func startGrantsServer(t *testing.T, o Options, gs ...messages.Grant) (*server, *fakeGrants) {
	t.Helper()
	f := &fakeGrants{fakeResponder: newFakeResponder(), grants: gs}
	if o.Logger == nil {
		o.Logger = quietLogger()
	}
	ch, err := New(testConfig(t, "", "{insecure_cookies: true}"), o)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	ch.Register(mux)
	s := &server{ch: ch, srv: httptest.NewServer(mux), resp: f.fakeResponder}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ch.Run(ctx, f) }()
	t.Cleanup(func() { cancel(); <-done; s.srv.Close() })
	for ch.responder() == nil {
		time.Sleep(time.Millisecond)
	}
	return s, f
}

func sessionGrant() messages.Grant {
	return messages.Grant{ID: "gr_s1", Scope: messages.ScopeSession, SessionID: "s1", Tool: "bash",
		Patterns: []string{"npm install *"}, Teams: []string{"default"},
		Approvers: []messages.Approver{{ID: "alice", Display: "Alice", Channel: "web"}}, RequestID: "req-npm",
		CreatedAt: time.Date(2026, 11, 24, 9, 15, 0, 0, time.UTC)}
}

func TestGrantsAPIListsAndRevokesForTheSignedInApprover(t *testing.T) {
	always := messages.Grant{ID: "gr_a1", Scope: messages.ScopeAlwaysPrefix, AgentID: `pod"><b>7`, Tool: "bash",
		Patterns: []string{`cat <script>*`}, Teams: []string{"default"}, Legacy: true,
		Approvers: []messages.Approver{{ID: "bob", Channel: "slack"}}, RequestID: "req-cat",
		CreatedAt: time.Date(2026, 11, 23, 8, 0, 0, 0, time.UTC), ExpiresAt: time.Date(2026, 12, 23, 8, 0, 0, 0, time.UTC)}
	s, f := startGrantsServer(t, Options{}, sessionGrant(), always)
	c, csrf := s.login(t, "alice", alicePassword)

	res := s.do(t, c, "GET", "/api/grants", "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/grants: %s: %s", res.Status, readBody(t, res))
	}
	var list grantsReply
	decodeJSON(t, res, &list)
	if len(list.Grants) != 2 || list.Grants[0].Grant.ID != "gr_s1" {
		t.Fatalf("listed %+v", list.Grants)
	}
	if by, _ := f.calls(); strings.Join(by, ",") != "alice" {
		t.Errorf("listed for %v, want the signed-in approver alice", by)
	}
	s1, a1 := list.Grants[0], list.Grants[1]
	if s1.Text != "bash(npm install *) for session s1" {
		t.Errorf("text %q", s1.Text)
	}
	for _, want := range []string{"bash(npm install *)", "session <code>s1</code>", "Alice via web", "req-npm",
		"2026-11-24 09:15 UTC", "ends with the session", "gr_s1", `data-revoke="gr_s1"`} {
		if !strings.Contains(s1.HTML, want) {
			t.Errorf("the session grant's item lacks %q:\n%s", want, s1.HTML)
		}
	}
	for _, want := range []string{"cat &lt;script&gt;*", "pod&#34;&gt;&lt;b&gt;7", "bob via slack", "expires 2026-12-23 08:00 UTC", "migrated"} {
		if !strings.Contains(a1.HTML, want) {
			t.Errorf("the always grant's item lacks %q:\n%s", want, a1.HTML)
		}
	}
	if strings.Contains(a1.HTML, "<script>") || strings.Contains(a1.HTML, "<b>") {
		t.Errorf("a grant's text reached the HTML unescaped:\n%s", a1.HTML)
	}

	revoke := func(body string) (*http.Response, string) {
		res := s.do(t, c, "POST", "/api/grants/revoke", body, "Content-Type", "application/json", csrfHeader, csrf)
		return res, readBody(t, res)
	}
	res, raw := revoke(`{"grant_id":"gr_s1"}`)
	var out RevokeResult
	if err := json.Unmarshal([]byte(raw), &out); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %s: %s", res.Status, raw)
	}
	if out.Revoked.Grant.ID != "gr_s1" || out.Message != "Revoked: bash(npm install *) for session s1. The next such call asks again." {
		t.Errorf("revoke reply %+v", out)
	}
	if _, revoked := f.calls(); strings.Join(revoked, ",") != "alice:gr_s1" {
		t.Errorf("revoked %v, want gr_s1 for alice", revoked)
	}

	bad := []struct{ name, body, code string }{
		{"an unknown field", `{"grant_id":"gr_s1","by":"bob"}`, "invalid_request"},
		{"no id", `{}`, "invalid_request"},
		{"an id that cannot be one", `{"grant_id":"gr_s1 gr_a1"}`, "invalid_request"},
		{"a wildcard id", `{"grant_id":"*"}`, "invalid_request"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, before := f.calls()
			res, raw := revoke(tt.body)
			if res.StatusCode != http.StatusBadRequest || !strings.Contains(raw, tt.code) {
				t.Fatalf("%s: %s", res.Status, raw)
			}
			if _, after := f.calls(); len(after) != len(before) {
				t.Fatal("a bad revocation reached the brokers")
			}
		})
	}
	t.Run("an unknown grant is not found, and says so", func(t *testing.T) {
		res, raw := revoke(`{"grant_id":"gr_gone"}`)
		if res.StatusCode != http.StatusNotFound || !strings.Contains(raw, "revoked or expired already") {
			t.Fatalf("%s: %s", res.Status, raw)
		}
	})
	t.Run("the brokers' refusal is shown", func(t *testing.T) {
		f.mu.Lock()
		f.err = &messages.ReplyError{Code: messages.CodeForbidden, Message: "alice is not a member of team oncall"}
		f.mu.Unlock()
		res, raw := revoke(`{"grant_id":"gr_a1"}`)
		if res.StatusCode != http.StatusForbidden || !strings.Contains(raw, "the brokers refused: alice is not a member of team oncall") {
			t.Fatalf("%s: %s", res.Status, raw)
		}
		res = s.do(t, c, "GET", "/api/grants", "")
		if raw := readBody(t, res); res.StatusCode != http.StatusForbidden || !strings.Contains(raw, "not a member") {
			t.Fatalf("list: %s: %s", res.Status, raw)
		}
	})
}

func TestGrantsRequestsAreGuardedAndRateLimited(t *testing.T) {
	clk := newClock()
	s, f := startGrantsServer(t, Options{Now: clk.Now}, sessionGrant())
	c, csrf := s.login(t, "alice", alicePassword)
	const body = `{"grant_id":"gr_s1"}`
	guarded := []struct {
		name       string
		client     *http.Client
		headers    []string
		wantStatus int
	}{
		{"without the CSRF token", c, []string{"Content-Type", "application/json"}, 403},
		{"from another origin", c, []string{"Content-Type", "application/json", csrfHeader, csrf, "Origin", "https://evil.example"}, 403},
		{"not signed in", s.client(t), []string{"Content-Type", "application/json", csrfHeader, csrf}, 401},
		{"as a form", c, []string{"Content-Type", "application/x-www-form-urlencoded", csrfHeader, csrf}, 415},
	}
	for _, tt := range guarded {
		t.Run("a revocation "+tt.name+" is refused", func(t *testing.T) {
			res := s.do(t, tt.client, "POST", "/api/grants/revoke", body, tt.headers...)
			if res.StatusCode != tt.wantStatus {
				t.Fatalf("status %s, want %d", res.Status, tt.wantStatus)
			}
			if _, revoked := f.calls(); len(revoked) != 0 {
				t.Fatalf("a refused request revoked %v", revoked)
			}
		})
	}
	if res := s.do(t, s.client(t), "GET", "/api/grants", ""); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a signed-out list got %s", res.Status)
	}

	// Each request reaches the brokers: twenty at once, then one a second.
	for i := range grantsBurst {
		if res := s.do(t, c, "GET", "/api/grants", ""); res.StatusCode != http.StatusOK {
			t.Fatalf("request %d: %s", i+1, res.Status)
		}
	}
	res := s.do(t, c, "GET", "/api/grants", "")
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" || errorCode(t, res) != "rate_limited" {
		t.Fatalf("request past the burst: %s (Retry-After %q)", res.Status, res.Header.Get("Retry-After"))
	}
	res = s.do(t, c, "POST", "/api/grants/revoke", body, "Content-Type", "application/json", csrfHeader, csrf)
	if res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a revocation past the burst: %s", res.Status)
	}
	// Another approver has a bucket of its own.
	bob, _ := s.login(t, "bob", bobPassword)
	if res := s.do(t, bob, "GET", "/api/grants", ""); res.StatusCode != http.StatusOK {
		t.Fatalf("bob's first request: %s", res.Status)
	}
	clk.Advance(grantsRefill)
	if res := s.do(t, c, "GET", "/api/grants", ""); res.StatusCode != http.StatusOK {
		t.Fatalf("a request after the refill: %s", res.Status)
	}
}

func TestGrantsWithoutAGrantsSideAreUnavailable(t *testing.T) {
	s := startServer(t, testConfig(t, "", "{insecure_cookies: true}"), Options{}, nil)
	c, csrf := s.login(t, "alice", alicePassword)
	res := s.do(t, c, "GET", "/api/grants", "")
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("list: %s", res.Status)
	}
	res = s.do(t, c, "POST", "/api/grants/revoke", `{"grant_id":"gr_s1"}`, "Content-Type", "application/json", csrfHeader, csrf)
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("revoke: %s", res.Status)
	}
}

func TestCardsSayWhatSessionAndAlwaysGrantOrWhyNot(t *testing.T) {
	offered := question("req-offered", "npm install left-pad")
	offered.Request.SessionID = "s1"
	offered.Offers = []messages.GrantOffer{
		{Scope: messages.ScopeSession, Offered: true, Tool: "bash", Patterns: []string{"npm install *"}},
		{Scope: messages.ScopeAlwaysPrefix, Offered: true, Tool: "bash", Patterns: []string{"npm install *"}},
	}
	refused := question("req-refused", "kubectl delete namespace prod")
	refused.Offers = []messages.GrantOffer{
		{Scope: messages.ScopeSession, WhyNot: "the rule bash(kubectl *) asks team oncall for 2 approvals"},
		{Scope: messages.ScopeAlways, WhyNot: "the rule bash(kubectl *) asks team oncall for 2 approvals"},
	}
	s := startServer(t, testConfig(t, "", "{insecure_cookies: true}"), Options{}, newFakeResponder(offered, refused))
	c, _ := s.login(t, "alice", alicePassword)
	var list questionsReply
	decodeJSON(t, s.do(t, c, "GET", "/api/questions", ""), &list)
	if len(list.Questions) != 2 {
		t.Fatalf("%d questions", len(list.Questions))
	}
	o, r := list.Questions[0], list.Questions[1]
	if o.SessionGrants != `Session approves 1 bash pattern for agent pod-7 in session s1, in any working directory (this call names none), until the session ends or it expires: "bash(npm install *)"` || strings.Join(o.Actions, ",") != "approve,session,always,reject_soft,reject_hard" {
		t.Errorf("offered: session_grants %q, actions %v", o.SessionGrants, o.Actions)
	}
	if !strings.Contains(o.HTML, `<span class="label">Session</span> would allow <code>bash(npm install *)</code> for agent <strong><code>pod-7</code></strong> in session <code>s1</code>`) {
		t.Errorf("the card does not say in visible text what Session grants:\n%s", o.HTML)
	}
	if r.SessionGrants != "" || strings.Join(r.Actions, ",") != "approve,reject_soft,reject_hard" {
		t.Errorf("refused: session_grants %q, actions %v", r.SessionGrants, r.Actions)
	}
	if strings.Contains(r.HTML, `data-action="session"`) || strings.Contains(r.HTML, `data-action="always"`) {
		t.Errorf("the card offers a Session or Always the brokers refused:\n%s", r.HTML)
	}
	if !strings.Contains(r.HTML, "not offered: the rule bash(kubectl *) asks team oncall for 2 approvals") {
		t.Errorf("the card does not say why Session is not offered:\n%s", r.HTML)
	}
	// The page refuses the choice too (fail closed), with the reason, and
	// sends nothing.
	bob, csrf := s.login(t, "bob", bobPassword)
	res := s.do(t, bob, "POST", "/api/respond", `{"request_id":"req-refused","action":"session"}`,
		"Content-Type", "application/json", csrfHeader, csrf)
	if raw := readBody(t, res); res.StatusCode != http.StatusBadRequest || !strings.Contains(raw, "Session is not offered: the rule bash(kubectl *)") {
		t.Errorf("a Session the brokers refused: %s: %s", res.Status, raw)
	}
	if n := s.resp.answerCount(); n != 0 {
		t.Errorf("%d answers reached the brokers", n)
	}
}

// TestGrantsTabEscapesWhatAPersonCannotSee (red team AG F14): a grant's
// patterns are the agent's words; on the Grants tab a pattern holding
// U+202E (right-to-left override) read as another pattern. It is shown
// escaped, as on a card, in the HTML and in the text of the API.
func TestGrantsTabEscapesWhatAPersonCannotSee(t *testing.T) {
	g := messages.Grant{ID: "g1", Scope: messages.ScopeAlways, Tool: "bash", AgentID: "ci-3\u200b/claude",
		Patterns: []string{"git push origin \u202eniam-ffo\u202c"}, Teams: []string{"default"}}
	v, err := grantView(g)
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]string{"HTML": v.HTML, "text": v.Text} {
		if strings.ContainsAny(s, "\u202e\u202c\u200b") {
			t.Errorf("the %s holds the raw control characters: %q", name, s)
		}
		if !strings.Contains(s, "202E") {
			t.Errorf("the %s does not show the override escaped: %q", name, s)
		}
	}
	if v.Grant.Patterns[0] != g.Patterns[0] {
		t.Error("the grant the API returns was changed: only what is shown is escaped")
	}
}

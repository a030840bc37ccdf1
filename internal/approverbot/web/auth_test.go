package web

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/signoff-dev/signoff/internal/approverbot"
)

func TestLogin(t *testing.T) {
	s := startServer(t, testConfig(t, "", "{insecure_cookies: true}"), Options{}, nil)
	tests := []struct {
		name        string
		body        string
		contentType string
		wantStatus  int
		wantSession bool
	}{
		{"the right password signs in", `{"approver":"alice","password":"` + alicePassword + `"}`, "application/json", 200, true},
		{"a wrong password is refused", `{"approver":"alice","password":"nope"}`, "application/json", 401, false},
		{"another approver's password is refused", `{"approver":"alice","password":"` + bobPassword + `"}`, "application/json", 401, false},
		{"an unknown approver is refused", `{"approver":"mallory","password":"` + alicePassword + `"}`, "application/json", 401, false},
		{"an approver without a password cannot sign in", `{"approver":"erin","password":"x"}`, "application/json", 401, false},
		{"an empty password is a bad request", `{"approver":"alice","password":""}`, "application/json", 400, false},
		{"unknown fields are a bad request", `{"approver":"alice","password":"x","admin":true}`, "application/json", 400, false},
		{"a form signs in too", "approver=bob&password=" + url.QueryEscape(bobPassword), "application/x-www-form-urlencoded", 200, true},
		{"a text body is refused", "alice:" + alicePassword, "text/plain", 400, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := s.client(t)
			res := s.do(t, c, "POST", "/login", tt.body, "Content-Type", tt.contentType, "Accept", "application/json")
			if res.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, tt.wantStatus, readBody(t, res))
			}
			got := s.do(t, c, "GET", "/api/session", "")
			if ok := got.StatusCode == http.StatusOK; ok != tt.wantSession {
				t.Fatalf("signed in afterwards: %v, want %v (GET /api/session: %s)", ok, tt.wantSession, got.Status)
			}
		})
	}
}

func TestLoginFormRedirectsToThePage(t *testing.T) {
	s := startServer(t, testConfig(t, "", "{insecure_cookies: true}"), Options{}, nil)
	c := s.client(t)
	res := s.do(t, c, "POST", "/login", "approver=alice&password="+url.QueryEscape(alicePassword),
		"Content-Type", "application/x-www-form-urlencoded")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Fatalf("got %s to %q, want 303 to /", res.Status, res.Header.Get("Location"))
	}
	page := s.do(t, c, "GET", "/", "")
	if page.StatusCode != http.StatusOK {
		t.Fatalf("GET / after login: %s", page.Status)
	}
	if body := readBody(t, page); !strings.Contains(body, "Alice") {
		t.Fatal("the page does not name the signed-in approver")
	}

	bad := s.do(t, s.client(t), "POST", "/login", "approver=alice&password=wrong",
		"Content-Type", "application/x-www-form-urlencoded")
	body := readBody(t, bad)
	if bad.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "wrong approver id or password") {
		t.Fatalf("a wrong form login got %s without the error message", bad.Status)
	}
}

func TestSessionCookieFlags(t *testing.T) {
	tests := []struct {
		name       string
		web        string
		wantSecure bool
	}{
		{"cookies are Secure by default", "{}", true},
		{"insecure_cookies drops Secure for plain-HTTP development", "{insecure_cookies: true}", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, testConfig(t, "", tt.web), Options{}, nil)
			res := s.do(t, s.client(t), "POST", "/login", `{"approver":"alice","password":"`+alicePassword+`"}`,
				"Content-Type", "application/json")
			var ck *http.Cookie
			for _, c := range res.Cookies() {
				if c.Name == cookieName {
					ck = c
				}
			}
			if ck == nil {
				t.Fatalf("no %s cookie", cookieName)
			}
			if !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode || ck.Path != "/" || ck.Secure != tt.wantSecure {
				t.Fatalf("cookie HttpOnly=%v SameSite=%v Path=%q Secure=%v; want HttpOnly, Strict, /, Secure=%v",
					ck.HttpOnly, ck.SameSite, ck.Path, ck.Secure, tt.wantSecure)
			}
			if len(ck.Value) < 43 { // 32 bytes, base64url
				t.Fatalf("session id %q is shorter than 32 random bytes", ck.Value)
			}
		})
	}
}

func TestFailedLoginsSlowTheAccountFromEveryAddressWithoutLockingItsOwnerOut(t *testing.T) {
	clk := newClock()
	s := startServer(t, testConfig(t, "", "{insecure_cookies: true, trusted_proxies: [127.0.0.1]}"), Options{Now: clk.Now}, nil)
	c := s.client(t)
	n := 0
	try := func(id, pw string) *http.Response {
		n++ // every guess from another address, as a botnet would
		return s.do(t, c, "POST", "/login", `{"approver":"`+id+`","password":"`+pw+`"}`, "Content-Type", "application/json",
			"X-Forwarded-For", fmt.Sprintf("203.0.113.%d", n%250+1))
	}
	for i := range loginFreeFailures + 1 {
		if res := try("alice", "wrong"); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("attempt %d: %s, want 401", i+1, res.Status)
		}
	}
	res := try("alice", alicePassword)
	if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
		t.Fatalf("after %d failures from as many addresses the right password got %s (Retry-After %q), want 429",
			loginFreeFailures+1, res.Status, res.Header.Get("Retry-After"))
	}
	// Another approver is not slowed.
	if res := try("bob", bobPassword); res.StatusCode != http.StatusOK {
		t.Fatalf("bob got %s while alice was slowed", res.Status)
	}
	// Each further failure doubles the wait, up to a minute: never a lockout.
	for range 20 {
		clk.Advance(loginDelayMax)
		if res := try("alice", "wrong"); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a guess after the wait: %s, want 401", res.Status)
		}
	}
	if res := try("alice", alicePassword); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("right after a failure: %s, want 429", res.Status)
	}
	clk.Advance(loginDelayMax)
	if res := try("alice", alicePassword); res.StatusCode != http.StatusOK {
		t.Fatalf("a minute after the latest guess the owner got %s, want in", res.Status)
	}
	// Success clears the failures.
	for i := range loginFreeFailures {
		if res := try("alice", "wrong"); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("attempt %d after a success: %s, want 401", i+1, res.Status)
		}
	}
}

func TestSignInsPerAddressCountTheClientBehindATrustedProxyAndOnlyFailures(t *testing.T) {
	for _, behind := range []bool{true, false} {
		t.Run(fmt.Sprintf("trusted proxy %v", behind), func(t *testing.T) {
			clk := newClock()
			web := "{insecure_cookies: true}"
			if behind {
				web = "{insecure_cookies: true, trusted_proxies: [127.0.0.0/8, \"::1\"]}"
			}
			s := startServer(t, testConfig(t, "", web), Options{Now: clk.Now}, nil)
			c := s.client(t)
			from := func(addr, id, pw string) *http.Response {
				return s.do(t, c, "POST", "/login", `{"approver":"`+id+`","password":"`+pw+`"}`, "Content-Type", "application/json",
					"X-Forwarded-For", "198.51.100.7, "+addr)
			}
			// Successful sign-ins never use up the address's budget.
			for i := range loginBurstPerAddr + 5 {
				if res := from("192.0.2.1", "bob", bobPassword); res.StatusCode != http.StatusOK {
					t.Fatalf("sign-in %d of bob: %s", i+1, res.Status)
				}
			}
			// One address sprays approver ids until it is limited.
			for i := range loginBurstPerAddr {
				if res := from("192.0.2.66", fmt.Sprintf("nobody%d", i), "x"); res.StatusCode != http.StatusUnauthorized {
					t.Fatalf("spray %d: %s, want 401", i+1, res.Status)
				}
			}
			if res := from("192.0.2.66", "alice", alicePassword); res.StatusCode != http.StatusTooManyRequests {
				t.Fatalf("the spraying address: %s, want 429", res.Status)
			}
			// Behind a trusted proxy, another client is not limited; without
			// one, the forwarding header is the client's to forge and the
			// peer's address counts.
			res := from("192.0.2.1", "alice", alicePassword)
			if behind && res.StatusCode != http.StatusOK {
				t.Errorf("another client behind the proxy got %s, want in", res.Status)
			}
			if !behind && res.StatusCode != http.StatusTooManyRequests {
				t.Errorf("without trusted_proxies a forged X-Forwarded-For escaped the limit: %s", res.Status)
			}
		})
	}
}

func TestUnknownApproversCostAsMuchAsKnownOnes(t *testing.T) {
	cfg := testConfig(t, "", "{}")
	h6, err := bcrypt.GenerateFromPassword([]byte("x"), 6)
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Approvers["erin"]
	a.Keys[KeyPasswordHash] = string(h6)
	cfg.Approvers["erin"] = a
	ch, err := New(cfg, Options{Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	cost, err := bcrypt.Cost(ch.dummyHash)
	if err != nil || cost != 6 {
		t.Fatalf("the dummy hash has cost %d (%v), want 6, the highest configured", cost, err)
	}
	if _, ok := ch.checkPassword("mallory", "x"); ok {
		t.Fatal("an unknown approver signed in with the dummy hash's input")
	}
}

func TestNewChecksTheLoginConfig(t *testing.T) {
	noPasswords, err := approverbot.ParseConfig([]byte("approvers: {alice: {}}\nweb: {}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	badHash, err := approverbot.ParseConfig([]byte("approvers: {alice: {password_hash: plaintext}}\nweb: {}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	badHeader, err := approverbot.ParseConfig([]byte("approvers: {alice: {}}\nweb: {trusted_header: \"X User\"}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		cfg     *approverbot.Config
		wantErr error
		wantMsg string
	}{
		{"no password and no trusted header lets nobody in", noPasswords, ErrNoLogin, ""},
		{"a password hash that is not bcrypt is named", badHash, nil, "approvers.alice.password_hash"},
		{"a trusted header must be a header name", badHeader, nil, "web.trusted_header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg, Options{})
			if err == nil {
				t.Fatal("New accepted the config")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("error %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error %q does not name %q", err, tt.wantMsg)
			}
		})
	}
}

func TestTrustedHeader(t *testing.T) {
	s := startServer(t, testConfig(t, "", "{trusted_header: X-Forwarded-User, insecure_cookies: true}"), Options{},
		newFakeResponder(question("req-1", "make deploy")))
	as := func(id string) []string { return []string{"X-Forwarded-User", id} }

	t.Run("the header's approver sees the page without a password form", func(t *testing.T) {
		res := s.do(t, s.client(t), "GET", "/", "", as("alice")...)
		body := readBody(t, res)
		if res.StatusCode != http.StatusOK || !strings.Contains(body, "Alice") {
			t.Fatalf("GET / as alice: %s", res.Status)
		}
		if strings.Contains(body, `type="password"`) {
			t.Fatal("the page has a password form in trusted-header mode")
		}
	})
	t.Run("an id that is not an approver is refused", func(t *testing.T) {
		if res := s.do(t, s.client(t), "GET", "/api/questions", "", as("mallory")...); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("got %s, want 401", res.Status)
		}
	})
	t.Run("without the header the login page explains the proxy", func(t *testing.T) {
		res := s.do(t, s.client(t), "GET", "/login", "")
		body := readBody(t, res)
		if res.StatusCode != http.StatusUnauthorized || strings.Contains(body, `type="password"`) || !strings.Contains(body, "X-Forwarded-User") {
			t.Fatalf("GET /login without the header: %s, want 401 naming the header and no password form", res.Status)
		}
	})
	t.Run("password sign-in is off", func(t *testing.T) {
		res := s.do(t, s.client(t), "POST", "/login", `{"approver":"alice","password":"`+alicePassword+`"}`,
			"Content-Type", "application/json")
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("a password login without the header got %s, want 401", res.Status)
		}
	})
	t.Run("answers need the session's CSRF token and go out as the header's approver", func(t *testing.T) {
		c := s.client(t)
		body := `{"request_id":"req-1","action":"approve"}`
		if res := s.do(t, c, "POST", "/api/respond", body, append(as("bob"), "Content-Type", "application/json")...); res.StatusCode != http.StatusForbidden {
			t.Fatalf("an answer without a CSRF token got %s, want 403", res.Status)
		}
		res := s.do(t, c, "GET", "/api/session", "", as("bob")...)
		var rep loginReply
		decodeJSON(t, res, &rep)
		if rep.Approver != "bob" || rep.CSRFToken == "" {
			t.Fatalf("session %+v, want bob with a CSRF token", rep)
		}
		res = s.do(t, c, "POST", "/api/respond", body,
			append(as("bob"), "Content-Type", "application/json", csrfHeader, rep.CSRFToken)...)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("answer: %s: %s", res.Status, readBody(t, res))
		}
		if a := s.resp.lastAnswer(t); a.Approver != "bob" {
			t.Fatalf("answered as %q, want bob", a.Approver)
		}
		// The same cookie with another approver's header is not bob's
		// session: its CSRF token does not count.
		res = s.do(t, c, "POST", "/api/respond", body,
			append(as("alice"), "Content-Type", "application/json", csrfHeader, rep.CSRFToken)...)
		if res.StatusCode != http.StatusForbidden {
			t.Fatalf("bob's session used with alice's header got %s, want 403", res.Status)
		}
	})
}

func TestSessionsExpire(t *testing.T) {
	clk := newClock()
	cfg := testConfig(t, "", "{insecure_cookies: true, session_ttl: 1h}")
	s := startServer(t, cfg, Options{Now: clk.Now}, nil)
	c, _ := s.login(t, "alice", alicePassword)
	if res := s.do(t, c, "GET", "/api/questions", ""); res.StatusCode != http.StatusOK {
		t.Fatalf("fresh session: %s", res.Status)
	}
	clk.Advance(59 * time.Minute)
	if res := s.do(t, c, "GET", "/api/questions", ""); res.StatusCode != http.StatusOK {
		t.Fatalf("a session within its TTL: %s", res.Status)
	}
	clk.Advance(time.Minute)
	if res := s.do(t, c, "GET", "/api/questions", ""); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("a session at its TTL: %s, want 401", res.Status)
	}
	res := s.do(t, c, "GET", "/", "")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
		t.Fatalf("the page with an expired session: %s to %q, want 303 to /login", res.Status, res.Header.Get("Location"))
	}
}

func TestLogoutEndsTheSession(t *testing.T) {
	s := startServer(t, testConfig(t, "", "{insecure_cookies: true}"), Options{}, nil)
	c, csrf := s.login(t, "alice", alicePassword)
	if res := s.do(t, c, "POST", "/logout", "", csrfHeader, csrf); res.StatusCode != http.StatusNoContent {
		t.Fatalf("logout: %s", res.Status)
	}
	if res := s.do(t, c, "GET", "/api/questions", ""); res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("after logout: %s, want 401", res.Status)
	}
}

func TestTrustedProxiesMustBeAddressesOrRanges(t *testing.T) {
	if _, err := approverbot.ParseConfig([]byte("approvers: {alice: {}}\nweb: {trusted_proxies: [proxy.example]}\n"), "t.yaml"); err == nil ||
		!strings.Contains(err.Error(), "trusted_proxies[0]") {
		t.Errorf("a host name in trusted_proxies: %v, want an error naming it", err)
	}
	if _, err := approverbot.ParseConfig([]byte("approvers: {alice: {}}\nweb: {trusted_proxies: [10.0.0.0/8, \"::1\", 192.0.2.7]}\n"), "t.yaml"); err != nil {
		t.Errorf("addresses and ranges: %v", err)
	}
}

// Guesses sent at once (red team) cannot all pass the account's wait
// before any of them is recorded as failed: an attempt takes its place
// before the password check, so no more than the free failures and one
// more are checked, however many arrive together.
func TestGuessesSentAtOnceAreCheckedNoFasterThanOneByOne(t *testing.T) {
	clk := newClock()
	s := startServer(t, testConfig(t, "", "{insecure_cookies: true, trusted_proxies: [127.0.0.1]}"), Options{Now: clk.Now}, nil)
	c := s.client(t)
	const n = 40
	var checked atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res := s.do(t, c, "POST", "/login", `{"approver":"alice","password":"wrong"}`, "Content-Type", "application/json",
				"X-Forwarded-For", fmt.Sprintf("198.51.100.%d", i+1))
			if res.StatusCode == http.StatusUnauthorized {
				checked.Add(1)
			}
		}()
	}
	close(start)
	wg.Wait()
	if got := int(checked.Load()); got > loginFreeFailures+1 {
		t.Fatalf("%d of %d guesses sent at once were checked, want at most %d", got, n, loginFreeFailures+1)
	}
}

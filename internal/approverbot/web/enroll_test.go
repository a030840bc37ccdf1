package web

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
)

// Adding or removing an authenticator needs a recent sign-in: the second
// factor cannot be enrolled with an old session cookie alone (red team: a
// stolen cookie registered its own key, then approved step-up questions).
func TestChangingAuthenticatorsNeedsARecentSignIn(t *testing.T) {
	clk := newClock()
	cfg := testConfig(t, "", `{insecure_cookies: true, session_ttl: 8h, webauthn: {rp_id: localhost, origins: ["http://localhost"]}}`)
	s := startServer(t, cfg, Options{Now: clk.Now}, nil)
	c, csrf := s.login(t, "alice", alicePassword)
	begin := func() *http.Response {
		return s.do(t, c, "POST", "/api/webauthn/register/begin", "{}", "Content-Type", "application/json", "X-CSRF-Token", csrf)
	}
	if res := begin(); res.StatusCode != http.StatusOK {
		t.Fatalf("a registration right after signing in: %s: %s", res.Status, readBody(t, res))
	}
	clk.Advance(enrollFreshness + time.Second)
	if res := begin(); res.StatusCode != http.StatusForbidden || errorCode(t, res) != "sign_in_again" {
		t.Fatalf("a registration %s after signing in: %s, want 403 sign_in_again", enrollFreshness, res.Status)
	}
	res := s.do(t, c, "POST", "/api/webauthn/credentials/remove", `{"id":"AQID"}`, "Content-Type", "application/json", "X-CSRF-Token", csrf)
	if res.StatusCode != http.StatusForbidden || errorCode(t, res) != "sign_in_again" {
		t.Fatalf("a removal %s after signing in: %s, want 403 sign_in_again", enrollFreshness, res.Status)
	}
	c2, csrf2 := s.login(t, "alice", alicePassword)
	if res := s.do(t, c2, "POST", "/api/webauthn/register/begin", "{}", "Content-Type", "application/json", "X-CSRF-Token", csrf2); res.StatusCode != http.StatusOK {
		t.Fatalf("a registration after signing in again: %s", res.Status)
	}
}

// Once an approver has a security key, adding another or removing one
// needs an assertion by one of theirs, for that change: a fresh sign-in
// alone (a password watched, a borrowed OIDC session) enrolls nothing and
// removes nothing. The first key needs none. (The page's own flow, which
// confirms with the key, is TestBrowserStepUpRegistersAKeyAndApprovesWithAFreshAssertionOnly.)
func TestChangingKeysOnceYouHaveOneNeedsOneOfThem(t *testing.T) {
	cfg := testConfig(t, "", `{insecure_cookies: true, webauthn: {rp_id: localhost, origins: ["http://localhost"]}}`)
	s := startServer(t, cfg, Options{}, nil)
	c, csrf := s.login(t, "alice", alicePassword)
	post := func(path, body string) *http.Response {
		return s.do(t, c, "POST", path, body, "Content-Type", "application/json", "X-CSRF-Token", csrf)
	}
	if res := post("/api/webauthn/confirm/begin", `{"action":"add"}`); res.StatusCode != http.StatusPreconditionFailed || errorCode(t, res) != "no_authenticator" {
		t.Fatalf("a confirmation without a key: %s, want 412 no_authenticator", res.Status)
	}
	if res := post("/api/webauthn/register/begin", `{}`); res.StatusCode != http.StatusOK {
		t.Fatalf("the first key: %s: %s", res.Status, readBody(t, res))
	}

	key := webauthn.Credential{ID: []byte{1, 2, 3}, PublicKey: []byte{4}}
	if err := s.ch.stepUp.add("alice", credential{Credential: key, Name: "alice's key", AddedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	refused := func(what string, res *http.Response, why string) {
		t.Helper()
		body := readBody(t, res)
		if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "confirm_with_a_key") || !strings.Contains(body, why) {
			t.Fatalf("%s: %s %s, want 403 confirm_with_a_key saying %q", what, res.Status, body, why)
		}
	}
	refused("a second key without confirmation", post("/api/webauthn/register/begin", `{}`), "confirm with a key you have")
	refused("a removal without confirmation", post("/api/webauthn/credentials/remove", `{"id":"AQID"}`), "confirm with a key you have")
	refused("a confirmation never begun", post("/api/webauthn/register/begin", `{"confirm":{"id":"AQID"}}`), "no confirmation in progress")

	res := post("/api/webauthn/confirm/begin", `{"action":"add"}`)
	var opts protocol.CredentialAssertion
	if res.StatusCode != http.StatusOK || json.NewDecoder(res.Body).Decode(&opts) != nil || len(opts.Response.AllowedCredentials) != 1 {
		t.Fatalf("a confirmation of adding a key: %s, options %+v, want alice's one key allowed", res.Status, opts.Response)
	}
	res.Body.Close()
	// Begun for adding, it does not confirm a removal; and an assertion
	// that does not verify is refused and ends the ceremony.
	refused("a removal confirmed for adding", post("/api/webauthn/credentials/remove", `{"id":"AQID","confirm":{"id":"AQID"}}`), "no confirmation in progress")
	refused("a forged assertion", post("/api/webauthn/register/begin", `{"confirm":{"id":"AQID","rawId":"AQID","type":"public-key","response":{}}}`), "")
	refused("the ceremony again", post("/api/webauthn/register/begin", `{"confirm":{"id":"AQID"}}`), "no confirmation in progress")
	if got := s.ch.stepUp.list("alice"); len(got) != 1 {
		t.Fatalf("alice's keys after the refusals: %+v, want her one key", got)
	}
	if res := post("/api/webauthn/confirm/begin", `{"action":"remove"}`); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("a removal to confirm without its key: %s, want 400", res.Status)
	}
}

package web

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
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
	first := `{"enroll_code":"` + aliceEnrollCode + `"}`
	begin := func() *http.Response {
		return s.do(t, c, "POST", "/api/webauthn/register/begin", first, "Content-Type", "application/json", "X-CSRF-Token", csrf)
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
	if res := s.do(t, c2, "POST", "/api/webauthn/register/begin", first, "Content-Type", "application/json", "X-CSRF-Token", csrf2); res.StatusCode != http.StatusOK {
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
	if res := post("/api/webauthn/register/begin", `{"enroll_code":"`+aliceEnrollCode+`"}`); res.StatusCode != http.StatusOK {
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

// The first key is the second factor: after a password sign-in it needs
// the approver's one-time enrollment code (first_key verified, the
// default), else the password alone would enroll the factor that is to
// back it up. A wrong code, another approver's code or none adds nothing;
// an approver without an issued code is told to ask for one; first_key
// any_sign_in lets the password do it; another value stops the bot.
func TestTheFirstKeyNeedsMoreThanAPassword(t *testing.T) {
	web := `{insecure_cookies: true, webauthn: {rp_id: localhost, origins: ["http://localhost"]%s}}`
	s := startServer(t, testConfig(t, "", fmt.Sprintf(web, "")), Options{}, nil)
	c, csrf := s.login(t, "alice", alicePassword)
	begin := func(c *http.Client, csrf, body string) *http.Response {
		return s.do(t, c, "POST", "/api/webauthn/register/begin", body, "Content-Type", "application/json", "X-CSRF-Token", csrf)
	}
	if got := firstKeyOf(t, s, c); got != "code" {
		t.Errorf("credentials' first_key = %q, want code", got)
	}
	for _, tc := range []struct{ name, body, why string }{
		{"no code", `{}`, "enter the one-time enrollment code"},
		{"a wrong code", `{"enroll_code":"AAAA-BBBB-CCCC-DDDD"}`, "not the one issued to you"},
		{"bob's code", `{"enroll_code":"` + bobEnrollCode + `"}`, "not the one issued to you"},
	} {
		res := begin(c, csrf, tc.body)
		body := readBody(t, res)
		if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "first_key_needs_proof") || !strings.Contains(body, tc.why) {
			t.Errorf("%s: %s %s, want 403 first_key_needs_proof saying %q", tc.name, res.Status, body, tc.why)
		}
	}
	if _, ok := s.ch.stepUp.take(registerKey("alice"), time.Now()); ok {
		t.Fatal("a refused first key began a registration")
	}
	if res := begin(c, csrf, `{"enroll_code":"`+aliceEnrollCode+`"}`); res.StatusCode != http.StatusOK {
		t.Fatalf("alice's own code: %s %s", res.Status, readBody(t, res))
	}

	// carol has a password and no code: she is told to ask for one.
	cc, ccsrf := s.login(t, "carol", "carol-password")
	if got := firstKeyOf(t, s, cc); got != "unavailable" {
		t.Errorf("carol's first_key = %q, want unavailable", got)
	}
	if res := begin(cc, ccsrf, `{"enroll_code":"`+aliceEnrollCode+`"}`); res.StatusCode != http.StatusForbidden || !strings.Contains(readBody(t, res), "approver-bot enroll-code") {
		t.Errorf("carol without an issued code: %s, want 403 telling her to ask for one", res.Status)
	}

	open := startServer(t, testConfig(t, "", fmt.Sprintf(web, ", first_key: any_sign_in")), Options{}, nil)
	oc, ocsrf := open.login(t, "carol", "carol-password")
	if got := firstKeyOf(t, open, oc); got != "" {
		t.Errorf("any_sign_in: first_key = %q, want none", got)
	}
	if res := open.do(t, oc, "POST", "/api/webauthn/register/begin", `{}`, "Content-Type", "application/json", "X-CSRF-Token", ocsrf); res.StatusCode != http.StatusOK {
		t.Errorf("any_sign_in: carol's first key by password: %s", res.Status)
	}

	if _, err := New(testConfig(t, "", fmt.Sprintf(web, ", first_key: password")), Options{Logger: quietLogger()}); err == nil || !strings.Contains(err.Error(), "first_key") {
		t.Errorf("first_key: password: %v, want a config error naming first_key", err)
	}
	bad := testConfig(t, "", fmt.Sprintf(web, ""))
	a := bad.Approvers["alice"]
	a.Keys[KeyEnrollCodeHash] = "not-a-hash"
	bad.Approvers["alice"] = a
	if _, err := New(bad, Options{Logger: quietLogger()}); err == nil || !strings.Contains(err.Error(), "approvers.alice.enroll_code_hash") {
		t.Errorf("an enrollment code hash that is not bcrypt: %v, want a config error naming it", err)
	}
}

// firstKeyOf is GET /api/webauthn/credentials' first_key for c.
func firstKeyOf(t *testing.T, s *server, c *http.Client) string {
	t.Helper()
	res := s.do(t, c, "GET", "/api/webauthn/credentials", "", "Accept", "application/json")
	var v struct {
		FirstKey string `json:"first_key"`
	}
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return v.FirstKey
}

// An enrollment code adds one first key, once: after that key is removed
// (by its owner, or by an operator's reset of the credentials file) the
// old code — which others may have seen — adds nothing, across restarts
// of a bot that keeps a credentials file; a file in the first format (the
// credentials map alone) still loads.
func TestAnEnrollmentCodeAddsOneFirstKeyOnce(t *testing.T) {
	file := filepath.Join(t.TempDir(), "webauthn.json")
	web := `{insecure_cookies: true, webauthn: {rp_id: localhost, origins: ["http://localhost"], credentials_file: "` + file + `"}}`
	s := startServer(t, testConfig(t, "", web), Options{}, nil)
	c, csrf := s.login(t, "alice", alicePassword)
	begin := func(s *server, c *http.Client, csrf string) *http.Response {
		return s.do(t, c, "POST", "/api/webauthn/register/begin", `{"enroll_code":"`+aliceEnrollCode+`"}`,
			"Content-Type", "application/json", "X-CSRF-Token", csrf)
	}
	if res := begin(s, c, csrf); res.StatusCode != http.StatusOK {
		t.Fatalf("the first key with the code: %s", res.Status)
	}
	// (The registration's finish, which a browser's authenticator makes, is
	// TestBrowserStepUpRegistersAKeyAndApprovesWithAFreshAssertionOnly's.)
	key := credential{Credential: webauthn.Credential{ID: []byte{9, 9, 9}, PublicKey: []byte{4}}, Name: "k", AddedAt: time.Now()}
	if err := s.ch.stepUp.add("alice", key); err != nil {
		t.Fatal(err)
	}
	if removed, err := s.ch.stepUp.remove("alice", credentialID(key.ID)); !removed || err != nil {
		t.Fatalf("remove: %v %v", removed, err)
	}
	res := begin(s, c, csrf)
	if body := readBody(t, res); res.StatusCode != http.StatusForbidden || !strings.Contains(body, "added a key already") {
		t.Fatalf("the same code after the key was removed: %s %s, want 403: it was spent", res.Status, body)
	}

	// A restart reads the spent code back from the file.
	s2 := startServer(t, testConfig(t, "", web), Options{}, nil)
	c2, csrf2 := s2.login(t, "alice", alicePassword)
	if res := begin(s2, c2, csrf2); res.StatusCode != http.StatusForbidden {
		t.Fatalf("the spent code after a restart: %s, want 403", res.Status)
	}

	// The first format still loads: its keys count.
	if err := os.WriteFile(file, []byte(`{"bob":[{"credential":{"id":"AQID","publicKey":"BA=="},"name":"old","added_at":"2026-01-02T03:04:05Z"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s3 := startServer(t, testConfig(t, "", web), Options{}, nil)
	if got := s3.ch.stepUp.list("bob"); len(got) != 1 || got[0].Name != "old" {
		t.Fatalf("bob's keys from a first-format file: %+v", got)
	}
	// One authenticator is one approver's: bob's id cannot be added for alice.
	if err := s3.ch.stepUp.add("alice", credential{Credential: webauthn.Credential{ID: []byte{1, 2, 3}}}); !errors.Is(err, errKnownCredential) {
		t.Errorf("alice registering bob's credential id: %v, want errKnownCredential", err)
	}
}

// A removal's confirmation is begun only for one of the approver's own
// keys, and the ceremonies in progress are bounded: a signed-in attacker
// cannot fill the bot's memory with challenges.
func TestKeyCeremoniesAreBounded(t *testing.T) {
	cfg := testConfig(t, "", `{insecure_cookies: true, webauthn: {rp_id: localhost, origins: ["http://localhost"]}}`)
	s := startServer(t, cfg, Options{}, nil)
	if err := s.ch.stepUp.add("alice", credential{Credential: webauthn.Credential{ID: []byte{1, 2, 3}, PublicKey: []byte{4}}}); err != nil {
		t.Fatal(err)
	}
	c, csrf := s.login(t, "alice", alicePassword)
	res := s.do(t, c, "POST", "/api/webauthn/confirm/begin", `{"action":"remove","id":"`+strings.Repeat("A", 4000)+`"}`,
		"Content-Type", "application/json", "X-CSRF-Token", csrf)
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("confirming the removal of a key she does not have: %s, want 404", res.Status)
	}
	s.ch.stepUp.mu.Lock()
	n := len(s.ch.stepUp.ceremonies)
	s.ch.stepUp.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d ceremonies kept for a refused confirmation", n)
	}
	now := time.Now()
	for i := range maxCeremonies {
		if err := s.ch.stepUp.start(fmt.Sprintf("k%d", i), &webauthn.SessionData{}, now); err != nil {
			t.Fatalf("ceremony %d: %v", i, err)
		}
	}
	if err := s.ch.stepUp.start("one-more", &webauthn.SessionData{}, now); !errors.Is(err, errTooManyCeremonies) {
		t.Fatalf("ceremony %d: %v, want errTooManyCeremonies", maxCeremonies+1, err)
	}
	if err := s.ch.stepUp.start("later", &webauthn.SessionData{}, now.Add(ceremonyTTL+time.Second)); err != nil {
		t.Fatalf("a ceremony once the others expired: %v", err)
	}
}

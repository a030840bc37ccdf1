package web

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/signoff-dev/signoff/internal/approverbot"
)

// The tests below sign in against a real OpenID provider started by the
// test: zitadel's OpenID-certified pkg/op, with the static users of its
// example storage (read from a file the test writes) and their groups.

const (
	oidcClientID     = "signoff-web"
	oidcClientSecret = "s3cret-for-tests"
)

// oidcUser is a static user of the test provider.
type oidcUser struct {
	id, username, password, email, first, last string
	groups                                     []string
}

var oidcUsers = []oidcUser{
	{id: "u-alice", username: "alice", password: "alice-pw", email: "alice@example.com", first: "Alice", last: "Ops",
		groups: []string{"okta-sre", "everyone"}},
	{id: "u-paul", username: "paul", password: "paul-pw", email: "paul@example.com", first: "Paul", last: "Pay",
		groups: []string{"payments-oncall", "okta-sre-readonly"}},
	{id: "u-nina", username: "nina", password: "nina-pw", email: "nina@example.com", first: "Nina", last: "None",
		groups: []string{"everyone"}},
}

// groupStorage is the example storage with a groups claim in the ID token
// (for the "groups" scope), clients that put the profile and email claims
// in it too (as Okta, Entra and Dex do), and our post-logout address.
type groupStorage struct {
	*storage.Storage
	groups     map[string][]string
	postLogout string
}

func (s *groupStorage) SetUserinfoFromRequest(ctx context.Context, ui *oidc.UserInfo, t op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, ui, t, scopes); err != nil {
		return err
	}
	if slices.Contains(scopes, "groups") {
		ui.AppendClaims("groups", s.groups[t.GetSubject()])
	}
	return nil
}

func (s *groupStorage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return claimsClient{Client: c, postLogout: s.postLogout}, nil
}

type claimsClient struct {
	op.Client
	postLogout string
}

func (c claimsClient) IDTokenUserinfoClaimsAssertion() bool { return true }
func (c claimsClient) IsScopeAllowed(s string) bool {
	return s == "groups" || c.Client.IsScopeAllowed(s)
}
func (c claimsClient) PostLogoutRedirectURIs() []string { return []string{c.postLogout} }

// oidcProvider is the running provider. tamper, when set, changes the
// email claim of the next ID tokens the token endpoint sends (their
// signature left as it was).
type oidcProvider struct {
	url    string
	tamper atomic.Bool
}

// listen reserves a local address, so that URLs can name it before its
// server starts.
func listen(t *testing.T) (net.Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln, "http://" + ln.Addr().String()
}

// startOIDCProvider runs the provider, with a web client whose callback
// is botURL's.
func startOIDCProvider(t *testing.T, botURL string) *oidcProvider {
	t.Helper()
	ln, issuer := listen(t)
	users := map[string]any{}
	groups := map[string][]string{}
	for _, u := range oidcUsers {
		users[u.id] = map[string]any{"ID": u.id, "Username": u.username, "Password": u.password, "FirstName": u.first,
			"LastName": u.last, "Email": u.email, "EmailVerified": true, "PreferredLanguage": "en"}
		groups[u.id] = u.groups
	}
	data, _ := json.Marshal(users)
	path := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	us, err := storage.StoreFromFile(path)
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]*storage.Client{
		oidcClientID: storage.WebClient(oidcClientID, oidcClientSecret, botURL+oidcCallbackPath),
	}
	st := &groupStorage{Storage: storage.NewStorageWithClients(us, clients), groups: groups, postLogout: botURL + "/login"}
	h := exampleop.SetupServer(issuer, st, nil, false)
	p := &oidcProvider{url: issuer}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/oauth/token" || !p.tamper.Load() {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		maps.Copy(w.Header(), rec.Header())
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(tamperIDToken(t, rec.Body.Bytes()))
	}))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return p
}

// tamperIDToken rewrites the email claim of the ID token in a token
// response, keeping the provider's signature.
func tamperIDToken(t *testing.T, body []byte) []byte {
	var tr map[string]any
	if err := json.Unmarshal(body, &tr); err != nil {
		t.Errorf("token response: %v", err)
		return body
	}
	raw, _ := tr["id_token"].(string)
	parts := strings.Split(raw, ".")
	if len(parts) != 3 {
		t.Errorf("id_token %q is not a JWS", raw)
		return body
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Errorf("id_token payload: %v", err)
		return body
	}
	var claims map[string]any
	_ = json.Unmarshal(payload, &claims)
	claims["email"] = "mallory@example.com"
	payload, _ = json.Marshal(claims)
	parts[1] = base64.RawURLEncoding.EncodeToString(payload)
	tr["id_token"] = strings.Join(parts, ".")
	out, _ := json.Marshal(tr)
	return out
}

// oidcBot is a web channel signing in with the test provider.
type oidcBot struct {
	*server
	url      string
	provider *oidcProvider
	clock    *clock
}

// startOIDCBot runs a web channel with teams sre, payments and default,
// OIDC sign-in (web.oidc's extra YAML, indented under it, in extra) and
// the approvers' passwords.
func startOIDCBot(t *testing.T, extra string) *oidcBot {
	t.Helper()
	ln, botURL := listen(t)
	p := startOIDCProvider(t, botURL)
	cfg := testConfig(t, "[sre, payments, default]", `
  insecure_cookies: true
  webauthn: {rp_id: localhost, origins: ["http://localhost"]}
  oidc:
    name: Test IdP
    issuer: `+p.url+`
    client_id: `+oidcClientID+`
    client_secret: `+oidcClientSecret+`
    redirect_url: `+botURL+oidcCallbackPath+`
    teams:
      sre: [okta-sre]
      payments: [payments-oncall]
`+extra)
	clk := &clock{t: time.Now()}
	srv := startServerOn(t, ln, cfg, Options{Now: clk.Now}, newFakeResponder(
		teamQuestion("q-sre", "sre"), teamQuestion("q-pay", "payments"), teamQuestion("q-def", "default")))
	return &oidcBot{server: srv, url: botURL, provider: p, clock: clk}
}

func teamQuestion(id, team string) approverbot.Question {
	q := question(id, "make deploy")
	q.Team = team
	return q
}

// browser is an HTTP client that follows redirects with a cookie jar, as
// a browser would (without running scripts).
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 30 * time.Second}
}

func get(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// toProviderLogin starts a sign-in at the bot and follows it to the
// provider's login form; it returns the form's auth request id.
func (b *oidcBot) toProviderLogin(t *testing.T, c *http.Client) string {
	t.Helper()
	res, body := get(t, c, b.url+oidcStartPath)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Request.URL.String(), b.provider.url+"/login/username") {
		t.Fatalf("the sign-in did not reach the provider's login form: %s at %s: %.300s", res.Status, res.Request.URL, body)
	}
	id := res.Request.URL.Query().Get("authRequestID")
	if id == "" {
		t.Fatalf("no authRequestID in %s", res.Request.URL)
	}
	return id
}

// signIn signs user in through the provider's form and returns the reply
// the redirects end at (the bot's) and its body.
func (b *oidcBot) signIn(t *testing.T, c *http.Client, user, password string) (*http.Response, string) {
	t.Helper()
	id := b.toProviderLogin(t, c)
	res, err := c.PostForm(b.provider.url+"/login/username", url.Values{"id": {id}, "username": {user}, "password": {password}})
	if err != nil {
		t.Fatalf("provider login: %v", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

// session returns GET /api/session for c, with the status.
func (b *oidcBot) session(t *testing.T, c *http.Client) (int, loginReply) {
	t.Helper()
	res, err := c.Get(b.url + "/api/session")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var rep loginReply
	if res.StatusCode == http.StatusOK {
		if err := json.NewDecoder(res.Body).Decode(&rep); err != nil {
			t.Fatal(err)
		}
	}
	return res.StatusCode, rep
}

// views is what GET /api/questions lists for c.
func (b *oidcBot) views(t *testing.T, c *http.Client) []QuestionView {
	t.Helper()
	res, err := c.Get(b.url + "/api/questions")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var rep questionsReply
	if err := json.NewDecoder(res.Body).Decode(&rep); err != nil {
		t.Fatal(err)
	}
	return rep.Questions
}

// digest is the digest GET /api/questions lists for id.
func (b *oidcBot) digest(t *testing.T, c *http.Client, id string) string {
	t.Helper()
	for _, q := range b.views(t, c) {
		if q.RequestID == id {
			return q.Digest
		}
	}
	t.Fatalf("GET /api/questions lists no %s", id)
	return ""
}

func (b *oidcBot) questions(t *testing.T, c *http.Client) []string {
	t.Helper()
	var ids []string
	for _, q := range b.views(t, c) {
		ids = append(ids, q.RequestID)
	}
	return ids
}

func TestOIDCSignInMapsGroupsToTeamsAndAnswersCarryTheGroups(t *testing.T) {
	b := startOIDCBot(t, "")
	c := browser(t)
	res, body := b.signIn(t, c, "alice", "alice-pw")
	if res.StatusCode != http.StatusOK || res.Request.URL.Path != oidcCallbackPath || !strings.Contains(body, "Signed in") {
		t.Fatalf("sign-in ended at %s with %s: %.300s", res.Request.URL, res.Status, body)
	}
	status, s := b.session(t, c)
	if status != http.StatusOK {
		t.Fatalf("GET /api/session after the sign-in: %d", status)
	}
	if s.Approver != "alice@example.com" || s.Display != "Alice Ops" {
		t.Errorf("signed in as %q (%q), want the email claim and the name claim", s.Approver, s.Display)
	}
	if got := b.questions(t, c); !slices.Equal(got, []string{"q-sre"}) {
		t.Errorf("alice (okta-sre) sees %v, want only the sre team's question", got)
	}

	// An answer states the mapped groups (not "everyone", which maps to
	// no team) for the brokers to check against the policy.
	csrf := s.CSRFToken
	if res := postJSON(t, c, b.url+"/api/respond", csrf, `{"request_id":"q-sre","action":"approve","digest":"`+b.digest(t, c, "q-sre")+`"}`); res.StatusCode != http.StatusOK {
		t.Fatalf("approve: %s", res.Status)
	}
	a := b.resp.lastAnswer(t)
	if a.Approver != "alice@example.com" || a.Identity == nil || !slices.Equal(a.Identity.Groups, []string{"okta-sre"}) ||
		!slices.Equal(a.Identity.Teams, []string{"sre"}) {
		t.Errorf("answer = approver %q identity %+v, want alice@example.com with groups [okta-sre], teams [sre]", a.Approver, a.Identity)
	}

	// Another team's question is as unknown to her as one never asked.
	if res := postJSON(t, c, b.url+"/api/respond", csrf, `{"request_id":"q-pay","action":"approve"}`); res.StatusCode != http.StatusNotFound {
		t.Errorf("alice answering the payments team's question: %s, want 404", res.Status)
	}

	// The provider's sign-in is the proof a first security key needs
	// (TestTheFirstKeyNeedsMoreThanAPassword): no enrollment code.
	if got := firstKeyOf(t, b.server, c); got != "" {
		t.Errorf("first_key after an OIDC sign-in = %q, want none", got)
	}
	if res := postJSON(t, c, b.url+"/api/webauthn/register/begin", csrf, `{}`); res.StatusCode != http.StatusOK {
		t.Errorf("a first key after an OIDC sign-in: %s, want 200", res.Status)
	}

	p := browser(t)
	b.signIn(t, p, "paul", "paul-pw")
	if got := b.questions(t, p); !slices.Equal(got, []string{"q-pay"}) {
		t.Errorf("paul (payments-oncall) sees %v, want only the payments team's question", got)
	}
}

func TestOIDCSignInOfSomeoneInNoMappedGroupIsRefused(t *testing.T) {
	b := startOIDCBot(t, "")
	c := browser(t)
	res, body := b.signIn(t, c, "nina", "nina-pw")
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "none of your groups answers a team here") {
		t.Fatalf("nina (no mapped group): %s: %.400s", res.Status, body)
	}
	if status, _ := b.session(t, c); status != http.StatusUnauthorized {
		t.Errorf("GET /api/session after a refused sign-in: %d, want 401", status)
	}
}

func TestOIDCTamperedIDTokenIsRefused(t *testing.T) {
	b := startOIDCBot(t, "")
	b.provider.tamper.Store(true)
	c := browser(t)
	res, body := b.signIn(t, c, "alice", "alice-pw")
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "does not verify") {
		t.Fatalf("a sign-in with a tampered ID token: %s: %.400s", res.Status, body)
	}
	if status, _ := b.session(t, c); status != http.StatusUnauthorized {
		t.Errorf("GET /api/session after a tampered token: %d, want 401", status)
	}
	// The same sign-in with the token as the provider signed it works:
	// the refusal was the tampering's.
	b.provider.tamper.Store(false)
	if res, body := b.signIn(t, c, "alice", "alice-pw"); res.StatusCode != http.StatusOK {
		t.Fatalf("an untampered sign-in: %s: %.300s", res.Status, body)
	}
}

func TestOIDCCallbackOnlySignsInTheBrowserThatStartedIt(t *testing.T) {
	b := startOIDCBot(t, "")
	victim := browser(t)
	attacker := browser(t)
	// The attacker signs in at the provider but stops before the bot's
	// callback, and hands the callback address to the victim.
	id := b.toProviderLogin(t, attacker)
	attacker.CheckRedirect = func(req *http.Request, _ []*http.Request) error {
		if req.URL.Path == oidcCallbackPath {
			return http.ErrUseLastResponse
		}
		return nil
	}
	res, err := attacker.PostForm(b.provider.url+"/login/username", url.Values{"id": {id}, "username": {"alice"}, "password": {"alice-pw"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	callback := res.Header.Get("Location")
	if !strings.Contains(callback, oidcCallbackPath) || !strings.Contains(callback, "state=") {
		t.Fatalf("the provider's redirect %q is not the bot's callback", callback)
	}
	res, body := get(t, victim, callback)
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "started in another browser") {
		t.Fatalf("the victim following the attacker's callback: %s: %.300s", res.Status, body)
	}
	if status, _ := b.session(t, victim); status != http.StatusUnauthorized {
		t.Errorf("the victim is signed in (%d) through someone else's callback", status)
	}
	// The state is used up: the attacker cannot use it either now.
	attacker.CheckRedirect = nil
	if res, body := get(t, attacker, callback); res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "expired or was already used") {
		t.Errorf("the callback used a second time: %s: %.300s", res.Status, body)
	}
}

func TestOIDCSessionEndsAtTheIDTokenExpiryOrTheMaximum(t *testing.T) {
	t.Run("the ID token's expiry", func(t *testing.T) {
		b := startOIDCBot(t, "")
		c := browser(t)
		b.signIn(t, c, "alice", "alice-pw")
		status, s := b.session(t, c)
		if status != http.StatusOK {
			t.Fatalf("session: %d", status)
		}
		// The provider's ID tokens live an hour; the default maximum is
		// 12 h: the token's expiry wins.
		if d := s.ExpiresAt.Sub(b.clock.Now()); d <= 50*time.Minute || d > time.Hour+time.Minute {
			t.Errorf("the session ends in %s, want the ID token's hour", d)
		}
		b.clock.Advance(time.Hour + time.Second)
		if status, _ := b.session(t, c); status != http.StatusUnauthorized {
			t.Errorf("GET /api/session after the ID token expired: %d, want 401", status)
		}
	})
	t.Run("web.oidc.max_session", func(t *testing.T) {
		b := startOIDCBot(t, "    max_session: 20m\n")
		c := browser(t)
		b.signIn(t, c, "alice", "alice-pw")
		_, s := b.session(t, c)
		if d := s.ExpiresAt.Sub(b.clock.Now()); d != 20*time.Minute {
			t.Errorf("the session ends in %s, want max_session's 20m", d)
		}
		b.clock.Advance(20 * time.Minute)
		if status, _ := b.session(t, c); status != http.StatusUnauthorized {
			t.Errorf("GET /api/session at max_session: %d, want 401", status)
		}
	})
}

func TestOIDCLogoutEndsTheLocalAndTheProviderSession(t *testing.T) {
	b := startOIDCBot(t, "")
	c := browser(t)
	b.signIn(t, c, "alice", "alice-pw")
	_, s := b.session(t, c)
	req, _ := http.NewRequest("POST", b.url+"/logout", nil)
	req.Header.Set("X-CSRF-Token", s.CSRFToken)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		EndSessionURL string `json:"end_session_url"`
	}
	_ = json.NewDecoder(res.Body).Decode(&out)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(out.EndSessionURL, b.provider.url+"/end_session?") {
		t.Fatalf("logout: %s, end_session_url %q, want the provider's end_session endpoint", res.Status, out.EndSessionURL)
	}
	if status, _ := b.session(t, c); status != http.StatusUnauthorized {
		t.Errorf("GET /api/session after logout: %d, want 401", status)
	}
	// The provider accepts the hint and sends the browser back to the
	// bot's sign-in page.
	res, body := get(t, c, out.EndSessionURL)
	if res.StatusCode != http.StatusOK || res.Request.URL.String() != b.url+"/login" || !strings.Contains(body, "Sign in with Test IdP") {
		t.Errorf("the provider's logout ended at %s (%s): %.300s", res.Request.URL, res.Status, body)
	}
}

func TestOIDCAndPasswordsShareTheSignInPage(t *testing.T) {
	b := startOIDCBot(t, "")
	c := browser(t)
	_, body := get(t, c, b.url+"/login")
	if !strings.Contains(body, "Sign in with Test IdP") || !strings.Contains(body, `name="password"`) {
		t.Errorf("the sign-in page lacks the provider's button or the password form: %.600s", body)
	}
	// A local password still signs its approver in.
	pc, _ := b.login(t, "alice", alicePassword)
	if got := b.questions(t, pc); !slices.Equal(got, []string{"q-sre", "q-pay", "q-def"}) {
		t.Errorf("alice by password (no approver teams) sees %v, want every team's", got)
	}
	// By password, her first key needs her enrollment code, although the
	// provider is configured.
	if got := firstKeyOf(t, b.server, pc); got != "code" {
		t.Errorf("first_key after a password sign-in = %q, want code", got)
	}
}

// postJSON posts body as JSON with the session's CSRF token and returns
// the response, its body read and closed.
func postJSON(t *testing.T, c *http.Client, url, csrf, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-CSRF-Token", csrf)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res
}

// startServerOn is startServer on a listener reserved beforehand.
func startServerOn(t *testing.T, ln net.Listener, cfg *approverbot.Config, o Options, resp *fakeResponder) *server {
	t.Helper()
	s := startServer(t, cfg, o, resp)
	// Serve the same channel on the reserved address too.
	mux := http.NewServeMux()
	s.ch.Register(mux)
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	s.srv = srv
	return s
}

func TestWithOIDCOnlyEveryPasswordIsRefused(t *testing.T) {
	cfg, err := approverbot.ParseConfig([]byte(`
teams: [sre]
approvers:
  erin: { display: Erin }
web:
  insecure_cookies: true
  oidc:
    issuer: https://idp.example.com
    client_id: signoff
    redirect_url: https://signoff.example.com/login/oidc/callback
    teams: { sre: [okta-sre] }
`), "oidc-only.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := startServer(t, cfg, Options{}, nil)
	c := s.client(t)
	_, body := get(t, c, s.srv.URL+"/login")
	if strings.Contains(body, `name="password"`) || !strings.Contains(body, "Sign in with idp.example.com") {
		t.Errorf("the OIDC-only sign-in page: %.600s", body)
	}
	res := s.do(t, c, "POST", "/login", `{"approver":"erin","password":"anything"}`,
		"Content-Type", "application/json", "Accept", "application/json")
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("a password sign-in with OIDC only: %s, want 401", res.Status)
	}
}

// A sign-in that reused the provider's older session (its auth_time is
// more than 10 minutes old: a borrowed laptop still signed in there) is a
// fresh session here but no fresh authentication: the first key needs
// the code, or a sign-in that makes the provider ask again (reauth=1,
// prompt=login and max_age=0 in the authorization request).
func TestOIDCFirstKeyNeedsAFreshAuthenticationAtTheProvider(t *testing.T) {
	b := startOIDCBot(t, "")
	// The bot's clock runs 11 minutes ahead of the provider's: the
	// provider's auth_time is 11 minutes old when the bot reads it.
	b.clock.Advance(enrollFreshness + time.Minute)
	c := browser(t)
	b.signIn(t, c, "alice", "alice-pw")
	status, s := b.session(t, c)
	if status != http.StatusOK {
		t.Fatalf("GET /api/session after the sign-in: %d", status)
	}
	if got := firstKeyOf(t, b.server, c); got != "unavailable" {
		t.Errorf("first_key after a sign-in with an old authentication = %q, want unavailable (no code issued)", got)
	}
	res := postJSON(t, c, b.url+"/api/webauthn/register/begin", s.CSRFToken, `{}`)
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("a first key on an old authentication: %s, want 403", res.Status)
	}
	// The way out asks the provider to authenticate again.
	nc := &http.Client{Jar: c.Jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r, err := nc.Get(b.url + oidcStartPath + "?reauth=1")
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	u, err := url.Parse(r.Header.Get("Location"))
	if err != nil || u.Query().Get("prompt") != "login" || u.Query().Get("max_age") != "0" {
		t.Errorf("reauth=1 sends the browser to %q, want prompt=login and max_age=0", r.Header.Get("Location"))
	}
}

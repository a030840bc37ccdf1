package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/signoff-dev/signoff/pkg/messages"
)

const (
	// oidcStartPath begins a sign-in with the provider; oidcCallbackPath
	// is where the provider sends the browser back.
	oidcStartPath    = "/login/oidc"
	oidcCallbackPath = "/login/oidc/callback"
	// oidcCookie binds a sign-in in flight to the browser that began it,
	// so a callback URL made for one browser signs no other in (login
	// CSRF). SameSite=Lax: it must come back on the provider's redirect, a
	// cross-site top-level navigation.
	oidcCookie = "signoff_oidc"
	// oidcFlowTTL bounds a sign-in in flight (the time at the provider's
	// login page).
	oidcFlowTTL = 10 * time.Minute
	// maxOIDCFlows bounds the sign-ins in flight, so that starting them in
	// a loop cannot grow memory without end.
	maxOIDCFlows = 10000
)

// oidcFlow is one sign-in in flight, by its state.
type oidcFlow struct {
	nonce    string
	verifier string // PKCE code verifier
	binding  string // the oidcCookie value of the browser that began it
	next     string
	expires  time.Time
}

// oidcLogin signs people in with an OpenID Connect provider. Safe for
// concurrent use.
type oidcLogin struct {
	cfg OIDCConfig
	now func() time.Time

	mu       sync.Mutex
	provider *oidc.Provider // nil until discovery succeeds
	endpoint string         // end_session_endpoint ("" when the provider has none)
	flows    map[string]*oidcFlow
}

func newOIDCLogin(cfg OIDCConfig, now func() time.Time) *oidcLogin {
	return &oidcLogin{cfg: cfg, now: now, flows: map[string]*oidcFlow{}}
}

// discover reads the provider's discovery document, once it has been read
// successfully; a provider that is down when the bot starts is retried at
// the next sign-in.
func (o *oidcLogin) discover(ctx context.Context) (*oidc.Provider, error) {
	o.mu.Lock()
	p := o.provider
	o.mu.Unlock()
	if p != nil {
		return p, nil
	}
	p, err := oidc.NewProvider(ctx, o.cfg.Issuer)
	if err != nil {
		return nil, fmt.Errorf("OIDC discovery at %s: %w", o.cfg.Issuer, err)
	}
	var meta struct {
		EndSession string `json:"end_session_endpoint"`
	}
	if err := p.Claims(&meta); err != nil {
		return nil, fmt.Errorf("OIDC discovery at %s: %w", o.cfg.Issuer, err)
	}
	o.mu.Lock()
	o.provider, o.endpoint = p, meta.EndSession
	o.mu.Unlock()
	return p, nil
}

func (o *oidcLogin) oauth2(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: o.cfg.ClientID, ClientSecret: o.cfg.secret, Endpoint: p.Endpoint(),
		RedirectURL: o.cfg.RedirectURL, Scopes: o.cfg.Scopes}
}

// begin records a new flow and returns its state.
func (o *oidcLogin) begin(f *oidcFlow) (string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	if len(o.flows) >= maxOIDCFlows {
		for s, fl := range o.flows {
			if !now.Before(fl.expires) {
				delete(o.flows, s)
			}
		}
		if len(o.flows) >= maxOIDCFlows {
			return "", errors.New("too many sign-ins in progress; try again in a few minutes")
		}
	}
	state := randomToken()
	f.expires = now.Add(oidcFlowTTL)
	o.flows[state] = f
	return state, nil
}

// take removes and returns the live flow of state: each is used once.
func (o *oidcLogin) take(state string) (*oidcFlow, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	f, ok := o.flows[state]
	if !ok {
		return nil, false
	}
	delete(o.flows, state)
	return f, o.now().Before(f.expires)
}

// handleOIDCStart serves GET /login/oidc: it sends the browser to the
// provider with a fresh state, nonce and PKCE challenge.
func (c *Channel) handleOIDCStart(w http.ResponseWriter, r *http.Request) {
	if c.oidc == nil {
		writeError(w, http.StatusNotFound, "not_found", "OIDC sign-in is off (web.oidc)")
		return
	}
	next, _ := safeNext(r.URL.Query().Get("next"))
	p, err := c.oidc.discover(r.Context())
	if err != nil {
		c.log.Error("web: OIDC sign-in unavailable", "err", err)
		c.renderLogin(w, http.StatusBadGateway, c.loginData("the identity provider cannot be reached; try again shortly", next))
		return
	}
	f := &oidcFlow{nonce: randomToken(), verifier: oauth2.GenerateVerifier(), binding: randomToken(), next: next}
	state, err := c.oidc.begin(f)
	if err != nil {
		c.renderLogin(w, http.StatusServiceUnavailable, c.loginData(err.Error(), next))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: f.binding, Path: oidcStartPath, MaxAge: int(oidcFlowTTL / time.Second),
		HttpOnly: true, Secure: !c.web.InsecureCookies, SameSite: http.SameSiteLaxMode})
	opts := []oauth2.AuthCodeOption{oidc.Nonce(f.nonce), oauth2.S256ChallengeOption(f.verifier)}
	if r.URL.Query().Get("reauth") == "1" {
		// Adding a first security key needs a fresh authentication at the
		// provider (firstkey.go): ask it to authenticate the person again
		// rather than reuse its session.
		opts = append(opts, oauth2.SetAuthURLParam("prompt", "login"), oauth2.SetAuthURLParam("max_age", "0"))
	}
	u := c.oidc.oauth2(p).AuthCodeURL(state, opts...)
	http.Redirect(w, r, u, http.StatusFound)
}

// signInError is a refused OIDC sign-in: what the person is told, and
// who the provider said they were when it got that far.
type signInError struct {
	msg     string
	subject string
}

func (e *signInError) Error() string { return e.msg }

// handleOIDCCallback serves GET /login/oidc/callback: it checks the state
// against the browser's flow, redeems the code with the PKCE verifier,
// verifies the ID token (signature by the provider's keys, issuer,
// audience, expiry) and its nonce, and starts a session bound to the ID
// token's expiry.
func (c *Channel) handleOIDCCallback(w http.ResponseWriter, r *http.Request) {
	if c.oidc == nil {
		writeError(w, http.StatusNotFound, "not_found", "OIDC sign-in is off (web.oidc)")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: oidcCookie, Value: "", Path: oidcStartPath, MaxAge: -1, HttpOnly: true,
		Secure: !c.web.InsecureCookies, SameSite: http.SameSiteLaxMode})
	s, f, err := c.oidcSignIn(r)
	if err != nil {
		var se *signInError
		msg := "sign-in failed"
		if errors.As(err, &se) {
			msg = se.msg
		}
		subject := ""
		if se != nil {
			subject = se.subject
		}
		c.recordPerson(r, messages.PersonSignInFailed, subject, "oidc", err.Error())
		c.renderLogin(w, http.StatusUnauthorized, c.loginData(msg, "/"))
		return
	}
	if ck, err := r.Cookie(cookieName); err == nil {
		c.sessions.delete(ck.Value)
		c.hub.dropSession(ck.Value)
	}
	c.setCookie(w, s)
	c.recordPerson(r, messages.PersonSignIn, s.approver, "oidc", "teams "+strings.Join(s.oidc.teams, ", "))
	// The session cookie is SameSite=Strict and this response ends a
	// redirect chain that began at the provider (another site): a
	// redirect would still be cross-site and arrive without it. A page
	// that moves on by itself starts a same-site navigation.
	c.render(w, http.StatusOK, "signedin.html", struct{ Next string }{f.next})
}

// oidcSignIn carries out the callback's checks and returns the new
// session.
func (c *Channel) oidcSignIn(r *http.Request) (*session, *oidcFlow, error) {
	q := r.URL.Query()
	f, ok := c.oidc.take(q.Get("state"))
	if !ok {
		return nil, nil, &signInError{msg: "this sign-in expired or was already used: start again"}
	}
	ck, err := r.Cookie(oidcCookie)
	if err != nil || subtle.ConstantTimeCompare([]byte(ck.Value), []byte(f.binding)) != 1 {
		return nil, nil, &signInError{msg: "this sign-in was started in another browser: start again here"}
	}
	if e := q.Get("error"); e != "" {
		return nil, nil, &signInError{msg: "the identity provider refused the sign-in: " + cleanLine(e+" "+q.Get("error_description"), 200)}
	}
	p, err := c.oidc.discover(r.Context())
	if err != nil {
		return nil, nil, err
	}
	tok, err := c.oidc.oauth2(p).Exchange(r.Context(), q.Get("code"), oauth2.VerifierOption(f.verifier))
	if err != nil {
		return nil, nil, &signInError{msg: "the identity provider did not accept the sign-in's code: start again",
			subject: ""}
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, nil, &signInError{msg: "the identity provider sent no ID token"}
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: c.oidc.cfg.ClientID, Now: c.now}).Verify(r.Context(), raw)
	if err != nil {
		return nil, nil, &signInError{msg: "the ID token does not verify: " + err.Error()}
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), []byte(f.nonce)) != 1 {
		return nil, nil, &signInError{msg: "the ID token's nonce is not this sign-in's", subject: idt.Subject}
	}
	s, err := c.oidcSession(idt, raw)
	return s, f, err
}

// oidcSession maps a verified ID token to a session: the approver id, the
// display name, the groups and the teams they give.
func (c *Channel) oidcSession(idt *oidc.IDToken, raw string) (*session, error) {
	var claims map[string]any
	if err := idt.Claims(&claims); err != nil {
		return nil, &signInError{msg: "the ID token's claims cannot be read", subject: idt.Subject}
	}
	cfg := &c.oidc.cfg
	id, _ := claims[cfg.IDClaim].(string)
	if err := checkApproverID(cfg.IDClaim, id); err != nil {
		return nil, &signInError{msg: err.Error(), subject: idt.Subject}
	}
	if cfg.IDClaim == "email" && claims["email_verified"] != true {
		return nil, &signInError{msg: "the identity provider has not verified your email address " + id, subject: id}
	}
	display, _ := claims[cfg.DisplayClaim].(string)
	if checkDisplay(display) != nil {
		display = ""
	}
	groups := claimStrings(claims[cfg.GroupsClaim])
	ident := &oidcIdentity{idToken: raw, authTime: claimTime(claims["auth_time"])}
	mapped := cfg.mappedGroups()
	for _, g := range groups {
		if mapped[g] && !slices.Contains(ident.groups, g) {
			ident.groups = append(ident.groups, g)
		}
	}
	sort.Strings(ident.groups)
	if len(ident.groups) > messages.MaxApproverGroups {
		ident.groups = ident.groups[:messages.MaxApproverGroups]
	}
	for _, team := range c.cfg.Teams {
		byGroup := slices.ContainsFunc(cfg.Teams[team], func(g string) bool { return slices.Contains(ident.groups, g) })
		if byGroup || c.cfg.Sees(id, team) {
			ident.teams = append(ident.teams, team)
		}
	}
	if len(ident.teams) == 0 {
		return nil, &signInError{msg: "signed in as " + id + ", but none of your groups answers a team here (web.oidc.teams)", subject: id}
	}
	expires := c.now().Add(cfg.MaxSession)
	if idt.Expiry.Before(expires) {
		expires = idt.Expiry
	}
	if !c.now().Before(expires) {
		return nil, &signInError{msg: "the ID token has expired: start again", subject: id}
	}
	return c.sessions.createOIDC(id, displayName(id, display), ident, expires), nil
}

// claimTime reads a NumericDate claim (seconds since the epoch); zero when
// absent or not a number.
func claimTime(v any) time.Time {
	f, ok := v.(float64)
	if !ok || f <= 0 {
		return time.Time{}
	}
	return time.Unix(int64(f), 0)
}

// checkApproverID checks a claim taken as an approver id by the bounds
// the brokers apply to messages.Approver.ID.
func checkApproverID(claim, id string) error {
	switch {
	case id == "":
		return fmt.Errorf("the ID token has no %s claim (web.oidc.id_claim) to take as your approver id", claim)
	case len(id) > messages.MaxIDBytes || strings.ContainsFunc(id, isControl) || strings.TrimSpace(id) != id:
		return fmt.Errorf("the ID token's %s claim cannot be an approver id (at most %d bytes, no control characters or outer spaces)",
			claim, messages.MaxIDBytes)
	}
	return nil
}

func checkDisplay(s string) error {
	if len(s) > messages.MaxDisplayBytes || strings.ContainsFunc(s, isControl) {
		return errors.New("display name too long or with control characters")
	}
	return nil
}

// claimStrings reads a groups claim: a list of strings or one string.
func claimStrings(v any) []string {
	switch t := v.(type) {
	case string:
		return []string{t}
	case []any:
		out := make([]string, 0, len(t))
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// endSessionURL is where the browser goes to end the provider's session
// after ours ended: "" when the provider offers no end_session_endpoint.
func (o *oidcLogin) endSessionURL(idToken string) string {
	o.mu.Lock()
	endpoint := o.endpoint
	o.mu.Unlock()
	if endpoint == "" || idToken == "" {
		return ""
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return ""
	}
	q := u.Query()
	q.Set("id_token_hint", idToken)
	q.Set("client_id", o.cfg.ClientID)
	q.Set("post_logout_redirect_uri", o.cfg.PostLogoutRedirectURL)
	u.RawQuery = q.Encode()
	return u.String()
}

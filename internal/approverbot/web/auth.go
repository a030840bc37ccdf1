package web

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"mime"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/messages"
)

const (
	// cookieName is the session cookie.
	cookieName = "signoff_session"
	// csrfHeader carries the session's CSRF token on state-changing
	// requests.
	csrfHeader = "X-CSRF-Token"
	// Bounds of the login form; longer values cannot be right.
	maxApproverID  = 256
	maxPassword    = 1024
	maxLoginBody   = 8 << 10
	maxRespondBody = 64 << 10
	// maxNext bounds the sign-in's next parameter (the page and a
	// question's fragment).
	maxNext = 2048
)

// principal is who a request comes from.
type principal struct {
	approver string
	display  string
	// sess is the request's session; nil for a request authenticated by the
	// trusted header alone (it may read, but not change anything).
	sess *session
}

// sees reports whether p may see and answer q here: for one of the teams q
// was announced to, the teams p may use on this bot (a person signed in
// with OIDC by the teams their groups gave, anyone else by the bot's
// approvers config) must include it, and the policy must admit p among
// that team's answerers, as the brokers state them on each copy (a copy
// from a broker that does not: the bot's config alone).
func (c *Channel) sees(p principal, q approverbot.Question) bool {
	if p.sess != nil && p.sess.oidc != nil {
		o := p.sess.oidc
		return q.Admits(func(team string) bool { return slices.Contains(o.teams, team) }, p.approver, o.groups)
	}
	return c.cfg.Admits(p.approver, q)
}

// identity is what an answer of p carries about them beyond their id: nil
// unless they signed in with OIDC.
func (p principal) identity() *approverbot.Identity {
	if p.sess == nil || p.sess.oidc == nil {
		return nil
	}
	return &approverbot.Identity{Display: p.display, Teams: p.sess.oidc.teams, Groups: p.sess.oidc.groups}
}

// principal authenticates r: by its session cookie, or with a trusted
// header by that header (a cookie session then counts only when it belongs
// to the same approver).
func (c *Channel) principal(r *http.Request) (principal, bool) {
	var sess *session
	if ck, err := r.Cookie(cookieName); err == nil {
		sess, _ = c.sessions.get(ck.Value)
	}
	if h := c.web.TrustedHeader; h != "" {
		id := r.Header.Get(h)
		a, ok := c.cfg.Approvers[id]
		if id == "" || !ok {
			return principal{}, false
		}
		if sess != nil && sess.approver != id {
			sess = nil
		}
		return principal{approver: id, display: displayName(id, a.Display), sess: sess}, true
	}
	if sess == nil {
		return principal{}, false
	}
	return principal{approver: sess.approver, display: sess.display, sess: sess}, true
}

func displayName(id, display string) string {
	if display != "" {
		return display
	}
	return id
}

// ensureSession gives a proxy-authenticated principal a session (and so a
// CSRF token), setting its cookie.
func (c *Channel) ensureSession(w http.ResponseWriter, p *principal) *session {
	if p.sess == nil {
		p.sess = c.sessions.create(p.approver, p.display)
		c.setCookie(w, p.sess)
	}
	return p.sess
}

func (c *Channel) setCookie(w http.ResponseWriter, s *session) {
	http.SetCookie(w, &http.Cookie{
		Name:     cookieName,
		Value:    s.id,
		Path:     "/",
		Expires:  s.expires,
		MaxAge:   int(s.expires.Sub(c.now()) / time.Second),
		HttpOnly: true,
		Secure:   !c.web.InsecureCookies,
		SameSite: http.SameSiteStrictMode,
	})
}

func (c *Channel) clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		Secure: !c.web.InsecureCookies, SameSite: http.SameSiteStrictMode})
}

// checkOrigin refuses a state-changing request from another origin: by
// Sec-Fetch-Site or Origin (net/http's CrossOriginProtection), and when a
// client sent neither, by Referer. Requests with none of them (curl) pass;
// they need the CSRF token all the same.
func (c *Channel) checkOrigin(r *http.Request) error {
	if err := c.cop.Check(r); err != nil {
		return err
	}
	if r.Header.Get("Sec-Fetch-Site") != "" || r.Header.Get("Origin") != "" {
		return nil
	}
	ref := r.Header.Get("Referer")
	if ref == "" {
		return nil
	}
	u, err := url.Parse(ref)
	if err != nil || !strings.EqualFold(u.Host, r.Host) {
		return errors.New("cross-origin request detected from Referer header")
	}
	return nil
}

// validCSRF reports whether r carries p's CSRF token.
func validCSRF(p principal, r *http.Request) bool {
	if p.sess == nil {
		return false
	}
	got := r.Header.Get(csrfHeader)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(p.sess.csrf)) == 1
}

// mutating guards a state-changing endpoint: same origin, signed in, CSRF
// token, and for JSON endpoints a JSON body.
func (c *Channel) mutating(jsonBody bool, h func(http.ResponseWriter, *http.Request, principal)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := c.checkOrigin(r); err != nil {
			writeError(w, http.StatusForbidden, "cross_origin", "refused: this request comes from another site")
			return
		}
		p, ok := c.principal(r)
		if !ok {
			c.unauthorized(w, r)
			return
		}
		if !validCSRF(p, r) {
			writeError(w, http.StatusForbidden, "csrf",
				"missing or wrong "+csrfHeader+" header: use the csrf_token of POST /login or GET /api/session")
			return
		}
		if jsonBody && !hasMediaType(r, "application/json") {
			writeError(w, http.StatusUnsupportedMediaType, "unsupported_media_type", "send Content-Type: application/json")
			return
		}
		h(w, r, p)
	}
}

// unauthorized answers a request that is not signed in.
func (c *Channel) unauthorized(w http.ResponseWriter, _ *http.Request) {
	msg := "sign in first: POST /login"
	if c.web.TrustedHeader != "" {
		msg = "sign in through the authenticating proxy (no valid " + c.web.TrustedHeader + " header)"
	}
	writeError(w, http.StatusUnauthorized, "unauthenticated", msg)
}

func hasMediaType(r *http.Request, want string) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == want
}

// wantsJSON reports whether the client asked for a JSON reply.
func wantsJSON(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "application/json") || hasMediaType(r, "application/json")
}

// loginReply is POST /login's JSON reply (and GET /api/session's).
type loginReply struct {
	Approver  string    `json:"approver"`
	Display   string    `json:"display"`
	CSRFToken string    `json:"csrf_token"`
	ExpiresAt time.Time `json:"expires_at"`
	Teams     []string  `json:"teams"`
}

func (c *Channel) loginReply(s *session) loginReply {
	return loginReply{Approver: s.approver, Display: s.display, CSRFToken: s.csrf, ExpiresAt: s.expires,
		Teams: c.cfg.Teams}
}

// handleLoginPage serves GET /login.
func (c *Channel) handleLoginPage(w http.ResponseWriter, r *http.Request) {
	next, _ := safeNext(r.URL.Query().Get("next"))
	if _, ok := c.principal(r); ok {
		redirectNext(w, next)
		return
	}
	status := http.StatusOK
	if c.web.TrustedHeader != "" {
		status = http.StatusUnauthorized
	}
	c.renderLogin(w, status, loginData{Proxy: c.web.TrustedHeader, Next: next})
}

// safeNext checks where a sign-in may lead: the page itself, "/",
// optionally with a fragment (the page's JS puts a pager link's #q-<id>
// there, which never reaches the server otherwise). Anything else — an
// absolute or scheme-relative URL ("https://evil.example", "//evil.example",
// "/\evil.example"), another path, a query, control characters — is
// refused, so the sign-in can never become an open redirect. It returns the
// normalised target ("/" when s is empty or refused) and whether s was
// acceptable.
func safeNext(s string) (string, bool) {
	if s == "" {
		return "/", true
	}
	if len(s) > maxNext || s[0] != '/' || strings.HasPrefix(s, "//") {
		return "/", false
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || r == '\\' {
			return "/", false
		}
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" ||
		u.Path != "/" || u.RawPath != "" || u.RawQuery != "" || u.ForceQuery {
		return "/", false
	}
	if u.Fragment == "" {
		return "/", true
	}
	return "/#" + u.EscapedFragment(), true
}

// redirectNext sends the browser to next, a target safeNext returned. The
// Location header is set as is: http.Redirect would clean the path, and a
// fragment holding "/" or ".." is not a path.
func redirectNext(w http.ResponseWriter, next string) {
	w.Header().Set("Location", next)
	w.WriteHeader(http.StatusSeeOther)
}

// handleLogin serves POST /login: a form or JSON {approver, password}. With
// a trusted header it only hands a proxy-authenticated client its session.
func (c *Channel) handleLogin(w http.ResponseWriter, r *http.Request) {
	jsonReply := wantsJSON(r)
	// next (a form field) is where a form sign-in leads; a refused one
	// leads to the page, and is logged: a link that carries one was made
	// to send someone elsewhere.
	next := "/"
	if hasMediaType(r, "application/x-www-form-urlencoded") {
		r.Body = http.MaxBytesReader(w, r.Body, maxLoginBody)
		if err := r.ParseForm(); err != nil {
			msg := "unreadable form: " + err.Error()
			if jsonReply {
				writeError(w, http.StatusBadRequest, "invalid_request", msg)
			} else {
				c.renderLogin(w, http.StatusBadRequest, loginData{Error: msg, Proxy: c.web.TrustedHeader})
			}
			return
		}
		raw := r.PostForm.Get("next")
		var ok bool
		if next, ok = safeNext(raw); !ok {
			c.log.Warn("web: sign-in's next refused: not this page", "next", strconv.Quote(cleanLine(raw, 128)),
				"remote", remoteHost(r))
		}
	}
	fail := func(status int, code, msg string, id string) {
		if jsonReply {
			writeError(w, status, code, msg)
			return
		}
		c.renderLogin(w, status, loginData{Error: msg, Approver: id, Proxy: c.web.TrustedHeader, Next: next})
	}
	if err := c.checkOrigin(r); err != nil {
		fail(http.StatusForbidden, "cross_origin", "refused: this sign-in comes from another site", "")
		return
	}
	if c.web.TrustedHeader != "" {
		p, ok := c.principal(r)
		if !ok {
			fail(http.StatusUnauthorized, "unauthenticated",
				"this page signs you in through the authenticating proxy; password sign-in is off", "")
			return
		}
		s := c.ensureSession(w, &p)
		c.loggedIn(w, s, jsonReply, next)
		return
	}

	id, password, err := readCredentials(w, r)
	if err != nil {
		fail(http.StatusBadRequest, "invalid_request", err.Error(), "")
		return
	}
	addr := c.clientAddr(r)
	// Both budgets are taken before the (slow) password check and given
	// back when it succeeds: attempts sent at once cannot all pass a check
	// that only a recorded failure would close.
	if ok, wait := c.byAddr.take(addr); !ok {
		c.tooMany(w, wait, jsonReply, id, next)
		return
	}
	if wait, ok := c.byID.begin(id); !ok {
		c.byAddr.refund(addr)
		c.tooMany(w, wait, jsonReply, id, next)
		return
	}
	a, ok := c.checkPassword(id, password)
	c.byID.end(id, ok)
	if !ok {
		c.recordPerson(r, messages.PersonSignInFailed, id, "password", "wrong approver id or password")
		fail(http.StatusUnauthorized, "unauthenticated", "wrong approver id or password", id)
		return
	}
	c.byAddr.refund(addr)
	if ck, err := r.Cookie(cookieName); err == nil {
		// A new login never reuses a session id the browser already had.
		c.sessions.delete(ck.Value)
		c.hub.dropSession(ck.Value)
	}
	s := c.sessions.create(id, displayName(id, a))
	c.setCookie(w, s)
	c.recordPerson(r, messages.PersonSignIn, id, "password", "")
	c.loggedIn(w, s, jsonReply, next)
}

// loggedIn answers a successful sign-in: the JSON reply, or a redirect to
// next (checked by safeNext).
func (c *Channel) loggedIn(w http.ResponseWriter, s *session, jsonReply bool, next string) {
	if jsonReply {
		writeJSON(w, http.StatusOK, c.loginReply(s))
		return
	}
	redirectNext(w, next)
}

func (c *Channel) tooMany(w http.ResponseWriter, wait time.Duration, jsonReply bool, id, next string) {
	secs := int(wait.Round(time.Second)/time.Second) + 1
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	msg := "too many failed sign-ins; try again in " + strconv.Itoa(secs) + " s"
	if jsonReply {
		writeError(w, http.StatusTooManyRequests, "rate_limited", msg)
		return
	}
	c.renderLogin(w, http.StatusTooManyRequests, loginData{Error: msg, Approver: id, Next: next})
}

// checkPassword compares password with the approver's bcrypt hash. An
// unknown approver, or one without a password, is compared against a dummy
// hash, so the answer takes as long either way. It returns the approver's
// display name. With OIDC only (no approver has a password, no dummy
// hash), every password is refused.
func (c *Channel) checkPassword(id, password string) (string, bool) {
	if c.dummyHash == nil {
		return "", false
	}
	hash := c.dummyHash
	a, known := c.cfg.Approvers[id]
	if known && a.Key(KeyPasswordHash) != "" {
		hash = []byte(a.Key(KeyPasswordHash))
	} else {
		known = false
	}
	err := bcrypt.CompareHashAndPassword(hash, []byte(password))
	return a.Display, err == nil && known
}

// readCredentials reads {approver, password} from a form or JSON body.
func readCredentials(w http.ResponseWriter, r *http.Request) (id, password string, err error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxLoginBody)
	switch {
	case hasMediaType(r, "application/json"):
		var v struct {
			Approver string `json:"approver"`
			Password string `json:"password"`
		}
		dec := json.NewDecoder(r.Body)
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return "", "", errors.New("the body must be JSON {\"approver\": …, \"password\": …}: " + err.Error())
		}
		id, password = v.Approver, v.Password
	case hasMediaType(r, "application/x-www-form-urlencoded"):
		if err := r.ParseForm(); err != nil {
			return "", "", errors.New("unreadable form: " + err.Error())
		}
		id, password = r.PostForm.Get("approver"), r.PostForm.Get("password")
	default:
		return "", "", errors.New("send the form (application/x-www-form-urlencoded) or JSON (application/json)")
	}
	id = strings.TrimSpace(id)
	switch {
	case id == "" || password == "":
		return "", "", errors.New("approver id and password are required")
	case len(id) > maxApproverID:
		return "", "", errors.New("approver id too long")
	case len(password) > maxPassword:
		return "", "", errors.New("password too long")
	}
	return id, password, nil
}

// clientAddr is the address of the client behind r: the peer's, or, when
// the peer is one of web.trusted_proxies, the address that proxy reports in
// X-Forwarded-For (the rightmost one that is not itself a trusted proxy:
// everything left of it the client wrote).
func (c *Channel) clientAddr(r *http.Request) string {
	peer := remoteHost(r)
	if !c.web.trusts(peer) {
		return peer
	}
	var hops []string
	for _, h := range r.Header.Values("X-Forwarded-For") {
		for part := range strings.SplitSeq(h, ",") {
			if part = strings.TrimSpace(part); part != "" {
				hops = append(hops, part)
			}
		}
	}
	for i := len(hops) - 1; i >= 0; i-- {
		if net.ParseIP(hops[i]) == nil {
			// Not an address: what is left of it cannot be trusted.
			return peer
		}
		if !c.web.trusts(hops[i]) {
			return hops[i]
		}
	}
	return peer
}

// remoteHost is the peer's address without its port. Forwarding headers
// are not read here: they are the client's to forge (see clientAddr).
func remoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// handleLogout serves POST /logout: it ends the session. For a person
// signed in with OIDC whose provider offers an end_session_endpoint, the
// reply is 200 {"end_session_url": …}: the page sends the browser there to
// end the provider's session too (with the ID token as id_token_hint).
func (c *Channel) handleLogout(w http.ResponseWriter, r *http.Request, p principal) {
	c.sessions.delete(p.sess.id)
	c.hub.dropSession(p.sess.id)
	c.clearCookie(w)
	method := "password"
	if p.sess.oidc != nil {
		method = "oidc"
	}
	c.recordPerson(r, messages.PersonSignOut, p.approver, method, "")
	if p.sess.oidc != nil {
		if u := c.oidc.endSessionURL(p.sess.oidc.idToken); u != "" {
			writeJSON(w, http.StatusOK, struct {
				EndSessionURL string `json:"end_session_url"`
			}{u})
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleSession serves GET /api/session: who is signed in, and the CSRF
// token (a proxy-authenticated client gets its session here).
func (c *Channel) handleSession(w http.ResponseWriter, r *http.Request) {
	p, ok := c.principal(r)
	if !ok {
		c.unauthorized(w, r)
		return
	}
	writeJSON(w, http.StatusOK, c.loginReply(c.ensureSession(w, &p)))
}

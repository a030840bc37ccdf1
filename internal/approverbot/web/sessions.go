package web

import (
	"crypto/rand"
	"encoding/base64"
	"time"
)

// session is one signed-in browser (or API client).
type session struct {
	id       string
	approver string
	display  string
	// csrf is the token state-changing requests must echo in X-CSRF-Token.
	csrf    string
	expires time.Time
	// signedIn is when the person signed in: changing their authenticators
	// needs a recent sign-in (stepup.go, enrollFreshness).
	signedIn time.Time
	// oidc holds what an OIDC sign-in gave; nil for a password or proxy
	// session.
	oidc *oidcIdentity
}

// oidcIdentity is what an OIDC sign-in established about a session's
// person.
type oidcIdentity struct {
	// teams are the bot's teams whose questions they see and answer.
	teams []string
	// groups are the provider groups the bot vouches for (those its config
	// maps to a team).
	groups []string
	// idToken is the raw ID token: the id_token_hint of the provider's
	// logout.
	idToken string
	// authTime is when the provider last authenticated the person (the
	// ID token's auth_time; zero when it did not say): a first security
	// key needs it recent (firstkey.go).
	authTime time.Time
}

// sessions is the server-side session table. A session lives for a fixed
// time from its login (the TTL is not extended by use), so a stolen cookie
// is good for at most that long. Safe for concurrent use.
type sessions struct {
	ttl time.Duration
	now func() time.Time

	table[*session]
}

func newSessions(ttl time.Duration, now func() time.Time) *sessions {
	return &sessions{ttl: ttl, now: now, table: newTable[*session]()}
}

// create starts a session for approver.
func (s *sessions) create(approver, display string) *session {
	ss := &session{id: randomToken(), approver: approver, display: display, csrf: randomToken(),
		expires: s.now().Add(s.ttl), signedIn: s.now()}
	s.put(ss.id, ss)
	return ss
}

// createOIDC starts a session for a person an OIDC sign-in established,
// ending at expires (the ID token's expiry, bounded by the configured
// maximum).
func (s *sessions) createOIDC(approver, display string, id *oidcIdentity, expires time.Time) *session {
	ss := &session{id: randomToken(), approver: approver, display: display, csrf: randomToken(),
		expires: expires, oidc: id, signedIn: s.now()}
	s.put(ss.id, ss)
	return ss
}

// get returns the live session with id; an expired one is removed.
func (s *sessions) get(id string) (*session, bool) {
	if id == "" {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss, ok := s.m[id]
	if !ok {
		return nil, false
	}
	if !s.now().Before(ss.expires) {
		delete(s.m, id)
		return nil, false
	}
	return ss, true
}

// live reports whether the session with id still exists and has not
// expired.
func (s *sessions) live(id string) bool {
	_, ok := s.get(id)
	return ok
}

func (s *sessions) delete(id string) { s.remove(id) }

// sweep removes the expired sessions.
func (s *sessions) sweep() {
	now := s.now()
	s.removeIf(func(_ string, ss *session) bool { return !now.Before(ss.expires) })
}

// randomToken returns 32 random bytes, base64url-encoded. crypto/rand.Read
// never fails (it crashes the program on a broken system source instead).
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

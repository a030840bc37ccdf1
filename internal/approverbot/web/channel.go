package web

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Defaults of [Options] and of the web config.
const (
	DefaultHeartbeat      = 15 * time.Second
	DefaultResolvedLinger = 4 * time.Second
	// DefaultMoveGuard is Options.MoveGuard's default.
	DefaultMoveGuard  = 800 * time.Millisecond
	DefaultSessionTTL = 12 * time.Hour
)

// Sign-in limits. Per account, whatever the addresses: five failures are
// free, then each failure doubles the wait before the account's next
// attempt (1 s, 2 s, 4 s… at most a minute), so guessing is slow from any
// number of addresses while the account's owner is never more than a minute
// from signing in; a success or a quiet quarter of an hour clears it. Per
// client address (see trusted_proxies), thirty failures, then one every 2 s
// (an address that sprays approver ids). Only failures count: successful
// sign-ins never use up a budget.
const (
	loginFreeFailures  = 5
	loginDelayBase     = time.Second
	loginDelayMax      = time.Minute
	loginForget        = 15 * time.Minute
	loginBurstPerAddr  = 30
	loginRefillPerAddr = 2 * time.Second
)

// sweepInterval is how often expired sessions and idle rate-limit buckets
// are dropped.
const sweepInterval = time.Minute

// Options are the optional parts of a web channel.
type Options struct {
	// Logger receives the channel's logs (default slog.Default()).
	Logger *slog.Logger
	// Heartbeat is the interval of the event stream's heartbeat comment
	// (default 15 s).
	Heartbeat time.Duration
	// ResolvedLinger is how long a settled question's card stays on the
	// page, showing who decided and how, before it goes (default 4 s).
	ResolvedLinger time.Duration
	// MoveGuard is how long a control that decides what is sent (Approve,
	// Session, Always, an answer, an edit, an ask-user option) is not
	// taken after it moved or appeared under
	// the pointer: a card above that settles or is withdrawn moves the
	// cards below (default 800 ms; negative: no guard, for tests that
	// click at once).
	MoveGuard time.Duration
	// Now is the clock of sessions and rate limits (default time.Now).
	Now func() time.Time
}

// Channel is the web page channel. Create it with [New], register its
// routes on the bot's mux with [Channel.Register], and hand it to the bot,
// which runs it. Safe for concurrent use.
type Channel struct {
	cfg       *approverbot.Config
	web       Config
	log       *slog.Logger
	now       func() time.Time
	heartbeat time.Duration
	linger    time.Duration
	guard     time.Duration

	sessions    *sessions
	byID        *backoff   // failed sign-ins per approver id, from any address
	byAddr      *limiter   // failed sign-ins per client address
	grantsLimit *limiter   // grants requests per approver
	dummyHash   []byte     // compared against for unknown approvers; nil: password sign-in is off
	oidc        *oidcLogin // nil: OIDC sign-in is off
	hub         *hub
	cop         *http.CrossOriginProtection
	stepUp      *stepUp

	mu      sync.Mutex
	resp    approverbot.Responder
	running bool
}

var _ approverbot.HTTPChannel = (*Channel)(nil)

// New returns the web channel for cfg. It checks that someone can sign in:
// either cfg.Web.TrustedHeader is set, or at least one approver has a
// password hash; every password hash must be a bcrypt hash.
func New(cfg *approverbot.Config, o Options) (*Channel, error) {
	if cfg == nil {
		return nil, errors.New("web: config is required")
	}
	var wc Config
	if s, ok := approverbot.SectionOf[*Config](cfg, Name); ok {
		wc = *s
	}
	switch {
	case wc.SessionTTL < 0:
		return nil, fmt.Errorf("web.session_ttl: must be positive, got %s", wc.SessionTTL)
	case wc.SessionTTL == 0:
		wc.SessionTTL = DefaultSessionTTL
	}
	o.setDefaults()
	c := &Channel{
		cfg:         cfg,
		web:         wc,
		log:         o.Logger,
		now:         o.Now,
		heartbeat:   o.Heartbeat,
		linger:      o.ResolvedLinger,
		guard:       max(o.MoveGuard, 0),
		sessions:    newSessions(wc.SessionTTL, o.Now),
		byID:        newBackoff(loginFreeFailures, loginDelayBase, loginDelayMax, loginForget, o.Now),
		byAddr:      newLimiter(loginBurstPerAddr, loginRefillPerAddr, o.Now),
		grantsLimit: newLimiter(grantsBurst, grantsRefill, o.Now),
		hub:         newHub(),
		cop:         http.NewCrossOriginProtection(),
	}
	var err error
	if err := c.checkEnrollCodes(); err != nil {
		return nil, err
	}
	if c.stepUp, err = newStepUp(wc); err != nil {
		return nil, err
	}
	if wc.TrustedHeader != "" {
		if !validHeaderName(wc.TrustedHeader) {
			return nil, fmt.Errorf("web.trusted_header: %q is not a valid HTTP header name", wc.TrustedHeader)
		}
		if wc.OIDC != nil {
			return nil, errors.New("web: trusted_header and oidc exclude each other (the proxy signs people in, or the provider does)")
		}
		return c, nil
	}
	if wc.OIDC != nil {
		oc := *wc.OIDC
		if err := oc.check(cfg.Teams, wc.SessionTTL); err != nil {
			return nil, err
		}
		c.oidc = newOIDCLogin(oc, o.Now)
	}
	cost, err := c.passwordCost()
	if errors.Is(err, ErrNoLogin) && c.oidc != nil {
		return c, nil // OIDC only: password sign-in is off
	}
	if err != nil {
		return nil, err
	}
	// Unknown approvers are checked against a hash of the same cost as the
	// most expensive real one, so a failed login takes as long whether or
	// not the id exists.
	secret := make([]byte, 32)
	_, _ = rand.Read(secret)
	c.dummyHash, err = bcrypt.GenerateFromPassword(secret, cost)
	if err != nil {
		return nil, fmt.Errorf("web: dummy password hash: %w", err)
	}
	return c, nil
}

// setDefaults fills the options left zero.
func (o *Options) setDefaults() {
	o.Logger, o.Now = approverbot.DefaultLog(o.Logger, o.Now)
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultHeartbeat
	}
	if o.MoveGuard == 0 {
		o.MoveGuard = DefaultMoveGuard
	}
	if o.ResolvedLinger <= 0 {
		o.ResolvedLinger = DefaultResolvedLinger
	}
}

// passwordCost checks the approvers' password hashes and returns the
// highest bcrypt cost among them.
func (c *Channel) passwordCost() (int, error) {
	ids := make([]string, 0, len(c.cfg.Approvers))
	for id := range c.cfg.Approvers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	cost := 0
	for _, id := range ids {
		h := c.cfg.Approvers[id].Key(KeyPasswordHash)
		if h == "" {
			continue
		}
		n, err := bcrypt.Cost([]byte(h))
		if err != nil {
			return 0, fmt.Errorf("approvers.%s.password_hash: not a bcrypt hash (make one with `approver-bot hash-password`): %w", id, err)
		}
		cost = max(cost, n)
	}
	if cost == 0 {
		return 0, ErrNoLogin
	}
	return cost, nil
}

// validHeaderName reports whether s is an RFC 9110 field name.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", ch) >= 0:
		default:
			return false
		}
	}
	return true
}

// Name implements [approverbot.Channel].
func (c *Channel) Name() string { return Name }

// Name is the channel's name (Approver.Channel of its answers).
const Name = "web"

// Register implements [approverbot.HTTPChannel]: it adds the page, the API
// and the event stream to mux.
func (c *Channel) Register(mux *http.ServeMux) {
	routes := []struct {
		pattern string
		h       http.HandlerFunc
	}{
		{"GET /{$}", c.handlePage},
		{"GET /login", c.handleLoginPage},
		{"POST /login", c.handleLogin},
		{"GET " + oidcStartPath, c.handleOIDCStart},
		{"GET " + oidcCallbackPath, c.handleOIDCCallback},
		{"POST /logout", c.mutating(false, c.handleLogout)},
		{"GET /api/session", c.handleSession},
		{"GET /api/questions", c.handleQuestions},
		{"POST /api/respond", c.mutating(true, c.handleRespond)},
		{"GET /api/grants", c.handleGrants},
		{"POST /api/grants/revoke", c.mutating(true, c.handleRevoke)},
		{"GET /events", c.handleEvents},
		{"GET /api/webauthn/credentials", c.handleCredentials},
		{"POST /api/webauthn/register/begin", c.mutating(true, c.handleRegisterBegin)},
		{"POST /api/webauthn/register/finish", c.mutating(true, c.handleRegisterFinish)},
		{"POST /api/webauthn/credentials/remove", c.mutating(true, c.handleCredentialRemove)},
		{"POST /api/webauthn/confirm/begin", c.mutating(true, c.handleKeyChangeBegin)},
		{"POST /api/stepup/begin", c.mutating(true, c.handleStepUpBegin)},
		{"GET /static/", handleStatic},
	}
	for _, rt := range routes {
		mux.Handle(rt.pattern, secureHeaders(rt.h))
	}
}

// Run implements [approverbot.Channel]: it serves answers through r until
// ctx is done, then ends every event stream.
func (c *Channel) Run(ctx context.Context, r approverbot.Responder) error {
	if r == nil {
		return errors.New("web: Run needs a responder")
	}
	c.mu.Lock()
	if c.running {
		c.mu.Unlock()
		return errors.New("web: already running")
	}
	c.running, c.resp = true, r
	c.mu.Unlock()
	defer c.hub.close()

	tick := time.NewTicker(sweepInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
			c.sessions.sweep()
			c.byID.sweep()
			c.byAddr.sweep()
			c.grantsLimit.sweep()
		}
	}
}

// responder returns the bot's responder, nil before Run.
func (c *Channel) responder() approverbot.Responder {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.resp
}

// Ask implements [approverbot.Channel]: open pages show the question (or
// its new approvals) at once.
func (c *Channel) Ask(_ context.Context, q approverbot.Question) error {
	c.hub.publish(newEvent(&q, nil))
	return nil
}

// Resolve implements [approverbot.Channel]: open pages show who settled the
// question and how, then drop its card.
func (c *Channel) Resolve(_ context.Context, r messages.Resolved) error {
	c.hub.publish(newEvent(nil, &r))
	return nil
}

// CheckHealth implements [approverbot.Channel]. The page depends on no
// outside service; it is unhealthy only once it has stopped.
func (c *Channel) CheckHealth(context.Context) error {
	c.hub.mu.Lock()
	defer c.hub.mu.Unlock()
	if c.hub.closed {
		return errors.New("web: stopped")
	}
	return nil
}

package escalator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// Defaults of [Config].
const (
	DefaultInterval    = time.Second
	DefaultBatch       = 100
	DefaultConcurrency = 8
	DefaultWatch       = 2 * time.Second
	DefaultStepTimeout = time.Minute
)

// ErrInvalidConfig is wrapped by every [Config] validation error.
var ErrInvalidConfig = errors.New("escalator: invalid config")

// Store is what the escalator needs from the session store.
type Store interface {
	ClaimSteps(ctx context.Context, limit int) ([]session.Step, error)
	FinishStep(ctx context.Context, st session.Step, watch time.Duration) error
	AddTeam(ctx context.Context, sessionID, requestID, team string) (session.Result, error)
}

// Asker is what the escalator needs from the broker: the stored question
// of a request, and a way to ask a team.
type Asker interface {
	// Question returns the question stored with rec (its ladder included).
	Question(rec *session.Record) (messages.ApprovalNeeded, error)
	// Ask publishes q on the ask subject of team (q.Team is team).
	Ask(team string, q messages.ApprovalNeeded) error
}

// Config configures an [Escalator].
type Config struct {
	// Store holds the steps (required).
	Store Store
	// Asker publishes reminders and asks to added teams (required).
	Asker Asker
	// Pagers are the pagers page: steps name (nil: none; a page step then
	// fails, counted and logged).
	Pagers *Pagers
	// WebURL is the public base URL of the approver web page (e.g.
	// https://signoff.example.com): a page links to the question there.
	// Empty: pages carry no link.
	WebURL string
	// Interval is the longest time between two sweeps (default 1 s): a step
	// runs within its time plus this.
	Interval time.Duration
	// Batch is how many steps one claim takes (default 100).
	Batch int
	// Concurrency is how many steps run at once (default 8).
	Concurrency int
	// Watch is how often a request that paged is checked for its decision,
	// which resolves the page (default 2 s).
	Watch time.Duration
	// StepTimeout bounds one step, a page's retries included (default 1 m).
	// A step still running when Run's context ends gets at most 5 s more.
	StepTimeout time.Duration
	// Metrics receives the escalation metrics (required; NewMetrics).
	Metrics *Metrics
	// Logger (default: discard).
	Logger *slog.Logger
}

func (c *Config) setDefaults() {
	c.Interval = cmp.Or(c.Interval, DefaultInterval)
	c.Batch = cmp.Or(c.Batch, DefaultBatch)
	c.Concurrency = cmp.Or(c.Concurrency, DefaultConcurrency)
	c.Watch = cmp.Or(c.Watch, DefaultWatch)
	c.StepTimeout = cmp.Or(c.StepTimeout, DefaultStepTimeout)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	c.WebURL = strings.TrimRight(c.WebURL, "/")
}

// Validate reports the first invalid field (after defaults).
func (c *Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	switch {
	case c.Store == nil:
		return bad("Store is nil")
	case c.Asker == nil:
		return bad("Asker is nil")
	case c.Metrics == nil:
		return bad("Metrics is nil")
	case c.Interval <= 0 || c.Watch <= 0 || c.StepTimeout <= 0:
		return bad("Interval %v, Watch %v and StepTimeout %v must be positive", c.Interval, c.Watch, c.StepTimeout)
	case c.Batch < 1 || c.Concurrency < 1:
		return bad("Batch %d and Concurrency %d must be at least 1", c.Batch, c.Concurrency)
	}
	if c.WebURL != "" {
		if err := CheckWebURL(c.WebURL); err != nil {
			return bad("%v", err)
		}
	}
	return nil
}

// CheckWebURL checks the approver web page's public base URL: absolute
// http(s), no credentials, query or fragment (a page's link is built from
// it, and travels to the paging vendor).
func CheckWebURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("web URL %q: want an absolute http(s) URL without credentials, query or fragment, such as https://signoff.example.com", s)
	}
	return nil
}

// Link returns the link to a question on the web page at base ("" when
// base is empty): the page scrolls to the question's card (#q-<id>).
func Link(base, requestID string) string {
	if base == "" {
		return ""
	}
	return strings.TrimRight(base, "/") + "/#q-" + url.PathEscape(requestID)
}

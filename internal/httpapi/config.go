package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/signoff-dev/signoff/pkg/backoff"
)

// DefaultMaxResponseBytes is how much of an answer is read when
// [Config.MaxResponseBytes] is zero.
const DefaultMaxResponseBytes = 1 << 20

// Config describes a [Client]. The zero values of the optional fields are
// documented defaults; [New] refuses values that cannot be meant.
type Config struct {
	// API names the API in errors: "slack", "telegram", "webhook",
	// `pager "ops" (pagerduty)`. Required.
	API string
	// BaseURL is the absolute http(s) URL that [Request.Path] is appended
	// to (a trailing slash is dropped). Required. It may hold a secret
	// (Telegram's token goes in the path): it is never part of an error.
	BaseURL string
	// HTTPClient sends the requests (default: a client that follows no
	// redirect, since a redirect would carry credentials to wherever the
	// answer points).
	HTTPClient *http.Client
	// Timeout bounds each attempt (0: only the caller's context and the
	// HTTPClient's own timeout do).
	Timeout time.Duration
	// MaxAttempts is how many requests one call may send (default 1: no
	// retry).
	MaxAttempts int
	// Backoff is the least wait between attempts after the n-th failure
	// (the zero value waits only what Retry-After asks).
	Backoff backoff.Policy
	// MaxRetryAfter is the longest Retry-After a call waits out (0: no
	// limit); a longer one ends the call with that answer, unless
	// ClampRetryAfter is set, which cuts the wait to MaxRetryAfter.
	MaxRetryAfter   time.Duration
	ClampRetryAfter bool
	// MaxResponseBytes bounds what is read of an answer (default
	// [DefaultMaxResponseBytes]).
	MaxResponseBytes int64
	// Scrub removes secrets from the text of network errors (the URL and
	// the path are always removed); nil removes nothing more.
	Scrub func(string) string
	// Sleep waits between attempts (default [backoff.Sleep]); tests
	// replace it to observe the waits. It must return ctx's error when ctx
	// ends first.
	Sleep func(ctx context.Context, d time.Duration) error
}

// validate fills in the defaults and checks the rest.
func (c *Config) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
	}
	if c.API == "" {
		return bad("api: the name of the API is required (it names the API in errors)")
	}
	u, err := url.Parse(c.BaseURL)
	if c.BaseURL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// The URL itself is not quoted: it may hold a token.
		return bad("%s: base url is not an absolute http(s) URL", c.API)
	}
	switch {
	case c.Timeout < 0:
		return bad("%s: timeout %v is negative", c.API, c.Timeout)
	case c.MaxAttempts < 0:
		return bad("%s: max attempts %d is negative", c.API, c.MaxAttempts)
	case c.Backoff.Min < 0 || c.Backoff.Max < 0:
		return bad("%s: backoff %v..%v is negative", c.API, c.Backoff.Min, c.Backoff.Max)
	case c.Backoff.Max < c.Backoff.Min:
		return bad("%s: max backoff %v is below min backoff %v", c.API, c.Backoff.Max, c.Backoff.Min)
	case c.Backoff.Jitter < 0 || c.Backoff.Jitter > 1:
		return bad("%s: jitter %v is not from 0 to 1", c.API, c.Backoff.Jitter)
	case c.MaxRetryAfter < 0:
		return bad("%s: max retry-after %v is negative", c.API, c.MaxRetryAfter)
	case c.ClampRetryAfter && c.MaxRetryAfter == 0:
		return bad("%s: clamp retry-after needs a max retry-after", c.API)
	case c.MaxResponseBytes < 0:
		return bad("%s: max response bytes %d is negative", c.API, c.MaxResponseBytes)
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = 1
	}
	if c.MaxResponseBytes == 0 {
		c.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if c.Sleep == nil {
		c.Sleep = backoff.Sleep
	}
	return nil
}

package approverbot

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/signoff-dev/signoff/internal/httpapi"
)

// ChatRateRetries is how many rate limits one call of a chat channel's API
// (slack, telegram) waits out.
const ChatRateRetries = 3

// ChatAPI is the config of a chat channel's API client, named api, at base:
// each call waits out ChatRateRetries rate limits of at most maxRetryAfter
// (a longer one fails the call) and reads at most maxResponse bytes.
func ChatAPI(api, base string, hc *http.Client, maxRetryAfter time.Duration, maxResponse int64) httpapi.Config {
	return httpapi.Config{API: api, BaseURL: base, HTTPClient: hc,
		MaxAttempts: ChatRateRetries + 1, MaxRetryAfter: maxRetryAfter, MaxResponseBytes: maxResponse}
}

// ChatCallError is the error of a call of a chat channel's API (named api,
// as in [ChatAPI]) that failed before an answer: when the context ended
// the call while it waited out a rate limit, "<api> <method>: rate
// limited: <the context's error>"; else err as is, which names the API
// and method, not the URL.
func ChatCallError(api, method string, err error) error {
	var he *httpapi.Error
	if errors.As(err, &he) && he.Ctx != nil && he.Last != nil {
		return fmt.Errorf("%s %s: rate limited: %w", api, method, he.Ctx)
	}
	return err
}

// HTTPURL parses s, an address a channel calls (an API base, a webhook):
// it reports whether s is an http(s) URL with a host.
func HTTPURL(s string) (*url.URL, bool) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, false
	}
	return u, true
}

// DefaultLog fills the options every channel has: the logger
// (slog.Default()) and the clock (time.Now), when left zero.
func DefaultLog(log *slog.Logger, now func() time.Time) (*slog.Logger, func() time.Time) {
	if log == nil {
		log = slog.Default()
	}
	if now == nil {
		now = time.Now
	}
	return log, now
}

// DefaultChat fills the options the chat channels (slack, telegram) share
// beyond [DefaultLog], when left zero: how many answers are handled at
// once (4) and the longest rate-limit wait one call sits out (30 s).
func DefaultChat(workers int, maxRetryAfter time.Duration) (int, time.Duration) {
	if workers <= 0 {
		workers = 4
	}
	if maxRetryAfter <= 0 {
		maxRetryAfter = 30 * time.Second
	}
	return workers, maxRetryAfter
}

// DefaultBackoff fills the bounds of a channel's wait between failed
// attempts: min defaults to 500 ms, and max, when below min, to the larger
// of ceiling and min.
func DefaultBackoff(minWait, maxWait, ceiling time.Duration) (time.Duration, time.Duration) {
	if minWait <= 0 {
		minWait = 500 * time.Millisecond
	}
	if maxWait < minWait {
		maxWait = max(ceiling, minWait)
	}
	return minWait, maxWait
}

// ResponderSlot holds the Responder a channel's Run was given, for the
// HTTP handlers that answer outside Run (nil until Run, and after it when
// Run clears it). Safe for concurrent use; the zero value is empty.
type ResponderSlot struct{ p atomic.Pointer[responderBox] }

type responderBox struct{ r Responder }

// Set holds r; nil empties the slot.
func (s *ResponderSlot) Set(r Responder) {
	if r == nil {
		s.p.Store(nil)
		return
	}
	s.p.Store(&responderBox{r})
}

// Get returns the Responder held, nil when empty.
func (s *ResponderSlot) Get() Responder {
	if b := s.p.Load(); b != nil {
		return b.r
	}
	return nil
}

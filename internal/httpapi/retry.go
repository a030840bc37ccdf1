package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxRetryAfter caps what [ParseRetryAfter] returns: a day is already
// longer than any caller waits.
const maxRetryAfter = 24 * time.Hour

// RetryFunc decides whether a failed attempt is sent again, and how long
// the API asked to wait first (0: the backoff decides). resp is nil when
// err, a network error, is set; a resp can carry a ReadErr (the body was
// cut). A nil RetryFunc retries nothing.
type RetryFunc func(resp *Response, err error) (retry bool, after time.Duration)

// ParseRetryAfter reads a Retry-After header (RFC 9110 §10.2.3):
// delay-seconds or an HTTP date, relative to now. ok is false when the
// header is missing or unreadable; a date in the past is 0; a wait is
// capped at a day.
func ParseRetryAfter(h string, now time.Time) (d time.Duration, ok bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(h, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		if n > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter, true
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(h)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), maxRetryAfter), true
}

// RetryTransient retries network errors, 408, 429 and 5xx, honouring a
// Retry-After header: the rule of the webhook and the pagers.
func RetryTransient(resp *Response, err error) (bool, time.Duration) {
	if err != nil {
		return true, 0
	}
	switch s := resp.Status; {
	case s == http.StatusRequestTimeout || s == http.StatusTooManyRequests || s >= 500:
		d, _ := ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		return true, d
	}
	return false, 0
}

// RetryRateLimited retries only 429, waiting the Retry-After header (or
// dflt when it is missing or unreadable). Network errors and other
// statuses are final: a post that may have been applied is not sent
// twice.
func RetryRateLimited(dflt time.Duration) RetryFunc {
	return func(resp *Response, err error) (bool, time.Duration) {
		if err != nil || resp.Status != http.StatusTooManyRequests {
			return false, 0
		}
		d, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		if !ok || d <= 0 {
			d = dflt
		}
		return true, d
	}
}

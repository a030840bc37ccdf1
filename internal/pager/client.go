package pager

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/pkg/backoff"
)

// maxResponseBytes bounds what is read of a vendor's answer.
const maxResponseBytes = 1 << 20

// client sends one vendor's requests with retries. It is shared by both
// implementations so the retry rules are written once.
type client struct {
	cfg *Config
	hc  *http.Client
	key secret
	log *slog.Logger
	// sleep waits d or until ctx ends; tests replace it to observe waits.
	sleep func(ctx context.Context, d time.Duration) error
}

func newClient(c *Config) *client {
	hc := c.HTTPClient
	if hc == nil {
		hc = &http.Client{
			// A redirect would carry the key to wherever the answer points.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	return &client{cfg: c, hc: hc, log: c.Logger.With("pager", c.Name, "pager_kind", string(c.Kind)), sleep: backoff.Sleep}
}

// response is a final answer: a status that is not retried.
type response struct {
	status   int
	header   http.Header
	body     []byte
	attempts int
}

// call is one logical call to the vendor.
type call struct {
	op        string // "trigger", "resolve", "health"
	requestID string // for logs; may be empty
	method    string
	path      string // appended to the base URL, already escaped
	body      []byte // nil for no body
	header    http.Header
}

// do sends c until the vendor gives an answer that is not retried: network
// errors, 429 and 5xx are retried with backoff while attempts and ctx last.
// A call that runs out of either returns an *APIError describing the last
// failure (joined with ctx's error when ctx ended it).
func (cl *client) do(ctx context.Context, c call) (response, error) {
	var last *APIError
	for attempt := 1; ; attempt++ {
		resp, err := cl.attempt(ctx, c)
		if err != nil && ctx.Err() != nil {
			// An answer that arrived is used even if ctx ended right
			// after: the vendor has acted on it.
			return response{}, cl.gaveUp(ctx, c, last, attempt, err)
		}
		var wait time.Duration
		switch {
		case err != nil:
			last = &APIError{Status: 0, Err: err}
			wait = cl.backoff(attempt)
		case resp.status == http.StatusTooManyRequests:
			ra := retryAfter(resp.header.Get("Retry-After"), time.Now())
			last = &APIError{Status: resp.status, RetryAfter: ra}
			last.Message, last.Fields = cl.vendorMessage(resp.body)
			if ra > cl.cfg.MaxRetryAfter {
				return response{}, cl.finish(c, last, attempt)
			}
			wait = max(ra, cl.backoff(attempt))
		case resp.status >= 500:
			last = &APIError{Status: resp.status}
			last.Message, last.Fields = cl.vendorMessage(resp.body)
			wait = cl.backoff(attempt)
		default:
			resp.attempts = attempt
			return resp, nil
		}
		cl.finish(c, last, attempt)
		if attempt >= cl.cfg.MaxAttempts {
			return response{}, last
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			// Waiting past the caller's deadline only to fail is worse
			// than failing now with the reason.
			return response{}, cl.gaveUp(ctx, c, last, attempt, context.DeadlineExceeded)
		}
		cl.log.LogAttrs(ctx, slog.LevelWarn, "pager call failed; retrying",
			slog.String("op", c.op), slog.String("request_id", c.requestID),
			slog.Int("attempt", attempt), slog.Int("status", last.Status),
			slog.String("err", last.Error()), slog.Duration("wait", wait))
		if err := cl.sleep(ctx, wait); err != nil {
			return response{}, cl.gaveUp(ctx, c, last, attempt, err)
		}
	}
}

func (cl *client) finish(c call, e *APIError, attempts int) *APIError {
	e.Pager, e.Kind, e.Op, e.Attempts = cl.cfg.Name, cl.cfg.Kind, c.op, attempts
	return e
}

// gaveUp reports a call that ctx ended: the ctx error and the last vendor
// failure (if any), both matchable with errors.Is.
func (cl *client) gaveUp(ctx context.Context, c call, last *APIError, attempts int, err error) error {
	cerr := ctx.Err()
	if cerr == nil {
		cerr = err
	}
	if last == nil {
		return fmt.Errorf("pager %q (%s): %s stopped: %w", cl.cfg.Name, cl.cfg.Kind, c.op, cerr)
	}
	return fmt.Errorf("%w; stopped: %w", cl.finish(c, last, attempts), cerr)
}

// attempt sends one request. The error is a network error, scrubbed of the
// key (url.Error quotes the URL, and an Opsgenie alias may sit in it, but
// the key never does; scrubbing is belt and braces).
func (cl *client) attempt(ctx context.Context, c call) (response, error) {
	actx, cancel := context.WithTimeout(ctx, cl.cfg.Timeout)
	defer cancel()
	var body io.Reader
	if c.body != nil {
		body = bytes.NewReader(c.body)
	}
	req, err := http.NewRequestWithContext(actx, c.method, strings.TrimSuffix(cl.cfg.BaseURL, "/")+c.path, body)
	if err != nil {
		return response{}, err
	}
	for k, v := range c.header {
		req.Header[k] = v
	}
	if c.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "signoff-pager/1")
	resp, err := cl.hc.Do(req)
	if err != nil {
		return response{}, errors.New(cl.key.scrub(err.Error()))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil && resp.StatusCode < 300 {
		// The vendor accepted; a cut body does not undo that.
		err = nil
	}
	if err != nil {
		return response{}, errors.New(cl.key.scrub(err.Error()))
	}
	return response{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// backoff is the wait after the given failed attempt: full jitter over an
// exponentially growing bound, MinBackoff·2^(attempt-1) capped at
// MaxBackoff, never below MinBackoff/2.
func (cl *client) backoff(attempt int) time.Duration {
	return backoff.Policy{Min: cl.cfg.MinBackoff, Max: cl.cfg.MaxBackoff, Jitter: 1}.Delay(attempt)
}

// vendorMessage extracts the vendor's message and field errors from an
// error body, scrubbed of the key.
func (cl *client) vendorMessage(body []byte) (string, []string) {
	msg, fields := parseVendorError(body)
	msg = cl.key.scrub(msg)
	for i := range fields {
		fields[i] = cl.key.scrub(fields[i])
	}
	return msg, fields
}

// retryAfter reads Retry-After: delay-seconds or an HTTP date. A missing or
// unreadable value is 0 (the backoff applies).
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if n, err := strconv.ParseInt(h, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		if n > int64(24*time.Hour/time.Second) {
			return 24 * time.Hour
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// parseVendorError reads both vendors' error bodies: PagerDuty's
// {"status","message","errors":["…"]} and Opsgenie's
// {"message","errors":{"field":"reason"}}. Text that is not JSON is kept
// (cut short), since a proxy's error page still says something.
func parseVendorError(body []byte) (string, []string) {
	var v struct {
		Status  string          `json:"status"`
		Message string          `json:"message"`
		Errors  json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal(body, &v); err != nil {
		s := strings.TrimSpace(clean(string(body), false))
		return truncate(s, 200), nil
	}
	msg := v.Message
	if v.Status != "" && !strings.EqualFold(v.Status, "success") && !strings.Contains(strings.ToLower(msg), strings.ToLower(v.Status)) {
		msg = strings.TrimSpace(v.Status + ": " + msg)
	}
	var fields []string
	var list []string
	var byField map[string]string
	switch {
	case len(v.Errors) == 0:
	case json.Unmarshal(v.Errors, &list) == nil:
		fields = list
	case json.Unmarshal(v.Errors, &byField) == nil:
		for _, k := range slices.Sorted(maps.Keys(byField)) {
			fields = append(fields, k+": "+byField[k])
		}
	}
	for i := range fields {
		fields[i] = truncate(clean(fields[i], false), 500)
	}
	return truncate(clean(msg, false), 500), fields
}

// probe sends one request (health checks are not retried: the caller
// polls) and fails on a network error, a 5xx, or a status ok refuses.
func (cl *client) probe(ctx context.Context, c call, ok func(status int) bool) error {
	resp, err := cl.attempt(ctx, c)
	if err != nil {
		if ctx.Err() != nil {
			return cl.gaveUp(ctx, c, nil, 1, err)
		}
		return cl.finish(c, &APIError{Err: err}, 1)
	}
	if resp.status >= 500 || (ok != nil && !ok(resp.status)) {
		e := cl.finish(c, &APIError{Status: resp.status}, 1)
		e.Message, e.Fields = cl.vendorMessage(resp.body)
		return e
	}
	return nil
}

package pager

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/internal/httpapi"
	"github.com/signoff-dev/signoff/pkg/backoff"
)

// maxResponseBytes bounds what is read of a vendor's answer.
const maxResponseBytes = 1 << 20

// client sends one vendor's requests with retries. It is shared by both
// implementations so the retry rules are written once; the requests go
// through [httpapi.Client], the retry loop of every outbound integration.
type client struct {
	cfg *Config
	api *httpapi.Client
	key secret
	log *slog.Logger
	// sleep waits d or until ctx ends; tests replace it to observe waits.
	sleep func(ctx context.Context, d time.Duration) error
}

func newClient(c *Config) (*client, error) {
	cl := &client{cfg: c, log: c.Logger.With("pager", c.Name, "pager_kind", string(c.Kind)), sleep: backoff.Sleep}
	api, err := httpapi.New(httpapi.Config{
		API:     fmt.Sprintf("pager %q (%s)", c.Name, c.Kind),
		BaseURL: c.BaseURL,
		// nil: httpapi's client, which follows no redirect (a redirect
		// would carry the key to wherever the answer points).
		HTTPClient:       c.HTTPClient,
		Timeout:          c.Timeout,
		MaxAttempts:      c.MaxAttempts,
		Backoff:          cl.policy(),
		MaxRetryAfter:    c.MaxRetryAfter,
		MaxResponseBytes: maxResponseBytes,
		// url.Error quotes the URL, and an Opsgenie alias may sit in it,
		// but the key never does; scrubbing is belt and braces.
		Scrub: func(s string) string { return cl.key.scrub(s) },
		Sleep: func(ctx context.Context, d time.Duration) error { return cl.sleep(ctx, d) },
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	cl.api = api
	return cl, nil
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

// retry is the vendors' rule: network errors, 429 (honouring Retry-After)
// and 5xx are retried. A body cut short counts as a network error unless
// the vendor accepted: a cut body does not undo that.
func retry(resp *httpapi.Response, err error) (bool, time.Duration) {
	switch {
	case err != nil:
		return true, 0
	case resp.ReadErr != nil && resp.Status >= 300:
		return true, 0
	case resp.Status == http.StatusTooManyRequests:
		return true, retryAfter(resp.Header.Get("Retry-After"), time.Now())
	case resp.Status >= 500:
		return true, 0
	}
	return false, 0
}

// Name is the pager's name, as its config gives it (every kind).
func (cl *client) Name() string { return cl.cfg.Name }

// prepare checks the page pg of a Trigger and returns it, cleaned, with
// the dedup key of its request (every kind pages under that key).
func (cl *client) prepare(pg Page) (Page, string, error) {
	// The key of the ids as the request has them, as the resolve computes
	// it (validate cleans the session id for display).
	key := DedupKey(cl.cfg.DedupPrefix, pg.SessionID, pg.RequestID)
	pg, err := pg.validate()
	if err != nil {
		return Page{}, "", err
	}
	return pg, key, nil
}

// do sends c until the vendor gives an answer that is not retried: network
// errors, 429 and 5xx are retried with backoff while attempts and ctx last.
// A call that runs out of either returns an *APIError describing the last
// failure (joined with ctx's error when ctx ended it).
func (cl *client) do(ctx context.Context, c call) (response, error) {
	req := cl.request(c)
	req.Retry = retry
	req.OnRetry = func(attempt int, resp *httpapi.Response, err error, wait time.Duration) {
		last := cl.failure(c, resp, err, attempt)
		cl.log.LogAttrs(ctx, slog.LevelWarn, "pager call failed; retrying",
			slog.String("op", c.op), slog.String("request_id", c.requestID),
			slog.Int("attempt", attempt), slog.Int("status", last.Status),
			slog.String("err", last.Error()), slog.Duration("wait", wait))
	}
	resp, err := cl.api.Do(ctx, req)
	if err != nil {
		return response{}, cl.stopped(c, err)
	}
	if resp.Retried {
		// The attempts ran out, or the vendor asked for a wait over
		// MaxRetryAfter.
		return response{}, cl.failure(c, resp, nil, resp.Attempts)
	}
	return response{status: resp.Status, header: resp.Header, body: resp.Body, attempts: resp.Attempts}, nil
}

// request is c as an [httpapi.Request] (without its retry rule).
func (cl *client) request(c call) httpapi.Request {
	h := http.Header{}
	for k, v := range c.header {
		h[k] = v
	}
	if c.body != nil {
		h.Set("Content-Type", "application/json")
	}
	h.Set("Accept", "application/json")
	h.Set("User-Agent", "signoff-pager/1")
	return httpapi.Request{Method: c.op, HTTPMethod: c.method, Path: c.path, Body: c.body, Header: h}
}

// failure is the *APIError of a failed attempt: an answer, or a network
// error (err, or resp's cut body).
func (cl *client) failure(c call, resp *httpapi.Response, err error, attempts int) *APIError {
	var e *APIError
	switch {
	case resp == nil:
		e = &APIError{Err: err}
	case resp.ReadErr != nil && resp.Status >= 300:
		e = &APIError{Err: resp.ReadErr}
	default:
		e = &APIError{Status: resp.Status}
		if resp.Status == http.StatusTooManyRequests {
			e.RetryAfter = resp.RetryAfter
		}
		e.Message, e.Fields = cl.vendorMessage(resp.Body)
	}
	return cl.finish(c, e, attempts)
}

// stopped turns an *httpapi.Error into the pager's error: a network error
// on the last attempt is an *APIError; a call ctx ended joins the last
// failure (if any) with ctx's error.
func (cl *client) stopped(c call, err error) error {
	var he *httpapi.Error
	if !errors.As(err, &he) {
		return err
	}
	if he.Ctx == nil {
		return cl.failure(c, nil, he.Net, he.Attempts)
	}
	if he.Last == nil && he.Net == nil {
		return fmt.Errorf("pager %q (%s): %s stopped: %w", cl.cfg.Name, cl.cfg.Kind, c.op, he.Ctx)
	}
	return fmt.Errorf("%w; stopped: %w", cl.failure(c, he.Last, he.Net, he.Attempts), he.Ctx)
}

func (cl *client) finish(c call, e *APIError, attempts int) *APIError {
	e.Pager, e.Kind, e.Op, e.Attempts = cl.cfg.Name, cl.cfg.Kind, c.op, attempts
	return e
}

// policy is the wait after a failed attempt: full jitter over an
// exponentially growing bound, MinBackoff·2^(attempt-1) capped at
// MaxBackoff, never below MinBackoff/2.
func (cl *client) policy() backoff.Policy {
	return backoff.Policy{Min: cl.cfg.MinBackoff, Max: cl.cfg.MaxBackoff, Jitter: 1}
}

// backoff is the wait after the given failed attempt (see policy).
func (cl *client) backoff(attempt int) time.Duration { return cl.policy().Delay(attempt) }

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
	d, _ := httpapi.ParseRetryAfter(h, now)
	return d
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
	resp, err := cl.api.Do(ctx, cl.request(c))
	if err != nil {
		return cl.stopped(c, err)
	}
	if resp.Status >= 500 || (ok != nil && !ok(resp.Status)) {
		e := cl.finish(c, &APIError{Status: resp.Status}, 1)
		e.Message, e.Fields = cl.vendorMessage(resp.Body)
		return e
	}
	return nil
}

package httpapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Client sends one API's requests with its retry rules. It is safe for
// concurrent use and owns no goroutines.
type Client struct {
	cfg  Config
	base string
}

// New returns the client of cfg, or an error wrapping [ErrInvalidConfig]
// that says which option is wrong (and never quotes the base URL).
func New(cfg Config) (*Client, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Client{cfg: cfg, base: strings.TrimSuffix(cfg.BaseURL, "/")}, nil
}

// Request is one logical call.
type Request struct {
	// Method names the call in errors: "chat.postMessage", "trigger".
	Method string
	// HTTPMethod is the HTTP method (default POST).
	HTTPMethod string
	// Path is appended to the base URL, already escaped. It may hold a
	// secret: it is never part of an error.
	Path string
	// URL, if set, is the absolute URL to send to instead of base URL and
	// Path (a Slack response_url); it is never part of an error either.
	URL string
	// Body is sent as is (nil: no body).
	Body []byte
	// Header is set on every attempt.
	Header http.Header
	// Prepare, if set, is called on each attempt's request just before it
	// is sent (a signature that must be fresh per attempt).
	Prepare func(*http.Request)
	// Retry decides which failures are sent again (nil: none).
	Retry RetryFunc
	// OnRetry, if set, is called before each wait with the attempt that
	// failed, its answer or network error, and the wait (for logs).
	OnRetry func(attempt int, resp *Response, err error, wait time.Duration)
}

// Response is a final answer: one the request's [RetryFunc] did not
// retry, or the last one when the attempts ran out or the API asked for a
// wait longer than [Config.MaxRetryAfter].
type Response struct {
	Status int
	Header http.Header
	// Body is the answer, read up to [Config.MaxResponseBytes].
	Body []byte
	// ReadErr is set when the body could not be read to its end (Body
	// holds what was read), scrubbed like a network error.
	ReadErr error
	// Attempts is how many requests were sent.
	Attempts int
	// Retried is whether the RetryFunc asked to retry this answer (the
	// call ended because attempts or the allowed wait ran out); RetryAfter
	// is the wait it asked for.
	Retried    bool
	RetryAfter time.Duration
}

// Do sends req until it gets a final answer. The error is nil with a
// [Response] (whatever its status: the caller reads it), or an *[Error]
// when the last attempt failed on the network or ctx ended the call.
func (c *Client) Do(ctx context.Context, req Request) (*Response, error) {
	var last *Response // the previous failure: an answer
	var lastNet error  // or a network error
	for attempt := 1; ; attempt++ {
		resp, err := c.attempt(ctx, req)
		if err != nil && ctx.Err() != nil {
			// An answer that arrived is used even if ctx ended right
			// after: the API has acted on it.
			return nil, &Error{API: c.cfg.API, Method: req.Method, Attempts: attempt, Last: last, Net: lastNet, Ctx: ctx.Err()}
		}
		var retry bool
		var after time.Duration
		if req.Retry != nil {
			retry, after = req.Retry(resp, err)
		}
		if resp != nil {
			resp.Attempts, resp.Retried, resp.RetryAfter = attempt, retry, after
		}
		if !retry {
			if err != nil {
				return nil, &Error{API: c.cfg.API, Method: req.Method, Attempts: attempt, Net: err}
			}
			return resp, nil
		}
		if limit := c.cfg.MaxRetryAfter; limit > 0 && after > limit {
			if !c.cfg.ClampRetryAfter {
				return resp, nil // resp is set: a network error carries no Retry-After
			}
			after = limit
		}
		if attempt >= c.cfg.MaxAttempts {
			if err != nil {
				return nil, &Error{API: c.cfg.API, Method: req.Method, Attempts: attempt, Net: err}
			}
			return resp, nil
		}
		wait := max(after, c.cfg.Backoff.Delay(attempt))
		last, lastNet = resp, err
		stop := func(cerr error) (*Response, error) {
			return nil, &Error{API: c.cfg.API, Method: req.Method, Attempts: attempt, Last: resp, Net: err, Ctx: cerr}
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			// Waiting past the caller's deadline only to fail is worse
			// than failing now with the reason.
			return stop(context.DeadlineExceeded)
		}
		if req.OnRetry != nil {
			req.OnRetry(attempt, resp, err, wait)
		}
		if serr := c.cfg.Sleep(ctx, wait); serr != nil {
			return stop(serr)
		}
	}
}

// attempt sends one request. Its error is a network error without the URL.
func (c *Client) attempt(ctx context.Context, r Request) (*Response, error) {
	if c.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.Timeout)
		defer cancel()
	}
	target := r.URL
	if target == "" {
		target = c.base + r.Path
	}
	method := r.HTTPMethod
	if method == "" {
		method = http.MethodPost
	}
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, c.netErr(r, target, errors.New("cannot build the request (check the URL)"))
	}
	for k, v := range r.Header {
		req.Header[k] = v
	}
	if r.Prepare != nil {
		r.Prepare(req)
	}
	hr, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, c.netErr(r, target, err)
	}
	defer hr.Body.Close()
	data, err := io.ReadAll(io.LimitReader(hr.Body, c.cfg.MaxResponseBytes))
	resp := &Response{Status: hr.StatusCode, Header: hr.Header, Body: data}
	if err != nil {
		resp.ReadErr = c.netErr(r, target, err)
	}
	return resp, nil
}

// netErr takes the URL out of err: url.Error quotes it whole, and other
// errors may repeat it or its path.
func (c *Client) netErr(r Request, target string, err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := err.Error()
	for _, s := range []string{target, c.base, r.Path} {
		if len(s) > 1 {
			msg = strings.ReplaceAll(msg, s, "<url>")
		}
	}
	if u, perr := url.Parse(target); perr == nil {
		for _, s := range []string{u.EscapedPath(), u.Path, u.RawQuery, u.User.String()} {
			if len(s) > 1 {
				msg = strings.ReplaceAll(msg, s, "<url>")
			}
		}
	}
	if c.cfg.Scrub != nil {
		msg = c.cfg.Scrub(msg)
	}
	return &netError{msg: msg, err: err}
}

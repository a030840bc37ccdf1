package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/httpapi"
	"github.com/signoff-dev/signoff/pkg/backoff"
)

// sleeps records the waits asked for and returns at once.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

// server answers the statuses and headers of answers in turn (the last one
// for every later request) and counts the requests.
func server(t *testing.T, answers ...func(w http.ResponseWriter)) (*httptest.Server, *int) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		i := min(n, len(answers)-1)
		n++
		mu.Unlock()
		answers[i](w)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func status(code int, retryAfter string) func(http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.WriteHeader(code)
	}
}

func newClient(t *testing.T, cfg httpapi.Config) *httpapi.Client {
	t.Helper()
	c, err := httpapi.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	tests := []struct {
		name, h string
		want    time.Duration
		ok      bool
	}{
		{"seconds are seconds", "7", 7 * time.Second, true},
		{"spaces around seconds are allowed", " 3 ", 3 * time.Second, true},
		{"an HTTP date is the time until it", now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{"a date in the past is no wait", now.Add(-time.Minute).Format(http.TimeFormat), 0, true},
		{"a huge number is capped at a day", "99999999999", 24 * time.Hour, true},
		{"a far date is capped at a day", now.Add(400 * time.Hour).Format(http.TimeFormat), 24 * time.Hour, true},
		{"a missing header is unreadable", "", 0, false},
		{"a negative number is unreadable", "-5", 0, false},
		{"text is unreadable", "soon", 0, false},
		{"a fraction is unreadable", "1.5", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := httpapi.ParseRetryAfter(tt.h, now)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ParseRetryAfter(%q) = %v, %v; want %v, %v", tt.h, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestDoWaitsRetryAfterInSecondsAndAsDate(t *testing.T) {
	date := time.Now().Add(30 * time.Second).UTC().Format(http.TimeFormat)
	srv, n := server(t, status(429, "2"), status(503, date), status(200, ""))
	var s sleeps
	c := newClient(t, httpapi.Config{API: "test", BaseURL: srv.URL, MaxAttempts: 5,
		Backoff: backoff.Policy{Min: time.Second, Max: time.Second}, Sleep: s.sleep})
	resp, err := c.Do(context.Background(), httpapi.Request{Method: "m", Retry: httpapi.RetryTransient})
	if err != nil || resp.Status != 200 || resp.Attempts != 3 || *n != 3 {
		t.Fatalf("Do = %+v, %v after %d requests; want 200 after 3", resp, err, *n)
	}
	if len(s.d) != 2 || s.d[0] != 2*time.Second || s.d[1] < 28*time.Second || s.d[1] > 30*time.Second {
		t.Errorf("waits = %v; want [2s ~30s]", s.d)
	}
}

func TestDoBackoffIsCappedAndAttemptsBounded(t *testing.T) {
	srv, n := server(t, status(500, ""))
	var s sleeps
	c := newClient(t, httpapi.Config{API: "test", BaseURL: srv.URL, MaxAttempts: 6,
		Backoff: backoff.Policy{Min: 100 * time.Millisecond, Max: 400 * time.Millisecond, Jitter: 1}, Sleep: s.sleep})
	resp, err := c.Do(context.Background(), httpapi.Request{Method: "m", Retry: httpapi.RetryTransient})
	if err != nil || resp.Status != 500 || !resp.Retried || resp.Attempts != 6 || *n != 6 {
		t.Fatalf("Do = %+v, %v after %d requests; want the last 500 after 6", resp, err, *n)
	}
	for i, d := range s.d {
		if d < 50*time.Millisecond || d > 400*time.Millisecond {
			t.Errorf("wait %d = %v; want within [50ms, 400ms]", i+1, d)
		}
	}
}

func TestDoRetryAfterOverTheLimit(t *testing.T) {
	t.Run("ends the call with that answer", func(t *testing.T) {
		srv, n := server(t, status(429, "600"), status(200, ""))
		var s sleeps
		c := newClient(t, httpapi.Config{API: "test", BaseURL: srv.URL, MaxAttempts: 3, MaxRetryAfter: time.Minute, Sleep: s.sleep})
		resp, err := c.Do(context.Background(), httpapi.Request{Method: "m", Retry: httpapi.RetryTransient})
		if err != nil || resp.Status != 429 || resp.RetryAfter != 10*time.Minute || *n != 1 || len(s.d) != 0 {
			t.Fatalf("Do = %+v, %v, %d requests, waits %v; want the 429 at once", resp, err, *n, s.d)
		}
	})
	t.Run("is cut to the limit when clamped", func(t *testing.T) {
		srv, n := server(t, status(429, "600"), status(200, ""))
		var s sleeps
		c := newClient(t, httpapi.Config{API: "test", BaseURL: srv.URL, MaxAttempts: 3, MaxRetryAfter: time.Minute,
			ClampRetryAfter: true, Sleep: s.sleep})
		resp, err := c.Do(context.Background(), httpapi.Request{Method: "m", Retry: httpapi.RetryTransient})
		if err != nil || resp.Status != 200 || *n != 2 || len(s.d) != 1 || s.d[0] != time.Minute {
			t.Fatalf("Do = %+v, %v, %d requests, waits %v; want 200 after one 1m wait", resp, err, *n, s.d)
		}
	})
}

func TestDoStopsWhenTheContextEndsDuringAWait(t *testing.T) {
	srv, n := server(t, status(503, "30"))
	c := newClient(t, httpapi.Config{API: "test", BaseURL: srv.URL, MaxAttempts: 5})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := c.Do(ctx, httpapi.Request{Method: "m", Retry: httpapi.RetryTransient})
	var he *httpapi.Error
	if !errors.As(err, &he) || !errors.Is(err, context.Canceled) || he.Last == nil || he.Last.Status != 503 || *n != 1 {
		t.Fatalf("Do = %v (%d requests); want a canceled *Error with the 503", err, *n)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("Do returned after %v; want soon after the cancel", el)
	}
}

func TestDoDoesNotBeginAWaitPastTheDeadline(t *testing.T) {
	srv, n := server(t, status(503, "30"))
	c := newClient(t, httpapi.Config{API: "test", BaseURL: srv.URL, MaxAttempts: 5})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err := c.Do(ctx, httpapi.Request{Method: "m", Retry: httpapi.RetryTransient})
	if !errors.Is(err, context.DeadlineExceeded) || *n != 1 || time.Since(start) > 3*time.Second {
		t.Fatalf("Do = %v after %v and %d requests; want DeadlineExceeded at once", err, time.Since(start), *n)
	}
}

func TestNetworkErrorsDoNotLeakTheURL(t *testing.T) {
	const token = "123456:AAE-secret-bot-token"
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close() // connection refused from now on
	var s sleeps
	c := newClient(t, httpapi.Config{API: "telegram", BaseURL: base, MaxAttempts: 2, Sleep: s.sleep,
		Scrub: func(m string) string { return strings.ReplaceAll(m, "AAE", "***") }})
	_, err := c.Do(context.Background(), httpapi.Request{Method: "sendMessage", Path: "/bot" + token + "/sendMessage?x=" + token,
		Retry: httpapi.RetryTransient})
	var he *httpapi.Error
	if !errors.As(err, &he) || he.Net == nil || he.Attempts != 2 {
		t.Fatalf("Do = %v; want a network *Error after 2 attempts", err)
	}
	msg := err.Error()
	for _, leak := range []string{token, "secret-bot-token", "/bot", base} {
		if strings.Contains(msg, leak) {
			t.Errorf("error %q contains %q", msg, leak)
		}
	}
	if !strings.HasPrefix(msg, "telegram sendMessage: ") {
		t.Errorf("error %q does not name the API and the method", msg)
	}
	// Unwrapping must not bring the URL back either.
	for e := errors.Unwrap(he.Net); e != nil; e = errors.Unwrap(e) {
		if strings.Contains(e.Error(), token) {
			t.Errorf("wrapped error %q contains the token", e)
		}
	}
}

func TestAnAbsoluteURLIsNotLeakedEither(t *testing.T) {
	c := newClient(t, httpapi.Config{API: "slack", BaseURL: "https://slack.example"})
	const hook = "http://127.0.0.1:1/actions/T000/secret-response-url"
	_, err := c.Do(context.Background(), httpapi.Request{Method: "response_url", URL: hook})
	if err == nil || strings.Contains(err.Error(), "secret-response-url") || strings.Contains(err.Error(), "/actions/") {
		t.Fatalf("Do = %v; want a network error without the URL", err)
	}
}

func TestNewRefusesBadOptions(t *testing.T) {
	ok := httpapi.Config{API: "x", BaseURL: "https://api.example/v1"}
	tests := []struct {
		name   string
		edit   func(*httpapi.Config)
		saying string
	}{
		{"no API name", func(c *httpapi.Config) { c.API = "" }, "api"},
		{"no base URL", func(c *httpapi.Config) { c.BaseURL = "" }, "base url"},
		{"a relative base URL", func(c *httpapi.Config) { c.BaseURL = "/v1" }, "base url"},
		{"a base URL of another scheme", func(c *httpapi.Config) { c.BaseURL = "ftp://h/secret-token" }, "base url"},
		{"a negative timeout", func(c *httpapi.Config) { c.Timeout = -time.Second }, "timeout"},
		{"negative attempts", func(c *httpapi.Config) { c.MaxAttempts = -1 }, "attempts"},
		{"max backoff below min", func(c *httpapi.Config) { c.Backoff = backoff.Policy{Min: 2 * time.Second, Max: time.Second} }, "below"},
		{"a negative backoff", func(c *httpapi.Config) { c.Backoff.Min = -1 }, "negative"},
		{"jitter over 1", func(c *httpapi.Config) { c.Backoff.Jitter = 1.5 }, "jitter"},
		{"a negative max retry-after", func(c *httpapi.Config) { c.MaxRetryAfter = -1 }, "retry-after"},
		{"clamp without a limit", func(c *httpapi.Config) { c.ClampRetryAfter = true }, "clamp"},
		{"negative response bytes", func(c *httpapi.Config) { c.MaxResponseBytes = -1 }, "bytes"},
	}
	if _, err := httpapi.New(ok); err != nil {
		t.Fatalf("New(valid) = %v", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.edit(&cfg)
			_, err := httpapi.New(cfg)
			if !errors.Is(err, httpapi.ErrInvalidConfig) || !strings.Contains(err.Error(), tt.saying) {
				t.Fatalf("New = %v; want ErrInvalidConfig saying %q", err, tt.saying)
			}
			if strings.Contains(err.Error(), "secret-token") {
				t.Errorf("error %q quotes the base URL", err)
			}
		})
	}
}

func TestRetryRateLimitedRetriesOnly429(t *testing.T) {
	srv, n := server(t, status(429, ""), status(500, ""), status(200, ""))
	var s sleeps
	c := newClient(t, httpapi.Config{API: "slack", BaseURL: srv.URL, MaxAttempts: 5, Sleep: s.sleep})
	resp, err := c.Do(context.Background(), httpapi.Request{Method: "chat.postMessage", Retry: httpapi.RetryRateLimited(time.Second)})
	if err != nil || resp.Status != 500 || resp.Retried || *n != 2 || len(s.d) != 1 || s.d[0] != time.Second {
		t.Fatalf("Do = %+v, %v, %d requests, waits %v; want the 500 after one 1s wait", resp, err, *n, s.d)
	}
}

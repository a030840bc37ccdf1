package pager_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/internal/pager"
	"github.com/signoff-dev/signoff/internal/pager/pagertest"
)

func TestTriggerOpensOneIncidentWithTheLinkAndResolveClosesIt(t *testing.T) {
	forEachVendor(t, func(t *testing.T, v *vendor) {
		p, _ := v.newPager(t, nil)
		ctx := context.Background()
		ref, err := p.Trigger(ctx, page("r-1"))
		if err != nil {
			t.Fatal(err)
		}
		if ref.DedupKey != pager.DedupKey("", "s-42", "r-1") || ref.Pager != p.Name() {
			t.Fatalf("ref = %+v", ref)
		}
		if v.kind == pager.KindOpsgenie && ref.VendorID == "" {
			t.Fatal("Opsgenie's requestId was not returned")
		}
		in := v.incidents()
		if len(in) != 1 || in[0].key != ref.DedupKey || in[0].closed {
			t.Fatalf("incidents after trigger = %+v", in)
		}
		if in[0].link != "https://signoff.example.com/#/q/r-1" {
			t.Fatalf("link = %q", in[0].link)
		}
		if !strings.Contains(in[0].summary, "terraform apply") {
			t.Fatalf("summary = %q", in[0].summary)
		}
		for k, want := range map[string]string{"request_id": "r-1", "team": "ops", "tool": "Bash", "session_id": "s-42", "agent": "claude-1"} {
			if in[0].details[k] != want {
				t.Fatalf("details[%s] = %q, want %q (all: %v)", k, in[0].details[k], want, in[0].details)
			}
		}
		if want := map[pager.Kind]string{pager.KindPagerDuty: "error", pager.KindOpsgenie: "P2"}[v.kind]; in[0].severity != want {
			t.Fatalf("severity = %q, want the default %q", in[0].severity, want)
		}
		if err := p.Resolve(ctx, ref.DedupKey); err != nil {
			t.Fatal(err)
		}
		if in := v.incidents(); len(in) != 1 || !in[0].closed {
			t.Fatalf("incidents after resolve = %+v", in)
		}
	})
}

func TestDuplicateTriggersFromReplicasAreOneIncident(t *testing.T) {
	forEachVendor(t, func(t *testing.T, v *vendor) {
		// Two brokers, each with its own pager built from the same config.
		a, _ := v.newPager(t, nil)
		b, _ := v.newPager(t, nil)
		var wg sync.WaitGroup
		errs := make(chan error, 6)
		for i := range 6 {
			p := a
			if i%2 == 1 {
				p = b
			}
			wg.Go(func() {
				_, err := p.Trigger(context.Background(), page("r-dup"))
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		in := v.incidents()
		if len(in) != 1 || in[0].count != 6 {
			t.Fatalf("incidents = %+v, want one with 6 triggers folded in", in)
		}
	})
}

func TestResolveOfAnUnknownOrClosedIncidentSucceeds(t *testing.T) {
	forEachVendor(t, func(t *testing.T, v *vendor) {
		p, _ := v.newPager(t, nil)
		ctx := context.Background()
		if err := p.Resolve(ctx, pager.DedupKey("", "s-42", "never-paged")); err != nil {
			t.Fatalf("resolve of an unknown incident: %v", err)
		}
		ref, err := p.Trigger(ctx, page("r-2"))
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if err := p.Resolve(ctx, ref.DedupKey); err != nil {
				t.Fatalf("resolve %d: %v", i+1, err)
			}
		}
		if v.kind == pager.KindOpsgenie {
			// Some Opsgenie front ends answer 404 for an alias with no
			// alert: still nothing open, still a success.
			v.inject(pagertest.Fault{Status: 404, Body: `{"message":"Alert does not exist","took":0.0,"requestId":"x"}`})
			if err := p.Resolve(ctx, ref.DedupKey); err != nil {
				t.Fatalf("resolve answered 404: %v", err)
			}
		}
		// After a resolve, a new trigger opens a new incident (the vendor's
		// documented behaviour the escalation code relies on).
		if _, err := p.Trigger(ctx, page("r-2")); err != nil {
			t.Fatal(err)
		}
		if in := v.incidents(); len(in) != 2 || !in[0].closed || in[1].closed {
			t.Fatalf("incidents = %+v", in)
		}
	})
}

func TestRateLimitIsWaitedOutForRetryAfter(t *testing.T) {
	forEachVendor(t, func(t *testing.T, v *vendor) {
		p, logs := v.newPager(t, nil)
		v.inject(pagertest.Fault{Status: 429, RetryAfter: time.Second})
		start := time.Now()
		if _, err := p.Trigger(context.Background(), page("r-429")); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited < time.Second {
			t.Fatalf("retried after %v; Retry-After asked for 1s", waited)
		}
		if n := v.requests(); n != 2 {
			t.Fatalf("requests = %d, want 2", n)
		}
		if in := v.incidents(); len(in) != 1 || in[0].count != 1 {
			t.Fatalf("incidents = %+v", in)
		}
		if !strings.Contains(logs.String(), "status=429") {
			t.Fatalf("the retry was not logged:\n%s", logs)
		}
	})
}

func TestRetryAfterLongerThanTheLimitFailsAtOnce(t *testing.T) {
	forEachVendor(t, func(t *testing.T, v *vendor) {
		p, _ := v.newPager(t, func(c *pager.Config) { c.MaxRetryAfter = 5 * time.Second })
		v.inject(pagertest.Fault{Status: 429, RetryAfter: time.Minute})
		start := time.Now()
		_, err := p.Trigger(context.Background(), page("r-429-long"))
		var ae *pager.APIError
		if !errors.Is(err, pager.ErrRateLimited) || !errors.As(err, &ae) || ae.RetryAfter != time.Minute {
			t.Fatalf("err = %v, want ErrRateLimited with retry after 1m", err)
		}
		if time.Since(start) > 2*time.Second || v.requests() != 1 {
			t.Fatalf("waited %v and sent %d requests; want an immediate failure", time.Since(start), v.requests())
		}
		if !ae.Temporary() {
			t.Fatal("a rate limit must be temporary")
		}
	})
}

func TestServerErrorsAreRetriedUntilAccepted(t *testing.T) {
	forEachVendor(t, func(t *testing.T, v *vendor) {
		p, _ := v.newPager(t, nil)
		v.inject(pagertest.Fault{Status: 500}, pagertest.Fault{Status: 503}, pagertest.Fault{Status: 502, Body: "<html>bad gateway</html>"})
		if _, err := p.Trigger(context.Background(), page("r-5xx")); err != nil {
			t.Fatal(err)
		}
		if n := v.requests(); n != 4 {
			t.Fatalf("requests = %d, want 4", n)
		}
		if in := v.incidents(); len(in) != 1 {
			t.Fatalf("incidents = %+v", in)
		}
	})
}

func TestServerErrorsThatOutlastTheAttemptsAreUnavailable(t *testing.T) {
	forEachVendor(t, func(t *testing.T, v *vendor) {
		p, _ := v.newPager(t, func(c *pager.Config) { c.MaxAttempts = 3 })
		v.inject(pagertest.Fault{Status: 500}, pagertest.Fault{Status: 500}, pagertest.Fault{Status: 503})
		err := p.Resolve(context.Background(), pager.DedupKey("", "s-42", "r-down"))
		var ae *pager.APIError
		if !errors.Is(err, pager.ErrUnavailable) || !errors.As(err, &ae) || ae.Attempts != 3 || ae.Status != 503 {
			t.Fatalf("err = %v, want ErrUnavailable after 3 attempts ending in 503", err)
		}
		if v.requests() != 3 {
			t.Fatalf("requests = %d, want 3", v.requests())
		}
	})
}

func TestSlowAnswersPastTheTimeoutAreRetried(t *testing.T) {
	forEachVendor(t, func(t *testing.T, v *vendor) {
		p, _ := v.newPager(t, func(c *pager.Config) { c.Timeout = 300 * time.Millisecond })
		// The fake gives up holding the answer when the client does, so
		// this costs one timeout, not the delay.
		v.inject(pagertest.Fault{Delay: 10 * time.Second})
		if _, err := p.Trigger(context.Background(), page("r-slow")); err != nil {
			t.Fatal(err)
		}
		if n := v.requests(); n < 2 {
			t.Fatalf("requests = %d, want the timed-out one retried", n)
		}
		if in := v.incidents(); len(in) != 1 {
			t.Fatalf("incidents = %+v", in)
		}
	})
}

func TestRejectionsArePermanentAndCarryTheVendorsReason(t *testing.T) {
	forEachVendor(t, func(t *testing.T, v *vendor) {
		// A well-formed key the vendor does not know.
		var status int
		var reason string
		p, _ := v.newPager(t, func(c *pager.Config) {
			if c.Kind == pager.KindPagerDuty {
				c.RoutingKeyFile = writeKey(t, strings.Repeat("x", 32))
				status, reason = 400, "Invalid routing key"
			} else {
				c.APIKeyFile = writeKey(t, "00000000-0000-4000-8000-000000000000")
				status, reason = 401, "Could not authenticate"
			}
		})
		assertRejected(t, v, p, status, reason, 1)
		// A field the vendor refuses, named in its answer.
		good, _ := v.newPager(t, nil)
		if v.kind == pager.KindPagerDuty {
			v.inject(pagertest.Fault{Status: 400, Body: `{"status":"invalid event","message":"Event object is invalid","errors":["'payload.summary' is missing or blank"]}`})
			reason = "Event object is invalid ['payload.summary' is missing or blank]"
		} else {
			v.inject(pagertest.Fault{Status: 422, Body: `{"message":"Request body is not processable. Please check the errors.","errors":{"message":"Message can not be empty."},"took":0.0,"requestId":"r"}`})
			reason = "Please check the errors. [message: Message can not be empty.]"
		}
		assertRejected(t, v, good, v.rejectStatus, reason, 2)
	})
}

func assertRejected(t *testing.T, v *vendor, p pager.Pager, status int, reason string, requests int) {
	t.Helper()
	_, err := p.Trigger(context.Background(), page("r-bad"))
	var ae *pager.APIError
	if !errors.Is(err, pager.ErrRejected) || !errors.As(err, &ae) {
		t.Fatalf("err = %v, want ErrRejected", err)
	}
	if ae.Status != status || ae.Temporary() || ae.Attempts != 1 {
		t.Fatalf("APIError = %+v", ae)
	}
	if !strings.Contains(err.Error(), reason) {
		t.Fatalf("error %q does not carry the vendor's reason %q", err, reason)
	}
	if v.requests() != requests {
		t.Fatalf("a permanent error was retried: %d requests", v.requests())
	}
	if len(v.incidents()) != 0 {
		t.Fatalf("a rejected trigger opened an incident")
	}
}

func TestCancellationStopsRetries(t *testing.T) {
	forEachVendor(t, func(t *testing.T, v *vendor) {
		p, _ := v.newPager(t, func(c *pager.Config) {
			c.MaxAttempts = 20
			c.MinBackoff, c.MaxBackoff = 50*time.Millisecond, 50*time.Millisecond
		})
		for range 20 {
			v.inject(pagertest.Fault{Status: 503})
		}
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(120*time.Millisecond, cancel)
		start := time.Now()
		_, err := p.Trigger(ctx, page("r-cancel"))
		if !errors.Is(err, context.Canceled) || !errors.Is(err, pager.ErrUnavailable) {
			t.Fatalf("err = %v, want context.Canceled joined with the last 503", err)
		}
		if d := time.Since(start); d > time.Second {
			t.Fatalf("returned %v after the cancel", d)
		}
		if n := v.requests(); n >= 10 {
			t.Fatalf("%d requests: retries did not stop", n)
		}
	})
}

func TestDeadlineShorterThanTheNextWaitFailsNow(t *testing.T) {
	forEachVendor(t, func(t *testing.T, v *vendor) {
		p, _ := v.newPager(t, nil)
		v.inject(pagertest.Fault{Status: 429, RetryAfter: 5 * time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		start := time.Now()
		_, err := p.Trigger(ctx, page("r-deadline"))
		if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, pager.ErrRateLimited) {
			t.Fatalf("err = %v", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("waited %v for a wait that could not end before the deadline", d)
		}
	})
}

func TestInvalidPagesSendNothing(t *testing.T) {
	forEachVendor(t, func(t *testing.T, v *vendor) {
		p, _ := v.newPager(t, nil)
		for name, mod := range map[string]func(*pager.Page){
			"no request id":               func(pg *pager.Page) { pg.RequestID = "" },
			"a request id with a dot":     func(pg *pager.Page) { pg.RequestID = "a.b" },
			"an empty summary":            func(pg *pager.Page) { pg.Summary = " \n\t" },
			"a javascript link":           func(pg *pager.Page) { pg.Link = "javascript:alert(1)" },
			"a link with credentials":     func(pg *pager.Page) { pg.Link = "https://u:p@example.com/" },
			"a relative link":             func(pg *pager.Page) { pg.Link = "/q/1" },
			"a severity the vendors lack": func(pg *pager.Page) { pg.Severity = "sev1" },
		} {
			pg := page("r-invalid")
			mod(&pg)
			if _, err := p.Trigger(context.Background(), pg); !errors.Is(err, pager.ErrInvalidPage) {
				t.Errorf("%s: err = %v, want ErrInvalidPage", name, err)
			}
		}
		if err := p.Resolve(context.Background(), ""); !errors.Is(err, pager.ErrInvalidPage) {
			t.Errorf("empty dedup key: err = %v", err)
		}
		if n := v.requests(); n != 0 {
			t.Fatalf("%d requests sent for invalid pages", n)
		}
	})
}

func TestAgentTextIsCleanedAndCutToTheVendorsLimits(t *testing.T) {
	forEachVendor(t, func(t *testing.T, v *vendor) {
		p, _ := v.newPager(t, nil)
		pg := page("r-long")
		// Control characters and a bidi override could make the title read
		// as something else; the summary is far over both limits.
		pg.Summary = "rm -rf /\x1b[2J\u202Eevil\n" + strings.Repeat("é", 3000)
		pg.Description = strings.Repeat("d", 20000)
		pg.Details = map[string]string{"big": strings.Repeat("v", 9000)}
		pg.Severity = pager.SeverityCritical
		if _, err := p.Trigger(context.Background(), pg); err != nil {
			t.Fatal(err) // the fake refuses anything over a documented limit
		}
		in := v.incidents()[0]
		if strings.ContainsAny(in.summary, "\x1b\u202E\n") {
			t.Fatalf("summary kept control characters: %q", in.summary[:40])
		}
		if !strings.HasSuffix(in.summary, "…") {
			t.Fatalf("summary was not marked as cut: …%q", in.summary[len(in.summary)-10:])
		}
		if want := map[pager.Kind]string{pager.KindPagerDuty: "critical", pager.KindOpsgenie: "P1"}[v.kind]; in.severity != want {
			t.Fatalf("severity = %q, want %q", in.severity, want)
		}
		if v.kind == pager.KindPagerDuty {
			if d := in.details["description"]; utf8.RuneCountInString(d) > 16384 || !strings.HasSuffix(d, "…") {
				t.Fatalf("description detail of %d characters was not cut", utf8.RuneCountInString(d))
			}
		}
		if in.link != pg.Link {
			t.Fatalf("the link was lost when the text was cut: %q", in.link)
		}
		if in.details["request_id"] != "r-long" {
			t.Fatalf("the request id was dropped to fit the details: %v", in.details)
		}
	})
}

func TestCheckHealth(t *testing.T) {
	forEachVendor(t, func(t *testing.T, v *vendor) {
		p, _ := v.newPager(t, nil)
		ctx := context.Background()
		if err := p.CheckHealth(ctx); err != nil {
			t.Fatalf("healthy vendor: %v", err)
		}
		v.inject(pagertest.Fault{Status: 503})
		if err := p.CheckHealth(ctx); !errors.Is(err, pager.ErrUnavailable) {
			t.Fatalf("vendor answering 503: err = %v", err)
		}
		if v.kind == pager.KindOpsgenie {
			bad, _ := v.newPager(t, func(c *pager.Config) { c.APIKeyFile = writeKey(t, "wrong-key-0000") })
			err := bad.CheckHealth(ctx)
			var ae *pager.APIError
			if !errors.As(err, &ae) || ae.Status != 401 || !strings.Contains(err.Error(), "Could not authenticate") {
				t.Fatalf("rejected key: err = %v", err)
			}
		}
		if len(v.incidents()) != 0 {
			t.Fatal("a health check created an incident")
		}
		down, _ := v.newPager(t, func(c *pager.Config) { c.BaseURL = "http://127.0.0.1:1" })
		if err := down.CheckHealth(ctx); !errors.Is(err, pager.ErrUnavailable) {
			t.Fatalf("unreachable vendor: err = %v", err)
		}
	})
}

func TestNetworkErrorsAreRetriedAndReported(t *testing.T) {
	forEachVendor(t, func(t *testing.T, v *vendor) {
		p, logs := v.newPager(t, func(c *pager.Config) { c.BaseURL = "http://127.0.0.1:1"; c.MaxAttempts = 3 })
		_, err := p.Trigger(context.Background(), page("r-net"))
		var ae *pager.APIError
		if !errors.Is(err, pager.ErrUnavailable) || !errors.As(err, &ae) || ae.Status != 0 || ae.Attempts != 3 {
			t.Fatalf("err = %v", err)
		}
		if strings.Count(logs.String(), "retrying") != 2 || strings.Count(logs.String(), "request_id=r-net") != 2 ||
			!strings.Contains(logs.String(), `pager \"`+p.Name()+`\"`) {
			t.Fatalf("want 2 retries logged, naming the request and the pager:\n%s", logs)
		}
	})
}

func TestCancellationDuringASlowAnswerIsOnlyTheCancellation(t *testing.T) {
	forEachVendor(t, func(t *testing.T, v *vendor) {
		p, _ := v.newPager(t, nil)
		v.inject(pagertest.Fault{Delay: 2 * time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		err := p.Resolve(ctx, pager.DedupKey("", "s-42", "r-slow-cancel"))
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, pager.ErrUnavailable) || errors.Is(err, pager.ErrRejected) {
			t.Fatalf("err = %v, want only the deadline", err)
		}
		if v.requests() != 1 {
			t.Fatalf("requests = %d", v.requests())
		}
	})
}

package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/webhook"
	"github.com/signoff-dev/signoff/pkg/messages"
)

func question(id string) approverbot.Question {
	return approverbot.Question{ApprovalNeeded: messages.ApprovalNeeded{
		Team:      "default",
		Request:   messages.Request{V: 1, RequestID: id, SessionID: "s1", AgentID: "a1", Tool: "bash", Arguments: json.RawMessage(`{"command":"make"}`)},
		ExpiresAt: time.Now().Add(time.Minute),
	}}
}

func newChannel(t *testing.T, url string, o webhook.Options) *webhook.Channel {
	t.Helper()
	ch, err := webhook.New(testConfig(t, url), o)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func TestNewRefusesAnIncompleteConfig(t *testing.T) {
	cases := []struct {
		name   string
		change func(*approverbot.Config)
		want   string
	}{
		{"no webhook section", func(c *approverbot.Config) { delete(c.Channels, webhook.Name) }, "not configured"},
		{"a URL that is not http", func(c *approverbot.Config) { c.Channels[webhook.Name].(*webhook.Config).URL = "file:///etc/passwd" }, "not an http(s) URL"},
		{"a short secret", func(c *approverbot.Config) { c.Channels[webhook.Name].(*webhook.Config).Secret = "short" }, "at least 16 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t, "https://hooks.example/signoff")
			c.change(cfg)
			if _, err := webhook.New(cfg, webhook.Options{}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New = %v, want an error about %s", err, c.want)
			}
		})
	}
}

func TestDeliveryRetriesServerErrorsWithTheSameDeliveryAndFreshSignatures(t *testing.T) {
	recv := newReceiver(t)
	recv.failNext(http.StatusServiceUnavailable, http.StatusBadGateway)
	ch := newChannel(t, recv.srv.URL, quietOptions())
	if err := ch.Ask(context.Background(), question("r1")); err != nil {
		t.Fatalf("Ask: %v", err)
	}
	var ids []string
	for range 3 {
		d := recv.next(t, "approval_needed", "r1")
		ids = append(ids, d.Delivery)
	}
	if ids[0] == "" || ids[0] != ids[1] || ids[1] != ids[2] {
		t.Errorf("delivery ids %v, want one id across the retries", ids)
	}
	if n := recv.rec.Calls("approval_needed"); n != 3 {
		t.Errorf("receiver recorded %d approval_needed posts, want 3 (two failures, one success)", n)
	}
	if err := ch.CheckHealth(context.Background()); err != nil {
		t.Errorf("CheckHealth after a delivery = %v", err)
	}
}

func TestDeliveryDoesNotRetryAClientError(t *testing.T) {
	recv := newReceiver(t)
	recv.failNext(http.StatusBadRequest)
	ch := newChannel(t, recv.srv.URL, quietOptions())
	err := ch.Resolve(context.Background(), messages.Resolved{RequestID: "r1", State: messages.StateExpired})
	if err == nil || !strings.Contains(err.Error(), "HTTP 400: receiver says no (status 400)") {
		t.Fatalf("Resolve = %v, want the receiver's 400 and what it said", err)
	}
	d := recv.next(t, "resolved", "r1")
	if d.Type != "resolved" {
		t.Errorf("body type %q", d.Type)
	}
	select {
	case again := <-recv.got:
		t.Errorf("a 400 was retried: %+v", again)
	default:
	}
	if err := ch.CheckHealth(context.Background()); err == nil {
		t.Error("CheckHealth after a failed delivery = nil")
	}
	if err := ch.Ask(context.Background(), question("r2")); err != nil {
		t.Fatal(err)
	}
	if err := ch.CheckHealth(context.Background()); err != nil {
		t.Errorf("CheckHealth after a good delivery = %v", err)
	}
}

func TestDeliveryHonoursRetryAfter(t *testing.T) {
	recv := newReceiver(t)
	recv.retryAfter = "1"
	recv.failNext(http.StatusTooManyRequests)
	o := quietOptions()
	o.MaxBackoff = 5 * time.Second
	ch := newChannel(t, recv.srv.URL, o)
	start := time.Now()
	if err := ch.Ask(context.Background(), question("r1")); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("retried after %v, before Retry-After (1 s)", waited)
	}
}

func TestDeliveryGivesUpAfterMaxAttemptsWithoutLeakingTheURL(t *testing.T) {
	o := quietOptions()
	o.MaxAttempts = 2
	// A closed port; the query string stands for a credential in the URL.
	ch := newChannel(t, "http://127.0.0.1:1/hook?token=URLSECRET123", o)
	err := ch.Ask(context.Background(), question("r1"))
	if err == nil || strings.Contains(err.Error(), "URLSECRET123") || !strings.Contains(err.Error(), "http://127.0.0.1:1") {
		t.Errorf("Ask = %v, want an error naming the host but not the URL's credential", err)
	}
}

func TestDeliveryStopsWhenTheContextEnds(t *testing.T) {
	recv := newReceiver(t)
	recv.failNext(500, 500, 500, 500)
	o := quietOptions()
	o.MinBackoff, o.MaxBackoff = time.Hour, time.Hour
	ch := newChannel(t, recv.srv.URL, o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ch.Ask(ctx, question("r1")) }()
	recv.next(t, "approval_needed", "r1")
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Ask = %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Ask kept waiting after its context ended")
	}
}

package webhook_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot/webhook"
)

func TestSignatureMatchesTheDocumentedConstruction(t *testing.T) {
	// HMAC-SHA256("whsec-0123456789abcdef-test", "1700000000.{}"), computed
	// independently: printf '1700000000.{}' | openssl dgst -sha256 -hmac whsec-0123456789abcdef-test
	const want = "sha256=0d49c09f7fa072d2af7925f83acf2331470b207054d299b058ebf34380aa2867"
	got := webhook.Signature(testSecret, "1700000000", []byte("{}"))
	if got != want {
		t.Errorf("Signature = %s, want %s", got, want)
	}
}

func TestVerify(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	body := []byte(`{"request_id":"r1","approver":"alice","approved":true}`)
	sign := func(at time.Time) http.Header {
		h := http.Header{}
		webhook.Sign(h, testSecret, at, body)
		return h
	}
	with := func(h http.Header, k, v string) http.Header {
		h = h.Clone()
		h.Set(k, v)
		return h
	}
	good := sign(now)
	cases := []struct {
		name    string
		header  http.Header
		body    []byte
		wantErr error
	}{
		{"a request signed now", good, body, nil},
		{"a request signed 4 minutes ago", sign(now.Add(-4 * time.Minute)), body, nil},
		{"a request signed 4 minutes ahead", sign(now.Add(4 * time.Minute)), body, nil},
		{"a changed body", good, append([]byte(" "), body...), webhook.ErrBadSignature},
		{"a request signed 6 minutes ago", sign(now.Add(-6 * time.Minute)), body, webhook.ErrStaleRequest},
		{"a timestamp in milliseconds", with(good, webhook.HeaderTimestamp, "1700000000000"), body, webhook.ErrStaleRequest},
		{"a timestamp with a fraction", with(good, webhook.HeaderTimestamp, "1700000000.5"), body, webhook.ErrStaleRequest},
		{"no signature", with(good, webhook.HeaderSignature, ""), body, webhook.ErrBadSignature},
		{"a bare hex signature", with(good, webhook.HeaderSignature, good.Get(webhook.HeaderSignature)[7:]), body, webhook.ErrBadSignature},
		{"a signature that is not hex", with(good, webhook.HeaderSignature, "sha256=xyz"), body, webhook.ErrBadSignature},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := webhook.Verify(testSecret, c.header, c.body, now); !errors.Is(err, c.wantErr) {
				t.Errorf("Verify = %v, want %v", err, c.wantErr)
			}
		})
	}
}

func BenchmarkVerify(b *testing.B) {
	now := time.Now()
	body := []byte(`{"request_id":"r1","approver":"alice","approved":false,"reject_mode":"reject_soft","feedback":"use make test instead"}`)
	h := http.Header{}
	webhook.Sign(h, testSecret, now, body)
	for b.Loop() {
		if err := webhook.Verify(testSecret, h, body, now); err != nil {
			b.Fatal(err)
		}
	}
}

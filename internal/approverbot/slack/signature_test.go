package slack_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot/slack"
	"github.com/signoff-dev/signoff/internal/approverbot/slack/slacktest"
)

func TestVerify(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	body := []byte("payload=%7B%22type%22%3A%22block_actions%22%7D")
	with := func(h http.Header, key, value string) http.Header {
		h = h.Clone()
		if value == "" {
			h.Del(key)
		} else {
			h.Set(key, value)
		}
		return h
	}
	good := slacktest.Sign(testSecret, now, body)
	cases := []struct {
		name    string
		header  http.Header
		body    []byte
		wantErr error
	}{
		{"a request Slack signed just now", good, body, nil},
		{"a request signed 4 minutes ago", slacktest.Sign(testSecret, now.Add(-4*time.Minute), body), body, nil},
		{"a request signed with another secret", slacktest.Sign("other", now, body), body, slack.ErrBadSignature},
		{"a changed body", good, append([]byte{}, append(body, '&')...), slack.ErrBadSignature},
		{"a request signed 6 minutes ago", slacktest.Sign(testSecret, now.Add(-6*time.Minute), body), body, slack.ErrStaleRequest},
		{"a request signed 6 minutes ahead", slacktest.Sign(testSecret, now.Add(6*time.Minute), body), body, slack.ErrStaleRequest},
		{"no timestamp", with(good, slack.HeaderTimestamp, ""), body, slack.ErrStaleRequest},
		{"a timestamp that is not a number", with(good, slack.HeaderTimestamp, "yesterday"), body, slack.ErrStaleRequest},
		{"no signature", with(good, slack.HeaderSignature, ""), body, slack.ErrBadSignature},
		{"a signature of another version", with(good, slack.HeaderSignature, "v1="+good.Get(slack.HeaderSignature)[3:]), body, slack.ErrBadSignature},
		{"a signature that is not hex", with(good, slack.HeaderSignature, "v0=zz"), body, slack.ErrBadSignature},
		{"a truncated signature", with(good, slack.HeaderSignature, good.Get(slack.HeaderSignature)[:20]), body, slack.ErrBadSignature},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := slack.Verify(testSecret, c.header, c.body, now); !errors.Is(err, c.wantErr) {
				t.Errorf("Verify = %v, want %v", err, c.wantErr)
			}
		})
	}
}

func BenchmarkVerify(b *testing.B) {
	now := time.Now()
	body := make([]byte, 8<<10)
	h := slacktest.Sign(testSecret, now, body)
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if err := slack.Verify(testSecret, h, body, now); err != nil {
			b.Fatal(err)
		}
	}
}

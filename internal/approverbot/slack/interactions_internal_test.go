package slack

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"
)

func TestResponseURLAllowedOnlyForSlackOrTheConfiguredAPIHost(t *testing.T) {
	api, _ := url.Parse("http://127.0.0.1:8080/api")
	c := &Channel{apiURL: api}
	cases := []struct {
		url  string
		want bool
	}{
		{"https://hooks.slack.com/actions/T1/2/abc", true},
		{"https://hooks.slack-gov.com/actions/T1/2/abc", true},
		{"http://127.0.0.1:8080/_response/1", true},
		{"http://hooks.slack.com/actions/T1/2/abc", false},
		{"https://slack.com.evil.example/x", false},
		{"https://evilslack.com/x", false},
		{"http://127.0.0.1:9090/x", false},
		{"https://169.254.169.254/latest/meta-data", false},
		{"not a url", false},
	}
	for _, tc := range cases {
		t.Run(tc.url, func(t *testing.T) {
			if got := c.responseURLAllowed(tc.url); got != tc.want {
				t.Errorf("responseURLAllowed(%q) = %v, want %v", tc.url, got, tc.want)
			}
		})
	}
}

func BenchmarkQuestionBlocks(b *testing.B) {
	q := hostileQuestion()
	now := time.Unix(1_700_000_000, 0)
	for b.Loop() {
		if _, err := json.Marshal(questionBlocks(q, now, "")); err != nil {
			b.Fatal(err)
		}
	}
}

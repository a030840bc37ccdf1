package brokerd

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A pager whose key cannot be read stops the start, with the pager and the
// variable named: a broken page must not be found at 3 a.m.
func TestAPagerWithoutItsKeyStopsTheStart(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "policy.yaml")
	src := `mode: auto-edit
pagers:
  oncall-pd: {kind: pagerduty, routing_key_env: SIGNOFF_TEST_UNSET_PD_KEY}
teams:
  default:
    members: [alice]
    escalation: [{after: 1m, page: oncall-pd}]
`
	if err := os.WriteFile(pol, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SIGNOFF_TEST_UNSET_PD_KEY", "")
	o := Options{Dev: true, Listen: "127.0.0.1:0", PolicyFile: pol, LogFormat: "text", NoAudit: true, PolicyInterval: time.Second,
		StoreTimeout: time.Second, ShutdownGrace: time.Second, WebURL: "https://signoff.example.com"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := Run(ctx, o, io.Discard, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "oncall-pd") || !strings.Contains(err.Error(), "SIGNOFF_TEST_UNSET_PD_KEY") {
		t.Fatalf("Run = %v, want a start failure naming the pager and its variable", err)
	}
}

func TestAWebURLMustBeAnAbsoluteURLWithoutCredentialsOrQuery(t *testing.T) {
	for _, bad := range []string{"signoff.example.com", "ftp://x", "https://user:pw@x.example", "https://x.example/?a=b"} {
		o := Options{Dev: true, LogFormat: "text", WebURL: bad}
		if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--web-url") {
			t.Errorf("--web-url %q: %v, want an error", bad, err)
		}
	}
	o := Options{Dev: true, LogFormat: "text", WebURL: "https://signoff.example.com/"}
	if err := o.Validate(); err != nil {
		t.Errorf("a good --web-url: %v", err)
	}
}

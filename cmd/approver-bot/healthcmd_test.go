package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestHealthSubcommandProbesReadyz: `approver-bot health` is the image's
// healthcheck (no shell in it): exit 0 on a 200 from --url, 1 with the
// endpoint's reason otherwise.
func TestHealthSubcommandProbesReadyz(t *testing.T) {
	var ready atomic.Bool
	ready.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" || !ready.Load() {
			http.Error(w, "nats: not connected (RECONNECTING)", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	code, _, stderr := runCmd([]string{"health", "--url", srv.URL + "/readyz"}, "", nil)
	if code != 0 {
		t.Fatalf("ready bot: exit %d, stderr %q", code, stderr)
	}
	ready.Store(false)
	code, _, stderr = runCmd([]string{"health", "--url", srv.URL + "/readyz"}, "", nil)
	if code != 1 || !strings.Contains(stderr, "nats: not connected") {
		t.Fatalf("unready bot: exit %d, stderr %q; want 1 and the reason", code, stderr)
	}
}

package healthcheck

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestMainExitsByTheEndpointsAnswer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/readyz":
			fmt.Fprintln(w, "ok")
		case "/slow":
			time.Sleep(500 * time.Millisecond)
		case "/moved":
			http.Redirect(w, r, "/readyz", http.StatusFound)
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "store: redis: connection refused")
		}
	}))
	defer srv.Close()
	tests := []struct {
		name       string
		args       []string
		wantStatus int
		wantErr    string
	}{
		{"ready by default", nil, 0, ""},
		{"not ready, with the endpoint's reason", []string{"--url", srv.URL + "/notready"}, 1, "503 Service Unavailable: store: redis: connection refused"},
		{"too slow", []string{"--url", srv.URL + "/slow", "--timeout", "50ms"}, 1, "deadline exceeded"},
		{"a redirect is not health", []string{"--url", srv.URL + "/moved"}, 1, "do not redirect"},
		{"nothing listening", []string{"--url", "http://127.0.0.1:1/readyz"}, 1, "connection refused"},
		{"a URL that is not http", []string{"--url", "nats://127.0.0.1:4222"}, 1, "want http://host:port/path"},
		{"a stray argument", []string{"now"}, 2, `unexpected argument "now"`},
		{"a zero timeout", []string{"--timeout", "0s"}, 2, "must be positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Main("x health", tc.args, srv.URL+"/readyz", &out, &errOut)
			if code != tc.wantStatus {
				t.Fatalf("exit %d, want %d (stderr %q)", code, tc.wantStatus, errOut.String())
			}
			if !strings.Contains(errOut.String(), tc.wantErr) {
				t.Errorf("stderr %q does not contain %q", errOut.String(), tc.wantErr)
			}
		})
	}
}

func TestLocalURLProbesTheLoopbackForAnUnspecifiedAddress(t *testing.T) {
	tests := []struct{ listen, want string }{
		{"0.0.0.0:8080", "http://127.0.0.1:8080/readyz"},
		{":8080", "http://127.0.0.1:8080/readyz"},
		{"[::]:8090", "http://127.0.0.1:8090/readyz"},
		{"127.0.0.1:9000", "http://127.0.0.1:9000/readyz"},
		{"10.0.0.5:8080", "http://10.0.0.5:8080/readyz"},
	}
	for _, tc := range tests {
		got, err := LocalURL(tc.listen, "/readyz")
		if err != nil || got != tc.want {
			t.Errorf("LocalURL(%q) = %q, %v; want %q", tc.listen, got, err, tc.want)
		}
	}
	if _, err := LocalURL("8080", "/readyz"); err == nil {
		t.Error("a listen address without a port was accepted")
	}
}

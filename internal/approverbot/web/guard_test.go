package web

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

func TestStateChangingRequestsAreGuarded(t *testing.T) {
	s := startServer(t, testConfig(t, "", "{insecure_cookies: true}"), Options{},
		newFakeResponder(question("req-1", "make deploy")))
	c, csrf := s.login(t, "alice", alicePassword)
	const body = `{"request_id":"req-1","action":"approve"}`
	tests := []struct {
		name       string
		client     *http.Client
		headers    []string
		wantStatus int
		wantCode   string
	}{
		{"a request without the CSRF token is refused", c,
			[]string{"Content-Type", "application/json"}, 403, "csrf"},
		{"a request with a wrong CSRF token is refused", c,
			[]string{"Content-Type", "application/json", csrfHeader, strings.Repeat("A", len(csrf))}, 403, "csrf"},
		{"a request from another origin is refused", c,
			[]string{"Content-Type", "application/json", csrfHeader, csrf, "Origin", "https://evil.example"}, 403, "cross_origin"},
		{"a cross-site fetch is refused", c,
			[]string{"Content-Type", "application/json", csrfHeader, csrf, "Sec-Fetch-Site", "cross-site"}, 403, "cross_origin"},
		{"a request referred by another site is refused", c,
			[]string{"Content-Type", "application/json", csrfHeader, csrf, "Referer", "https://evil.example/page"}, 403, "cross_origin"},
		{"a request that is not signed in is refused", s.client(t),
			[]string{"Content-Type", "application/json", csrfHeader, csrf}, 401, "unauthenticated"},
		{"a form body is refused", c,
			[]string{"Content-Type", "application/x-www-form-urlencoded", csrfHeader, csrf}, 415, "unsupported_media_type"},
		{"a same-origin request with the token is served", c,
			[]string{"Content-Type", "application/json", csrfHeader, csrf, "Origin", s.srv.URL, "Sec-Fetch-Site", "same-origin"}, 200, ""},
		{"a request without browser headers (curl) with the token is served", c,
			[]string{"Content-Type", "application/json; charset=utf-8", csrfHeader, csrf}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.resp.answerCount()
			res := s.do(t, tt.client, "POST", "/api/respond", body, tt.headers...)
			if res.StatusCode != tt.wantStatus {
				t.Fatalf("status %d, want %d: %s", res.StatusCode, tt.wantStatus, readBody(t, res))
			}
			answered := s.resp.answerCount() > before
			if answered != (tt.wantStatus == 200) {
				t.Fatalf("the responder was called: %v", answered)
			}
			if tt.wantCode != "" {
				if got := errorCode(t, res); got != tt.wantCode {
					t.Fatalf("error code %q, want %q", got, tt.wantCode)
				}
			}
		})
	}
}

func TestLoginFromAnotherOriginIsRefused(t *testing.T) {
	s := startServer(t, testConfig(t, "", "{insecure_cookies: true}"), Options{}, nil)
	res := s.do(t, s.client(t), "POST", "/login", `{"approver":"alice","password":"`+alicePassword+`"}`,
		"Content-Type", "application/json", "Origin", "https://evil.example")
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("a cross-origin login got %s, want 403", res.Status)
	}
	if len(res.Cookies()) != 0 {
		t.Fatal("a refused login set a cookie")
	}
}

func TestSignedOutRequests(t *testing.T) {
	s := startServer(t, testConfig(t, "", "{insecure_cookies: true}"), Options{}, nil)
	c := s.client(t)
	tests := []struct {
		name         string
		method, path string
		bogusCookie  bool
		wantStatus   int
		wantLocation string
	}{
		{"the page redirects to the login form", "GET", "/", false, 303, "/login"},
		{"the question list answers 401", "GET", "/api/questions", false, 401, ""},
		{"the session endpoint answers 401", "GET", "/api/session", false, 401, ""},
		{"the event stream answers 401", "GET", "/events", false, 401, ""},
		{"logout answers 401", "POST", "/logout", false, 401, ""},
		{"the login form is served", "GET", "/login", false, 200, ""},
		{"a bogus cookie does not sign in", "GET", "/api/questions", true, 401, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest(tt.method, s.srv.URL+tt.path, nil)
			if tt.bogusCookie {
				req.AddCookie(&http.Cookie{Name: cookieName, Value: randomToken()})
			}
			res, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != tt.wantStatus || res.Header.Get("Location") != tt.wantLocation {
				t.Fatalf("got %s to %q, want %d to %q", res.Status, res.Header.Get("Location"), tt.wantStatus, tt.wantLocation)
			}
			if tt.wantStatus == 401 {
				if !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
					t.Fatalf("401 reply is %s, want JSON", res.Header.Get("Content-Type"))
				}
				if code := errorCode(t, res); code != "unauthenticated" {
					t.Fatalf("error code %q", code)
				}
			}
		})
	}
}

func TestSecurityHeaders(t *testing.T) {
	s := startServer(t, testConfig(t, "", "{insecure_cookies: true}"), Options{},
		newFakeResponder(question("req-1", "make deploy")))
	c, _ := s.login(t, "alice", alicePassword)
	for _, path := range []string{"/", "/login", "/api/questions", "/api/grants", "/static/app.js", "/static/grants.js", "/static/app.css"} {
		t.Run(path, func(t *testing.T) {
			res := s.do(t, c, "GET", path, "")
			h := res.Header
			csp := h.Get("Content-Security-Policy")
			if !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") ||
				!strings.Contains(csp, "frame-ancestors 'none'") {
				t.Errorf("Content-Security-Policy %q", csp)
			}
			if h.Get("X-Frame-Options") != "DENY" || h.Get("X-Content-Type-Options") != "nosniff" ||
				h.Get("Referrer-Policy") != "same-origin" {
				t.Errorf("X-Frame-Options %q, X-Content-Type-Options %q, Referrer-Policy %q",
					h.Get("X-Frame-Options"), h.Get("X-Content-Type-Options"), h.Get("Referrer-Policy"))
			}
		})
	}
}

// The CSP forbids inline script and style; a page that had any would break
// in browsers, so none may exist.
func TestPagesHaveNoInlineScriptOrStyle(t *testing.T) {
	s := startServer(t, testConfig(t, "", "{insecure_cookies: true}"), Options{},
		newFakeResponder(question("req-1", "make deploy")))
	c, _ := s.login(t, "alice", alicePassword)
	inline := regexp.MustCompile(`(?i)<script(\s[^>]*)?>\s*[^<\s]|<style|\sstyle=|\son[a-z]+=`)
	scripts := regexp.MustCompile(`(?i)<script[^>]*>`)
	for _, path := range []string{"/", "/login"} {
		client := c
		if path == "/login" {
			client = s.client(t)
		}
		body := readBody(t, s.do(t, client, "GET", path, ""))
		if m := inline.FindString(body); m != "" {
			t.Errorf("%s has inline script or style: %q", path, m)
		}
		for _, tag := range scripts.FindAllString(body, -1) {
			if !strings.Contains(tag, `src="/static/`) {
				t.Errorf("%s has a script tag without a static src: %s", path, tag)
			}
		}
	}
}

func TestStaticFiles(t *testing.T) {
	s := startServer(t, testConfig(t, "", "{insecure_cookies: true}"), Options{}, nil)
	c := s.client(t)
	tests := []struct {
		name, path    string
		wantStatus    int
		wantType      string
		wantImmutable bool
	}{
		{"the script with its version is cached for good", "/static/app.js?v=" + assetVersion["app.js"], 200, "text/javascript", true},
		{"the style sheet without a version is revalidated", "/static/app.css", 200, "text/css", false},
		{"the folder is not listed", "/static/", 404, "", false},
		{"unknown files are not found", "/static/channel.go", 404, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.do(t, c, "GET", tt.path, "")
			if res.StatusCode != tt.wantStatus {
				t.Fatalf("status %s, want %d", res.Status, tt.wantStatus)
			}
			if tt.wantType != "" && !strings.HasPrefix(res.Header.Get("Content-Type"), tt.wantType) {
				t.Fatalf("Content-Type %q, want %s", res.Header.Get("Content-Type"), tt.wantType)
			}
			if immutable := strings.Contains(res.Header.Get("Cache-Control"), "immutable"); tt.wantStatus == 200 && immutable != tt.wantImmutable {
				t.Fatalf("Cache-Control %q", res.Header.Get("Cache-Control"))
			}
		})
	}
}

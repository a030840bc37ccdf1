package httpapitest

import (
	"net/http"
	"net/http/httptest"
)

// Server is what the fakes of named-call APIs (slacktest, telegramtest)
// share: the HTTP test server, the [Recorder] of the calls it receives and
// the [Faults] a test injects. A fake embeds it and calls [Server.Start]
// with its handler, which records each call with Recorder and asks Faults
// what to fail.
type Server struct {
	srv    *httptest.Server
	rec    Recorder
	faults Faults
}

// Start serves h until Close is called.
func (s *Server) Start(h http.Handler) { s.srv = httptest.NewServer(h) }

// URL is the server's base URL.
func (s *Server) URL() string { return s.srv.URL }

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Recorder is the recorder of the calls the fake received.
func (s *Server) Recorder() *Recorder { return &s.rec }

// Faults are the failures injected into the fake.
func (s *Server) Faults() *Faults { return &s.faults }

// RateLimit makes the next call of method fail with HTTP 429 and a wait
// of seconds, as the service's rate limiter answers.
func (s *Server) RateLimit(method string, seconds int) { s.faults.RateLimit(method, seconds) }

// SetDown makes every call fail with 503 and a page that is not the
// service's (an outage, a proxy in the way) while down is set.
func (s *Server) SetDown(down bool) { s.faults.SetDown(down) }

// Calls reports how many times method was called (rate-limited calls
// included).
func (s *Server) Calls(method string) int { return s.rec.Calls(method) }

// Recorded returns the calls the fake recorded, oldest first.
func (s *Server) Recorded() []Recorded { return s.rec.Requests() }

package httpapitest

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"
)

// maxBody bounds what the recorder reads of one request body.
const maxBody = 8 << 20

// Recorded is one request a fake received.
type Recorded struct {
	// Call is the fake's name for the request ("chat.postMessage",
	// "sendMessage", "enqueue"; empty when the fake has one endpoint).
	Call   string
	Method string // HTTP method
	Path   string // the URL's path as received (it may hold a token)
	Header http.Header
	Body   []byte
	At     time.Time
}

// Recorder records the requests a fake receives. It is safe for
// concurrent use; the zero value is ready.
type Recorder struct {
	mu    sync.Mutex
	reqs  []Recorded
	calls map[string]int
}

// Record records r as call and returns its body. r.Body is replaced by a
// reader of the same bytes, so the handler reads it as if nothing had.
func (rec *Recorder) Record(call string, r *http.Request) []byte {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(io.LimitReader(r.Body, maxBody))
		_ = r.Body.Close()
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.calls == nil {
		rec.calls = map[string]int{}
	}
	rec.calls[call]++
	rec.reqs = append(rec.reqs, Recorded{Call: call, Method: r.Method, Path: r.URL.Path,
		Header: r.Header.Clone(), Body: body, At: time.Now()})
	return body
}

// Calls reports how many requests were recorded as call.
func (rec *Recorder) Calls(call string) int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return rec.calls[call]
}

// Total reports how many requests were recorded.
func (rec *Recorder) Total() int {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return len(rec.reqs)
}

// Requests returns the recorded requests, oldest first (a copy).
func (rec *Recorder) Requests() []Recorded {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return slices.Clone(rec.reqs)
}

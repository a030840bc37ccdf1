package pagertest

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/signoff-dev/signoff/internal/httpapi/httpapitest"
)

// Fault is an answer injected in place of the next request's normal one.
type Fault struct {
	// Status is the HTTP status to answer (0: answer normally, after
	// Delay).
	Status int
	// RetryAfter, when set, is sent as Retry-After (whole seconds).
	RetryAfter time.Duration
	// Body is sent as is (empty: the vendor's usual error body).
	Body string
	// Delay holds the answer back; a client whose timeout is shorter sees
	// a network error.
	Delay time.Duration
}

// faults is the queue of injected answers shared by both fakes.
type faults struct {
	mu    sync.Mutex
	queue []Fault
	rec   httpapitest.Recorder
}

// Inject queues faults; each request takes the next one.
func (f *faults) Inject(fs ...Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queue = append(f.queue, fs...)
}

// Requests is how many requests arrived, faulted ones included.
func (f *faults) Requests() int { return f.rec.Total() }

// Recorded returns every request that arrived, oldest first, faulted ones
// included.
func (f *faults) Recorded() []httpapitest.Recorded { return f.rec.Requests() }

// next records a request and pops its fault, if any.
func (f *faults) next(r *http.Request) (Fault, bool) {
	f.rec.Record("", r)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.queue) == 0 {
		return Fault{}, false
	}
	ft := f.queue[0]
	f.queue = f.queue[1:]
	return ft, true
}

// apply serves a fault; it returns true when the request was answered.
func (ft Fault) apply(w http.ResponseWriter, r *http.Request, defaultBody func(status int) string) bool {
	if ft.Delay > 0 {
		// Read the body first: the server notices a client that gave up
		// (and cancels r.Context()) only once the body has been read.
		data, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(data))
		t := time.NewTimer(ft.Delay)
		defer t.Stop()
		select {
		case <-r.Context().Done():
			return true
		case <-t.C:
		}
	}
	if ft.Status == 0 {
		return false
	}
	if ft.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((ft.RetryAfter+time.Second-1)/time.Second)))
	}
	body := ft.Body
	if body == "" {
		body = defaultBody(ft.Status)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(ft.Status)
	_, _ = w.Write([]byte(body))
	return true
}

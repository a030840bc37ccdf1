package httpapitest

import (
	"net/http"
	"sync"
)

// Faults are the failures a test injects into a fake that serves named
// calls (slacktest, telegramtest): an outage of every call while down is
// set, and per call a queue of rate limits and of failure statuses that
// the call's next requests take. It is safe for concurrent use; the zero
// value is ready.
type Faults struct {
	mu       sync.Mutex
	down     bool
	limited  map[string][]int // call -> pending Retry-After seconds
	failures map[string][]int // call -> pending HTTP statuses
}

// SetDown starts (down) or ends an outage of every call.
func (f *Faults) SetDown(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

// Unavailable answers 503 with a page that is not the service's (an
// outage, a proxy in the way) while down is set; it reports whether it
// answered.
func (f *Faults) Unavailable(w http.ResponseWriter) bool {
	f.mu.Lock()
	down := f.down
	f.mu.Unlock()
	if down {
		http.Error(w, "upstream unavailable", http.StatusServiceUnavailable)
	}
	return down
}

// RateLimit queues a rate limit of seconds for the next request of call.
func (f *Faults) RateLimit(call string, seconds int) {
	f.mu.Lock()
	f.limited = push(f.limited, call, seconds)
	f.mu.Unlock()
}

// Fail queues an HTTP status for the next request of call.
func (f *Faults) Fail(call string, status int) {
	f.mu.Lock()
	f.failures = push(f.failures, call, status)
	f.mu.Unlock()
}

// Next takes the fault queued for a request of call: the seconds of a
// rate limit, else the status of a failure; zero for none.
func (f *Faults) Next(call string) (wait, status int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if q := f.limited[call]; len(q) > 0 {
		wait, f.limited[call] = q[0], q[1:]
	} else if q := f.failures[call]; len(q) > 0 {
		status, f.failures[call] = q[0], q[1:]
	}
	return wait, status
}

func push(m map[string][]int, call string, v int) map[string][]int {
	if m == nil {
		m = map[string][]int{}
	}
	m[call] = append(m[call], v)
	return m
}

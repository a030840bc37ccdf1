package pagertest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// ledger is the server of a fake and what it keeps of the requests it
// accepted (R): each one in order, the alerts (A) they opened in order,
// and the open ones by their de-duplication key.
type ledger[R, A any] struct {
	// URL is the base URL to configure (no path).
	URL string
	// Received gets every accepted request (buffered; see the fake's
	// full list of them).
	Received chan R

	srv      *httptest.Server
	mu       sync.Mutex
	accepted []R
	alerts   []*A
	open     map[string]*A // de-duplication key → open alert
}

// start serves handler at URL.
func (l *ledger[R, A]) start(handler http.HandlerFunc) {
	l.Received = make(chan R, 1024)
	l.open = map[string]*A{}
	l.srv = httptest.NewServer(handler)
	l.URL = l.srv.URL
}

// fake is what both fakes are made of: the injected faults, the ledger of
// the accepted requests (R) and alerts (A), and the one credential the fake
// accepts.
type fake[R, A any] struct {
	faults
	ledger[R, A]
	key string
}

// listen starts the fake accepting key. Each request first takes the next
// injected fault, answered with errBody's vendor body when the fault has
// none; a request the fault does not answer goes on to serve.
func (f *fake[R, A]) listen(key string, serve http.HandlerFunc, errBody func(status int) string) {
	f.key = key
	f.start(func(w http.ResponseWriter, r *http.Request) {
		if ft, ok := f.next(r); ok && ft.apply(w, r, errBody) {
			return
		}
		serve(w, r)
	})
}

// closedAtEnd has f closed when t ends, and returns it.
func closedAtEnd[F interface{ Close() }](t testing.TB, f F) F {
	t.Cleanup(f.Close)
	return f
}

// Close stops the fake, waiting for requests in flight.
func (l *ledger[R, A]) Close() { l.srv.Close() }

// requests lists the accepted requests in order.
func (l *ledger[R, A]) requests() []R {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]R(nil), l.accepted...)
}

// alertList lists the alerts opened, in order, with their state.
func (l *ledger[R, A]) alertList() []A {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]A, len(l.alerts))
	for i, a := range l.alerts {
		out[i] = *a
	}
	return out
}

// openCount is how many alerts are open.
func (l *ledger[R, A]) openCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.open)
}

// record keeps req, lets apply change the alerts (under the lock), then
// offers req on Received.
func (l *ledger[R, A]) record(req R, apply func()) {
	l.mu.Lock()
	l.accepted = append(l.accepted, req)
	apply()
	l.mu.Unlock()
	select {
	case l.Received <- req:
	default:
	}
}

// openAlert returns the open alert of key, opened with mk when there is
// none; the caller holds the lock (in record's apply).
func (l *ledger[R, A]) openAlert(key string, mk func() *A) *A {
	a := l.open[key]
	if a == nil {
		a = mk()
		l.alerts = append(l.alerts, a)
		l.open[key] = a
	}
	return a
}

// closeAlert passes the open alert of key, if any, to done and forgets
// it; the caller holds the lock (in record's apply).
func (l *ledger[R, A]) closeAlert(key string, done func(*A)) {
	if a := l.open[key]; a != nil {
		done(a)
		delete(l.open, key)
	}
}

package reaper

import (
	"context"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/session"
)

func TestBackoffDoublesUpToTheInterval(t *testing.T) {
	tests := []struct {
		name     string
		interval time.Duration
		failures int
		want     time.Duration
	}{
		{"the first failure waits 50ms", time.Second, 1, 50 * time.Millisecond},
		{"the second failure waits 100ms", time.Second, 2, 100 * time.Millisecond},
		{"the fifth failure waits 800ms", time.Second, 5, 800 * time.Millisecond},
		{"the sixth failure is capped at the interval", time.Second, 6, time.Second},
		{"a hundred failures are capped at the interval", time.Second, 100, time.Second},
		{"a short interval caps the first failure", 20 * time.Millisecond, 1, 20 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New(Config{Store: nopStore{}, OnExpired: func(context.Context, *session.Record) {}, Interval: tc.interval})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.backoff(tc.failures); got != tc.want {
				t.Errorf("backoff(%d) = %v, want %v", tc.failures, got, tc.want)
			}
		})
	}
}

func TestNextWaitFollowsTheStoreHint(t *testing.T) {
	tests := []struct {
		name string
		hint hintStore
		want time.Duration
	}{
		{"nothing pending waits the interval", hintStore{}, time.Second},
		{"a request due sooner shortens the wait", hintStore{d: 120 * time.Millisecond, ok: true}, 120 * time.Millisecond},
		{"a request due later keeps the interval", hintStore{d: time.Minute, ok: true}, time.Second},
		{"a request due now waits the minimum", hintStore{d: 0, ok: true}, minWait},
		{"a failed hint waits the interval", hintStore{d: time.Millisecond, ok: true, err: session.ErrUnavailable}, time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := New(Config{Store: tc.hint, OnExpired: func(context.Context, *session.Record) {}, Interval: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			if got := r.nextWait(t.Context()); got != tc.want {
				t.Errorf("nextWait = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestJitterShortensTheWaitWithinItsBound(t *testing.T) {
	r, err := New(Config{Store: nopStore{}, OnExpired: func(context.Context, *session.Record) {}, Interval: time.Second, Jitter: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[time.Duration]bool{}
	for range 100 {
		got := r.nextWait(t.Context())
		if got <= 700*time.Millisecond || got > time.Second {
			t.Fatalf("nextWait = %v, want in (700ms, 1s]", got)
		}
		seen[got] = true
	}
	if len(seen) < 2 {
		t.Errorf("100 waits took %d distinct values, want jitter", len(seen))
	}
}

type nopStore struct{}

func (nopStore) ClaimExpired(context.Context, int) ([]*session.Record, error) { return nil, nil }

type hintStore struct {
	nopStore
	d   time.Duration
	ok  bool
	err error
}

func (h hintStore) NextExpiry(context.Context) (time.Duration, bool, error) { return h.d, h.ok, h.err }

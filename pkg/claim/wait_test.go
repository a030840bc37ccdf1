package claim

import (
	"context"
	"errors"
	"testing"
	"time"
)

func newTestLoop(t *testing.T, cfg Config[int]) *Loop[int] {
	t.Helper()
	cfg.Name = "test"
	cfg.Claim = func(context.Context, int) ([]int, error) { return nil, nil }
	cfg.Handle = func(context.Context, int) {}
	l, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestDefaultBackoffDoublesUpToTheInterval(t *testing.T) {
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
			l := newTestLoop(t, Config[int]{Interval: tc.interval})
			if got := l.cfg.Backoff.Delay(tc.failures); got != tc.want {
				t.Errorf("backoff after %d failures = %v, want %v", tc.failures, got, tc.want)
			}
		})
	}
}

func TestNextWaitFollowsTheStoreHint(t *testing.T) {
	tests := []struct {
		name string
		d    time.Duration
		ok   bool
		err  error
		want time.Duration
	}{
		{"nothing pending waits the interval", 0, false, nil, time.Second},
		{"an item due sooner shortens the wait", 120 * time.Millisecond, true, nil, 120 * time.Millisecond},
		{"an item due later keeps the interval", time.Minute, true, nil, time.Second},
		{"an item due now waits the minimum", 0, true, nil, minWait},
		{"a failed hint waits the interval", time.Millisecond, true, errors.New("store unavailable"), time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := newTestLoop(t, Config[int]{Interval: time.Second,
				Next: func(context.Context) (time.Duration, bool, error) { return tc.d, tc.ok, tc.err }})
			if got := l.nextWait(t.Context()); got != tc.want {
				t.Errorf("nextWait = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestJitterShortensTheWaitWithinItsBound(t *testing.T) {
	l := newTestLoop(t, Config[int]{Interval: time.Second, Jitter: 300 * time.Millisecond})
	seen := map[time.Duration]bool{}
	for range 100 {
		got := l.nextWait(t.Context())
		if got <= 700*time.Millisecond || got > time.Second {
			t.Fatalf("nextWait = %v, want in (700ms, 1s]", got)
		}
		seen[got] = true
	}
	if len(seen) < 2 {
		t.Errorf("100 waits took %d distinct values, want jitter", len(seen))
	}
}

package backoff_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/backoff"
)

func TestBound(t *testing.T) {
	p := backoff.Policy{Min: 50 * time.Millisecond, Max: time.Second}
	for _, tc := range []struct {
		n    int
		want time.Duration
	}{
		{0, 50 * time.Millisecond}, {1, 50 * time.Millisecond}, {2, 100 * time.Millisecond},
		{5, 800 * time.Millisecond}, {6, time.Second}, {1000, time.Second},
	} {
		if got := p.Bound(tc.n); got != tc.want {
			t.Errorf("Bound(%d) = %v, want %v", tc.n, got, tc.want)
		}
		if got := p.Delay(tc.n); got != tc.want {
			t.Errorf("Delay(%d) without jitter = %v, want the bound %v", tc.n, got, tc.want)
		}
	}
	if got := (backoff.Policy{Min: time.Second, Max: 300 * time.Millisecond}).Bound(1); got != 300*time.Millisecond {
		t.Errorf("a Max below Min: Bound(1) = %v, want Max", got)
	}
	if got := (backoff.Policy{}).Delay(3); got != 0 {
		t.Errorf("the zero policy waits %v, want 0", got)
	}
}

func TestDelayJitterStaysInItsRange(t *testing.T) {
	for _, tc := range []struct {
		name   string
		jitter float64
		n      int
		lo, hi time.Duration
	}{
		{"half jitter keeps at least half the bound", 0.5, 3, 200 * time.Millisecond, 400 * time.Millisecond},
		{"full jitter never goes below Min/2", 1, 3, 50 * time.Millisecond, 400 * time.Millisecond},
		{"full jitter on the first failure", 1, 1, 50 * time.Millisecond, 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := backoff.Policy{Min: 100 * time.Millisecond, Max: 10 * time.Second, Jitter: tc.jitter}
			seen := map[time.Duration]bool{}
			for range 2000 {
				d := p.Delay(tc.n)
				if d < tc.lo || d > tc.hi {
					t.Fatalf("Delay(%d) = %v, want within [%v, %v]", tc.n, d, tc.lo, tc.hi)
				}
				seen[d] = true
			}
			if len(seen) < 100 {
				t.Errorf("2000 jittered delays took %d values: the jitter does not spread them", len(seen))
			}
		})
	}
}

func TestSleep(t *testing.T) {
	start := time.Now()
	if err := backoff.Sleep(context.Background(), 20*time.Millisecond); err != nil {
		t.Fatalf("Sleep = %v", err)
	}
	if el := time.Since(start); el < 20*time.Millisecond {
		t.Errorf("Sleep(20ms) returned after %v", el)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(10*time.Millisecond, cancel)
	start = time.Now()
	if err := backoff.Sleep(ctx, time.Minute); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on a cancelled context = %v, want context.Canceled", err)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("Sleep ignored its context for %v", el)
	}
	if err := backoff.Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep(0) on an ended context = %v, want its error", err)
	}
}

package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Policy is a schedule of waits: after the n-th failure in a row the bound
// is Min·2^(n-1), capped at Max. The zero value waits nothing.
type Policy struct {
	// Min is the bound after the first failure.
	Min time.Duration
	// Max caps the bound (the bound never exceeds it; a Max below Min
	// caps at Max).
	Max time.Duration
	// Jitter, from 0 to 1, is how much of the bound is left to chance: the
	// wait is drawn uniformly from [max((1-Jitter)·bound, Min/2), bound].
	// 0 waits the bound exactly; 0.5 waits half to all of it; 1 is "full
	// jitter" that never goes below Min/2.
	Jitter float64
}

// Bound returns the largest wait after the n-th failure in a row (n from
// 1; less than 1 counts as 1): Min·2^(n-1), capped at Max.
func (p Policy) Bound(n int) time.Duration {
	d := p.Min
	for i := 1; i < n && d < p.Max; i++ {
		d *= 2
	}
	return min(d, p.Max)
}

// Delay returns the wait after the n-th failure in a row (n from 1): the
// [Policy.Bound], less a random part of it when Jitter is set.
func (p Policy) Delay(n int) time.Duration {
	bound := p.Bound(n)
	if p.Jitter <= 0 {
		return bound
	}
	floor := max(time.Duration(float64(bound)*(1-p.Jitter)), p.Min/2)
	if bound <= floor {
		return bound
	}
	return floor + rand.N(bound-floor+1)
}

// Sleep waits d, or until ctx is done; it returns ctx's error if ctx ended
// first (or had ended), nil otherwise. A d of zero or less returns at once
// (with ctx's error, if any).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

package claim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/signoff-dev/signoff/pkg/backoff"
)

// ErrInvalidConfig is wrapped by every [Config] validation error.
var ErrInvalidConfig = errors.New("claim: invalid config")

// firstBackoff is the default wait after the first failed sweep; it
// doubles with each failure in a row, up to the Interval.
const firstBackoff = 50 * time.Millisecond

// Config configures a [Loop] over items of type T.
type Config[T any] struct {
	// Name starts the loop's log lines ("reaper", "outbox", "escalator").
	Name string
	// Claim takes up to limit items from the store; each item is returned
	// to one caller (for as long as its lease lasts, if it has one).
	// Required.
	Claim func(ctx context.Context, limit int) ([]T, error)
	// Handle carries one claimed item out, in one of Concurrency worker
	// goroutines. A panic is recovered and logged. Its context outlives
	// Run's by DrainTimeout (claimed items are handled through a
	// shutdown), and is bounded by HandleTimeout. Required.
	Handle func(ctx context.Context, item T)
	// Interval is the longest time between two sweeps. Required.
	Interval time.Duration
	// Jitter takes a random amount in [0, Jitter) off each wait, so that
	// replicas do not sweep in lockstep (0: none; less than Interval).
	Jitter time.Duration
	// Next, if set, says how long until the store has something due (ok
	// false: nothing scheduled); the loop then sleeps no longer than that.
	Next func(ctx context.Context) (d time.Duration, ok bool, err error)
	// Batch is the most items one Claim call takes (default 100).
	Batch int
	// Concurrency is how many items are handled at once (default 1). The
	// loop claims only while a worker is idle.
	Concurrency int
	// Hold bounds the claimed items in hand, handled or waiting for a
	// worker (default Batch, at least Concurrency). Items with a lease set
	// it to Concurrency, so that none waits for a worker while its lease
	// runs.
	Hold int
	// HandleTimeout bounds one Handle call (0: no bound of its own).
	HandleTimeout time.Duration
	// DrainTimeout is how long items already claimed may still be handled
	// after Run's context ends; their context is cancelled then (default 5 s).
	DrainTimeout time.Duration
	// Backoff is the wait after failed sweeps in a row (default 50 ms,
	// doubling up to the Interval).
	Backoff backoff.Policy
	// OnSweep, if set, is called after each sweep with the number of items
	// it claimed and how long it took by Clock.
	OnSweep func(n int, d time.Duration)
	// Logger receives failed sweeps and panics (default: discard).
	Logger *slog.Logger
	// Clock measures sweeps for OnSweep (default time.Now). It decides
	// nothing: what is due is the store's business.
	Clock func() time.Time
}

// DefaultDrainTimeout is the default [Config.DrainTimeout].
const DefaultDrainTimeout = 5 * time.Second

func (c *Config[T]) setDefaults() {
	c.Batch = cmp.Or(c.Batch, 100)
	c.Concurrency = cmp.Or(c.Concurrency, 1)
	c.Hold = cmp.Or(c.Hold, max(c.Batch, c.Concurrency))
	c.DrainTimeout = cmp.Or(c.DrainTimeout, DefaultDrainTimeout)
	c.Backoff = cmp.Or(c.Backoff, backoff.Policy{Min: firstBackoff, Max: c.Interval})
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
}

// Validate reports the first invalid field; the error wraps
// [ErrInvalidConfig]. New fills in defaults before it validates.
func (c *Config[T]) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalidConfig, c.Name, fmt.Sprintf(format, args...))
	}
	switch {
	case c.Claim == nil || c.Handle == nil:
		return bad("Claim and Handle are required")
	case c.Interval <= 0:
		return bad("Interval is %v: want more than 0", c.Interval)
	case c.Jitter < 0 || c.Jitter >= c.Interval:
		return bad("Jitter is %v: want at least 0 and less than Interval (%v)", c.Jitter, c.Interval)
	case c.Batch < 1 || c.Concurrency < 1:
		return bad("Batch %d and Concurrency %d must be at least 1", c.Batch, c.Concurrency)
	case c.Hold < c.Concurrency:
		return bad("Hold is %d: want at least Concurrency (%d)", c.Hold, c.Concurrency)
	case c.HandleTimeout < 0 || c.DrainTimeout < 0:
		return bad("HandleTimeout %v and DrainTimeout %v must not be negative", c.HandleTimeout, c.DrainTimeout)
	case c.Backoff.Min < 0 || c.Backoff.Max < 0 || c.Backoff.Jitter < 0 || c.Backoff.Jitter > 1:
		return bad("Backoff %+v: durations must not be negative, Jitter must be from 0 to 1", c.Backoff)
	}
	return nil
}

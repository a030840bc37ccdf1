package reaper

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/signoff-dev/signoff/pkg/claim"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// TimeoutReason is the reason text of the decision for a request that
// expired (DESIGN §4 step 11); the wire contract owns the words.
const TimeoutReason = messages.ReasonTimeoutText

// Defaults of [Config]. DefaultInterval is half a second so that a request
// created while the reaper sleeps is still reported within expiry + 1 s
// (DESIGN §4 step 11) with time to spare for the sweep itself.
const (
	DefaultInterval     = 500 * time.Millisecond
	DefaultBatch        = 500
	DefaultDrainTimeout = claim.DefaultDrainTimeout
)

// Store is what the reaper needs from the session store: its
// [session.Expiry] role.
type Store interface {
	session.Expiry
}

// NextExpirer is implemented by stores that can tell how long, by their own
// clock, until the earliest pending request is due (zero if one is due now;
// ok false when nothing is pending). The reaper uses it to wake up on time
// instead of polling; it never compares the store's times with its own.
type NextExpirer interface {
	NextExpiry(ctx context.Context) (d time.Duration, ok bool, err error)
}

// Config configures a [Reaper].
type Config struct {
	// Store is where expired requests are claimed. Required. If it also
	// implements NextExpirer, the reaper wakes up when the next request is
	// due.
	Store Store
	// OnExpired is called once for each claimed request, in the reaper's
	// goroutine (or one of Concurrency goroutines). It publishes the timeout
	// decision; it must not block for long and it logs its own failures (a
	// request is claimed once, so the reaper cannot retry it). A panic is
	// recovered and logged. The context stays valid for DrainTimeout after
	// Run's context ends, so that claimed requests are still reported
	// during shutdown. Required.
	OnExpired func(ctx context.Context, rec *session.Record)
	// Interval is the longest time between two sweeps, and so the longest
	// delay past its expiry for a request created while the reaper sleeps.
	// Default 500 ms.
	Interval time.Duration
	// Jitter takes a random amount in [0, Jitter) off each wait so that
	// replicas do not sweep in lockstep. Zero (the default) disables it;
	// it must be less than Interval.
	Jitter time.Duration
	// Batch is the most requests one ClaimExpired call claims. A sweep calls
	// ClaimExpired again while it returns full batches. Default 500.
	Batch int
	// Concurrency is how many OnExpired calls may run at once. Default 1.
	Concurrency int
	// DrainTimeout bounds how long callbacks for already claimed requests
	// may run after Run's context ends. Default 5 s.
	DrainTimeout time.Duration
	// OnSweep, if set, is called after each sweep with the number of
	// requests it claimed and how long it took (the broker feeds Prometheus
	// with it).
	OnSweep func(n int, d time.Duration)
	// Logger receives sweep failures, callback panics and sweep summaries.
	// Default: discard.
	Logger *slog.Logger
	// Clock measures sweep durations for OnSweep and logs. It never decides
	// expiry: that is the store's clock alone. Default time.Now.
	Clock func() time.Time
}

func (c *Config) setDefaults() {
	c.Interval = cmp.Or(c.Interval, DefaultInterval)
	c.Batch = cmp.Or(c.Batch, DefaultBatch)
	c.Concurrency = cmp.Or(c.Concurrency, 1)
	c.DrainTimeout = cmp.Or(c.DrainTimeout, DefaultDrainTimeout)
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
}

// Validate reports the first invalid field; the error wraps
// [ErrInvalidConfig]. Zero values are replaced by defaults before New
// validates.
func (c *Config) Validate() error {
	switch {
	case c.Store == nil:
		return fmt.Errorf("%w: Store is nil", ErrInvalidConfig)
	case c.OnExpired == nil:
		return fmt.Errorf("%w: OnExpired is nil", ErrInvalidConfig)
	case c.Interval <= 0:
		return fmt.Errorf("%w: Interval is %v: want more than 0", ErrInvalidConfig, c.Interval)
	case c.Jitter < 0 || c.Jitter >= c.Interval:
		return fmt.Errorf("%w: Jitter is %v: want at least 0 and less than Interval (%v)", ErrInvalidConfig, c.Jitter, c.Interval)
	case c.Batch < 1:
		return fmt.Errorf("%w: Batch is %d: want at least 1", ErrInvalidConfig, c.Batch)
	case c.Concurrency < 1:
		return fmt.Errorf("%w: Concurrency is %d: want at least 1", ErrInvalidConfig, c.Concurrency)
	case c.DrainTimeout < 0:
		return fmt.Errorf("%w: DrainTimeout is %v: want at least 0", ErrInvalidConfig, c.DrainTimeout)
	}
	return nil
}

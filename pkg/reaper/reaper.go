package reaper

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"time"

	"github.com/signoff-dev/signoff/pkg/session"
)

// Timing of the loop.
const (
	// minWait keeps a store that keeps saying "due now" from making the
	// loop spin.
	minWait = 5 * time.Millisecond
	// firstBackoff is the wait after the first failed sweep; it doubles with
	// each failure in a row, up to the Interval.
	firstBackoff = 50 * time.Millisecond
)

// Reaper claims expired requests and reports each one through
// Config.OnExpired. Run it once per broker replica.
type Reaper struct {
	cfg Config
	log *slog.Logger
}

// New returns a reaper for cfg after filling in defaults and validating it.
func New(cfg Config) (*Reaper, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Reaper{cfg: cfg, log: cfg.Logger}, nil
}

// Run sweeps at once, then at least every Interval (sooner when a
// NextExpirer store says a request is due), until ctx is done. It claims
// nothing after that, but it returns (nil) only once the callbacks of the
// requests it already claimed have returned; their context is cancelled
// DrainTimeout after ctx ends. A failed sweep is logged and retried after a
// backoff that starts at 50 ms and never exceeds the Interval.
func (r *Reaper) Run(ctx context.Context) error {
	timer := time.NewTimer(0)
	defer timer.Stop()
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		n, err := r.SweepOnce(ctx)
		if ctx.Err() != nil {
			return nil
		}
		var wait time.Duration
		if err != nil {
			failures++
			wait = r.backoff(failures)
			r.log.LogAttrs(ctx, slog.LevelWarn, "reaper: sweep failed; retrying",
				slog.Int("claimed", n), slog.Int("failures", failures), slog.Duration("retry_in", wait), slog.Any("err", err))
		} else {
			failures = 0
			wait = r.nextWait(ctx)
		}
		timer.Reset(wait)
	}
}

// SweepOnce claims and reports every request that is due now: it calls
// ClaimExpired again while it returns full batches, so a backlog drains in
// one sweep. It returns how many requests it claimed, and the store's error
// if a claim failed (the requests claimed before it were reported).
func (r *Reaper) SweepOnce(ctx context.Context) (int, error) {
	start := r.cfg.Clock()
	total := 0
	var err error
	for {
		if cerr := ctx.Err(); cerr != nil {
			err = fmt.Errorf("reaper: sweep: %w", cerr)
			break
		}
		recs, cerr := r.cfg.Store.ClaimExpired(ctx, r.cfg.Batch)
		if cerr != nil {
			err = fmt.Errorf("reaper: claim expired: %w", cerr)
			break
		}
		r.deliver(ctx, recs)
		total += len(recs)
		if len(recs) < r.cfg.Batch {
			break
		}
	}
	d := r.cfg.Clock().Sub(start)
	if total > 0 {
		r.log.LogAttrs(ctx, slog.LevelInfo, "reaper: expired requests", slog.Int("count", total), slog.Duration("took", d))
	}
	if r.cfg.OnSweep != nil {
		r.cfg.OnSweep(total, d)
	}
	return total, err
}

// deliver runs the callback for each claimed record. The records are already
// expired in the store, so they are reported even when ctx ends meanwhile:
// the callbacks get a context that outlives ctx by DrainTimeout.
func (r *Reaper) deliver(ctx context.Context, recs []*session.Record) {
	if len(recs) == 0 {
		return
	}
	cbCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	// If ctx ends, the callbacks get DrainTimeout more. The timer may fire
	// after deliver returned: cancel is then a no-op.
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(r.cfg.DrainTimeout, cancel) })
	defer stop()

	if r.cfg.Concurrency == 1 {
		for _, rec := range recs {
			r.call(cbCtx, rec)
		}
		return
	}
	sem := make(chan struct{}, r.cfg.Concurrency)
	var wg sync.WaitGroup
	for _, rec := range recs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			r.call(cbCtx, rec)
		})
	}
	wg.Wait()
}

// call runs OnExpired for one record; a panic is logged, not propagated.
func (r *Reaper) call(ctx context.Context, rec *session.Record) {
	defer func() {
		if p := recover(); p != nil {
			r.log.LogAttrs(ctx, slog.LevelError, "reaper: OnExpired panicked",
				slog.String("request_id", rec.ID), slog.String("session_id", rec.SessionID),
				slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
		}
	}()
	r.log.LogAttrs(ctx, slog.LevelDebug, "reaper: request expired",
		slog.String("request_id", rec.ID), slog.String("session_id", rec.SessionID), slog.String("tool", rec.Tool),
		slog.Time("expires_at", rec.ExpiresAt))
	r.cfg.OnExpired(ctx, rec)
}

// nextWait is the pause before the next sweep: the Interval less jitter, or
// less when the store says a request is due sooner.
func (r *Reaper) nextWait(ctx context.Context) time.Duration {
	wait := r.cfg.Interval
	if r.cfg.Jitter > 0 {
		wait -= rand.N(r.cfg.Jitter)
	}
	ne, ok := r.cfg.Store.(NextExpirer)
	if !ok {
		return wait
	}
	d, ok, err := ne.NextExpiry(ctx)
	switch {
	case err != nil:
		r.log.LogAttrs(ctx, slog.LevelDebug, "reaper: next expiry unknown; waiting the interval", slog.Any("err", err))
	case ok && d < wait:
		wait = max(d, minWait)
	}
	return wait
}

func (r *Reaper) backoff(failures int) time.Duration {
	d := firstBackoff
	for i := 1; i < failures && d < r.cfg.Interval; i++ {
		d *= 2
	}
	return min(d, r.cfg.Interval)
}

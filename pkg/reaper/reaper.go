package reaper

import (
	"context"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/signoff-dev/signoff/pkg/claim"
	"github.com/signoff-dev/signoff/pkg/session"
)

// Reaper claims expired requests and reports each one through
// Config.OnExpired. Run it once per broker replica. It is a [claim.Loop]
// over the store's ClaimExpired.
type Reaper struct {
	cfg  Config
	log  *slog.Logger
	loop *claim.Loop[*session.Record]
}

// New returns a reaper for cfg after filling in defaults and validating it.
func New(cfg Config) (*Reaper, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Reaper{cfg: cfg, log: cfg.Logger}
	lc := claim.Config[*session.Record]{
		Name:         "reaper",
		Claim:        cfg.Store.ClaimExpired,
		Handle:       r.call,
		Interval:     cfg.Interval,
		Jitter:       cfg.Jitter,
		Batch:        cfg.Batch,
		Concurrency:  cfg.Concurrency,
		DrainTimeout: cfg.DrainTimeout,
		OnSweep:      r.swept,
		Logger:       cfg.Logger,
		Clock:        cfg.Clock,
	}
	if ne, ok := cfg.Store.(NextExpirer); ok {
		lc.Next = ne.NextExpiry
	}
	loop, err := claim.New(lc)
	if err != nil {
		return nil, err
	}
	r.loop = loop
	return r, nil
}

// Run sweeps at once, then at least every Interval (sooner when a
// NextExpirer store says a request is due), until ctx is done. It claims
// nothing after that, but it returns (nil) only once the callbacks of the
// requests it already claimed have returned; their context is cancelled
// DrainTimeout after ctx ends. A failed sweep is logged and retried after a
// backoff that starts at 50 ms and never exceeds the Interval.
func (r *Reaper) Run(ctx context.Context) error { return r.loop.Run(ctx) }

// SweepOnce claims and reports every request that is due now: it calls
// ClaimExpired again while it returns full batches, so a backlog drains in
// one sweep. It returns how many requests it claimed, and the store's error
// if a claim failed (the requests claimed before it were reported).
func (r *Reaper) SweepOnce(ctx context.Context) (int, error) { return r.loop.SweepOnce(ctx) }

// swept logs a sweep that claimed something and passes it to OnSweep.
func (r *Reaper) swept(n int, d time.Duration) {
	if n > 0 {
		r.log.LogAttrs(context.Background(), slog.LevelInfo, "reaper: expired requests", slog.Int("count", n), slog.Duration("took", d))
	}
	if r.cfg.OnSweep != nil {
		r.cfg.OnSweep(n, d)
	}
}

// call runs OnExpired for one record; a panic is logged, not propagated.
// The record is already expired in the store, so it is reported even when
// Run's context ends meanwhile (the loop's DrainTimeout).
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

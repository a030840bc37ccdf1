package claim

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// minWait keeps a store that keeps saying "due now" from making the loop
// spin.
const minWait = 5 * time.Millisecond

// Loop claims items and hands them to workers; see the package
// documentation. Run it once per process; its methods must not run at the
// same time.
type Loop[T any] struct {
	cfg Config[T]
	log *slog.Logger
}

// New returns a loop for cfg after filling in defaults and validating it.
func New[T any](cfg Config[T]) (*Loop[T], error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Loop[T]{cfg: cfg, log: cfg.Logger}, nil
}

// Run sweeps at once, then at least every Interval (less Jitter; sooner
// when Next says something is due), until ctx is done. A failed sweep is
// logged and tried again after the Backoff. Run claims nothing once ctx has
// ended, and returns (nil) when the items it claimed have been handled:
// their context is cancelled DrainTimeout after ctx ends.
func (l *Loop[T]) Run(ctx context.Context) error {
	w := l.start(ctx)
	defer w.stop()
	timer := time.NewTimer(0)
	defer timer.Stop()
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		n, err := l.sweep(ctx, w)
		if ctx.Err() != nil {
			return nil
		}
		var wait time.Duration
		if err != nil {
			failures++
			wait = l.cfg.Backoff.Delay(failures)
			l.log.LogAttrs(ctx, slog.LevelWarn, l.cfg.Name+": sweep failed; retrying",
				slog.Int("claimed", n), slog.Int("failures", failures), slog.Duration("retry_in", wait), slog.Any("err", err))
		} else {
			failures = 0
			wait = l.nextWait(ctx)
		}
		timer.Reset(wait)
	}
}

// SweepOnce claims and handles what is due now: it claims again while
// claims return full batches, so a backlog drains in one sweep. It returns
// once every item it claimed has been handled, with how many it claimed
// and the error of a claim that failed (the items claimed before it were
// handled).
func (l *Loop[T]) SweepOnce(ctx context.Context) (int, error) {
	w := l.start(ctx)
	defer w.stop()
	return l.sweep(ctx, w)
}

// sweep claims while a worker is idle and claims come back full.
func (l *Loop[T]) sweep(ctx context.Context, w *workers[T]) (int, error) {
	start := l.cfg.Clock()
	total := 0
	var err error
	for {
		if !w.waitIdle(ctx) {
			err = fmt.Errorf("%s: sweep: %w", l.cfg.Name, ctx.Err())
			break
		}
		limit := min(l.cfg.Batch, l.cfg.Hold-int(w.held.Load()))
		items, cerr := l.cfg.Claim(ctx, limit)
		if cerr != nil {
			err = fmt.Errorf("%s: claim: %w", l.cfg.Name, cerr)
			break
		}
		w.add(items)
		total += len(items)
		if len(items) < limit {
			break
		}
	}
	if l.cfg.OnSweep != nil {
		l.cfg.OnSweep(total, l.cfg.Clock().Sub(start))
	}
	return total, err
}

// nextWait is the pause before the next sweep: the Interval less jitter, or
// less when Next says something is due sooner.
func (l *Loop[T]) nextWait(ctx context.Context) time.Duration {
	wait := l.cfg.Interval
	if l.cfg.Jitter > 0 {
		wait -= rand.N(l.cfg.Jitter)
	}
	if l.cfg.Next == nil {
		return wait
	}
	d, ok, err := l.cfg.Next(ctx)
	switch {
	case err != nil:
		l.log.LogAttrs(ctx, slog.LevelDebug, l.cfg.Name+": next due time unknown; waiting the interval", slog.Any("err", err))
	case ok && d < wait:
		wait = max(d, minWait)
	}
	return wait
}

// workers handle the items of one Run or SweepOnce, in claim order as they
// free up.
type workers[T any] struct {
	l     *Loop[T]
	queue chan T
	// held counts the items claimed and not yet handled.
	held atomic.Int64
	// idle receives a token when an item has been handled.
	idle   chan struct{}
	wg     sync.WaitGroup
	cancel context.CancelFunc
	after  func() bool
}

// start starts Concurrency workers whose context outlives ctx by
// DrainTimeout.
func (l *Loop[T]) start(ctx context.Context) *workers[T] {
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	w := &workers[T]{l: l, queue: make(chan T, l.cfg.Hold), idle: make(chan struct{}, 1), cancel: cancel}
	// The timer may fire after stop: cancel is then a no-op.
	w.after = context.AfterFunc(ctx, func() { time.AfterFunc(l.cfg.DrainTimeout, cancel) })
	for range l.cfg.Concurrency {
		w.wg.Go(func() {
			for item := range w.queue {
				l.handle(hctx, item)
				w.held.Add(-1)
				select {
				case w.idle <- struct{}{}:
				default:
				}
			}
		})
	}
	return w
}

// add queues claimed items; the queue holds Hold, and the loop claims no
// more than it has room for.
func (w *workers[T]) add(items []T) {
	w.held.Add(int64(len(items)))
	for _, it := range items {
		w.queue <- it
	}
}

// waitIdle waits until a worker is idle (fewer items in hand than
// workers); false if ctx ended first.
func (w *workers[T]) waitIdle(ctx context.Context) bool {
	for w.held.Load() >= int64(w.l.cfg.Concurrency) {
		select {
		case <-w.idle:
		case <-ctx.Done():
			return false
		}
	}
	return ctx.Err() == nil
}

// stop waits for the items in hand to be handled and ends the workers.
func (w *workers[T]) stop() {
	close(w.queue)
	w.wg.Wait()
	w.after()
	w.cancel()
}

// handle runs Handle for one item; a panic is logged, not propagated.
func (l *Loop[T]) handle(ctx context.Context, item T) {
	if l.cfg.HandleTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, l.cfg.HandleTimeout)
		defer cancel()
	}
	defer func() {
		if p := recover(); p != nil {
			l.log.LogAttrs(ctx, slog.LevelError, l.cfg.Name+": handler panicked",
				slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
		}
	}()
	l.cfg.Handle(ctx, item)
}

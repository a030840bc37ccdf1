package broker

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// The worker pool runs at most cfg.Workers handlers at once, blocks the
// NATS callback (not a goroutine per message) while all are busy, finishes
// every message, reuses its workers, and ends them when Run is done.
func TestWorkerPoolBoundsReusesAndEnds(t *testing.T) {
	b := &Broker{cfg: Config{Workers: 3}, log: slog.New(slog.DiscardHandler),
		jobs: make(chan job), workersDone: make(chan struct{})}
	var running, peak, handled atomic.Int32
	release := make(chan struct{})
	h := unbounded(func(ctx context.Context, _ *nats.Msg) []byte {
		if _, ok := ctx.Deadline(); ok {
			t.Error("an unbounded handler got a deadline")
		}
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		<-release
		running.Add(-1)
		handled.Add(1)
		return nil
	})
	deliver := b.dispatch(h)

	// NATS calls a subscription's handler from one goroutine: so does this.
	const total = 10
	delivered := make(chan int, total)
	go func() {
		for i := range total {
			deliver(&nats.Msg{Subject: "s"})
			delivered <- i
		}
	}()
	// Three start and hold; the fourth delivery blocks the callback.
	deadline := time.After(5 * time.Second)
	for len(delivered) < 3 || running.Load() < 3 {
		select {
		case <-deadline:
			t.Fatalf("delivered %d, running %d; want 3 and 3", len(delivered), running.Load())
		case <-time.After(time.Millisecond):
		}
	}
	time.Sleep(50 * time.Millisecond)
	if n := len(delivered); n != 3 {
		t.Fatalf("the callback took %d messages with 3 workers busy; want it to block after 3", n)
	}
	close(release)
	for len(delivered) < total {
		select {
		case <-deadline:
			t.Fatalf("only %d of %d messages delivered", len(delivered), total)
		case <-time.After(time.Millisecond):
		}
	}
	b.inflight.Wait()
	if handled.Load() != total || peak.Load() > 3 {
		t.Fatalf("handled %d (want %d), peak concurrency %d (want ≤ 3)", handled.Load(), total, peak.Load())
	}
	if n := b.workers.Load(); n < 1 || n > 3 {
		t.Fatalf("%d idle workers after the burst; want 1–3 kept for reuse", n)
	}

	// A bounded handler gets the per-message deadline.
	var wg sync.WaitGroup
	wg.Add(1)
	b.dispatch(bounded(func(ctx context.Context, _ *nats.Msg) []byte {
		defer wg.Done()
		if _, ok := ctx.Deadline(); !ok {
			t.Error("a bounded handler got no deadline")
		}
		return nil
	}))(&nats.Msg{Subject: "s"})
	wg.Wait()
	b.inflight.Wait()

	close(b.workersDone)
	for b.workers.Load() != 0 {
		select {
		case <-deadline:
			t.Fatalf("%d workers still live after Run ended", b.workers.Load())
		case <-time.After(time.Millisecond):
		}
	}
}

// A handler that panics is answered with an internal error and its worker
// goes on serving.
func TestWorkerSurvivesAPanic(t *testing.T) {
	b := &Broker{cfg: Config{Workers: 1}, log: slog.New(slog.DiscardHandler),
		jobs: make(chan job), workersDone: make(chan struct{})}
	defer close(b.workersDone)
	var calls atomic.Int32
	deliver := b.dispatch(unbounded(func(context.Context, *nats.Msg) []byte {
		if calls.Add(1) == 1 {
			panic("boom")
		}
		return nil
	}))
	deliver(&nats.Msg{Subject: "s"})
	deliver(&nats.Msg{Subject: "s"})
	b.inflight.Wait()
	if calls.Load() != 2 || b.workers.Load() != 1 {
		t.Fatalf("calls %d, workers %d; want 2 calls on the one worker", calls.Load(), b.workers.Load())
	}
}

package claim_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/claim"
)

// queueStore hands out the ints it holds, in order, and records the limit
// of each claim.
type queueStore struct {
	mu     sync.Mutex
	items  []int
	limits []int
}

func (q *queueStore) put(items ...int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.items = append(q.items, items...)
}

func (q *queueStore) claim(_ context.Context, limit int) ([]int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.limits = append(q.limits, limit)
	n := min(limit, len(q.items))
	out := q.items[:n:n]
	q.items = q.items[n:]
	return out, nil
}

func runLoop(t *testing.T, l *claim.Loop[int]) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run = %v, want nil", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func TestLeasedItemsAreClaimedOnlyForIdleWorkers(t *testing.T) {
	store := &queueStore{}
	for i := range 20 {
		store.put(i)
	}
	var inHand, peak atomic.Int64
	release := make(chan struct{})
	var handled atomic.Int64
	l, err := claim.New(claim.Config[int]{
		Name: "test", Interval: time.Hour, Batch: 10, Concurrency: 3, Hold: 3,
		Claim: func(ctx context.Context, limit int) ([]int, error) {
			items, err := store.claim(ctx, limit)
			n := inHand.Add(int64(len(items)))
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			return items, err
		},
		Handle: func(context.Context, int) {
			<-release
			inHand.Add(-1)
			handled.Add(1)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if n, err := l.SweepOnce(t.Context()); n != 20 || err != nil {
			t.Errorf("SweepOnce = %d, %v; want 20, nil", n, err)
		}
	}()
	time.Sleep(50 * time.Millisecond)
	if p := peak.Load(); p != 3 {
		t.Errorf("items in hand while every worker is busy = %d, want Hold (3)", p)
	}
	close(release)
	<-done
	if p := peak.Load(); p > 3 {
		t.Errorf("peak items in hand = %d, want at most Hold (3)", p)
	}
	if handled.Load() != 20 {
		t.Errorf("handled %d items, want 20", handled.Load())
	}
	store.mu.Lock()
	defer store.mu.Unlock()
	for i, lim := range store.limits {
		if lim < 1 || lim > 3 {
			t.Errorf("claim %d asked for %d items, want 1 to 3 (the idle workers)", i, lim)
		}
	}
}

func TestASlowItemDoesNotHoldBackTheOthers(t *testing.T) {
	store := &queueStore{}
	store.put(0)
	release := make(chan struct{})
	got := make(chan int, 10)
	l, err := claim.New(claim.Config[int]{
		Name: "test", Interval: 10 * time.Millisecond, Concurrency: 2, Hold: 2,
		Claim: store.claim,
		Handle: func(_ context.Context, i int) {
			if i == 0 {
				<-release
			}
			got <- i
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := runLoop(t, l)
	time.Sleep(30 * time.Millisecond) // item 0 is taken and blocks
	store.put(1, 2, 3)
	for want := 1; want <= 3; want++ {
		select {
		case i := <-got:
			if i != want {
				t.Fatalf("handled %d, want %d", i, want)
			}
		case <-time.After(3 * time.Second):
			t.Fatalf("item %d was not handled while item 0 was slow", want)
		}
	}
	close(release)
	stop()
	if i := <-got; i != 0 {
		t.Errorf("last handled %d, want the slow item 0", i)
	}
}

func TestHandleTimeoutBoundsEachItem(t *testing.T) {
	store := &queueStore{}
	store.put(1)
	errc := make(chan error, 1)
	l, err := claim.New(claim.Config[int]{
		Name: "test", Interval: time.Hour, HandleTimeout: 20 * time.Millisecond,
		Claim: store.claim,
		Handle: func(ctx context.Context, _ int) {
			<-ctx.Done()
			errc <- ctx.Err()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.SweepOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("handler context ended with %v, want DeadlineExceeded", err)
	}
}

func TestAPanickingHandlerDoesNotStopTheLoop(t *testing.T) {
	store := &queueStore{}
	store.put(1, 2, 3)
	var handled atomic.Int64
	l, err := claim.New(claim.Config[int]{
		Name: "test", Interval: time.Hour,
		Claim: store.claim,
		Handle: func(_ context.Context, i int) {
			handled.Add(1)
			if i == 2 {
				panic("boom")
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := l.SweepOnce(t.Context()); n != 3 || err != nil {
		t.Fatalf("SweepOnce = %d, %v; want 3, nil", n, err)
	}
	if handled.Load() != 3 {
		t.Errorf("handled %d items, want 3 (the panic in the second is recovered)", handled.Load())
	}
}

func TestNewValidates(t *testing.T) {
	ok := claim.Config[int]{Name: "test", Interval: time.Second,
		Claim: func(context.Context, int) ([]int, error) { return nil, nil }, Handle: func(context.Context, int) {}}
	for _, tc := range []struct {
		name string
		edit func(*claim.Config[int])
	}{
		{"no Claim", func(c *claim.Config[int]) { c.Claim = nil }},
		{"no Handle", func(c *claim.Config[int]) { c.Handle = nil }},
		{"no Interval", func(c *claim.Config[int]) { c.Interval = 0 }},
		{"a Jitter as long as the Interval", func(c *claim.Config[int]) { c.Jitter = time.Second }},
		{"a Hold below Concurrency", func(c *claim.Config[int]) { c.Concurrency, c.Hold = 4, 2 }},
		{"a negative Batch", func(c *claim.Config[int]) { c.Batch = -1 }},
		{"a negative HandleTimeout", func(c *claim.Config[int]) { c.HandleTimeout = -time.Second }},
		{"a Backoff jitter above 1", func(c *claim.Config[int]) { c.Backoff.Min, c.Backoff.Jitter = time.Millisecond, 2 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ok
			tc.edit(&cfg)
			if _, err := claim.New(cfg); !errors.Is(err, claim.ErrInvalidConfig) {
				t.Errorf("New = %v, want ErrInvalidConfig", err)
			}
		})
	}
	if _, err := claim.New(ok); err != nil {
		t.Errorf("New with a valid config = %v", err)
	}
}

package reaper_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/reaper"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
	"github.com/signoff-dev/signoff/pkg/session/storetest"
)

// fakeClock is a store clock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// delivered collects what OnExpired receives.
type delivered struct {
	mu    sync.Mutex
	count map[string]int
	late  map[string]time.Duration // callback time − ExpiresAt, by the real clock
	total atomic.Int64
	done  chan struct{}
	want  int64
}

func newDelivered(want int) *delivered {
	return &delivered{count: map[string]int{}, late: map[string]time.Duration{}, done: make(chan struct{}), want: int64(want)}
}

func (d *delivered) onExpired(_ context.Context, rec *session.Record) {
	at := time.Now()
	d.mu.Lock()
	k := rec.SessionID + "/" + rec.ID
	d.count[k]++
	d.late[k] = at.Sub(rec.ExpiresAt)
	d.mu.Unlock()
	if d.total.Add(1) == d.want {
		close(d.done)
	}
}

func (d *delivered) wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case <-d.done:
	case <-time.After(timeout):
		t.Fatalf("OnExpired called %d times in %v, want %d", d.total.Load(), timeout, d.want)
	}
}

func create(t *testing.T, s session.Store, sess string, n int, ttl time.Duration) []*session.Record {
	t.Helper()
	var recs []*session.Record
	for i := range n {
		rec, _, err := storetest.Create(t.Context(), s, session.Request{
			ID: fmt.Sprintf("req-%d", i), SessionID: sess, AgentID: "agent", Tool: "bash",
			Teams: []string{"ops"}, ApprovalsRequired: 1, TTL: ttl,
		})
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	return recs
}

// run starts r.Run and returns a function that stops it and returns its
// error.
func run(t *testing.T, r *reaper.Reaper) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- r.Run(ctx) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-errc:
			case <-time.After(5 * time.Second):
				err = errors.New("Run did not return within 5s of the context's end")
			}
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

func newReaper(t *testing.T, cfg reaper.Config) *reaper.Reaper {
	t.Helper()
	r, err := reaper.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

// logBuffer is a concurrency-safe log sink.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func (b *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

func TestTimeoutReason(t *testing.T) {
	if reaper.TimeoutReason != "approval timed out (no approver response)" {
		t.Errorf("TimeoutReason = %q", reaper.TimeoutReason)
	}
}

func TestNewValidatesConfig(t *testing.T) {
	store := memstore.New(memstore.Options{})
	cb := func(context.Context, *session.Record) {}
	tests := []struct {
		name string
		cfg  reaper.Config
		ok   bool
	}{
		{"a store and a callback are enough", reaper.Config{Store: store, OnExpired: cb}, true},
		{"no store", reaper.Config{OnExpired: cb}, false},
		{"no callback", reaper.Config{Store: store}, false},
		{"a negative interval", reaper.Config{Store: store, OnExpired: cb, Interval: -time.Second}, false},
		{"a negative batch", reaper.Config{Store: store, OnExpired: cb, Batch: -1}, false},
		{"a negative concurrency", reaper.Config{Store: store, OnExpired: cb, Concurrency: -1}, false},
		{"a negative drain timeout", reaper.Config{Store: store, OnExpired: cb, DrainTimeout: -time.Second}, false},
		{"a negative jitter", reaper.Config{Store: store, OnExpired: cb, Jitter: -time.Millisecond}, false},
		{"a jitter as long as the interval", reaper.Config{Store: store, OnExpired: cb, Interval: time.Second, Jitter: time.Second}, false},
		{"a jitter below the default interval", reaper.Config{Store: store, OnExpired: cb, Jitter: 200 * time.Millisecond}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := reaper.New(tc.cfg)
			if tc.ok && (err != nil || r == nil) {
				t.Fatalf("New = %v, %v; want a reaper", r, err)
			}
			if !tc.ok && !errors.Is(err, reaper.ErrInvalidConfig) {
				t.Fatalf("New error = %v, want ErrInvalidConfig", err)
			}
		})
	}
}

func TestSweepOnceReportsEachDueRequestOnce(t *testing.T) {
	clock := newFakeClock()
	store := memstore.New(memstore.Options{Clock: clock.Now})
	due := create(t, store, "sess-a", 3, time.Minute)
	later := create(t, store, "sess-b", 1, 2*time.Minute)
	var got []*session.Record
	var sweeps []int
	r := newReaper(t, reaper.Config{
		Store:     store,
		OnExpired: func(_ context.Context, rec *session.Record) { got = append(got, rec) },
		OnSweep:   func(n int, _ time.Duration) { sweeps = append(sweeps, n) },
	})

	if n, err := r.SweepOnce(t.Context()); err != nil || n != 0 || len(got) != 0 {
		t.Fatalf("SweepOnce before any expiry = %d, %v (delivered %d); want nothing", n, err, len(got))
	}
	clock.Add(time.Minute)
	if n, err := r.SweepOnce(t.Context()); err != nil || n != 3 {
		t.Fatalf("SweepOnce at the expiry = %d, %v; want 3", n, err)
	}
	if len(got) != 3 {
		t.Fatalf("OnExpired called %d times, want 3", len(got))
	}
	for i, rec := range got {
		if rec.ID != due[i].ID || rec.State != messages.StateExpired || rec.Decision != nil {
			t.Errorf("delivered %s/%s in state %s, want %s expired with no decision", rec.SessionID, rec.ID, rec.State, due[i].ID)
		}
	}
	if n, err := r.SweepOnce(t.Context()); err != nil || n != 0 {
		t.Fatalf("second SweepOnce = %d, %v; want 0", n, err)
	}
	clock.Add(time.Minute)
	if n, err := r.SweepOnce(t.Context()); err != nil || n != 1 || got[3].ID != later[0].ID {
		t.Fatalf("SweepOnce at the later expiry = %d, %v; want %s", n, err, later[0].ID)
	}
	if fmt.Sprint(sweeps) != "[0 3 0 1]" {
		t.Errorf("OnSweep counts = %v, want [0 3 0 1]", sweeps)
	}
}

// countingStore counts ClaimExpired calls and can fail the first ones.
type countingStore struct {
	*memstore.Store
	calls atomic.Int64
	fail  atomic.Int64 // how many more calls fail
}

func (s *countingStore) ClaimExpired(ctx context.Context, limit int) ([]*session.Record, error) {
	s.calls.Add(1)
	if s.fail.Add(-1) >= 0 {
		return nil, fmt.Errorf("connection refused: %w", session.ErrUnavailable)
	}
	return s.Store.ClaimExpired(ctx, limit)
}

func TestSweepOnceDrainsABacklogLargerThanABatch(t *testing.T) {
	clock := newFakeClock()
	store := &countingStore{Store: memstore.New(memstore.Options{Clock: clock.Now})}
	create(t, store, "sess", 100, time.Minute)
	clock.Add(time.Minute)
	d := newDelivered(100)
	r := newReaper(t, reaper.Config{Store: store, OnExpired: d.onExpired, Batch: 7})
	n, err := r.SweepOnce(t.Context())
	if err != nil || n != 100 {
		t.Fatalf("SweepOnce = %d, %v; want 100", n, err)
	}
	if got := d.total.Load(); got != 100 {
		t.Errorf("OnExpired called %d times, want 100", got)
	}
	// 14 full batches of 7, then the last 2.
	if got := store.calls.Load(); got != 15 {
		t.Errorf("ClaimExpired called %d times, want 15", got)
	}
}

func TestSweepOnceReportsTheSweepDurationByItsClock(t *testing.T) {
	store := memstore.New(memstore.Options{})
	var clockCalls atomic.Int64
	base := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	var got time.Duration
	r := newReaper(t, reaper.Config{
		Store:     store,
		OnExpired: func(context.Context, *session.Record) {},
		Clock:     func() time.Time { return base.Add(time.Duration(clockCalls.Add(1)) * 7 * time.Millisecond) },
		OnSweep:   func(_ int, d time.Duration) { got = d },
	})
	if _, err := r.SweepOnce(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got != 7*time.Millisecond {
		t.Errorf("OnSweep duration = %v, want 7ms (two readings of the configured clock)", got)
	}
}

func TestThreeReapersReportEachOfAThousandRequestsOnceWithinASecond(t *testing.T) {
	tests := []struct {
		name  string
		store func(*memstore.Store) reaper.Store
		cfg   reaper.Config
	}{
		// memstore tells the reaper when the next request is due.
		{"with the store's next-expiry hint and the default interval", func(s *memstore.Store) reaper.Store { return s }, reaper.Config{}},
		// Polling only: the interval bounds the delay.
		{"polling at the default interval", func(s *memstore.Store) reaper.Store { return claimOnly{s} }, reaper.Config{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const n = 1000
			store := memstore.New(memstore.Options{})
			d := newDelivered(n)
			for range 3 {
				cfg := tc.cfg
				cfg.Store = tc.store(store)
				cfg.OnExpired = d.onExpired
				cfg.Batch = 64
				run(t, newReaper(t, cfg))
			}
			recs := create(t, store, "sess", n, 400*time.Millisecond)
			d.wait(t, 5*time.Second)

			d.mu.Lock()
			defer d.mu.Unlock()
			var worst time.Duration
			for _, rec := range recs {
				k := rec.SessionID + "/" + rec.ID
				if d.count[k] != 1 {
					t.Errorf("%s reported %d times, want once", k, d.count[k])
				}
				late := d.late[k]
				if late < 0 || late > time.Second {
					t.Errorf("%s reported %v after its expiry, want within [0, 1s]", k, late)
				}
				worst = max(worst, late)
			}
			t.Logf("latest report: %v after the expiry", worst)
		})
	}
}

// claimOnly hides the store's NextExpiry.
type claimOnly struct{ s reaper.Store }

func (c claimOnly) ClaimExpired(ctx context.Context, limit int) ([]*session.Record, error) {
	return c.s.ClaimExpired(ctx, limit)
}

func TestRunWakesUpWhenTheStoreSaysARequestIsDue(t *testing.T) {
	store := memstore.New(memstore.Options{})
	create(t, store, "sess", 1, 200*time.Millisecond)
	d := newDelivered(1)
	run(t, newReaper(t, reaper.Config{Store: store, OnExpired: d.onExpired, Interval: time.Hour}))
	d.wait(t, 3*time.Second) // long before the hour
}

func TestRunReturnsWhenTheContextEnds(t *testing.T) {
	store := memstore.New(memstore.Options{})
	stop := run(t, newReaper(t, reaper.Config{Store: store, OnExpired: func(context.Context, *session.Record) {}, Interval: time.Hour}))
	time.Sleep(20 * time.Millisecond) // let it enter its wait
	if err := stop(); err != nil {
		t.Fatalf("Run = %v, want nil after the context ends", err)
	}
}

func TestClaimedRequestsAreReportedAfterTheContextEnds(t *testing.T) {
	clock := newFakeClock()
	store := memstore.New(memstore.Options{Clock: clock.Now})
	create(t, store, "sess", 5, time.Minute)
	clock.Add(time.Minute)

	entered := make(chan struct{})
	release := make(chan struct{})
	var mu sync.Mutex
	var ctxErrs []error
	r := newReaper(t, reaper.Config{Store: store, OnExpired: func(ctx context.Context, rec *session.Record) {
		if rec.ID == "req-0" {
			close(entered)
			<-release
		}
		mu.Lock()
		ctxErrs = append(ctxErrs, ctx.Err())
		mu.Unlock()
	}})
	stop := run(t, r)
	<-entered
	done := make(chan error, 1)
	go func() { done <- stop() }()
	time.Sleep(20 * time.Millisecond) // the context has ended; the callback still runs
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(ctxErrs) != 5 {
		t.Fatalf("OnExpired called %d times, want all 5 claimed requests", len(ctxErrs))
	}
	for i, err := range ctxErrs {
		if err != nil {
			t.Errorf("callback %d ran with a done context (%v) within the drain timeout", i, err)
		}
	}
}

func TestAPanickingCallbackDoesNotStopTheLoop(t *testing.T) {
	store := memstore.New(memstore.Options{})
	logs := &logBuffer{}
	d := newDelivered(6)
	r := newReaper(t, reaper.Config{
		Store: store,
		OnExpired: func(ctx context.Context, rec *session.Record) {
			d.onExpired(ctx, rec)
			if rec.SessionID == "first" {
				panic("publish failed: " + rec.ID)
			}
		},
		Interval: 50 * time.Millisecond,
		Logger:   logs.logger(),
	})
	run(t, r)
	create(t, store, "first", 3, 50*time.Millisecond)
	time.Sleep(150 * time.Millisecond)
	create(t, store, "second", 3, 50*time.Millisecond)
	d.wait(t, 3*time.Second)
	if got := strings.Count(logs.String(), "OnExpired panicked"); got != 3 {
		t.Errorf("logged %d panics, want 3:\n%s", got, logs.String())
	}
	if !strings.Contains(logs.String(), "publish failed: req-0") || !strings.Contains(logs.String(), "request_id=req-0") {
		t.Errorf("panic log lacks the panic value or the request id:\n%s", logs.String())
	}
}

func TestStoreErrorsAreRetried(t *testing.T) {
	store := &countingStore{Store: memstore.New(memstore.Options{})}
	store.fail.Store(4)
	logs := &logBuffer{}
	d := newDelivered(10)
	var swept atomic.Int64
	stop := run(t, newReaper(t, reaper.Config{
		Store: store, OnExpired: d.onExpired, Interval: 100 * time.Millisecond, Logger: logs.logger(),
		OnSweep: func(int, time.Duration) { swept.Add(1) },
	}))
	create(t, store, "sess", 10, 10*time.Millisecond)
	d.wait(t, 3*time.Second)
	if err := stop(); err != nil { // Run returns after the sweep under way
		t.Fatal(err)
	}
	if got := strings.Count(logs.String(), "sweep failed"); got != 4 {
		t.Errorf("logged %d failed sweeps, want 4:\n%s", got, logs.String())
	}
	if !strings.Contains(logs.String(), "store unavailable") {
		t.Errorf("failure log lacks the store's error:\n%s", logs.String())
	}
	if swept.Load() < 5 {
		t.Errorf("OnSweep called %d times, want every sweep (4 failed, then at least 1)", swept.Load())
	}
}

// TestExpiryFollowsTheStoreClockNotTheReplicaClock runs a store whose clock
// is 5 minutes off the real one and a reaper whose own clock is 5 minutes off
// the other way: requests still expire TTL after they were created, in real
// time.
func TestExpiryFollowsTheStoreClockNotTheReplicaClock(t *testing.T) {
	for _, skew := range []time.Duration{5 * time.Minute, -5 * time.Minute} {
		t.Run(fmt.Sprintf("store clock %v off", skew), func(t *testing.T) {
			store := memstore.New(memstore.Options{Clock: func() time.Time { return time.Now().Add(skew) }})
			const n, ttl = 20, 300 * time.Millisecond
			var mu sync.Mutex
			var early []string
			reported := make(map[string]time.Time)
			d := newDelivered(n)
			run(t, newReaper(t, reaper.Config{
				Store: store,
				OnExpired: func(ctx context.Context, rec *session.Record) {
					now, err := store.Now(ctx)
					mu.Lock()
					if err != nil || now.Before(rec.ExpiresAt) {
						early = append(early, rec.ID)
					}
					reported[rec.ID] = time.Now()
					mu.Unlock()
					d.onExpired(ctx, rec)
				},
				Clock: func() time.Time { return time.Now().Add(-skew) },
			}))
			created := time.Now()
			create(t, store, "sess", n, ttl)
			d.wait(t, 5*time.Second)
			mu.Lock()
			defer mu.Unlock()
			if len(early) > 0 {
				t.Errorf("reported before their expiry by the store's clock: %v", early)
			}
			for id, at := range reported {
				if el := at.Sub(created); el < ttl || el > ttl+time.Second {
					t.Errorf("%s reported %v after it was created, want within [%v, %v]", id, el, ttl, ttl+time.Second)
				}
			}
		})
	}
}

func TestConcurrentCallbacksReportEachRequestOnce(t *testing.T) {
	clock := newFakeClock()
	store := memstore.New(memstore.Options{Clock: clock.Now})
	create(t, store, "sess", 50, time.Minute)
	clock.Add(time.Minute)
	var inFlight, peak atomic.Int64
	d := newDelivered(50)
	r := newReaper(t, reaper.Config{Store: store, Concurrency: 4, OnExpired: func(ctx context.Context, rec *session.Record) {
		cur := inFlight.Add(1)
		for {
			p := peak.Load()
			if cur <= p || peak.CompareAndSwap(p, cur) {
				break
			}
		}
		time.Sleep(2 * time.Millisecond)
		inFlight.Add(-1)
		d.onExpired(ctx, rec)
	}})
	if n, err := r.SweepOnce(t.Context()); err != nil || n != 50 {
		t.Fatalf("SweepOnce = %d, %v; want 50", n, err)
	}
	if d.total.Load() != 50 {
		t.Fatalf("OnExpired called %d times before SweepOnce returned, want 50", d.total.Load())
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, c := range d.count {
		if c != 1 {
			t.Errorf("%s reported %d times", k, c)
		}
	}
	if p := peak.Load(); p < 2 || p > 4 {
		t.Errorf("peak concurrent callbacks = %d, want between 2 and the configured 4", p)
	}
}

func TestCallbacksAreCancelledAfterTheDrainTimeout(t *testing.T) {
	clock := newFakeClock()
	store := memstore.New(memstore.Options{Clock: clock.Now})
	create(t, store, "sess", 1, time.Minute)
	clock.Add(time.Minute)
	entered := make(chan struct{})
	cbErr := make(chan error, 1)
	stop := run(t, newReaper(t, reaper.Config{Store: store, DrainTimeout: 50 * time.Millisecond,
		OnExpired: func(ctx context.Context, _ *session.Record) {
			close(entered)
			<-ctx.Done() // a callback stuck on a dead NATS connection
			cbErr <- ctx.Err()
		}}))
	<-entered
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if err := <-cbErr; !errors.Is(err, context.Canceled) {
		t.Errorf("callback context ended with %v, want context.Canceled", err)
	}
}

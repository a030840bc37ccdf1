package redisstore_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/reaper"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/redisstore"
)

// redisClock maps the local monotonic clock to Redis TIME: a callback
// notes time.Now() (cheap, in the reaper's goroutine) and the test converts
// it afterwards. The offset is measured by bracketing one TIME call; its
// error is at most half that round trip.
type redisClock struct {
	offset time.Duration
	err    time.Duration
}

func measureRedisClock(t *testing.T, s *redisstore.Store) redisClock {
	t.Helper()
	best := redisClock{err: time.Hour}
	for range 5 {
		before := time.Now()
		now, err := s.Now(context.Background())
		after := time.Now()
		if err != nil {
			t.Fatal(err)
		}
		mid := before.Add(after.Sub(before) / 2)
		if e := after.Sub(before) / 2; e < best.err {
			best = redisClock{offset: now.Sub(mid), err: e}
		}
	}
	return best
}

func (c redisClock) at(local time.Time) time.Time { return local.Add(c.offset) }

// TestThreeReapersExpireEachRequestOnceAndOnTime runs three reapers, each
// with its own store and connection (three broker replicas), over 1,000
// requests that expire together, and checks DESIGN §4 step 11: each
// request is reported exactly once, within its expiry + 1 s by Redis TIME.
func TestThreeReapersExpireEachRequestOnceAndOnTime(t *testing.T) {
	srv := testenv.Redis(t)
	const n = 1000
	creator := newStore(t, options(srv.URL(), time.Minute))
	clock := measureRedisClock(t, creator)

	var (
		mu      sync.Mutex
		count   = map[string]int{}
		late    []time.Duration
		early   []string
		byWhich = make([]int, 3)
	)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for i := range 3 {
		s := newStore(t, options(srv.URL(), time.Minute))
		r, err := reaper.New(reaper.Config{
			Store: s,
			OnExpired: func(_ context.Context, rec *session.Record) {
				at := clock.at(time.Now())
				mu.Lock()
				defer mu.Unlock()
				count[rec.SessionID+"/"+rec.ID]++
				byWhich[i]++
				if at.Add(clock.err).Before(rec.ExpiresAt) {
					early = append(early, fmt.Sprintf("%s at %v, expiry %v", rec.ID, at, rec.ExpiresAt))
				}
				late = append(late, at.Sub(rec.ExpiresAt))
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if err := r.Run(ctx); err != nil {
				t.Errorf("reaper %d: %v", i, err)
			}
		})
	}
	defer func() {
		cancel()
		wg.Wait()
	}()

	// 100 sessions of 10 requests, created by 10 goroutines, all with an
	// expiry within the creation window (about 1,000 Creates).
	recs := make([]*session.Record, n)
	var cw sync.WaitGroup
	for g := range 10 {
		cw.Go(func() {
			for i := g; i < n; i += 10 {
				recs[i] = mustCreate(t, creator, request(fmt.Sprintf("three-%d", i%100), 3*time.Second))
			}
		})
	}
	cw.Wait()
	last := slices.MaxFunc(recs, func(a, b *session.Record) int { return a.ExpiresAt.Compare(b.ExpiresAt) })
	first := slices.MinFunc(recs, func(a, b *session.Record) int { return a.ExpiresAt.Compare(b.ExpiresAt) })
	t.Logf("expiries spread over %v", last.ExpiresAt.Sub(first.ExpiresAt))

	deadline := time.Now().Add(3*time.Second + 5*time.Second)
	for {
		mu.Lock()
		done := len(count) == n
		mu.Unlock()
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	// One more interval for any duplicate to show up.
	time.Sleep(2 * reaper.DefaultInterval)

	mu.Lock()
	defer mu.Unlock()
	for _, r := range recs {
		if c := count[r.SessionID+"/"+r.ID]; c != 1 {
			t.Errorf("%s/%s reported %d times, want exactly once", r.SessionID, r.ID, c)
		}
	}
	for _, e := range early {
		t.Errorf("reported before its expiry: %s", e)
	}
	slices.Sort(late)
	if len(late) == 0 {
		t.Fatal("no request was reported")
	}
	p50, p99, worst := late[len(late)/2], late[len(late)*99/100], late[len(late)-1]
	t.Logf("reported after expiry (Redis TIME, ±%v): p50 %v, p99 %v, max %v; by reaper: %v", clock.err, p50, p99, worst, byWhich)
	if worst > time.Second {
		t.Errorf("latest report came %v after its expiry, want within 1s", worst)
	}
}

// failAfter is a go-redis hook that, once armed, lets `pass` more round
// trips through and fails every later one (as when Redis goes away in
// the middle of a sweep), until disarmed.
type failAfter struct {
	mu    sync.Mutex
	armed bool
	pass  int
}

func (f *failAfter) arm(pass int) { f.mu.Lock(); f.armed, f.pass = true, pass; f.mu.Unlock() }
func (f *failAfter) disarm()      { f.mu.Lock(); f.armed = false; f.mu.Unlock() }

func (f *failAfter) fail() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.armed {
		return false
	}
	if f.pass > 0 {
		f.pass--
		return false
	}
	return true
}

var errInjected = fmt.Errorf("injected: %w", net.ErrClosed)

func (f *failAfter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f *failAfter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if f.fail() {
			cmd.SetErr(errInjected)
			return errInjected
		}
		return next(ctx, cmd)
	}
}

func (f *failAfter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if f.fail() {
			for _, c := range cmds {
				c.SetErr(errInjected)
			}
			return errInjected
		}
		return next(ctx, cmds)
	}
}

// A sweep that fails after it leased a session (Redis went away between
// the lease and the claim, and the finalize failed too) must not hold the
// session for the whole 5 s lease: the next sweep, once Redis answers,
// releases the lease and claims the request (issue 14, item 4).
func TestASweepThatFailsAfterItsLeaseReleasesItOnTheNextCall(t *testing.T) {
	srv := testenv.Redis(t)
	hook := &failAfter{}
	c := storeClient(t, srv.Addr())
	c.AddHook(hook)
	s := newStore(t, redisstore.Options{Client: c})
	rec := mustCreate(t, s, request(uniq("sess"), 100*time.Millisecond))
	waitRedis(t, s, rec.ExpiresAt)

	hook.arm(1) // the lease pipeline goes through; count, claim and finalize fail
	got, err := s.ClaimExpired(context.Background(), 10)
	if err == nil || len(got) != 0 {
		t.Fatalf("failing sweep: %v, %v; want an error and nothing claimed", ids(got), err)
	}
	hook.disarm()

	start := time.Now()
	got, err = s.ClaimExpired(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != rec.ID {
		t.Fatalf("the sweep after Redis came back claimed %v, want %s at once (its session must not stay leased)", ids(got), rec.ID)
	}
	t.Logf("claimed %v after Redis came back", time.Since(start))
}

// The same through the reaper: with Redis failing mid-sweep for a second,
// the request is still reported within its expiry + 1 s of Redis coming
// back.
func TestTheReaperReportsWithinASecondOfRedisComingBack(t *testing.T) {
	srv := testenv.Redis(t)
	hook := &failAfter{}
	c := storeClient(t, srv.Addr())
	c.AddHook(hook)
	s := newStore(t, redisstore.Options{Client: c})
	rec := mustCreate(t, s, request(uniq("sess"), 300*time.Millisecond))
	reported := make(chan time.Time, 1)
	r, err := reaper.New(reaper.Config{Store: s, OnExpired: func(_ context.Context, got *session.Record) {
		if got.ID == rec.ID {
			reported <- time.Now()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	waitRedis(t, s, rec.ExpiresAt)
	hook.arm(1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() { cancel(); <-done }()
	time.Sleep(time.Second)
	back := time.Now()
	hook.disarm()
	select {
	case at := <-reported:
		if d := at.Sub(back); d > time.Second {
			t.Fatalf("reported %v after Redis came back, want within 1 s", d)
		} else {
			t.Logf("reported %v after Redis came back", d)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("not reported within 3 s of Redis coming back")
	}
}

// waitRedis waits until Redis TIME reaches at.
func waitRedis(t *testing.T, s *redisstore.Store, at time.Time) {
	t.Helper()
	for {
		now, err := s.Now(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !now.Before(at) {
			return
		}
		time.Sleep(at.Sub(now))
	}
}

func ids(recs []*session.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = r.ID
	}
	return out
}

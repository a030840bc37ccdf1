package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

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

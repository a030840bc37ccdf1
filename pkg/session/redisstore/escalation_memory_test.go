package redisstore_test

import (
	"context"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// TestMemoryPerPendingRequestWithALadder is TestMemoryPerPendingRequest's
// two-step case for questions with a three-step escalation ladder (remind,
// add a team, page): the ladder in the stored question and its scheduled
// steps. It checks DESIGN §6's bound of 1 KiB.
func TestMemoryPerPendingRequestWithALadder(t *testing.T) {
	n := 10_000
	if v := os.Getenv(memoryPendingEnv); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1000 {
			t.Fatalf("%s=%q: want a number of at least 1000", memoryPendingEnv, v)
		}
	}
	ladder := []messages.EscalationStep{{AfterMS: 120_000, Remind: true}, {AfterMS: 300_000, AddTeam: "oncall-secondary"}, {AfterMS: 600_000, Page: "oncall-pd"}}
	due := []time.Duration{2 * time.Minute, 5 * time.Minute, 10 * time.Minute}
	srv := testenv.Redis(t)
	admin := srv.Client()
	s := newStore(t, redisOptionsForBulk(srv.URL()))
	ctx := context.Background()
	before := usedMemory(t, admin)
	w := newWorkload(10)
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				req := w.request(time.Hour)
				req.Question.Escalation = ladder
				req.Escalation = due
				if _, created, err := s.Prepare(ctx, req); err != nil || !created {
					failed.Store(err)
					return
				}
				if res, err := s.Open(ctx, req.SessionID, req.ID); err != nil || !res.Applied {
					failed.Store(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	after := usedMemory(t, admin)
	perRequest := float64(after-before) / float64(n)
	var steps int64
	iter := admin.Scan(ctx, 0, "signoff:{*}:esc", 1000).Iterator()
	for iter.Next(ctx) {
		m, err := admin.MemoryUsage(ctx, iter.Val(), 0).Result()
		if err != nil {
			t.Fatal(err)
		}
		steps += m
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d pending requests with a 3-step ladder: used_memory grew %.0f bytes per request; their steps (MEMORY USAGE) %d", n, perRequest, steps/int64(n))
	if perRequest >= 1024 {
		t.Errorf("a pending request with a ladder costs %.0f bytes of Redis memory, want under 1 KiB", perRequest)
	}
}

package reaper_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/reaper"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
	"github.com/signoff-dev/signoff/pkg/session/storetest"
)

// BenchmarkSweepOnceDrain measures one sweep that drains a backlog of
// expired requests from memstore in batches of 500 (the store's and the
// loop's cost; the callback does nothing).
func BenchmarkSweepOnceDrain(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("expired=%d", n), func(b *testing.B) {
			clock := newFakeClock()
			store := memstore.New(memstore.Options{Clock: clock.Now})
			r, err := reaper.New(reaper.Config{Store: store, OnExpired: func(context.Context, *session.Record) {}})
			if err != nil {
				b.Fatal(err)
			}
			round := 0
			for b.Loop() {
				b.StopTimer()
				round++
				for i := range n {
					if _, _, err := storetest.Create(b.Context(), store, session.Request{
						ID: fmt.Sprintf("r%d-%d", round, i), SessionID: fmt.Sprintf("s%d", i%1000), AgentID: "a",
						Teams: []string{"ops"}, ApprovalsRequired: 1, TTL: time.Minute,
					}); err != nil {
						b.Fatal(err)
					}
				}
				clock.Add(time.Minute)
				b.StartTimer()
				got, err := r.SweepOnce(b.Context())
				if err != nil || got != n {
					b.Fatalf("SweepOnce = %d, %v; want %d", got, err, n)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/expiry")
		})
	}
}

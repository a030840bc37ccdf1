package memstore_test

import (
	"fmt"
	"testing"
	"time"
)

func BenchmarkPrepare(b *testing.B) {
	s, _ := newStore(time.Hour)
	i := 0
	for b.Loop() {
		i++
		if _, _, err := s.Prepare(b.Context(), request(fmt.Sprintf("s%d", i%1000), fmt.Sprintf("r%d", i), time.Minute)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecide(b *testing.B) {
	s, _ := newStore(time.Hour)
	const n = 100_000
	for i := range n {
		mustCreate(b, s, request(fmt.Sprintf("s%d", i%1000), fmt.Sprintf("r%d", i), time.Minute))
	}
	i := 0
	for b.Loop() {
		// Votes on settled requests are refused: the same lookup and check.
		if _, err := s.Decide(b.Context(), fmt.Sprintf("s%d", i%1000), fmt.Sprintf("r%d", i%n), vote("ann", true)); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkClaimExpired claims batches of 500 out of a store holding
// pending requests: the cost per batch grows with log n, not n.
func BenchmarkClaimExpired(b *testing.B) {
	for _, pending := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			s, clock := newStore(time.Hour)
			seq := 0
			add := func(k int) {
				for range k {
					seq++
					mustCreate(b, s, request(fmt.Sprintf("s%d", seq%1000), fmt.Sprintf("r%d", seq), time.Minute+time.Duration(seq)))
				}
			}
			add(pending)
			clock.Add(time.Hour) // everything is due
			for b.Loop() {
				got, err := s.ClaimExpired(b.Context(), 500)
				if err != nil || len(got) != 500 {
					b.Fatalf("ClaimExpired = %d, %v", len(got), err)
				}
				b.StopTimer()
				add(500) // created now, due an hour ago by TTL: keep n constant
				clock.Add(2 * time.Minute)
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*500), "ns/claimed")
		})
	}
}

// BenchmarkListPendingTeam lists a team with 10 open questions in a store
// where 100,000 others wait for other teams.
func BenchmarkListPendingTeam(b *testing.B) {
	s, _ := newStore(time.Hour)
	for i := range 100_000 {
		req := request(fmt.Sprintf("s%d", i%1000), fmt.Sprintf("r%d", i), time.Hour)
		req.Teams = []string{fmt.Sprintf("team-%d", i%10_000)}
		mustCreate(b, s, req)
	}
	for b.Loop() {
		got, err := s.ListPendingTeam(b.Context(), "team-42")
		if err != nil || len(got) != 10 {
			b.Fatalf("ListPendingTeam = %d, %v", len(got), err)
		}
	}
}

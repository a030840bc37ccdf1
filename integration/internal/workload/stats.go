package workload

import (
	"fmt"
	"slices"
	"time"
)

// Stats are the throughput and latency of a set of requests, as the agents
// saw them (from the call of Request to its return).
type Stats struct {
	Count int
	// Elapsed runs from the first request sent to the last decision.
	Elapsed    time.Duration
	Throughput float64 // requests per second over Elapsed
	P50, P99   time.Duration
	Max        time.Duration
}

// Measure computes the stats of the entries that keep selects (all when
// keep is nil). Entries without a decision are left out.
func Measure(entries []Entry, keep func(*Entry) bool) Stats {
	var lat []time.Duration
	var first, last time.Time
	for i := range entries {
		e := &entries[i]
		if e.Done.IsZero() || (keep != nil && !keep(e)) {
			continue
		}
		lat = append(lat, e.Done.Sub(e.Sent))
		if first.IsZero() || e.Sent.Before(first) {
			first = e.Sent
		}
		if e.Done.After(last) {
			last = e.Done
		}
	}
	s := Stats{Count: len(lat)}
	if len(lat) == 0 {
		return s
	}
	slices.Sort(lat)
	s.Elapsed = last.Sub(first)
	if s.Elapsed > 0 {
		s.Throughput = float64(len(lat)) / s.Elapsed.Seconds()
	}
	s.P50 = percentile(lat, 0.50)
	s.P99 = percentile(lat, 0.99)
	s.Max = lat[len(lat)-1]
	return s
}

// percentile returns the nearest-rank percentile of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(p*float64(len(sorted))+0.999999) - 1
	return sorted[max(0, min(rank, len(sorted)-1))]
}

func (s Stats) String() string {
	return fmt.Sprintf("%d requests in %s: %.0f req/s, p50 %s, p99 %s, max %s",
		s.Count, s.Elapsed.Round(time.Millisecond), s.Throughput,
		s.P50.Round(10*time.Microsecond), s.P99.Round(10*time.Microsecond), s.Max.Round(time.Millisecond))
}

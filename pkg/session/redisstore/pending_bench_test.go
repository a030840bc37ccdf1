package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nuid"

	"github.com/signoff-dev/signoff/internal/stats"
	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/redisstore"
)

// pendingCounts are the numbers of pending requests of the pending curve
// (docs/BENCHMARKS.md, "Cost as work grows").
var pendingCounts = []int{1, 1000, 10_000, 100_000}

// BenchmarkPendingCurve measures the store's share of a decision with 1 to
// 100k pending requests already in Redis, all in the team of the measured
// request and in other sessions (ten per session): one redis-server per
// count, filled with the store's own Prepare and Open before anything is
// timed. "auto" is the automatic decision's one round trip (Lookup without
// grants); "ask" is the ask path's (Lookup with grants, Prepare, Open,
// AckEffects), each new request then settled with the timer stopped so the
// count stays put. The counts are measured in turn, SIGNOFF_PENDING_PASSES
// times (default 5), and the table printed at the end gives each count's
// median and the median of its per-pass ratio to the count of 1.
func BenchmarkPendingCurve(b *testing.B) {
	passes := 5
	if v, err := strconv.Atoi(os.Getenv("SIGNOFF_PENDING_PASSES")); err == nil && v > 0 {
		passes = v
	}
	stores := make([]*redisstore.Store, len(pendingCounts))
	for i, n := range pendingCounts {
		srv := testenv.Redis(b)
		stores[i] = newStore(b, redisOptionsForBulk(srv.URL()))
		w := newWorkload(10)
		w.teams = []string{"default"}
		createMany(b, stores[i], w, n, time.Hour)
	}
	// got[kind][count index] holds one ns/op per pass.
	got := map[string][][]float64{"auto": make([][]float64, len(pendingCounts)), "ask": make([][]float64, len(pendingCounts))}
	for range passes {
		for i, n := range pendingCounts {
			s := stores[i]
			b.Run(fmt.Sprintf("auto/pending=%d", n), func(b *testing.B) {
				got["auto"][i] = append(got["auto"][i], benchAuto(b, s))
			})
			b.Run(fmt.Sprintf("ask/pending=%d", n), func(b *testing.B) {
				got["ask"][i] = append(got["ask"][i], benchAsk(b, s))
			})
		}
	}
	// Printed rather than logged: a benchmark's log shows only with -v.
	fmt.Print(pendingSummary(got))
}

// benchAuto is the automatic decision's store read: a new request id in a
// session with no grants to read.
func benchAuto(b *testing.B, s *redisstore.Store) float64 {
	ctx := context.Background()
	q := session.LookupQuery{SessionID: nuid.Next(), AgentID: "pod-auto", SkipGrants: true}
	for b.Loop() {
		q.RequestID = nuid.Next()
		if l, err := s.Lookup(ctx, q); err != nil || l.Existing != nil {
			b.Fatalf("Lookup = %+v, %v", l, err)
		}
	}
	return float64(b.Elapsed().Nanoseconds()) / float64(b.N)
}

// benchAsk is the ask path's store work for a new question of team
// default; each question is then approved, untimed.
func benchAsk(b *testing.B, s *redisstore.Store) float64 {
	ctx := context.Background()
	w := newWorkload(10)
	w.teams = []string{"default"}
	for b.Loop() {
		req := w.request(time.Hour)
		q := session.LookupQuery{SessionID: req.SessionID, RequestID: req.ID, AgentID: req.AgentID}
		if _, err := s.Lookup(ctx, q); err != nil {
			b.Fatal(err)
		}
		rec, created, err := s.Prepare(ctx, req)
		if err != nil || !created {
			b.Fatalf("Prepare: created %v, %v", created, err)
		}
		res, err := s.Open(ctx, rec.SessionID, rec.ID)
		if err != nil || !res.Applied {
			b.Fatalf("Open = %+v, %v", res, err)
		}
		if err := s.AckEffects(ctx, res.Record); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		settle(b, s, res.Record)
		b.StartTimer()
	}
	return float64(b.Elapsed().Nanoseconds()) / float64(b.N)
}

// settle approves a pending request and acknowledges its effects.
func settle(b *testing.B, s *redisstore.Store, rec *session.Record) {
	ctx := context.Background()
	res, err := s.Decide(ctx, rec.SessionID, rec.ID, session.Vote{ApproverID: "ann", Approve: true})
	if err != nil || !res.Applied {
		b.Fatalf("Decide = %+v, %v", res, err)
	}
	if err := s.AckEffects(ctx, res.Record); err != nil {
		b.Fatal(err)
	}
}

// pendingSummary is the table docs/BENCHMARKS.md quotes: per kind and
// count, the median µs per operation over the passes and the median of the
// per-pass ratios to the first count.
func pendingSummary(got map[string][][]float64) string {
	var sb strings.Builder
	sb.WriteString("| path | pending | median µs/op | ratio to pending=1 (median of passes) |\n|---|---|---|---|\n")
	for _, kind := range []string{"auto", "ask"} {
		for i, n := range pendingCounts {
			var ratios []float64
			for p := range got[kind][i] {
				ratios = append(ratios, got[kind][i][p]/got[kind][0][p])
			}
			fmt.Fprintf(&sb, "| %s | %d | %.1f | %.2f× |\n", kind, n, stats.Median(got[kind][i])/1e3, stats.Median(ratios))
		}
	}
	return sb.String()
}

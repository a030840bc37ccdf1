package main

import (
	"bytes"
	"context"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/testenv"
)

// Ratios are taken per pass, against the baseline of the same pass, and
// then their median: a machine that slows down between passes moves both.
func TestSummaryRatiosArePerPassMedians(t *testing.T) {
	s := newSummary([]string{"baseline", "broker-async"}, runConfig{concurrency: intList{1}, passes: 3})
	for pass, x := range []struct{ base, broker [2]float64 }{ // p50 µs, req/s
		{[2]float64{100, 1000}, [2]float64{130, 1000}},
		{[2]float64{200, 500}, [2]float64{220, 600}},
		{[2]float64{100, 1000}, [2]float64{150, 900}},
	} {
		s.add("baseline", 1, pass+1, sample{loadResult: loadResult{P50Micros: x.base[0], PerSecond: x.base[1]}})
		s.add("broker-async", 1, pass+1, sample{loadResult: loadResult{P50Micros: x.broker[0], PerSecond: x.broker[1]}})
	}
	rows := s.rows()
	if len(rows) != 2 || rows[1].target != "broker-async" {
		t.Fatalf("rows = %+v", rows)
	}
	r := rows[1]
	if math.Abs(r.p50Ratio-1.3) > 1e-9 || math.Abs(r.rpsRatio-1.0) > 1e-9 {
		t.Errorf("ratios p50 %v, throughput %v; want the per-pass medians 1.3 and 1.0", r.p50Ratio, r.rpsRatio)
	}
	if r.p50 != 150 || r.rps != 900 {
		t.Errorf("medians p50 %v, throughput %v; want 150 and 900", r.p50, r.rps)
	}
	var out bytes.Buffer
	s.write(&out)
	if !strings.Contains(out.String(), "| broker-async | 1 | 150 µs |") || !strings.Contains(out.String(), "**1.30×** (1.10–1.50)") {
		t.Errorf("table:\n%s", out.String())
	}
}

// Several replicas are compared with one replica of the same broker and
// mode, per pass: throughput and the CPU of all replicas per request.
func TestSummaryComparesReplicasWithOne(t *testing.T) {
	c := runConfig{concurrency: intList{16}, passes: 2, modes: []string{"async"}, replicas: intList{1, 2}}
	targets := targetNames(c)
	if want := []string{"baseline", "broker-async", "broker-async-r2"}; !slices.Equal(targets, want) {
		t.Fatalf("targets %v, want %v", targets, want)
	}
	s := newSummary(targets, c)
	for pass, x := range []struct{ one, two [2]float64 }{ // req/s, cpu µs/req
		{[2]float64{1000, 100}, [2]float64{1100, 120}},
		{[2]float64{500, 200}, [2]float64{600, 260}},
	} {
		s.add("baseline", 16, pass+1, sample{loadResult: loadResult{P50Micros: 1, PerSecond: 1}})
		s.add("broker-async", 16, pass+1, sample{loadResult: loadResult{P50Micros: 1, PerSecond: x.one[0]}, CPUMicros: x.one[1]})
		s.add("broker-async-r2", 16, pass+1, sample{loadResult: loadResult{P50Micros: 1, PerSecond: x.two[0]}, CPUMicros: x.two[1]})
	}
	var out bytes.Buffer
	s.write(&out)
	if !strings.Contains(out.String(), "| broker-async-r2 | 16 | 850 req/s | 190.0 | **1.15×** (1.10–1.20) | **1.25×** (1.20–1.30) |") {
		t.Errorf("table:\n%s", out.String())
	}
	if over := s.replicaCPUOver(1.3); len(over) != 0 {
		t.Errorf("bound 1.3× broken: %v", over)
	}
	if over := s.replicaCPUOver(1.2); len(over) != 1 {
		t.Errorf("bound 1.2×: %v, want broken once", over)
	}
}

func TestMedianOfEvenAndOddCounts(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// The load role against the baseline role, both on real servers: every
// request answered and checked, and a reply that does not match counts as
// an error (the check can fail).
func TestLoadMeasuresTheBaselineResponder(t *testing.T) {
	ns := testenv.NATS(t)
	rs := testenv.Redis(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- serveBaseline(ctx, []string{"-nats", ns.ClientURL(), "-redis", rs.Addr()}, &bytes.Buffer{}, &bytes.Buffer{})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("baseline: %v", err)
		}
	})
	lctx, lcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer lcancel()
	c := loadConfig{natsURL: ns.ClientURL(), session: "s-bench", command: "ls -la", want: `"outcome":"allow"`,
		requests: 300, warmup: 20, concurrency: 4, timeout: 5 * time.Second}
	r, err := runLoad(lctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 300 || r.Errors != 0 || r.P50Micros <= 0 || r.P99Micros < r.P50Micros || r.PerSecond <= 0 {
		t.Errorf("result %+v", r)
	}
	c.want = `"outcome":"deny"`
	c.warmup = 0
	if r, err = runLoad(lctx, c); err != nil || r.Errors != 300 || !strings.Contains(r.FirstError, "does not contain") {
		t.Errorf("with a reply that does not match: %+v, %v; want every request counted as an error", r, err)
	}
}

func TestRunRefusesBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-modes", "async,paranoid"},
		{"-passes", "0"},
		{"-concurrency", "1,zero"},
		{"-replicas", "0"},
		{"-nats-server", "/nonexistent/nats-server"},
		{"load"},
		{"nonsense"},
	} {
		var stderr bytes.Buffer
		if code := run(context.Background(), args, &bytes.Buffer{}, &stderr); code != exitUsage {
			t.Errorf("run %v = %d, want %d (usage); stderr: %s", args, code, exitUsage, stderr.String())
		}
	}
}

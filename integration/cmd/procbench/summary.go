package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/signoff-dev/signoff/internal/stats"
)

// sample is one measurement of one target at one concurrency in one pass.
type sample struct {
	loadResult
	// CPUMicros is the target process's CPU time per request (the broker
	// or the baseline responder; not NATS, Redis or the load generator).
	CPUMicros float64 `json:"cpu_us_per_req"`
	// NATSCPUMicros is nats-server's CPU time per request.
	NATSCPUMicros float64 `json:"nats_cpu_us_per_req"`
}

type key struct {
	target string
	conc   int
}

// summary holds every sample by target, concurrency and pass.
type summary struct {
	targets []string
	conc    []int
	passes  int
	// scaled pairs each broker target of several replicas with the same
	// broker's one-replica target.
	scaled  map[string]string
	samples map[key][]sample // index: pass-1
	Errors  int64
}

func newSummary(targets []string, c runConfig) *summary {
	s := &summary{targets: targets, conc: c.concurrency, passes: c.passes, samples: map[key][]sample{}, scaled: map[string]string{}}
	for _, t := range targets {
		if one, _, ok := strings.Cut(t, "-r"); ok && slices.Contains(targets, one) {
			s.scaled[t] = one
		}
	}
	return s
}

func (s *summary) add(target string, conc, pass int, x sample) {
	k := key{target, conc}
	for len(s.samples[k]) < pass {
		s.samples[k] = append(s.samples[k], sample{})
	}
	s.samples[k][pass-1] = x
	s.Errors += x.Errors
}

// median of xs ([stats.Median]).
var median = stats.Median

// row is one line of the summary table.
type row struct {
	target                 string
	conc                   int
	p50, p99, rps, cpu, nc float64
	p50Ratio, rpsRatio     float64
	p50Ratios, rpsRatios   []float64
}

// rows computes the medians and the medians of per-pass ratios against
// the baseline measured in the same pass at the same concurrency.
func (s *summary) rows() []row {
	var out []row
	for _, conc := range s.conc {
		base := s.samples[key{"baseline", conc}]
		for _, t := range s.targets {
			xs := s.samples[key{t, conc}]
			r := row{target: t, conc: conc}
			var p50, p99, rps, cpu, nc []float64
			for i, x := range xs {
				p50 = append(p50, x.P50Micros)
				p99 = append(p99, x.P99Micros)
				rps = append(rps, x.PerSecond)
				cpu = append(cpu, x.CPUMicros)
				nc = append(nc, x.NATSCPUMicros)
				if i < len(base) && base[i].P50Micros > 0 && base[i].PerSecond > 0 {
					r.p50Ratios = append(r.p50Ratios, x.P50Micros/base[i].P50Micros)
					r.rpsRatios = append(r.rpsRatios, x.PerSecond/base[i].PerSecond)
				}
			}
			r.p50, r.p99, r.rps, r.cpu, r.nc = median(p50), median(p99), median(rps), median(cpu), median(nc)
			r.p50Ratio, r.rpsRatio = median(r.p50Ratios), median(r.rpsRatios)
			out = append(out, r)
		}
	}
	return out
}

// write prints the summary as the Markdown table docs/BENCHMARKS.md quotes.
func (s *summary) write(w io.Writer) {
	fmt.Fprintf(w, "medians of %d passes\n\n", s.passes)
	fmt.Fprintln(w, "| target | in flight | p50 | p99 | throughput | target cpu-µs/req | nats cpu-µs/req | p50 vs baseline | throughput vs baseline |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, r := range s.rows() {
		ratios := "—"
		tput := "—"
		if r.target != "baseline" {
			ratios = fmt.Sprintf("**%.2f×** (%s)", r.p50Ratio, spread(r.p50Ratios))
			tput = fmt.Sprintf("**%.2f×** (%s)", r.rpsRatio, spread(r.rpsRatios))
		}
		fmt.Fprintf(w, "| %s | %d | %.0f µs | %.0f µs | %.0f req/s | %.1f | %.1f | %s | %s |\n",
			r.target, r.conc, r.p50, r.p99, r.rps, r.cpu, r.nc, ratios, tput)
	}
	s.writeReplicas(w)
}

// replicaRow is a broker target of several replicas at one concurrency:
// medians of throughput and summed CPU per request, and the per-pass
// ratios of both to the same broker with one replica.
func (s *summary) replicaRow(t string, conc int) (rps, cpu float64, rpsR, cpuR []float64) {
	xs, base := s.samples[key{t, conc}], s.samples[key{s.scaled[t], conc}]
	var rs, cs []float64
	for i, x := range xs {
		rs, cs = append(rs, x.PerSecond), append(cs, x.CPUMicros)
		if i < len(base) && base[i].PerSecond > 0 && base[i].CPUMicros > 0 {
			rpsR = append(rpsR, x.PerSecond/base[i].PerSecond)
			cpuR = append(cpuR, x.CPUMicros/base[i].CPUMicros)
		}
	}
	return median(rs), median(cs), rpsR, cpuR
}

// writeReplicas prints, for every broker target of several replicas, its
// throughput and summed CPU per request against the same broker with one
// replica, as medians of per-pass ratios.
func (s *summary) writeReplicas(w io.Writer) {
	if len(s.scaled) == 0 {
		return
	}
	fmt.Fprintln(w, "\n| target | in flight | throughput | cpu-µs/req (all replicas) | throughput vs 1 replica | cpu/req vs 1 replica |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, conc := range s.conc {
		for _, t := range s.targets {
			if _, ok := s.scaled[t]; !ok {
				continue
			}
			rps, cpu, rpsR, cpuR := s.replicaRow(t, conc)
			fmt.Fprintf(w, "| %s | %d | %.0f req/s | %.1f | **%.2f×** (%s) | **%.2f×** (%s) |\n",
				t, conc, rps, cpu, median(rpsR), spread(rpsR), median(cpuR), spread(cpuR))
		}
	}
}

// replicaCPUOver lists the targets of several replicas whose CPU per
// request, summed over the replicas, is more than bound times that of one
// replica (the median of the per-pass ratios), at any concurrency.
func (s *summary) replicaCPUOver(bound float64) []string {
	var out []string
	for _, conc := range s.conc {
		for _, t := range s.targets {
			if _, ok := s.scaled[t]; !ok {
				continue
			}
			if _, _, _, cpuR := s.replicaRow(t, conc); median(cpuR) > bound {
				out = append(out, fmt.Sprintf("%s at %d in flight: cpu per request %.2f× one replica's, over the bound %.2f×", t, conc, median(cpuR), bound))
			}
		}
	}
	return out
}

// spread is the range of the per-pass ratios.
func spread(xs []float64) string {
	if len(xs) == 0 {
		return "no pass"
	}
	return fmt.Sprintf("%.2f–%.2f", slices.Min(xs), slices.Max(xs))
}

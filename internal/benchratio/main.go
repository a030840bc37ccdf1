package main

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff/internal/stats"
)

// result is one benchmark line's custom metrics.
type result struct{ p50, p99, rps, cpu float64 }

// parse reads benchmark lines into passes: a pass ends when a benchmark
// already in it comes again.
func parse(r io.Reader) ([]map[string]result, error) {
	var passes []map[string]result
	cur := map[string]result{}
	for b, err := range stats.Results(r) {
		if err != nil {
			return nil, err
		}
		var res result
		for _, x := range b.Metrics {
			switch x.Unit {
			case "p50-µs":
				res.p50 = x.Value
			case "p99-µs":
				res.p99 = x.Value
			case "req/s":
				res.rps = x.Value
			case "cpu-µs/req":
				res.cpu = x.Value
			}
		}
		if res.p50 == 0 || res.rps == 0 {
			continue // not a latency benchmark (the ask path)
		}
		if _, dup := cur[b.Name]; dup {
			passes = append(passes, cur)
			cur = map[string]result{}
		}
		cur[b.Name] = res
	}
	if len(cur) > 0 {
		passes = append(passes, cur)
	}
	return passes, nil
}

// baseline names the benchmark name's baseline: the same load shape (the
// sub-benchmark) of BrokerBaselineGET.
func baseline(name string) string {
	_, shape, _ := strings.Cut(name, "/")
	return "BrokerBaselineGET/" + shape
}

func report(w io.Writer, passes []map[string]result) {
	var names []string
	for _, p := range passes {
		for n := range p {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	slices.Sort(names)
	fmt.Fprintf(w, "%d passes; medians, and the median of the per-pass ratios to the baseline\n", len(passes))
	fmt.Fprintf(w, "%-38s %8s %8s %9s %8s %8s %8s  %s\n", "benchmark", "p50-µs", "p99-µs", "req/s", "cpu-µs", "p50 ×", "req/s ×", "req/s × per pass")
	for _, n := range names {
		var p50, p99, rps, cpu, rp50, rrps []float64
		for _, p := range passes {
			r, ok := p[n]
			if !ok {
				continue
			}
			p50, p99, rps, cpu = append(p50, r.p50), append(p99, r.p99), append(rps, r.rps), append(cpu, r.cpu)
			if b, ok := p[baseline(n)]; ok {
				rp50, rrps = append(rp50, r.p50/b.p50), append(rrps, r.rps/b.rps)
			}
		}
		per := make([]string, len(rrps))
		for i, x := range rrps {
			per[i] = strconv.FormatFloat(x, 'f', 2, 64)
		}
		fmt.Fprintf(w, "%-38s %8.0f %8.0f %9.0f %8.1f %8.2f %8.2f  %s\n", n, stats.Median(p50), stats.Median(p99), stats.Median(rps), stats.Median(cpu), stats.Median(rp50), stats.Median(rrps), strings.Join(per, " "))
	}
}

func main() {
	passes, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchratio:", err)
		os.Exit(1)
	}
	if len(passes) == 0 {
		fmt.Fprintln(os.Stderr, "benchratio: no broker benchmark lines on stdin")
		os.Exit(1)
	}
	report(os.Stdout, passes)
}

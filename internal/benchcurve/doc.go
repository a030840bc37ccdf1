// Command benchcurve summarizes repeated runs of the "Cost as work grows"
// benchmarks (docs/BENCHMARKS.md) as curves: for every benchmark whose last
// name element is a size (BenchmarkRulesCurve/pipeline/rules=1000), each
// size's median of every metric over the passes, and the median of its
// per-pass ratios to the smallest size measured in the same pass. A pass
// ends where a benchmark already in it comes again, so run the benchmarks
// in turn several times rather than with -count.
//
// Usage:
//
//	go test -c -o /tmp/policy.test ./pkg/policy/
//	for i in 1 2 3 4 5; do /tmp/policy.test -test.run='^$' -test.bench=RulesCurve; done | go run ./internal/benchcurve
//
// -max 'curve:unit<=ratio,…' checks bounds: at the curve's largest size,
// the median of the per-pass ratios of that metric to the smallest size
// must be at most ratio, or benchcurve exits 1 naming the broken bound.
//
// scripts/bench.sh (make bench SECTIONS=curves) pipes its curves through it,
// with the bounds docs/BENCHMARKS.md states.
package main

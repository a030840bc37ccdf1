// Command benchratio summarizes repeated runs of the broker benchmarks
// (internal/broker, BenchmarkBroker*) as docs/BENCHMARKS.md quotes them:
// for every benchmark the median p50, p99, throughput and CPU per request
// over the passes, and the median of its per-pass ratios against the
// baseline responder measured in the same pass (BrokerBaselineGET with the
// same load shape). A pass is one run of the benchmarks in turn, so that a
// ratio compares measurements taken seconds apart on a noisy machine.
//
// Usage:
//
//	go test -c -o /tmp/broker.test ./internal/broker/
//	for i in 1 2 3 4 5 6 7; do /tmp/broker.test -test.run='^$' -test.bench=Broker -test.benchtime=5000x; done | go run ./internal/benchratio
//
// scripts/bench.sh (make bench) runs exactly that.
package main

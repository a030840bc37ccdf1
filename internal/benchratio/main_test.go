package main

import (
	"strings"
	"testing"
)

const sample = `goos: linux
BenchmarkBrokerBaselineGET/serial-2   	 5000	 100 ns/op	 90.0 cpu-µs/req	 100.0 p50-µs	 200 p99-µs	 1000 req/s
BenchmarkBrokerBaselineGET/parallel-2 	 5000	 100 ns/op	 40.0 cpu-µs/req	 400.0 p50-µs	 900 p99-µs	 4000 req/s
BenchmarkBrokerAutoAllow/serial-2     	 5000	 100 ns/op	 99.0 cpu-µs/req	 120.0 p50-µs	 300 p99-µs	  800 req/s
BenchmarkBrokerAutoAllow/parallel-2   	 5000	 100 ns/op	 60.0 cpu-µs/req	 500.0 p50-µs	 999 p99-µs	 3000 req/s
BenchmarkBrokerAskPath-2              	 5000	 100 ns/op	 400 ask-p50-µs	 900 ask-p99-µs
PASS
BenchmarkBrokerBaselineGET/serial-2   	 5000	 100 ns/op	 90.0 cpu-µs/req	 200.0 p50-µs	 200 p99-µs	 1000 req/s
BenchmarkBrokerBaselineGET/parallel-2 	 5000	 100 ns/op	 40.0 cpu-µs/req	 400.0 p50-µs	 900 p99-µs	 2000 req/s
BenchmarkBrokerAutoAllow/serial-2     	 5000	 100 ns/op	 99.0 cpu-µs/req	 260.0 p50-µs	 300 p99-µs	  800 req/s
BenchmarkBrokerAutoAllow/parallel-2   	 5000	 100 ns/op	 60.0 cpu-µs/req	 500.0 p50-µs	 999 p99-µs	 1800 req/s
`

func TestRatiosArePerPassAgainstTheSameShape(t *testing.T) {
	passes, err := parse(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(passes) != 2 {
		t.Fatalf("%d passes, want 2 (the ask path has no latency metrics and is left out)", len(passes))
	}
	var out strings.Builder
	report(&out, passes)
	got := out.String()
	for _, want := range []string{
		// serial p50: 120/100 and 260/200 → median 1.25; req/s 0.80 both.
		"BrokerAutoAllow/serial                      190      300       800     99.0     1.25     0.80  0.80 0.80",
		// parallel req/s: 3000/4000 = 0.75 and 1800/2000 = 0.90 → 0.82(5).
		"BrokerAutoAllow/parallel                    500      999      2400     60.0     1.25     0.82  0.75 0.90",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
}

func TestABadMetricIsAnErrorWithItsLine(t *testing.T) {
	_, err := parse(strings.NewReader("x\nBenchmarkBrokerAutoAllow/serial-2 5000 100 ns/op 1e+ p50-µs\n"))
	if err == nil || !strings.Contains(err.Error(), "line 2") || !strings.Contains(err.Error(), "p50-µs") {
		t.Fatalf("err = %v, want one naming line 2 and the metric", err)
	}
}

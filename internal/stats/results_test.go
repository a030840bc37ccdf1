package stats

import (
	"slices"
	"strings"
	"testing"
)

func TestResultsYieldsTheBenchmarkLinesOnly(t *testing.T) {
	in := "goos: linux\nBenchmarkX/n=10-8   \t 100\t 1500 ns/op\t 8 B/op\nPASS\nBenchmarkY \t 5\t 2.5 ns/op\nok  \tpkg\t1s\n"
	var got []Result
	for r, err := range Results(strings.NewReader(in)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r)
	}
	want := []Result{
		{Line: 2, Name: "X/n=10", Metrics: []Metric{{"ns/op", 1500}, {"B/op", 8}}},
		{Line: 4, Name: "Y", Metrics: []Metric{{"ns/op", 2.5}}},
	}
	if !slices.EqualFunc(got, want, func(a, b Result) bool {
		return a.Line == b.Line && a.Name == b.Name && slices.Equal(a.Metrics, b.Metrics)
	}) {
		t.Errorf("Results = %+v, want %+v", got, want)
	}
}

func TestResultsStopsAtAMetricThatDoesNotRead(t *testing.T) {
	n := 0
	for _, err := range Results(strings.NewReader("BenchmarkX-2 1 5 ns/op\nBenchmarkY-2 1 1e+ p50-µs\nBenchmarkZ-2 1 5 ns/op\n")) {
		n++
		if err != nil {
			if msg := err.Error(); !strings.Contains(msg, "line 2") || !strings.Contains(msg, "Y") || !strings.Contains(msg, "p50-µs") {
				t.Errorf("err = %v, want one naming line 2, the benchmark and the metric", err)
			}
			break
		}
	}
	if n != 2 {
		t.Errorf("%d values, want the first result and then the error", n)
	}
}

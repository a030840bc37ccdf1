package stats

import (
	"bufio"
	"fmt"
	"io"
	"iter"
	"regexp"
)

// Result is a benchmark result line of go test's output.
type Result struct {
	// Line is its line number in the input, from 1.
	Line int
	// Name is the benchmark's name without "Benchmark" and the
	// -GOMAXPROCS suffix ("BrokerAutoAllow/serial").
	Name string
	// Metrics are its "value unit" pairs after the iteration count, ns/op
	// first.
	Metrics []Metric
}

var resultLine = regexp.MustCompile(`^Benchmark(\S+?)(?:-\d+)?\s+\d+\s+(.*)$`)

// Results reads go test's output from r and yields its benchmark result
// lines in order; every other line is skipped. A line whose metrics do not
// read ([Metrics]) yields an error naming its line number and benchmark,
// as does a failed read; the sequence ends after an error.
func Results(r io.Reader) iter.Seq2[Result, error] {
	return func(yield func(Result, error) bool) {
		sc := bufio.NewScanner(r)
		for n := 1; sc.Scan(); n++ {
			m := resultLine.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			metrics, err := Metrics(m[2])
			if err != nil {
				yield(Result{}, fmt.Errorf("line %d: %s: %w", n, m[1], err))
				return
			}
			if !yield(Result{Line: n, Name: m[1], Metrics: metrics}, nil) {
				return
			}
		}
		if err := sc.Err(); err != nil {
			yield(Result{}, err)
		}
	}
}

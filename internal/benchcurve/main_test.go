package main

import (
	"bytes"
	"strings"
	"testing"
)

// Ratios are taken per pass against the smallest size of the same pass,
// then their median; values are medians over the passes.
func TestCurveRatiosArePerPassMedians(t *testing.T) {
	in := `BenchmarkX/a/n=10-2   100   1000 ns/op   8 B/op
BenchmarkX/a/n=100-2  100   3000 ns/op   8 B/op
BenchmarkX/a/n=10-2   100   2000 ns/op   8 B/op
BenchmarkX/a/n=100-2  100   4000 ns/op   8 B/op
BenchmarkX/a/n=10-2   100   1000 ns/op   8 B/op
BenchmarkX/a/n=100-2  100   5000 ns/op   8 B/op
PASS
`
	passes, units, err := parse(strings.NewReader(in))
	if err != nil || len(passes) != 3 {
		t.Fatalf("parse: %d passes, %v", len(passes), err)
	}
	var out bytes.Buffer
	report(&out, passes, units)
	for _, want := range []string{"X/a", "| 10 | 1000 (1.00×) | 8 (1.00×) |", "| 100 | 4000 (3.00×) | 8 (1.00×) |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
}

func TestLinesWithoutASizeAreIgnored(t *testing.T) {
	passes, _, err := parse(strings.NewReader("BenchmarkPlain-2  10  5 ns/op\nok  pkg 1s\n"))
	if err != nil || len(passes) != 0 {
		t.Errorf("parse = %v, %v; want no pass", passes, err)
	}
}

// A bound compares the largest size with the smallest, per pass.
func TestBoundsAreCheckedAtTheLargestSize(t *testing.T) {
	in := `BenchmarkX/a/n=10-2   100   1000 ns/op
BenchmarkX/a/n=100-2  100   1500 ns/op
BenchmarkX/a/n=1000-2 100   2500 ns/op
`
	passes, _, err := parse(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		bounds string
		broken int
	}{
		{"X/a:ns/op<=3", 0}, {"X/a:ns/op<=2", 1}, {"Y:ns/op<=2", 1},
	} {
		b, err := parseBounds(tc.bounds)
		if err != nil {
			t.Fatal(err)
		}
		if got := check(passes, b); len(got) != tc.broken {
			t.Errorf("%s: broken %v, want %d", tc.bounds, got, tc.broken)
		}
	}
	if _, err := parseBounds("X/a=2"); err == nil {
		t.Error("a bound without unit and <= was accepted")
	}
}

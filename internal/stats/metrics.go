package stats

import (
	"fmt"
	"strconv"
	"strings"
)

// Metric is one "value unit" pair of a benchmark result line (100 ns/op,
// 250 p50-µs).
type Metric struct {
	Unit  string
	Value float64
}

// Metrics reads the "value unit" pairs of the metrics part of a benchmark
// result line (what follows the iteration count), in order; a lone last
// field is ignored. A value that is not a number is an error naming its
// unit.
func Metrics(s string) ([]Metric, error) {
	f := strings.Fields(s)
	out := make([]Metric, 0, len(f)/2)
	for i := 0; i+1 < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return nil, fmt.Errorf("metric %q: %v", f[i+1], err)
		}
		out = append(out, Metric{Unit: f[i+1], Value: v})
	}
	return out, nil
}

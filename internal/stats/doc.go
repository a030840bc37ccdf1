// Package stats holds what the benchmark tools share (internal/benchratio,
// internal/benchcurve, integration/cmd/procbench): the summary statistics
// and the reading of go test's benchmark result lines and their metrics.
package stats

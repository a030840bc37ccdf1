// Package stats holds what the benchmark tools share (internal/benchratio,
// internal/benchcurve, integration/cmd/procbench): the summary statistics
// and the reading of a benchmark line's metrics.
package stats

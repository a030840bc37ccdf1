// Package stats holds the summary statistics the benchmark tools share
// (internal/benchratio, internal/benchcurve, integration/cmd/procbench).
package stats

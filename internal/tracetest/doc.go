// Package tracetest provides a real OpenTelemetry Collector for tests: it
// builds the collector of ./otelcol (a Go module of its own: the
// Collector's OTLP receiver, go.opentelemetry.io/collector) once per test
// binary, starts it on free loopback ports, and hands the test the spans
// it received.
//
// Like internal/testenv, it fails the test — never skips it — when the
// collector cannot be built or started.
package tracetest

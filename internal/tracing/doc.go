// Package tracing provides the OpenTelemetry tracer of a Signoff process
// (broker, approver bot, the agent-side signoff binary): OTLP export of the
// decision path's spans when an endpoint is configured, nothing at all
// otherwise.
//
// Export is off by default. [Setup] turns it on when given an endpoint
// (the --otlp-endpoint flag) or when the standard OTEL_EXPORTER_OTLP_*
// variables name one; OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL picks gRPC or
// HTTP/protobuf (the default), and the exporters read the rest of the
// standard variables (headers, TLS, timeout, compression) themselves.
// OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none keep it off.
//
// When export is off the tracer is nil, and the code that would make spans
// checks for nil and skips them: the decision path does not even build the
// attributes of spans nobody records (docs/BENCHMARKS.md).
package tracing

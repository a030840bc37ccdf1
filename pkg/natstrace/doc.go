// Package natstrace carries W3C trace context (traceparent, tracestate) in
// the headers of NATS messages, so that a decision's spans — the agent's
// call, the broker's request, the approver's response — join one trace.
//
// It adapts [nats.Header] to OpenTelemetry's [propagation.TextMapCarrier]
// and wraps the W3C propagator around it. Header names are written in
// lower case, as the W3C recommends, and read in any case, as clients in
// other languages (or the nats CLI) may send them. A context with no valid
// span context adds no header: an untraced message stays as it was.
package natstrace

package natstrace

import (
	"context"
	"strings"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Header names of the W3C Trace Context recommendation.
const (
	TraceParent = "traceparent"
	TraceState  = "tracestate"
)

// w3c is the propagator this package speaks: W3C Trace Context only.
var w3c = propagation.TraceContext{}

// Carrier is a [propagation.TextMapCarrier] over a NATS message's headers.
// Get matches a name in any case; Set replaces every spelling of it.
type Carrier nats.Header

var _ propagation.TextMapCarrier = Carrier(nil)

// Get returns the first value of key, matched in any case ("" if absent).
func (c Carrier) Get(key string) string {
	if v := c[key]; len(v) > 0 {
		return v[0]
	}
	for k, v := range c {
		if len(v) > 0 && strings.EqualFold(k, key) {
			return v[0]
		}
	}
	return ""
}

// Set sets key (as given) to value, dropping other spellings of key.
func (c Carrier) Set(key, value string) {
	for k := range c {
		if k != key && strings.EqualFold(k, key) {
			delete(c, k)
		}
	}
	c[key] = []string{value}
}

// Keys lists the header names present.
func (c Carrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// Inject writes ctx's span context into msg's headers (creating them if
// needed). It does nothing when ctx carries no valid span context.
func Inject(ctx context.Context, msg *nats.Msg) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	if msg.Header == nil {
		msg.Header = nats.Header{}
	}
	w3c.Inject(ctx, Carrier(msg.Header))
}

// Extract returns ctx with the remote span context found in h, if any; a
// missing or malformed traceparent leaves ctx as it was.
func Extract(ctx context.Context, h nats.Header) context.Context {
	if len(h) == 0 {
		return ctx
	}
	return w3c.Extract(ctx, Carrier(h))
}

// Format returns ctx's span context as a traceparent value, or "" when ctx
// carries no valid span context. The broker stores it with a question so
// that whoever answers the question, on any replica, later, can join the
// request's trace.
func Format(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := Carrier{}
	w3c.Inject(ctx, c)
	return c.Get(TraceParent)
}

// Parse returns ctx with the remote span context of a traceparent value
// (as made by [Format]); an empty or malformed value leaves ctx as it was.
func Parse(ctx context.Context, traceparent string) context.Context {
	if traceparent == "" {
		return ctx
	}
	return w3c.Extract(ctx, Carrier{TraceParent: {traceparent}})
}

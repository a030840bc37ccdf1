package engine

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/signoff-dev/signoff/pkg/natstrace"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// Span names and attribute keys of the decision procedure's spans
// (docs/OPERATIONS.md "Traces"). The broker's span of the message that
// started the work is their parent.
const (
	SpanPolicy  = "signoff.policy"
	SpanStore   = "signoff.store."
	SpanEffects = "signoff.effects"

	AttrAction         = attribute.Key("signoff.action")
	AttrRule           = attribute.Key("signoff.rule")
	AttrTier           = attribute.Key("signoff.tier")
	AttrSafetyOverride = attribute.Key("signoff.safety_override")
	AttrState          = attribute.Key("signoff.state")
)

// startSpan starts the child span name of ctx's span when tracing is on.
// Off, it returns ctx and a nil span, and costs a nil check: callers build
// attributes only for a span that is not nil.
func (e *Engine) startSpan(ctx context.Context, name string) (context.Context, trace.Span) {
	if e.tracer == nil {
		return ctx, nil
	}
	return e.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindInternal))
}

// endSpan ends span (if any), marking it failed with err.
func endSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// policySpan records the policy's verdict d on span and ends it.
func policySpan(span trace.Span, d *policy.Decision) {
	if span == nil {
		return
	}
	span.SetAttributes(AttrAction.String(string(d.Action)), AttrRule.String(d.Rule), AttrTier.String(string(d.Tier)),
		AttrSafetyOverride.Bool(d.SafetyOverride != ""))
	span.End()
}

// linkQuestion links the span of ctx (the broker's span of a response) to
// the span of the request that asked, whose traceparent the question
// keeps.
func (e *Engine) linkQuestion(ctx context.Context, traceparent string) {
	if e.tracer == nil || traceparent == "" {
		return
	}
	sc := trace.SpanContextFromContext(natstrace.Parse(context.Background(), traceparent))
	if sc.IsValid() {
		trace.SpanFromContext(ctx).AddLink(trace.Link{SpanContext: sc})
	}
}

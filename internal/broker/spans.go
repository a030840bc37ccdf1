package broker

import (
	"context"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/signoff-dev/signoff/internal/engine"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/natstrace"
)

// The broker's spans (docs/OPERATIONS.md "Traces"): one server span per
// agent request and per approver response, a child of the trace context
// the message's headers carry (pkg/natstrace), with the engine's spans
// (policy, store, effects) and the reply's under it.
const (
	SpanRequest = "signoff.request"
	SpanRespond = "signoff.respond"
	SpanReply   = "signoff.reply"

	AttrRequestID  = attribute.Key("signoff.request_id")
	AttrSessionID  = attribute.Key("signoff.session_id")
	AttrAgentID    = attribute.Key("signoff.agent_id")
	AttrAgentType  = attribute.Key("signoff.agent_type")
	AttrTool       = attribute.Key("signoff.tool")
	AttrResult     = attribute.Key("signoff.result") // the label of signoff_decision_seconds
	AttrOutcome    = attribute.Key("signoff.outcome")
	AttrReasonCode = attribute.Key("signoff.reason_code")
	AttrApprover   = attribute.Key("signoff.approver")
	AttrApproved   = attribute.Key("signoff.approved")
	AttrApplied    = attribute.Key("signoff.applied")
	AttrErrorCode  = attribute.Key("signoff.error_code")
)

// serverSpan starts the server span name of msg, a child of the trace
// context in its headers (a new trace without one). Call it only with a
// tracer.
func (b *Broker) serverSpan(ctx context.Context, msg *nats.Msg, name string) (context.Context, trace.Span) {
	ctx = natstrace.Extract(ctx, msg.Header)
	return b.cfg.Tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("messaging.system", "nats"), attribute.String("messaging.destination.name", msg.Subject)))
}

// endRequestSpan records what the request span of req decided (or the
// error reply errReply) and ends it.
func endRequestSpan(span trace.Span, req *messages.Request, res *engine.Result, errReply []byte) {
	span.SetAttributes(AttrRequestID.String(req.RequestID), AttrSessionID.String(req.SessionID),
		AttrAgentID.String(req.AgentID), AttrTool.String(req.Tool), AttrResult.String(res.Label))
	if req.AgentType != "" {
		span.SetAttributes(AttrAgentType.String(req.AgentType))
	}
	if errReply != nil {
		failSpan(span, errReply)
	} else if rc := res.Receipt(); rc.Decision != nil {
		span.SetAttributes(AttrOutcome.String(string(rc.Decision.Outcome)), AttrReasonCode.String(string(rc.Decision.ReasonCode)))
	}
	span.End()
}

// endRespondSpan records what became of the response resp and ends span.
func endRespondSpan(span trace.Span, resp *messages.Response, rep *messages.RespondReply, errReply []byte) {
	span.SetAttributes(AttrRequestID.String(resp.RequestID), AttrSessionID.String(resp.SessionID),
		AttrApprover.String(resp.Approver.ID), AttrApproved.Bool(resp.Approved))
	switch {
	case errReply != nil:
		failSpan(span, errReply)
	case rep != nil:
		span.SetAttributes(AttrApplied.Bool(rep.Applied), AttrResult.String(string(rep.State)))
		if rep.Decision != nil {
			span.SetAttributes(AttrOutcome.String(string(rep.Decision.Outcome)), AttrReasonCode.String(string(rep.Decision.ReasonCode)))
		}
	}
	span.End()
}

// failSpan marks span failed with the error reply errReply's code.
func failSpan(span trace.Span, errReply []byte) {
	if rep, ok := messages.IsErrorReply(errReply); ok {
		span.SetAttributes(AttrErrorCode.String(string(rep.Error.Code)))
		span.SetStatus(codes.Error, rep.Error.Message)
		return
	}
	span.SetStatus(codes.Error, "error reply")
}

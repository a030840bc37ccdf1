package broker

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/engine"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// handleRequest decodes one agent request, has the engine decide it
// (engine.Engine.Request: DESIGN §4), replies with the receipt, and then
// lets the engine record an automatic decision (engine.Engine.Finish): the
// agent does not wait behind the audit append on the connection. It
// returns nil: the reply is already sent.
func (b *Broker) handleRequest(ctx context.Context, msg *nats.Msg) []byte {
	start := time.Now()
	if b.cfg.Tracer != nil {
		return b.tracedRequest(ctx, msg, start)
	}
	var req messages.Request
	res, out := b.request(ctx, msg, &req)
	if out != nil {
		b.reply(msg, out)
	} else {
		rc := res.Receipt()
		rc.Identity = req.Identity
		b.replyReceipt(msg, &rc)
	}
	b.eng.Finish(&req, &res)
	b.m.DecisionLatency.WithLabelValues(res.Label).Observe(time.Since(start).Seconds())
	return nil
}

// tracedRequest is handleRequest with tracing on: the same steps under the
// request's server span, the reply in a span of its own. A path of its
// own, so that with tracing off the decision path does not even test for
// spans at each step.
func (b *Broker) tracedRequest(ctx context.Context, msg *nats.Msg, start time.Time) []byte {
	ctx, span := b.serverSpan(ctx, msg, SpanRequest)
	var req messages.Request
	res, out := b.request(ctx, msg, &req)
	_, rspan := b.cfg.Tracer.Start(ctx, SpanReply)
	if out != nil {
		b.replyTraced(ctx, msg, out)
	} else {
		rc := res.Receipt()
		rc.Identity = req.Identity
		b.replyReceiptTraced(ctx, msg, &rc)
	}
	rspan.End()
	endRequestSpan(span, &req, &res, out)
	b.eng.Finish(&req, &res)
	b.m.DecisionLatency.WithLabelValues(res.Label).Observe(time.Since(start).Seconds())
	return nil
}

// request decodes msg into req and runs the engine on it: the result, or
// the error reply that answers it (then the result holds only its latency
// label).
func (b *Broker) request(ctx context.Context, msg *nats.Msg, req *messages.Request) (res engine.Result, errReply []byte) {
	res.Label = "error"
	sessionID, err := b.subj.SessionFromSubject(messages.SubjectReq, msg.Subject)
	if err != nil {
		return res, b.badMessage(err)
	}
	if *req, err = messages.Decode[messages.Request](msg.Data, b.cfg.MaxMessageBytes); err != nil {
		return res, b.badMessage(err)
	}
	if req.SessionID != sessionID {
		return res, b.badMessage(&messages.FieldError{Field: "session_id", Problem: fmt.Sprintf("%q does not match the subject's session %q", req.SessionID, sessionID)})
	}
	if refused := b.identify(ctx, req); refused != nil {
		return res, refused
	}
	b.seen.add(req, msg.Header.Get(messages.GateHeader))
	res, err = b.eng.Request(ctx, req)
	if err != nil {
		return res, b.errorReply(err)
	}
	b.canaryObserve(req, &res)
	return res, nil
}

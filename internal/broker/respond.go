package broker

import (
	"context"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// handleRespond decodes an approver's response, checks its signature
// (verify.go), and has the engine apply it (engine.Engine.Respond: first
// decision wins, quorum, membership and no self-approval, DESIGN §4 steps
// 9–10).
func (b *Broker) handleRespond(ctx context.Context, msg *nats.Msg) []byte {
	var resp messages.Response
	if b.cfg.Tracer == nil {
		_, out := b.respond(ctx, msg, &resp)
		return out
	}
	ctx, span := b.serverSpan(ctx, msg, SpanRespond)
	rep, out := b.respond(ctx, msg, &resp)
	if rep != nil {
		endRespondSpan(span, &resp, rep, nil)
	} else {
		endRespondSpan(span, &resp, nil, out)
	}
	return out
}

// respond decodes msg into resp and applies it: the engine's reply (nil
// for an error reply) and the reply's body.
func (b *Broker) respond(ctx context.Context, msg *nats.Msg, resp *messages.Response) (*messages.RespondReply, []byte) {
	var err error
	if *resp, err = messages.Decode[messages.Response](msg.Data, b.cfg.MaxMessageBytes); err != nil {
		return nil, b.badMessage(err)
	}
	if refused := b.checkSignature(resp); refused != nil {
		return nil, refused
	}
	rep, err := b.eng.Respond(ctx, resp)
	if err != nil {
		return nil, b.errorReply(err)
	}
	return &rep, encode(rep)
}

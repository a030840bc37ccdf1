package broker

import (
	"context"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/natstrace"
)

// With tracing on, what the broker answers an agent carries the W3C trace
// context of the broker's span of the request (a traceparent header): the
// reply here, and a pending request's later decision through the question's
// traceparent (natsPublisher.Decision). The agent's trace continues from
// the broker's span, in the standard way, whatever its SDK.

// replyTraced is reply with ctx's span context in the reply's headers.
func (b *Broker) replyTraced(ctx context.Context, msg *nats.Msg, data []byte) {
	if !b.replyAllowed(msg) {
		return
	}
	out := &nats.Msg{Data: data}
	natstrace.Inject(ctx, out)
	if err := msg.RespondMsg(out); err != nil {
		b.m.NATSErrors.WithLabelValues("reply").Inc()
		b.log.Warn("reply failed", "subject", msg.Subject, "err", err)
	}
}

// replyReceiptTraced is replyReceipt with ctx's span context in the reply's
// headers.
func (b *Broker) replyReceiptTraced(ctx context.Context, msg *nats.Msg, rc *messages.Receipt) {
	bp := encodeBufs.Get().(*[]byte)
	data, err := rc.AppendJSON((*bp)[:0])
	if err != nil {
		b.replyTraced(ctx, msg, encodeError(messages.CodeInternal, "cannot encode reply: "+err.Error()))
	} else {
		b.replyTraced(ctx, msg, data)
	}
	putEncodeBuf(bp, data)
}

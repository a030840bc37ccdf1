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
	resp, err := messages.Decode[messages.Response](msg.Data, b.cfg.MaxMessageBytes)
	if err != nil {
		return b.badMessage(err)
	}
	if refused := b.checkSignature(&resp); refused != nil {
		return refused
	}
	rep, err := b.eng.Respond(ctx, &resp)
	if err != nil {
		return b.errorReply(err)
	}
	return encode(rep)
}

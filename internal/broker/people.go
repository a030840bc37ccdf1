package broker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// handlePeople appends an approver bot's [messages.PersonEvent] (a
// sign-in, a failed one, a step-up…) to the audit stream, on
// signoff.v1.audit.people.<channel>, beside the decisions: bots may not
// write the stream themselves. It replies {"v":1} once the stream
// acknowledged the record. A retry of the same event is stored once (its
// message id is the hash of its bytes).
func (b *Broker) handlePeople(ctx context.Context, msg *nats.Msg) []byte {
	e, err := messages.Decode[messages.PersonEvent](msg.Data, b.cfg.MaxMessageBytes)
	if err != nil {
		return b.badMessage(err)
	}
	if b.js == nil {
		return encodeError(messages.CodeUnavailable, "this broker runs without the audit stream (--audit off): people's events are not recorded")
	}
	data, err := json.Marshal(e)
	if err != nil {
		return encodeError(messages.CodeInternal, "cannot encode the event: "+err.Error())
	}
	sum := sha256.Sum256(data)
	out := &nats.Msg{Subject: b.out.AuditPeople(e.Channel), Data: data,
		Header: nats.Header{nats.MsgIdHdr: {"person-" + hex.EncodeToString(sum[:16])}}}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.AuditAckTimeout)
	defer cancel()
	if _, err := b.js.PublishMsg(ctx, out); err != nil {
		b.log.Error("audit of people: append failed", "kind", e.Kind, "approver", e.Approver, "err", err)
		return encodeError(messages.CodeUnavailable, "the audit stream did not take the event: "+err.Error())
	}
	return encode(struct {
		V int `json:"v"`
	}{messages.Version})
}

package broker

import (
	"encoding/json"
	"errors"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/engine"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

func encode(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		return encodeError(messages.CodeInternal, "cannot encode reply: "+err.Error())
	}
	return data
}

func encodeError(code messages.ErrorCode, msg string) []byte {
	data, _ := json.Marshal(messages.NewErrorReply(code, msg))
	return data
}

// badMessage answers a message that could not be handled with an error reply.
func (b *Broker) badMessage(err error) []byte {
	rep := messages.ErrorReplyFor(err)
	b.m.BadMessages.WithLabelValues(string(rep.Error.Code)).Inc()
	b.log.Debug("bad message", "code", rep.Error.Code, "err", err)
	return encode(rep)
}

// storeFailure answers a request that failed on the store. Not finding
// what the request names is the requester's problem, not the store's: it
// is answered not_found and counted as a bad message, not as a store error
// (the metric operators alert on) and not logged at ERROR.
func (b *Broker) storeFailure(op string, err error) []byte {
	if errors.Is(err, session.ErrNotFound) {
		b.m.BadMessages.WithLabelValues(string(messages.CodeNotFound)).Inc()
		b.log.Debug("not found", "op", op, "err", err)
		return encodeError(messages.CodeNotFound, "unknown request id (never sent, or past its retention)")
	}
	b.storeErr(op, err)
	return encodeError(messages.CodeUnavailable, "state store unavailable: "+op+" failed; retry later")
}

// errorReply answers a message with the error the engine returned: a store
// failure (storeFailure), a reply the engine worded, or a bad message.
func (b *Broker) errorReply(err error) []byte {
	var se *engine.StoreError
	var re *engine.ReplyError
	switch {
	case errors.As(err, &se):
		return b.storeFailure(se.Op, se.Err)
	case errors.As(err, &re):
		return encodeError(re.Code, re.Message)
	}
	return b.badMessage(err)
}

// reply answers msg with data, on an inbox only.
func (b *Broker) reply(msg *nats.Msg, data []byte) {
	if !b.replyAllowed(msg) {
		return
	}
	if err := msg.Respond(data); err != nil {
		b.m.NATSErrors.WithLabelValues("reply").Inc()
		b.log.Warn("reply failed", "subject", msg.Subject, "err", err)
	}
}

// replyAllowed reports whether msg may be answered: it names a reply
// subject, and that subject is an inbox.
func (b *Broker) replyAllowed(msg *nats.Msg) bool {
	if msg.Reply == "" {
		return false
	}
	// NATS permissions cannot limit the reply subject a requester names: a
	// client could make the broker publish its reply on a Signoff subject
	// (another session's decision, a team's questions) or a system subject.
	// Replies go to inboxes only.
	if strings.HasPrefix(msg.Reply, b.cfg.Prefix+".") || strings.HasPrefix(msg.Reply, "$") {
		b.m.BadMessages.WithLabelValues("reply_subject").Inc()
		b.log.Warn("refusing to reply on a protected subject", "subject", msg.Subject, "reply", msg.Reply)
		return false
	}
	return true
}

// encodeBufs recycles the buffers messages are encoded into.
var encodeBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// putEncodeBuf returns a buffer (as grown by its last use) to the pool,
// unless one large message made it too big to keep.
func putEncodeBuf(bp *[]byte, used []byte) {
	if cap(used) <= 64<<10 {
		*bp = used[:0]
		encodeBufs.Put(bp)
	}
}

// replyReceipt encodes rc without reflection and replies with it; Respond
// copies the data into the connection's buffer before it returns.
func (b *Broker) replyReceipt(msg *nats.Msg, rc *messages.Receipt) {
	bp := encodeBufs.Get().(*[]byte)
	data, err := rc.AppendJSON((*bp)[:0])
	if err != nil {
		b.reply(msg, encodeError(messages.CodeInternal, "cannot encode reply: "+err.Error()))
	} else {
		b.reply(msg, data)
	}
	putEncodeBuf(bp, data)
}

package broker

import (
	"encoding/json"
	"errors"

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

package broker

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/engine"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// sessionMessage reads the session id of msg's subject (a subject of
// kind) and decodes its body as T; on failure it returns the error reply
// that answers msg instead.
func sessionMessage[T any](b *Broker, kind messages.SubjectKind, msg *nats.Msg) (sessionID string, body T, bad []byte) {
	sessionID, err := b.subj.SessionFromSubject(kind, msg.Subject)
	if err != nil {
		return "", body, b.badMessage(err)
	}
	if body, err = messages.Decode[T](msg.Data, b.cfg.MaxMessageBytes); err != nil {
		return "", body, b.badMessage(err)
	}
	return sessionID, body, nil
}

// handleStatus answers an agent that lost track of a request (after a
// reconnect) with its current receipt.
func (b *Broker) handleStatus(ctx context.Context, msg *nats.Msg) []byte {
	sessionID, req, bad := sessionMessage[messages.StatusRequest](b, messages.SubjectStatus, msg)
	if bad != nil {
		return bad
	}
	rc, err := b.eng.Status(ctx, sessionID, req.RequestID)
	if err != nil {
		return b.errorReply(err)
	}
	return encode(rc)
}

// handleCancel settles pending requests of a session cancelled: the agent
// aborted or is shutting down.
func (b *Broker) handleCancel(ctx context.Context, msg *nats.Msg) []byte {
	sessionID, req, bad := sessionMessage[messages.CancelRequest](b, messages.SubjectCancel, msg)
	if bad != nil {
		return bad
	}
	ids, err := b.eng.Cancel(ctx, sessionID, req.RequestIDs, req.Reason)
	if err != nil {
		return b.errorReply(err)
	}
	return encode(messages.CancelReply{V: messages.Version, Cancelled: ids})
}

// handleTurn clears a session's hard-stop signal: the user sent a new
// message, so the agent may call tools again — unless the agent had not
// heard of every hard rejection behind the stop (the reply names them).
func (b *Broker) handleTurn(ctx context.Context, msg *nats.Msg) []byte {
	sessionID, turn, bad := sessionMessage[messages.TurnRequest](b, messages.SubjectTurn, msg)
	if bad != nil {
		return bad
	}
	cleared, unheard, err := b.eng.NewTurn(ctx, sessionID, session.Turn{Tracked: turn.SeenComplete, Seen: turn.Seen})
	if errors.Is(err, session.ErrStopOwed) {
		b.log.Warn("new turn: a hard rejection of the session could not be carried out; its stop stays", "session_id", sessionID, "err", err)
		return encodeError(messages.CodeUnavailable, "a hard rejection of this session is still being delivered, and its stop holds: retry the new turn")
	}
	if err != nil {
		return b.storeFailure("new turn", err)
	}
	if cleared {
		b.log.Info("hard stop cleared by a new turn", "session_id", sessionID)
	}
	return encode(messages.TurnReply{V: messages.Version, StopCleared: cleared, Unheard: unheard})
}

// handlePending lists a team's open questions for a device that connects.
func (b *Broker) handlePending(ctx context.Context, msg *nats.Msg) []byte {
	team, err := b.subj.TeamFromSubject(messages.SubjectPending, msg.Subject)
	if err != nil {
		return b.badMessage(err)
	}
	if _, err := messages.Decode[messages.PendingRequest](msg.Data, b.cfg.MaxMessageBytes); err != nil {
		return b.badMessage(err)
	}
	sctx, cancel := b.storeCtx(ctx)
	recs, err := b.store.ListPendingTeam(sctx, team)
	cancel()
	if err != nil {
		return b.storeFailure("list pending", err)
	}
	out := messages.PendingReply{V: messages.Version, Questions: make([]messages.ApprovalNeeded, 0, len(recs))}
	for _, rec := range recs {
		q, err := engine.Question(rec)
		if err != nil {
			b.log.Error("stored question is unreadable", "request_id", rec.ID, "session_id", rec.SessionID, "err", err)
			continue
		}
		q.Team, q.Answerers = team, b.answerers(team)
		out.Questions = append(out.Questions, q)
	}
	data := encode(out)
	if len(data) > int(b.nc.MaxPayload()) {
		return encodeError(messages.CodeTooLarge, fmt.Sprintf("team %s has %d open questions, too many for one reply (%d bytes > max payload %d)", team, len(recs), len(data), b.nc.MaxPayload()))
	}
	return data
}

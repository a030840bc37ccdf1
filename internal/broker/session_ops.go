package broker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// handleStatus answers an agent that lost track of a request (after a
// reconnect) with its current receipt.
func (b *Broker) handleStatus(ctx context.Context, msg *nats.Msg) []byte {
	sessionID, err := b.subj.SessionFromSubject(messages.SubjectStatus, msg.Subject)
	if err != nil {
		return b.badMessage(err)
	}
	req, err := messages.Decode[messages.StatusRequest](msg.Data, b.cfg.MaxMessageBytes)
	if err != nil {
		return b.badMessage(err)
	}
	// Lookup, not Get: it returns a held request too, which the agent was
	// told is pending (see openHeld), and is the cheapest read.
	sctx, cancel := b.storeCtx(ctx)
	look, err := b.store.Lookup(sctx, session.LookupQuery{SessionID: sessionID, RequestID: req.RequestID, SkipGrants: true})
	cancel()
	if err == nil && look.Existing == nil {
		// Never sent, or past its retention: storeFailure answers
		// not_found without counting a store error.
		err = fmt.Errorf("status %s/%s: %w", sessionID, req.RequestID, session.ErrNotFound)
	}
	if err != nil {
		return b.storeFailure("status", err)
	}
	return b.receiptReply(ctx, look.Existing)
}

// handleCancel settles pending requests of a session cancelled: the agent
// aborted or is shutting down.
func (b *Broker) handleCancel(ctx context.Context, msg *nats.Msg) []byte {
	sessionID, err := b.subj.SessionFromSubject(messages.SubjectCancel, msg.Subject)
	if err != nil {
		return b.badMessage(err)
	}
	req, err := messages.Decode[messages.CancelRequest](msg.Data, b.cfg.MaxMessageBytes)
	if err != nil {
		return b.badMessage(err)
	}
	version := b.cfg.Policy.Current().Version()
	sctx, cancel := b.storeCtx(ctx)
	done, err := b.store.CancelSession(sctx, sessionID, req.RequestIDs, func(rec *session.Record) messages.Decision {
		dec := messages.Decision{
			V:             messages.Version,
			RequestID:     rec.ID,
			SessionID:     rec.SessionID,
			Tool:          toolOf(rec),
			DecidedBy:     messages.Decider{Kind: messages.DeciderAgent, ID: rec.AgentID},
			DecidedAt:     time.Now().UTC(),
			PolicyVersion: version,
		}
		settle(&dec, messages.ReasonCancelled, facts{Detail: req.Reason})
		return dec
	})
	cancel()
	if err != nil {
		return b.storeFailure("cancel", err)
	}
	ids := make([]string, 0, len(done))
	for _, rec := range done {
		ids = append(ids, rec.ID)
	}
	b.carryOut(ctx, done...)
	return encode(messages.CancelReply{V: messages.Version, Cancelled: ids})
}

// handleTurn clears a session's hard-stop signal: the user sent a new
// message, so the agent may call tools again.
func (b *Broker) handleTurn(ctx context.Context, msg *nats.Msg) []byte {
	sessionID, err := b.subj.SessionFromSubject(messages.SubjectTurn, msg.Subject)
	if err != nil {
		return b.badMessage(err)
	}
	if _, err := messages.Decode[messages.TurnRequest](msg.Data, b.cfg.MaxMessageBytes); err != nil {
		return b.badMessage(err)
	}
	sctx, cancel := b.storeCtx(ctx)
	cleared, err := b.store.NewTurn(sctx, sessionID)
	cancel()
	if errors.Is(err, session.ErrStopOwed) {
		if err := b.turnAfterOwed(ctx, sessionID, err); err != nil {
			b.log.Warn("new turn: a hard rejection of the session could not be carried out; its stop stays", "session_id", sessionID, "err", err)
			return encodeError(messages.CodeUnavailable, "a hard rejection of this session is still being delivered, and its stop holds: retry the new turn")
		}
		return encode(messages.TurnReply{V: messages.Version, StopCleared: false})
	}
	if err != nil {
		return b.storeFailure("new turn", err)
	}
	if cleared {
		b.log.Info("hard stop cleared by a new turn", "session_id", sessionID)
	}
	return encode(messages.TurnReply{V: messages.Version, StopCleared: cleared})
}

// turnAfterOwed handles a new turn that found hard rejections of the
// session not yet carried out (err, a session.StopOwedError): their
// deciding replica died or stalled, and the agent has not been told. The
// turn began before the agent heard of them, so it cannot end their stop:
// the broker carries them out here (their stops' rejections, their
// decisions, which reach the agent before this turn's reply), acknowledges
// them, and leaves the stop in force until the agent's next turn. It
// returns nil once they are carried out, or why not.
func (b *Broker) turnAfterOwed(ctx context.Context, sessionID string, err error) error {
	var owed *session.StopOwedError
	if !errors.As(err, &owed) {
		return err
	}
	for _, rec := range owed.Records {
		if err := b.effects(ctx, rec); err != nil {
			return fmt.Errorf("carrying out the hard rejection %s: %w", rec.ID, err)
		}
	}
	b.ack(ctx, owed.Records)
	b.log.Info("a new turn came before its session's hard rejection reached the agent: the rejection is delivered and its stop stays until the next turn",
		"session_id", sessionID, "rejections", len(owed.Records))
	return nil
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
		q, err := question(rec)
		if err != nil {
			b.log.Error("stored question is unreadable", "request_id", rec.ID, "session_id", rec.SessionID, "err", err)
			continue
		}
		q.Team = team
		out.Questions = append(out.Questions, q)
	}
	data := encode(out)
	if len(data) > int(b.nc.MaxPayload()) {
		return encodeError(messages.CodeTooLarge, fmt.Sprintf("team %s has %d open questions, too many for one reply (%d bytes > max payload %d)", team, len(recs), len(data), b.nc.MaxPayload()))
	}
	return data
}

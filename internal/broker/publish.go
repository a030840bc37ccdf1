package broker

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// announce publishes a pending request's question to its teams.
func (b *Broker) announce(rec *session.Record) {
	q, err := question(rec)
	if err != nil {
		b.log.Error("stored question is unreadable", "request_id", rec.ID, "session_id", rec.SessionID, "err", err)
		return
	}
	for _, team := range rec.Teams {
		q.Team = team
		b.publish(b.subj.Ask(team), encode(q))
	}
}

// settled tells everyone about a request that settled: the agent on its
// decision subject, every approver device of its teams, and the audit log,
// whose append it waits for. It is an outbox effect (outbox.go): an error
// leaves it to be carried out again, so every part is idempotent (keyed by
// request id; the audit append by its Nats-Msg-Id). In strict audit mode
// an allow is published only once its record is stored: the append comes
// first, and its failure leaves the whole effect to the outbox's retry.
func (b *Broker) settled(ctx context.Context, rec *session.Record, dec messages.Decision) error {
	b.m.Pending.Dec()
	b.m.Decisions.WithLabelValues(string(dec.Outcome), string(dec.ReasonCode)).Inc()
	req, risk := requestOf(rec)
	strict := b.strictAllow(&dec)
	esc, err := b.escalationRan(ctx, rec)
	if err != nil {
		return err
	}
	if strict {
		if err := b.settledAudit(ctx, &req, dec, risk, esc); err != nil {
			return err
		}
	}
	if err := b.nc.Publish(b.subj.Decision(rec.SessionID, rec.ID), encode(dec)); err != nil {
		b.m.NATSErrors.WithLabelValues("publish").Inc()
		return fmt.Errorf("publish decision: %w", err)
	}
	for _, team := range rec.Teams {
		b.publish(b.subj.Resolved(team), encode(messages.Resolved{
			V:         messages.Version,
			Type:      "resolved",
			RequestID: rec.ID,
			SessionID: rec.SessionID,
			Team:      team,
			State:     rec.State,
			Decision:  dec,
		}))
	}
	if !strict {
		if err := b.settledAudit(ctx, &req, dec, risk, esc); err != nil {
			return err
		}
	}
	b.log.Info("settled", "request_id", rec.ID, "session_id", rec.SessionID, "tool", rec.Tool,
		"state", rec.State, "reason_code", dec.ReasonCode, "decided_by", dec.DecidedBy.ID)
	return nil
}

// settledAudit is settled's acknowledged append, with the escalation
// steps that ran before the decision. A record that can never be
// encoded is given up (counted lost by Append): retrying cannot help.
func (b *Broker) settledAudit(ctx context.Context, req *messages.Request, dec messages.Decision, risk messages.Risk, esc []messages.EscalationRun) error {
	if b.aud == nil {
		return nil
	}
	ar := b.aud.record(req, &dec, &risk)
	ar.Escalation = esc
	err := b.aud.Append(ctx, &ar)
	if err != nil && !errors.Is(err, errUnencodable) {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// strictAllow reports whether dec may reach its agent only after its audit
// record is acknowledged.
func (b *Broker) strictAllow(dec *messages.Decision) bool {
	return b.cfg.AuditMode == AuditStrict && b.aud != nil && dec.Outcome == messages.OutcomeAllow
}

// receiptReply encodes the receipt of a stored request for its agent. In
// strict audit mode a receipt carrying an allow is sent only once the
// allow's audit record is stored (an idempotent append: the record's
// Nats-Msg-Id), else the agent gets an unavailable error and asks again.
func (b *Broker) receiptReply(ctx context.Context, rec *session.Record) []byte {
	rc := b.receiptFor(rec)
	if rc.Decision != nil && b.strictAllow(rc.Decision) {
		req, risk := requestOf(rec)
		if err := b.appendAudit(ctx, &req, *rc.Decision, risk); err != nil {
			b.log.Warn("allow withheld: its audit record was not stored (strict audit)",
				"request_id", rec.ID, "session_id", rec.SessionID, "err", err)
			return encodeError(messages.CodeUnavailable, "audit stream unavailable: the decision cannot be recorded (strict audit); retry later")
		}
	}
	return encode(rc)
}

// tellAgent publishes the decision of a held request that will never be
// opened to the agent that was told it is pending (openLater), and audits
// it. No approver saw the question, so no device is told.
func (b *Broker) tellAgent(rec *session.Record, dec messages.Decision) {
	b.m.Decisions.WithLabelValues(string(dec.Outcome), string(dec.ReasonCode)).Inc()
	b.publish(b.subj.Decision(rec.SessionID, rec.ID), encode(dec))
	req, risk := requestOf(rec)
	b.audit(&req, dec, risk)
	b.log.Warn("decided a request that could not be opened", "request_id", rec.ID, "session_id", rec.SessionID,
		"reason_code", dec.ReasonCode)
}

// requestOf is the agent's request and its risk, from the stored question
// (the identity fields alone if the question is unreadable).
func requestOf(rec *session.Record) (messages.Request, messages.Risk) {
	if q, err := question(rec); err == nil {
		return q.Request, q.Risk
	}
	return messages.Request{RequestID: rec.ID, SessionID: rec.SessionID, AgentID: rec.AgentID, Tool: rec.Tool}, messages.Risk{}
}

// onExpired is the reaper's callback: the store has moved rec to expired
// exactly once across replicas and recorded its timeout in the outbox;
// carry it out.
func (b *Broker) onExpired(ctx context.Context, rec *session.Record) {
	b.m.ReaperExpiries.Inc()
	b.carryOut(ctx, rec)
}

// audit records dec in the audit stream without waiting for the
// acknowledgement: the decision path does not pay for a JetStream round
// trip. A failed append is retried from memory (auditLog).
func (b *Broker) audit(req *messages.Request, dec messages.Decision, risk messages.Risk) {
	if b.aud == nil {
		return
	}
	rec := b.aud.record(req, &dec, &risk)
	b.aud.enqueue(&rec)
}

// appendAudit records dec in the audit stream and returns once the stream
// acknowledged it, or with the error that kept it out (the caller retries:
// the record's Nats-Msg-Id makes a repeated append a no-op within the
// stream's duplicate window; not on errUnencodable). With the audit stream
// disabled it does nothing. The outbox's audit effect and strict mode use
// it.
func (b *Broker) appendAudit(ctx context.Context, req *messages.Request, dec messages.Decision, risk messages.Risk) error {
	if b.aud == nil {
		return nil
	}
	rec := b.aud.record(req, &dec, &risk)
	return b.aud.Append(ctx, &rec)
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

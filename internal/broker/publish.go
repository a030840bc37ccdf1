package broker

import (
	"context"
	"sync"
	"time"

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

// settled tells everyone about a request that just settled: the agent on its
// decision subject, every approver device of its teams, and the audit log.
// In strict audit mode an allow is told only once its audit record is
// stored; when the stream cannot take it now, strictLater keeps trying.
func (b *Broker) settled(rec *session.Record, dec messages.Decision) {
	b.m.Pending.Dec()
	b.m.Decisions.WithLabelValues(string(dec.Outcome), string(dec.ReasonCode)).Inc()
	req, risk := requestOf(rec)
	if b.strictAllow(&dec) {
		if err := b.appendAudit(context.Background(), &req, dec, risk); err != nil {
			b.log.Warn("allow not published yet: its audit record was not stored (strict audit); retrying",
				"request_id", rec.ID, "session_id", rec.SessionID, "err", err)
			b.strictLater(rec, dec)
			return
		}
		b.publishSettled(rec, dec)
	} else {
		b.publishSettled(rec, dec)
		b.audit(&req, dec, risk)
	}
	b.log.Info("settled", "request_id", rec.ID, "session_id", rec.SessionID, "tool", rec.Tool,
		"state", rec.State, "reason_code", dec.ReasonCode, "decided_by", dec.DecidedBy.ID)
}

// publishSettled publishes a settled request's decision to its agent and
// its resolution to the devices of its teams.
func (b *Broker) publishSettled(rec *session.Record, dec messages.Decision) {
	b.publish(b.subj.Decision(rec.SessionID, rec.ID), encode(dec))
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
}

// strictAllow reports whether dec may reach its agent only after its audit
// record is acknowledged.
func (b *Broker) strictAllow(dec *messages.Decision) bool {
	return b.cfg.AuditMode == AuditStrict && b.aud != nil && dec.Outcome == messages.OutcomeAllow
}

// strictPublishFor bounds how long strictLater keeps trying to store a
// settled allow's audit record before it gives up publishing it (the agent
// then reads it through status, which appends the record first).
const strictPublishFor = 10 * time.Minute

// strictLater appends a settled allow's audit record in the background
// and publishes the decision once the stream acknowledged it.
func (b *Broker) strictLater(rec *session.Record, dec messages.Decision) {
	req, risk := requestOf(rec)
	b.followUp(strictPublishFor, func(ctx context.Context) (bool, error) {
		if err := b.appendAudit(ctx, &req, dec, risk); err != nil {
			return false, err
		}
		b.publishSettled(rec, dec)
		b.log.Info("settled", "request_id", rec.ID, "session_id", rec.SessionID, "tool", rec.Tool,
			"state", rec.State, "reason_code", dec.ReasonCode, "decided_by", dec.DecidedBy.ID, "audit", "stored late")
		return true, nil
	}, func(err error) {
		b.log.Error("allow never published: its audit record could not be stored (strict audit); the agent's status query stores it first",
			"request_id", rec.ID, "session_id", rec.SessionID, "err", err)
	})
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
// exactly once across replicas; publish its timeout decision.
func (b *Broker) onExpired(_ context.Context, rec *session.Record) {
	b.m.ReaperExpiries.Inc()
	b.settled(rec, timeoutDecision(rec))
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
// stream's duplicate window). With the audit stream disabled it does
// nothing. For effects that must not be done twice or lost, such as a
// stored decision's record appended by an outbox.
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

package broker

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

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
// request id; the audit append by its Nats-Msg-Id).
func (b *Broker) settled(ctx context.Context, rec *session.Record, dec messages.Decision) error {
	b.m.Pending.Dec()
	b.m.Decisions.WithLabelValues(string(dec.Outcome), string(dec.ReasonCode)).Inc()
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
	req, risk := requestOf(rec)
	if err := b.appendAudit(ctx, &req, dec, risk); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	b.log.Info("settled", "request_id", rec.ID, "session_id", rec.SessionID, "tool", rec.Tool,
		"state", rec.State, "reason_code", dec.ReasonCode, "decided_by", dec.DecidedBy.ID)
	return nil
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

// audit appends one record to the audit stream without waiting for the
// acknowledgement: the decision path must not pay for a JetStream round trip.
// Failed appends are counted and logged.
func (b *Broker) audit(req *messages.Request, dec messages.Decision, risk messages.Risk) {
	if b.js == nil {
		return
	}
	msg, err := b.auditMsg(req, dec, risk)
	if err != nil {
		b.log.Error("encode audit record", "err", err)
		return
	}
	// Acknowledgement failures reach auditFailed (jetstream.New option).
	if _, err := b.js.PublishMsgAsync(msg); err != nil {
		b.auditFailed(nil, msg, err)
	}
}

// auditAckTimeout bounds the wait for the stream's acknowledgement of one
// append of an outbox effect.
const auditAckTimeout = 5 * time.Second

// appendAudit appends one audit record and waits for the stream's
// acknowledgement: the outbox's audit effect (outbox.go), which is done
// only once the record is stored. A retried append is deduplicated by the
// stream within its duplicate window (the Nats-Msg-Id header).
func (b *Broker) appendAudit(ctx context.Context, req *messages.Request, dec messages.Decision, risk messages.Risk) error {
	if b.js == nil {
		return nil
	}
	msg, err := b.auditMsg(req, dec, risk)
	if err != nil {
		// Not transient: retrying cannot help. Logged, and the effect is
		// done without its record.
		b.log.Error("encode audit record", "request_id", dec.RequestID, "err", err)
		return nil
	}
	actx, cancel := context.WithTimeout(ctx, auditAckTimeout)
	defer cancel()
	if _, err := b.js.PublishMsg(actx, msg); err != nil {
		b.auditFailed(nil, msg, err)
		return err
	}
	return nil
}

// auditMsg builds the audit stream message of one decision.
func (b *Broker) auditMsg(req *messages.Request, dec messages.Decision, risk messages.Risk) (*nats.Msg, error) {
	rec := messages.AuditRecord{
		V:        messages.Version,
		Request:  *req,
		Decision: dec,
		Replica:  b.cfg.Replica,
		Recorded: time.Now().UTC(),
	}
	if risk.Tier != "" {
		rec.Risk = &risk
	}
	// Encoded in a pooled buffer, then copied once at its exact size: the
	// message keeps its data until the append is acknowledged.
	bp := encodeBufs.Get().(*[]byte)
	enc, err := rec.AppendJSON((*bp)[:0])
	data := append([]byte(nil), enc...)
	putEncodeBuf(bp, enc)
	if err != nil {
		return nil, err
	}
	// The request id and outcome de-duplicate retried appends in the
	// stream. The header name is already canonical: no Header.Set.
	return &nats.Msg{Subject: b.subj.Audit(dec.SessionID), Data: data,
		Header: nats.Header{nats.MsgIdHdr: {dec.RequestID + "/" + string(dec.ReasonCode)}}}, nil
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

func (b *Broker) auditFailed(_ jetstream.JetStream, msg *nats.Msg, err error) {
	b.m.NATSErrors.WithLabelValues("audit").Inc()
	b.log.Warn("audit append failed", "subject", msg.Subject, "msg_id", msg.Header.Get(nats.MsgIdHdr), "err", err)
}

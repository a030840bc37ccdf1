package broker

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/reaper"
	"github.com/signoff-dev/signoff/pkg/session"
)

func (b *Broker) newDecision(req *messages.Request, version string) messages.Decision {
	return messages.Decision{
		V:             messages.Version,
		RequestID:     req.RequestID,
		SessionID:     req.SessionID,
		Tool:          req.Tool,
		DecidedBy:     messages.Decider{Kind: messages.DeciderPolicy, ID: b.cfg.Replica},
		DecidedAt:     time.Now().UTC(),
		PolicyVersion: version,
	}
}

// policyDecision turns a policy allow or deny into a decision.
func (b *Broker) policyDecision(req *messages.Request, d *policy.Decision, version string) messages.Decision {
	dec := b.newDecision(req, version)
	dec.Reason = d.Reason
	if d.Action == policy.Allow {
		dec.Outcome = messages.OutcomeAllow
		dec.ReasonCode = messages.ReasonPolicyAllow
		if d.Rule == "" {
			dec.ReasonCode = messages.ReasonModeAllow
		}
		return dec
	}
	dec.Outcome = messages.OutcomeDeny
	dec.ReasonCode = messages.ReasonPolicyDeny
	dec.LLMMessage = messages.LLMMessageDenied(req.Tool, d.Reason)
	return dec
}

func (b *Broker) hardStopDecision(req *messages.Request, version, why string) messages.Decision {
	dec := b.newDecision(req, version)
	setHardStop(&dec, req.Tool, why)
	return dec
}

// setHardStop makes dec the hard_stop deny of tool; why is the stop signal
// (who rejected what). It is the one place that writes hard_stop's texts,
// for the requests pending at the reject and for the later ones alike.
func setHardStop(dec *messages.Decision, tool, why string) {
	dec.Outcome = messages.OutcomeDeny
	dec.ReasonCode = messages.ReasonHardStop
	dec.RejectMode = messages.RejectHard
	dec.Reason = "the session was stopped by a hard reject; a new user turn clears it"
	if why != "" {
		dec.Reason += " (" + why + ")"
	}
	dec.LLMMessage = messages.LLMMessageHardStop(tool)
}

func (b *Broker) unavailableDecision(req *messages.Request, version, what string) messages.Decision {
	return b.failClosed(req, version, "state store unavailable: "+what+"; denied to fail closed, retry later")
}

// auditUnavailableDecision replaces an allow whose audit record the
// stream did not acknowledge in strict audit mode.
func (b *Broker) auditUnavailableDecision(req *messages.Request, version string) messages.Decision {
	return b.failClosed(req, version, "audit stream unavailable: the allow could not be recorded (strict audit); denied to fail closed, retry later")
}

// failClosed is the unavailable deny of req, with reason saying what could
// not be reached.
func (b *Broker) failClosed(req *messages.Request, version, reason string) messages.Decision {
	dec := b.newDecision(req, version)
	dec.Outcome = messages.OutcomeDeny
	dec.ReasonCode = messages.ReasonUnavailable
	dec.Reason = reason
	dec.LLMMessage = messages.LLMMessageDenied(req.Tool, dec.Reason)
	return dec
}

// timeoutDecision is the decision of an expired request. It is derived from
// the record alone — not even the replica whose reaper claimed it — so the
// decision published at expiry and every later status reply are identical.
func timeoutDecision(rec *session.Record) messages.Decision {
	at := rec.DecidedAt
	if at.IsZero() {
		at = rec.ExpiresAt
	}
	tool := toolOf(rec)
	return messages.Decision{
		V:          messages.Version,
		RequestID:  rec.ID,
		SessionID:  rec.SessionID,
		Tool:       tool,
		Outcome:    messages.OutcomeDeny,
		ReasonCode: messages.ReasonTimeout,
		Reason:     reaper.TimeoutReason,
		LLMMessage: messages.LLMMessageTimeout(tool),
		DecidedBy:  messages.Decider{Kind: messages.DeciderReaper},
		DecidedAt:  at.UTC(),
	}
}

// question decodes the stored question of a pending record.
func question(rec *session.Record) (messages.ApprovalNeeded, error) {
	var q messages.ApprovalNeeded
	if err := json.Unmarshal(rec.Payload, &q); err != nil {
		return q, err
	}
	q.ExpiresAt = rec.ExpiresAt.UTC()
	q.ApprovalsSoFar = rec.Approvals
	q.ApprovalsRequired = rec.ApprovalsRequired
	return q, nil
}

// toolOf is the tool name as the agent spelled it.
func toolOf(rec *session.Record) string {
	if q, err := question(rec); err == nil && q.Request.Tool != "" {
		return q.Request.Tool
	}
	return rec.Tool
}

// receiptFor is the receipt of a stored request in any state; a held one
// reads as pending.
func (b *Broker) receiptFor(rec *session.Record) messages.Receipt {
	r := messages.Receipt{V: messages.Version, RequestID: rec.ID, State: rec.State}
	switch {
	case rec.State == session.StateCreating:
		// Held: being opened by the replica that told the agent it is
		// pending, or by the agent's retry. No message carries "creating".
		r.State = messages.StatePending
		r.ExpiresAt = rec.ExpiresAt.UTC()
	case rec.State == messages.StatePending:
		r.ExpiresAt = rec.ExpiresAt.UTC()
	case rec.Decision != nil:
		d := *rec.Decision
		r.Decision = &d
	case rec.State == messages.StateExpired:
		d := timeoutDecision(rec)
		r.Decision = &d
	}
	return r
}

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

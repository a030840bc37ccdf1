package broker

import (
	"encoding/json"
	"errors"
	"fmt"
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

// facts are what a decision's texts are made from; each reason code reads
// the fields it needs (see decisionTexts).
type facts struct {
	Detail   string              // the policy's reason, what was unreachable, the stop signal, or the agent's cancel reason
	By       string              // the approver (approved, rejected, cascade)
	Scope    messages.Scope      // approved, scope_grant
	Mode     messages.RejectMode // rejected
	Feedback string              // rejected: the approver's words to the agent
	Approved string              // cascade: the request whose approval granted it
	Edited   bool                // approved: with changes (set by settle from the decision's updated_arguments)
}

// decisionTexts is the one table of decision texts: for each reason code,
// the human reason and the llm_message ("" when the agent gets none). Every
// reason code pkg/messages knows has a row (TestEveryReasonCodeHasTexts).
var decisionTexts = map[messages.ReasonCode]func(tool string, f facts) (reason, llm string){
	messages.ReasonPolicyAllow: func(_ string, f facts) (string, string) { return f.Detail, "" },
	messages.ReasonModeAllow:   func(_ string, f facts) (string, string) { return f.Detail, "" },
	messages.ReasonPolicyDeny: func(tool string, f facts) (string, string) {
		return f.Detail, messages.LLMMessageDenied(tool, f.Detail)
	},
	messages.ReasonScopeGrant: func(_ string, f facts) (string, string) {
		return fmt.Sprintf("allowed by a standing %s grant (%s)", f.Scope, f.Detail), ""
	},
	messages.ReasonApproved: func(_ string, f facts) (string, string) {
		if f.Edited {
			return fmt.Sprintf("approved with changes (%s) by %s", f.Scope, f.By), ""
		}
		return fmt.Sprintf("approved (%s) by %s", f.Scope, f.By), ""
	},
	messages.ReasonRejected: func(tool string, f facts) (string, string) {
		reason := fmt.Sprintf("rejected (%s) by %s", f.Mode, f.By)
		if f.Mode == messages.RejectSoft {
			return reason, messages.LLMMessageSoftReject(tool, f.Feedback)
		}
		return reason, messages.LLMMessageHardReject(tool, f.Feedback)
	},
	messages.ReasonHardStop: func(tool string, f facts) (string, string) {
		reason := "the session was stopped by a hard reject; a new user turn clears it"
		if f.Detail != "" {
			reason += " (" + f.Detail + ")"
		}
		return reason, messages.LLMMessageHardStop(tool)
	},
	messages.ReasonTimeout: func(tool string, _ facts) (string, string) {
		return reaper.TimeoutReason, messages.LLMMessageTimeout(tool)
	},
	messages.ReasonCancelled: func(tool string, f facts) (string, string) {
		reason := f.Detail
		if reason == "" {
			reason = "cancelled by the agent"
		}
		return reason, messages.LLMMessageCancelled(tool, f.Detail)
	},
	messages.ReasonCascade: func(_ string, f facts) (string, string) {
		return fmt.Sprintf("allowed by the grant that approved %s (%s)", f.Approved, f.By), ""
	},
	messages.ReasonUnavailable: func(tool string, f facts) (string, string) {
		return f.Detail, messages.LLMMessageDenied(tool, f.Detail)
	},
}

// settle makes dec a decision with reason code code: its outcome, texts,
// and the scope or reject mode the code carries. dec.Tool must be set, and
// dec.UpdatedArguments too for an approval with changes.
func settle(dec *messages.Decision, code messages.ReasonCode, f facts) {
	f.Edited = len(dec.UpdatedArguments) > 0
	dec.Outcome, _ = code.Outcome()
	dec.ReasonCode = code
	dec.Reason, dec.LLMMessage = decisionTexts[code](dec.Tool, f)
	switch code {
	case messages.ReasonApproved, messages.ReasonScopeGrant:
		dec.Scope = f.Scope
	case messages.ReasonRejected:
		dec.RejectMode = f.Mode
	case messages.ReasonHardStop:
		dec.RejectMode = messages.RejectHard
	}
}

// policyDecision turns a policy allow or deny into a decision.
func (b *Broker) policyDecision(req *messages.Request, d *policy.Decision, version string) messages.Decision {
	dec := b.newDecision(req, version)
	code := messages.ReasonPolicyDeny
	if d.Action == policy.Allow {
		code = messages.ReasonPolicyAllow
		if d.Rule == "" {
			code = messages.ReasonModeAllow
		}
	}
	settle(&dec, code, facts{Detail: d.Reason})
	return dec
}

func (b *Broker) hardStopDecision(req *messages.Request, version, why string) messages.Decision {
	dec := b.newDecision(req, version)
	settle(&dec, messages.ReasonHardStop, facts{Detail: why})
	return dec
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
	settle(&dec, messages.ReasonUnavailable, facts{Detail: reason})
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
	dec := messages.Decision{
		V:         messages.Version,
		RequestID: rec.ID,
		SessionID: rec.SessionID,
		Tool:      toolOf(rec),
		DecidedBy: messages.Decider{Kind: messages.DeciderReaper},
		DecidedAt: at.UTC(),
	}
	settle(&dec, messages.ReasonTimeout, facts{})
	return dec
}

// question is the stored question of a record (decoded once, by the store,
// when it read the record) with the record's expiry and approval counts. It
// fails when the store could not read it (rec.QuestionErr): callers then
// fail closed — nothing is announced, granted or approved from it.
func question(rec *session.Record) (messages.ApprovalNeeded, error) {
	if rec.QuestionErr != nil {
		return messages.ApprovalNeeded{}, rec.QuestionErr
	}
	q := rec.Question
	q.ExpiresAt = rec.ExpiresAt.UTC()
	q.ApprovalsSoFar = rec.Approvals
	q.ApprovalsRequired = rec.ApprovalsRequired
	q.Digest = q.ShownDigest()
	return q, nil
}

// toolOf is the tool name as the agent spelled it.
func toolOf(rec *session.Record) string {
	if rec.QuestionErr == nil && rec.Question.Request.Tool != "" {
		return rec.Question.Request.Tool
	}
	return rec.Tool
}

// receiptFor is the receipt of a stored request in any state; a held one
// reads as pending.
func (b *Broker) receiptFor(rec *session.Record) messages.Receipt {
	r := messages.Receipt{V: messages.Version, RequestID: rec.ID, State: rec.State}
	switch {
	case rec.State == session.StateHeld:
		// Held: being opened by the replica that told the agent it is
		// pending, or by the agent's retry. No message carries the held state.
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

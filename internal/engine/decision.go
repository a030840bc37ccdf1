package engine

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/reaper"
	"github.com/signoff-dev/signoff/pkg/session"
)

// facts are what a decision is made of: which request, who decided, when,
// under which policy, and what its texts are made from (each reason code
// reads the fields it needs, see decisionTexts). newDecision is the one
// place a decision is built from them.
type facts struct {
	RequestID, SessionID string
	Tool                 string // as the agent spelled it
	By                   messages.Decider
	At                   time.Time
	Version              string // the policy version ("" for a timeout)

	Detail   string              // the policy's reason, what was unreachable, the stop signal, or the agent's cancel reason
	Scope    messages.Scope      // approved, scope_grant
	Mode     messages.RejectMode // rejected
	Feedback string              // approved, rejected: the approver's words to the agent
	Approved string              // cascade: the request whose approval granted it
	Updated  json.RawMessage     // approved with changes: the edited arguments
	Patterns []string            // approved, scope_grant: what the grant names
	Answer   json.RawMessage     // approved, ask-user tool: the approver's answer
	Stops    []string            // hard_stop: the hard rejections behind the stop
}

// decisionTexts is the one table of decision texts: for each reason code,
// the human reason and the llm_message ("" when the agent gets none). Every
// reason code pkg/messages knows has a row (TestEveryReasonCodeHasTexts).
var decisionTexts = map[messages.ReasonCode]func(f facts) (reason, llm string){
	messages.ReasonPolicyAllow: func(f facts) (string, string) { return f.Detail, "" },
	messages.ReasonModeAllow:   func(f facts) (string, string) { return f.Detail, "" },
	messages.ReasonPolicyDeny: func(f facts) (string, string) {
		return f.Detail, messages.LLMMessageDenied(f.Tool, f.Detail)
	},
	messages.ReasonScopeGrant: func(f facts) (string, string) {
		return fmt.Sprintf("allowed by a standing %s grant (%s)", f.Scope, f.Detail), ""
	},
	messages.ReasonApproved: func(f facts) (string, string) {
		if len(f.Updated) > 0 {
			return fmt.Sprintf("approved with changes (%s) by %s", f.Scope, f.By.ID), ""
		}
		return fmt.Sprintf("approved (%s) by %s", f.Scope, f.By.ID), ""
	},
	messages.ReasonRejected: func(f facts) (string, string) {
		reason := fmt.Sprintf("rejected (%s) by %s", f.Mode, f.By.ID)
		if f.Mode == messages.RejectSoft {
			return reason, messages.LLMMessageSoftReject(f.Tool, f.Feedback)
		}
		return reason, messages.LLMMessageHardReject(f.Tool, f.Feedback)
	},
	messages.ReasonHardStop: func(f facts) (string, string) {
		reason := "the session was stopped by a hard reject; a new user turn clears it"
		if strings.HasPrefix(f.Detail, FleetStopPrefix) {
			// An admin's fleet stop: only its resume lifts it.
			return "stopped by an admin: " + f.Detail + "; `signoff admin resume` with the same selector lifts it",
				messages.LLMMessageHardStop(f.Tool)
		}
		if f.Detail != "" {
			reason += " (" + f.Detail + ")"
		}
		return reason, messages.LLMMessageHardStop(f.Tool)
	},
	messages.ReasonTimeout: func(f facts) (string, string) {
		return reaper.TimeoutReason, messages.LLMMessageTimeout(f.Tool)
	},
	messages.ReasonCancelled: func(f facts) (string, string) {
		reason := f.Detail
		if reason == "" {
			reason = "cancelled by the agent"
		}
		return reason, messages.LLMMessageCancelled(f.Tool, f.Detail)
	},
	messages.ReasonCascade: func(f facts) (string, string) {
		return fmt.Sprintf("allowed by the grant that approved %s (%s)", f.Approved, f.By.ID), ""
	},
	messages.ReasonUnavailable: func(f facts) (string, string) {
		return f.Detail, messages.LLMMessageUnavailable(f.Tool, f.Detail)
	},
}

// newDecision is the one constructor of a decision: of reason code code,
// with its outcome, texts, and the fields the code carries (scope and
// patterns, reject mode, feedback, edited arguments, answer).
func newDecision(code messages.ReasonCode, f facts) messages.Decision {
	dec := messages.Decision{
		V:             messages.Version,
		RequestID:     f.RequestID,
		SessionID:     f.SessionID,
		Tool:          f.Tool,
		DecidedBy:     f.By,
		DecidedAt:     f.At.UTC(),
		PolicyVersion: f.Version,
	}
	dec.Outcome, _ = code.Outcome()
	dec.ReasonCode = code
	dec.Reason, dec.LLMMessage = decisionTexts[code](f)
	switch code {
	case messages.ReasonApproved:
		dec.Scope, dec.GrantedPattern = f.Scope, f.Patterns
		dec.Feedback, dec.UpdatedArguments, dec.Answer = f.Feedback, f.Updated, f.Answer
	case messages.ReasonScopeGrant:
		dec.Scope, dec.GrantedPattern = f.Scope, f.Patterns
	case messages.ReasonRejected:
		dec.RejectMode, dec.Feedback = f.Mode, f.Feedback
	case messages.ReasonHardStop:
		dec.RejectMode, dec.StopRejections = messages.RejectHard, f.Stops
	}
	return dec
}

// byPolicy are the facts of a decision this replica's policy makes about
// req now, under policy version.
func (e *Engine) byPolicy(req *messages.Request, version string) facts {
	return facts{RequestID: req.RequestID, SessionID: req.SessionID, Tool: req.Tool,
		By: messages.Decider{Kind: messages.DeciderPolicy, ID: e.cfg.Replica}, At: time.Now(), Version: version}
}

// about are the facts of a decision by by about the stored request rec,
// now, under policy version.
func about(rec *session.Record, by messages.Decider, version string) facts {
	return facts{RequestID: rec.ID, SessionID: rec.SessionID, Tool: ToolOf(rec), By: by, At: time.Now(), Version: version}
}

// Verdict is what a request gets without a human, from the policy's verdict
// and the store's state (see Automatic).
type Verdict struct {
	// Code is the automatic decision's reason code: hard_stop,
	// policy_deny, policy_allow, mode_allow or scope_grant; "" when the
	// request must ask.
	Code messages.ReasonCode
	// Grants are the grants a scope_grant allow rests on.
	Grants []session.Grant
}

// Allows reports whether the verdict is an automatic allow.
func (v Verdict) Allows() bool {
	o, _ := v.Code.Outcome()
	return v.Code != "" && o == messages.OutcomeAllow
}

// Automatic computes the automatic decision of a call of tool requested
// by requestedBy from agentID, from the policy's verdict d and the store's lookup (its
// stop signal and the grants that could allow it): a stop denies whatever
// the policy says; the policy's allow or deny stands; an ask is allowed by
// grants that could have settled it (grantsAllowing), else it asks. It is
// pure: the request path and the cascade both decide by it.
func Automatic(pol *policy.Policy, d *policy.Decision, tool, requestedBy, agentID string, look *session.Lookup) Verdict {
	switch {
	case look.Stopped:
		return Verdict{Code: messages.ReasonHardStop}
	case d.Action == policy.Deny:
		return Verdict{Code: messages.ReasonPolicyDeny}
	case d.Action == policy.Allow && d.Rule == "":
		return Verdict{Code: messages.ReasonModeAllow}
	case d.Action == policy.Allow:
		return Verdict{Code: messages.ReasonPolicyAllow}
	}
	if used := grantsAllowing(pol, d, tool, requestedBy, agentID, look.Grants); used != nil {
		return Verdict{Code: messages.ReasonScopeGrant, Grants: used}
	}
	return Verdict{}
}

// automaticDecision is the decision of req by the verdict v (v.Code set)
// of the policy decision d, under policy version; stop is the session's
// stop signal.
func (e *Engine) automaticDecision(req *messages.Request, d *policy.Decision, v Verdict, version string, stop session.StopSignal) messages.Decision {
	f := e.byPolicy(req, version)
	switch v.Code {
	case messages.ReasonHardStop:
		f.Detail, f.Stops = stop.Reason, stop.Rejections
	case messages.ReasonScopeGrant:
		ids := make([]string, len(v.Grants))
		for i := range v.Grants {
			ids[i] = v.Grants[i].ID
		}
		g := &v.Grants[0]
		// decided_by names the (first) grant, the reason every one of them.
		f.By = messages.Decider{Kind: messages.DeciderPolicy, ID: g.ID, Display: "grant " + g.ID + " by " + approverIDs(g)}
		f.Scope, f.Detail = g.Scope, strings.Join(ids, ", ")+"; "+d.Reason
		if g.Scope != messages.ScopeSession || len(g.Patterns) > 0 {
			f.Patterns = patternsOf(v.Grants)
		}
	default:
		f.Detail = d.Reason
	}
	return newDecision(v.Code, f)
}

// unavailable is the fail-closed deny of req: what could not be reached,
// under policy version.
func (e *Engine) unavailable(req *messages.Request, version, reason string) messages.Decision {
	f := e.byPolicy(req, version)
	f.Detail = reason
	return newDecision(messages.ReasonUnavailable, f)
}

// storeUnavailable is the deny of req when the store could not do what.
func (e *Engine) storeUnavailable(req *messages.Request, version, what string) messages.Decision {
	return e.unavailable(req, version, "state store unavailable: "+what+"; denied to fail closed, retry later")
}

// auditUnavailable replaces an allow whose audit record the stream did not
// acknowledge in strict audit mode.
func (e *Engine) auditUnavailable(req *messages.Request, version string) messages.Decision {
	return e.unavailable(req, version, "audit stream unavailable: the allow could not be recorded (strict audit); denied to fail closed, retry later")
}

// hardStopped is the hard_stop deny of req now (why: the stop signal, ""
// when unknown).
func (e *Engine) hardStopped(req *messages.Request, version, why string) messages.Decision {
	f := e.byPolicy(req, version)
	f.Detail = why
	return newDecision(messages.ReasonHardStop, f)
}

// timeoutDecision is the decision of an expired request. It is derived from
// the record alone — not even the replica whose reaper claimed it — so the
// decision published at expiry and every later status reply are identical.
func timeoutDecision(rec *session.Record) messages.Decision {
	at := rec.DecidedAt
	if at.IsZero() {
		at = rec.ExpiresAt
	}
	f := about(rec, messages.Decider{Kind: messages.DeciderReaper}, "")
	f.At = at
	return newDecision(messages.ReasonTimeout, f)
}

// Question is the stored question of a record (decoded once, by the store,
// when it read the record) with the record's expiry and approval counts. It
// fails when the store could not read it (rec.QuestionErr): callers then
// fail closed — nothing is announced, granted or approved from it.
func Question(rec *session.Record) (messages.ApprovalNeeded, error) {
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

// ToolOf is the tool name of a stored request as the agent spelled it.
func ToolOf(rec *session.Record) string {
	if rec.QuestionErr == nil && rec.Question.Request.Tool != "" {
		return rec.Question.Request.Tool
	}
	return rec.Tool
}

// ReceiptFor is the receipt of a stored request in any state; a held one
// reads as pending.
func ReceiptFor(rec *session.Record) messages.Receipt {
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

// requestOf is the agent's request and its risk, from the stored question
// (the identity fields alone if the question is unreadable).
func requestOf(rec *session.Record) (messages.Request, messages.Risk) {
	if q, err := Question(rec); err == nil {
		return q.Request, q.Risk
	}
	return messages.Request{RequestID: rec.ID, SessionID: rec.SessionID, AgentID: rec.AgentID, Tool: rec.Tool}, messages.Risk{}
}

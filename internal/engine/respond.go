package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
)

// Respond applies an approver's response (its signature already checked):
// first decision wins, quorum, membership and no self-approval (DESIGN §4
// steps 9–10), then carries out what the vote recorded. A refused response
// is a reply with Applied false and why; an error is the approver's error
// reply (a [StoreError] or a [ReplyError]).
func (e *Engine) Respond(ctx context.Context, resp *messages.Response) (messages.RespondReply, error) {
	log := e.log.With("request_id", resp.RequestID, "session_id", resp.SessionID, "approver", resp.Approver.ID)
	sctx, span := e.startSpan(ctx, SpanStore+"get")
	sctx, cancel := e.storeCtx(sctx)
	rec, err := e.cfg.Requests.Get(sctx, resp.SessionID, resp.RequestID)
	cancel()
	endSpan(span, err)
	if err != nil {
		return messages.RespondReply{}, &StoreError{Op: "get", Err: err}
	}
	if rec.State != messages.StatePending {
		return refusal(rec, "the request is already settled; the standing decision is final"), nil
	}
	pol := e.cfg.Policy.Current()
	if why := authorize(pol, forAnswer(rec, resp.Approved), resp.Approver.ID, resp.ApproverGroups, e.cfg.OpenTeams); why != "" {
		log.Warn("response refused", "why", why)
		return refusal(rec, why), nil
	}
	q, err := Question(rec)
	if err != nil {
		// Fail closed: without its question nothing of it can be granted;
		// the request stays pending until it expires (a deny).
		log.Error("response refused: the stored question is unreadable", "err", err)
		return messages.RespondReply{}, &ReplyError{Code: messages.CodeInternal,
			Message: fmt.Sprintf("request %s cannot be answered: %v", rec.ID, err)}
	}
	e.linkQuestion(ctx, q.TraceParent)
	if why := digestRefusal(&q, resp); why != "" {
		log.Warn("response refused: it names no digest or another question's", "digest", resp.Digest, "approved", resp.Approved)
		return refusal(rec, why), nil
	}
	f := about(rec, messages.Decider{Kind: messages.DeciderApprover, ID: resp.Approver.ID, Display: resp.Approver.Display,
		Channel: resp.Approver.Channel, Device: resp.Approver.Device}, pol.Version())
	f.Tool, f.Feedback = q.Request.Tool, resp.Feedback
	vote := session.Vote{ApproverID: resp.Approver.ID, Approve: resp.Approved}
	if resp.Approved {
		if why := e.stopsApproval(ctx, rec, &q); why != "" {
			log.Warn("approval refused", "why", why)
			return refusal(rec, why), nil
		}
		why := e.approval(pol, rec, &q, resp, &f)
		if why != "" {
			log.Info("approval refused", "why", why)
			return refusal(rec, why), nil
		}
		vote.Scope = resp.EffectiveScope()
		vote.Decision = newDecision(messages.ReasonApproved, f)
	} else {
		f.Mode = resp.EffectiveRejectMode()
		vote.Decision = newDecision(messages.ReasonRejected, f)
	}
	if vote.Decision.RejectMode == messages.RejectHard {
		// The stop is part of the vote: a rejection without it cannot exist.
		vote.Stop = stopReason(resp.Approver.ID, rec)
	}
	return e.vote(ctx, pol, rec, vote, log)
}

// approval fills f, the facts of resp's approval of rec (whose question is
// q), or returns why it is refused: an edit the policy refuses, a scope
// the question does not offer, an answer where none is taken.
func (e *Engine) approval(pol *policy.Policy, rec *session.Record, q *messages.ApprovalNeeded, resp *messages.Response, f *facts) string {
	scope := resp.EffectiveScope()
	edit, why := e.checkEdit(pol, rec, q, resp)
	if why != "" {
		return why
	}
	if edit != nil {
		// From here on the question is the edited call: scopes and
		// grants are its own, never the original's.
		*q, f.Updated = edit.q, edit.args
	}
	if why := stepUpRefusal(q, resp, time.Now()); why != "" {
		return why
	}
	f.By.StepUp = resp.StepUp
	if why := checkScope(scope, q, rec); why != "" {
		return why
	}
	// The decision's scope is what the grant will be if this vote
	// settles: on a quorum, only what every counted approver chose.
	granted, _ := quorumScope(append(approvalScopes(rec), scope), rec.ApprovalsRequired)
	if checkScope(granted, q, rec) != "" {
		granted = messages.ScopeOnce
	}
	f.Scope = granted
	if o := q.Offer(granted); granted != messages.ScopeOnce && o != nil {
		f.Patterns = slices.Clone(o.Patterns)
	}
	// Only an ask-user class tool's question (the policy said so when it
	// asked: seed 002) takes an answer as its output, so a confused or
	// hostile approver client cannot fabricate output for bash or write;
	// an answer elsewhere, or one that does not answer the questions
	// shown, is refused.
	if len(resp.Answer) > 0 {
		if q.AskUser == nil {
			return "tool " + q.Request.Tool + " is not an ask-user tool: an answer cannot stand for its output (omit answer, or declare the tool under tools.answer in the policy)"
		}
		if err := q.AskUser.Check(resp.Answer); err != nil {
			return "the answer does not answer the question: " + err.Error()
		}
		f.Answer = resp.Answer
	}
	return ""
}

// vote records v on rec and carries out what it recorded.
func (e *Engine) vote(ctx context.Context, pol *policy.Policy, rec *session.Record, v session.Vote, log *slog.Logger) (messages.RespondReply, error) {
	sctx, span := e.startSpan(ctx, SpanStore+"decide")
	sctx, cancel := e.storeCtx(sctx)
	res, err := e.cfg.Requests.Decide(sctx, rec.SessionID, rec.ID, v)
	cancel()
	endSpan(span, err)
	if err != nil {
		// The vote may have reached the store all the same (its reply was
		// lost, or Redis ran it after the call gave up): then its outbox
		// entry carries its effects out after the lease, on any replica.
		return messages.RespondReply{}, &StoreError{Op: "decide", Err: err}
	}
	if !res.Applied {
		why := "the request is already settled; the standing decision is final"
		switch {
		case errors.Is(res.Refusal, session.ErrDuplicateVote):
			why = "your approval was already counted; waiting for other approvers"
		case errors.Is(res.Refusal, session.ErrStopped):
			why = "the session was hard-stopped (a reject_hard); its pending requests are being rejected"
		}
		return refusal(res.Record, why), nil
	}
	rec = res.Record
	e.firstAnswer(pol, rec, v.Approve, v.ApproverID)
	// Grants, a stop's rejections, the decision, resolved, audit, the
	// cascade — or, for a vote towards a quorum, the new count.
	ectx, span := e.startSpan(ctx, SpanEffects)
	e.carryOut(ectx, rec)
	if span != nil {
		span.SetAttributes(AttrState.String(string(rec.State)))
		span.End()
	}
	if rec.State == messages.StatePending {
		log.Info("approval counted", "approvals", len(rec.Approvals), "required", rec.ApprovalsRequired)
		return messages.RespondReply{V: messages.Version, Applied: true, State: rec.State, ApprovalsSoFar: rec.Approvals,
			Reason: fmt.Sprintf("approval %d of %d counted", len(rec.Approvals), rec.ApprovalsRequired)}, nil
	}
	return messages.RespondReply{V: messages.Version, Applied: true, State: rec.State, Decision: rec.Decision, ApprovalsSoFar: rec.Approvals}, nil
}

// authorize returns why approverID may not answer rec ("" when allowed): by
// id, or by one of the groups the (signed) response states. A team without members
// is open to any approver only when openTeams is set (dev mode); elsewhere
// it has no one who may answer.
func authorize(pol *policy.Policy, rec *session.Record, approverID string, groups []string, openTeams bool) string {
	if rec.RequestedBy != "" && approverID == rec.RequestedBy {
		return fmt.Sprintf("approver %q requested this call and may not approve it (they may reject it)", approverID)
	}
	teams := pol.Teams()
	for _, name := range rec.Teams {
		t, ok := teams[name]
		if !ok {
			continue
		}
		if t.Open() && !openTeams {
			return fmt.Sprintf("team %s lists no members: add members to the policy's teams (open teams are for dev mode only)", name)
		}
		if t.Admits(approverID, groups) {
			return ""
		}
	}
	return fmt.Sprintf("approver %q is not a member of team %s", approverID, strings.Join(rec.Teams, ", "))
}

// refusal is the reply to a response that was not applied to rec, and why.
func refusal(rec *session.Record, why string) messages.RespondReply {
	r := messages.RespondReply{V: messages.Version, Applied: false, State: rec.State, Reason: why, ApprovalsSoFar: rec.Approvals}
	if rec.State.Final() {
		rc := ReceiptFor(rec)
		r.Decision = rc.Decision
	}
	return r
}

// stopReason is the stop signal's text for a reject_hard of rec by approver.
func stopReason(by string, rec *session.Record) string {
	return fmt.Sprintf("%s rejected %s (%s)", by, rec.Tool, rec.ID)
}

// Cancel settles pending requests of a session cancelled by its agent
// (all of them, or those of ids), carries out their effects and returns
// their ids; an error is a [StoreError].
func (e *Engine) Cancel(ctx context.Context, sessionID string, ids []string, reason string) ([]string, error) {
	version := e.cfg.Policy.Current().Version()
	sctx, cancel := e.storeCtx(ctx)
	done, err := e.cfg.Sessions.CancelSession(sctx, sessionID, ids, func(rec *session.Record) messages.Decision {
		f := about(rec, messages.Decider{Kind: messages.DeciderAgent, ID: rec.AgentID}, version)
		f.Detail = reason
		return newDecision(messages.ReasonCancelled, f)
	})
	cancel()
	if err != nil {
		return nil, &StoreError{Op: "cancel", Err: err}
	}
	out := make([]string, 0, len(done))
	for _, rec := range done {
		out = append(out, rec.ID)
	}
	e.carryOut(ctx, done...)
	return out, nil
}

// firstAnswer observes the time from a question to its first human answer,
// by the team the answer came for, when the applied vote that left after
// as it is was the request's first (decided atomically by the store: an
// approval that is the only one counted, or a deny before any approval).
func (e *Engine) firstAnswer(pol *policy.Policy, after *session.Record, approve bool, approver string) {
	n := len(after.Approvals)
	if (approve && n != 1) || (!approve && n != 0) || len(after.Teams) == 0 {
		return
	}
	team := after.Teams[0]
	for _, name := range after.Teams {
		if t, ok := pol.Team(name); ok && !t.Open() && t.IsMember(approver) {
			team = name
			break
		}
	}
	e.m.FirstAnswer.WithLabelValues(team).Observe(max(time.Since(after.CreatedAt), 0).Seconds())
}

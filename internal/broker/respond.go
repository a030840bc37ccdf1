package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
)

// handleRespond applies an approver's response: first decision wins, quorum,
// membership and no self-approval (DESIGN §4 step 8–10).
func (b *Broker) handleRespond(ctx context.Context, msg *nats.Msg) []byte {
	resp, err := messages.Decode[messages.Response](msg.Data, b.cfg.MaxMessageBytes)
	if err != nil {
		return b.badMessage(err)
	}
	if refused := b.checkSignature(&resp); refused != nil {
		return refused
	}
	log := b.log.With("request_id", resp.RequestID, "session_id", resp.SessionID, "approver", resp.Approver.ID)

	sctx, cancel := b.storeCtx(ctx)
	rec, err := b.store.Get(sctx, resp.SessionID, resp.RequestID)
	cancel()
	if err != nil {
		return b.storeFailure("get", err)
	}
	if rec.State != messages.StatePending {
		return encode(refusal(b, rec, "the request is already settled; the standing decision is final"))
	}
	pol := b.cfg.Policy.Current()
	if why := authorize(pol, forAnswer(rec, resp.Approved), resp.Approver.ID, b.cfg.OpenTeams); why != "" {
		log.Warn("response refused", "why", why)
		return encode(refusal(b, rec, why))
	}
	q, err := question(rec)
	if err != nil {
		// Fail closed: without its question nothing of it can be granted;
		// the request stays pending until it expires (a deny).
		log.Error("response refused: the stored question is unreadable", "err", err)
		return encodeError(messages.CodeInternal, fmt.Sprintf("request %s cannot be answered: %v", rec.ID, err))
	}
	if why := digestRefusal(&q, &resp); why != "" {
		log.Warn("response refused: it names another question's digest", "digest", resp.Digest)
		return encode(refusal(b, rec, why))
	}

	dec := messages.Decision{
		V:             messages.Version,
		RequestID:     rec.ID,
		SessionID:     rec.SessionID,
		Tool:          q.Request.Tool,
		DecidedBy:     messages.Decider{Kind: messages.DeciderApprover, ID: resp.Approver.ID, Display: resp.Approver.Display, Channel: resp.Approver.Channel, Device: resp.Approver.Device},
		DecidedAt:     time.Now().UTC(),
		Feedback:      resp.Feedback,
		PolicyVersion: pol.Version(),
	}
	if resp.Approved {
		scope := resp.EffectiveScope()
		edit, why := b.checkEdit(pol, rec, &q, &resp)
		if why != "" {
			log.Info("edited approval refused", "why", why)
			return encode(refusal(b, rec, why))
		}
		if edit != nil {
			// From here on the question is the edited call: scopes and
			// grants are its own, never the original's.
			q, dec.UpdatedArguments = edit.q, edit.args
		}
		if why := checkScope(scope, &q, rec); why != "" {
			return encode(refusal(b, rec, why))
		}
		// The decision's scope is what the grant will be if this vote
		// settles: on a quorum, only what every counted approver chose.
		granted, _ := quorumScope(append(approvalScopes(rec), scope), rec.ApprovalsRequired)
		if checkScope(granted, &q, rec) != "" {
			granted = messages.ScopeOnce
		}
		settle(&dec, messages.ReasonApproved, facts{Scope: granted, By: resp.Approver.ID})
		if o := q.Offer(granted); granted != messages.ScopeOnce && o != nil {
			dec.GrantedPattern = slices.Clone(o.Patterns)
		}
		// Only an ask-user class tool's question (the policy said so when
		// it asked: seed 002) takes an answer as its output, so a confused
		// or hostile approver client cannot fabricate output for bash or
		// write; an answer elsewhere, or one that does not answer the
		// questions shown, is refused.
		if len(resp.Answer) > 0 {
			if q.AskUser == nil {
				return encode(refusal(b, rec, "tool "+q.Request.Tool+" is not an ask-user tool: an answer cannot stand for its output (omit answer, or declare the tool under tools.answer in the policy)"))
			}
			if err := q.AskUser.Check(resp.Answer); err != nil {
				return encode(refusal(b, rec, "the answer does not answer the question: "+err.Error()))
			}
			dec.Answer = resp.Answer
		}
	} else {
		settle(&dec, messages.ReasonRejected, facts{Mode: resp.EffectiveRejectMode(), By: resp.Approver.ID, Feedback: resp.Feedback})
	}

	vote := session.Vote{ApproverID: resp.Approver.ID, Approve: resp.Approved, Decision: dec}
	if resp.Approved {
		vote.Scope = resp.EffectiveScope()
	}
	if dec.RejectMode == messages.RejectHard {
		// The stop is part of the vote: a rejection without it cannot exist.
		vote.Stop = stopReason(resp.Approver.ID, rec)
	}
	sctx, cancel = b.storeCtx(ctx)
	res, err := b.store.Decide(sctx, rec.SessionID, rec.ID, vote)
	cancel()
	if err != nil {
		// The vote may have reached the store all the same (its reply was
		// lost, or Redis ran it after the call gave up): then its outbox
		// entry carries its effects out after the lease, on any replica.
		return b.storeFailure("decide", err)
	}
	if !res.Applied {
		why := "the request is already settled; the standing decision is final"
		switch {
		case errors.Is(res.Refusal, session.ErrDuplicateVote):
			why = "your approval was already counted; waiting for other approvers"
		case errors.Is(res.Refusal, session.ErrStopped):
			why = "the session was hard-stopped (a reject_hard); its pending requests are being rejected"
		}
		return encode(refusal(b, res.Record, why))
	}
	rec = res.Record
	b.firstAnswer(pol, rec, resp.Approved, resp.Approver.ID)
	// Grants, a stop's rejections, the decision, resolved, audit, the
	// cascade — or, for a vote towards a quorum, the new count.
	b.carryOut(ctx, rec)
	if rec.State == messages.StatePending {
		log.Info("approval counted", "approvals", len(rec.Approvals), "required", rec.ApprovalsRequired)
		return encode(messages.RespondReply{V: messages.Version, Applied: true, State: rec.State, ApprovalsSoFar: rec.Approvals,
			Reason: fmt.Sprintf("approval %d of %d counted", len(rec.Approvals), rec.ApprovalsRequired)})
	}
	return encode(messages.RespondReply{V: messages.Version, Applied: true, State: rec.State, Decision: rec.Decision, ApprovalsSoFar: rec.Approvals})
}

// authorize returns why approverID may not answer rec ("" when allowed). A
// team without members is open to any approver only when openTeams is set
// (dev mode); elsewhere it has no one who may answer.
func authorize(pol *policy.Policy, rec *session.Record, approverID string, openTeams bool) string {
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
		if t.IsMember(approverID) {
			return ""
		}
	}
	return fmt.Sprintf("approver %q is not a member of team %s", approverID, strings.Join(rec.Teams, ", "))
}

func refusal(b *Broker, rec *session.Record, why string) messages.RespondReply {
	r := messages.RespondReply{V: messages.Version, Applied: false, State: rec.State, Reason: why, ApprovalsSoFar: rec.Approvals}
	if rec.State.Final() {
		rc := b.receiptFor(rec)
		r.Decision = rc.Decision
	}
	return r
}

// cascade settles every other pending request that the grants now allow
// (under the grant rule, grantsAllowing) after rec's approval stored g: the
// session's for a session grant, the agent's for an always grant (DESIGN §4
// step 9). It is an outbox effect of the approval:
// run again, it finds only what is still pending. It fails only when it
// could not list the pending requests; a request it could not re-check or
// settle stays pending for the approvers.
func (b *Broker) cascade(ctx context.Context, rec *session.Record, g *session.Grant) error {
	sctx, cancel := b.storeCtx(ctx)
	var others []*session.Record
	var err error
	if g.IsSession() {
		others, err = b.store.ListPendingSession(sctx, rec.SessionID)
	} else {
		others, err = b.store.ListPendingAgent(sctx, rec.AgentID)
	}
	cancel()
	if err != nil {
		b.storeErr("list pending", err, "request_id", rec.ID, "session_id", rec.SessionID)
		return err
	}
	pol := b.cfg.Policy.Current()
	for _, o := range others {
		if o.ID == rec.ID && o.SessionID == rec.SessionID {
			continue
		}
		q, err := question(o)
		if err != nil {
			continue
		}
		d := pol.Evaluate(policy.Call{Tool: o.Tool, Arguments: q.Request.Arguments, AgentType: q.Request.AgentType, Cwd: q.Request.Cwd,
			Mode: b.modes.modeFor(o.SessionID, q.Request.AgentType)})
		sctx, cancel := b.storeCtx(ctx)
		look, err := b.store.Lookup(sctx, session.LookupQuery{SessionID: o.SessionID, RequestID: o.ID, AgentID: o.AgentID})
		cancel()
		if err != nil {
			b.storeErr("lookup", err, "request_id", o.ID, "session_id", o.SessionID)
			continue
		}
		if look.Stopped {
			continue
		}
		allow := d.Action == policy.Allow || len(grantsAllowing(pol, &d, o.Tool, o.RequestedBy, look.Grants)) > 0
		if !allow {
			continue
		}
		dec := messages.Decision{
			V:             messages.Version,
			RequestID:     o.ID,
			SessionID:     o.SessionID,
			Tool:          q.Request.Tool,
			DecidedBy:     rec.Decision.DecidedBy,
			DecidedAt:     time.Now().UTC(),
			PolicyVersion: pol.Version(),
		}
		settle(&dec, messages.ReasonCascade, facts{Approved: rec.ID, By: rec.Decision.DecidedBy.ID})
		sctx, cancel = b.storeCtx(ctx)
		res, err := b.store.Settle(sctx, o.SessionID, o.ID, messages.StateApproved, dec)
		cancel()
		if err != nil {
			b.storeErr("settle", err, "request_id", o.ID, "session_id", o.SessionID)
			continue
		}
		if res.Applied {
			b.log.Info("cascade approved", "request_id", rec.ID, "session_id", rec.SessionID, "cascaded_request_id", o.ID)
			b.carryOut(ctx, res.Record)
		}
	}
	return nil
}

// stopReason is the stop signal's text for a reject_hard of rec by approver.
func stopReason(by string, rec *session.Record) string {
	return fmt.Sprintf("%s rejected %s (%s)", by, rec.Tool, rec.ID)
}

// hardStop rejects the other pending requests of rec's session with
// hard_stop (keeping the stop signal, reason, that rec's vote set); it
// returns those it rejected, whose effects are owed by the caller.
func (b *Broker) hardStop(ctx context.Context, rec *session.Record, reason string) ([]*session.Record, error) {
	sctx, cancel := b.storeCtx(ctx)
	defer cancel()
	version := b.cfg.Policy.Current().Version()
	stopped, err := b.store.Stop(sctx, rec.SessionID, reason, func(o *session.Record) messages.Decision {
		dec := messages.Decision{
			V:             messages.Version,
			RequestID:     o.ID,
			SessionID:     o.SessionID,
			Tool:          toolOf(o),
			DecidedBy:     rec.Decision.DecidedBy,
			DecidedAt:     time.Now().UTC(),
			PolicyVersion: version,
		}
		settle(&dec, messages.ReasonHardStop, facts{Detail: reason})
		return dec
	})
	if err != nil {
		b.storeErr("stop", err, "request_id", rec.ID, "session_id", rec.SessionID)
		return nil, err
	}
	return stopped, nil
}

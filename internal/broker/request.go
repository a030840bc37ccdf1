package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
)

// handleRequest runs the decision procedure of DESIGN §4 for one agent
// request and returns the receipt.
func (b *Broker) handleRequest(ctx context.Context, msg *nats.Msg) []byte {
	start := time.Now()
	result := "error"
	defer func() { b.m.DecisionLatency.WithLabelValues(result).Observe(time.Since(start).Seconds()) }()

	sessionID, err := b.subj.SessionFromSubject(messages.SubjectReq, msg.Subject)
	if err != nil {
		return b.badMessage(err)
	}
	req, err := messages.Decode[messages.Request](msg.Data, b.cfg.MaxMessageBytes)
	if err != nil {
		return b.badMessage(err)
	}
	if req.SessionID != sessionID {
		return b.badMessage(&messages.FieldError{Field: "session_id", Problem: fmt.Sprintf("%q does not match the subject's session %q", req.SessionID, sessionID)})
	}

	pol := b.cfg.Policy.Current()
	call := policy.Call{
		Tool:      strings.ToLower(req.Tool),
		Arguments: req.Arguments,
		AgentType: req.AgentType,
		Cwd:       req.Cwd,
		Mode:      b.modes.modeFor(req.SessionID, req.AgentType),
	}
	d := pol.Evaluate(call)

	// One round trip: an earlier record of this id, the stop signal and,
	// for an ask, the grants that could allow it.
	sctx, cancel := b.storeCtx(ctx)
	look, err := b.store.Lookup(sctx, session.LookupQuery{SessionID: req.SessionID, RequestID: req.RequestID, AgentID: req.AgentID,
		SkipGrants: d.Action != policy.Ask})
	cancel()
	if err != nil {
		b.storeErr("lookup", err, "request_id", req.RequestID, "session_id", req.SessionID)
		dec := b.unavailableDecision(&req, pol.Version(), "cannot read the session's state (hard-stop signal, grants)")
		result = "deny"
		return b.finishAuto(msg, &req, &d, dec)
	}
	if look.Existing != nil {
		if err := retryConflict(look.Existing, &req); err != nil {
			result = "conflict"
			return b.badMessage(err)
		}
		if look.Existing.State == session.StateHeld {
			// An earlier attempt stored it held and never opened it (its
			// reply was lost, or its replica died): the agent retried, so it
			// has no decision yet.
			out, r := b.openHeld(ctx, msg, pol, &req, &d, look.Existing)
			result = r
			return out
		}
		result = "retry"
		if look.Existing.State == messages.StatePending {
			// The replica that created it may have died before announcing
			// it: announce again (devices key questions by request id).
			b.announce(look.Existing)
		}
		return b.receiptReply(ctx, look.Existing)
	}
	if look.Stopped {
		dec := b.hardStopDecision(&req, pol.Version(), look.StopReason)
		result = "deny"
		return b.finishAuto(msg, &req, &d, dec)
	}

	switch d.Action {
	case policy.Deny:
		result = "deny"
		return b.finishAuto(msg, &req, &d, b.policyDecision(&req, &d, pol.Version()))
	case policy.Allow:
		result = "allow"
		return b.finishAuto(msg, &req, &d, b.policyDecision(&req, &d, pol.Version()))
	}
	if used := grantsAllowing(pol, &d, call.Tool, req.RequestedBy, look.Grants); used != nil {
		result = "allow"
		b.m.grantsUsed.Add(float64(len(used)))
		return b.finishAuto(msg, &req, &d, b.grantDecision(&req, pol.Version(), &d, used))
	}

	rec, created, err := b.createPending(ctx, pol, &req, &d)
	if err == nil && !created {
		// Another attempt of the same request id stored it first.
		if err := retryConflict(rec, &req); err != nil {
			result = "conflict"
			return b.badMessage(err)
		}
	}
	switch {
	case errors.Is(err, session.ErrStopped):
		result = "deny"
		return b.finishAuto(msg, &req, &d, b.hardStopDecision(&req, pol.Version(), ""))
	case err != nil:
		// Whether the request was stored is unknown (the write may have
		// landed and its reply been lost), but whatever was stored is held:
		// nobody can answer it, so this deny is the agent's only decision.
		// Left held, it is dropped at its expiry.
		b.storeErr("create", err, "request_id", req.RequestID, "session_id", req.SessionID)
		result = "deny"
		return b.finishAuto(msg, &req, &d, b.unavailableDecision(&req, pol.Version(), "cannot store the request for approval"))
	case rec.State == session.StateHeld:
		// Stored held now, or by an earlier attempt racing this one.
		out, r := b.openHeld(ctx, msg, pol, &req, &d, rec)
		result = r
		return out
	}
	// Another attempt of the same request id opened it (or it settled).
	result = "retry"
	if rec.State == messages.StatePending {
		b.announce(rec)
	}
	return b.receiptReply(ctx, rec)
}

// openHeld makes a held request pending and asks its teams (the second
// step of the two-step create, see docs/STATE.md "Held requests"), and
// returns the reply and the latency metric's result label.
//
// If Open fails, the request may have been opened all the same and be
// answered by approvers, so the agent must not get a decision: it is told
// the request is pending, and this replica keeps opening it in the
// background (openLater), which also tells the agent if it cannot be.
func (b *Broker) openHeld(ctx context.Context, msg *nats.Msg, pol *policy.Policy, req *messages.Request, d *policy.Decision, held *session.Record) ([]byte, string) {
	sctx, cancel := b.storeCtx(ctx)
	res, err := b.store.Open(sctx, held.SessionID, held.ID)
	cancel()
	switch {
	case errors.Is(err, session.ErrStopped):
		return b.finishAuto(msg, req, d, b.hardStopDecision(req, pol.Version(), "")), "deny"
	case errors.Is(err, session.ErrNotFound):
		// Dropped at its expiry since it was read: the store was out of
		// reach for as long as the request could wait.
		return b.finishAuto(msg, req, d, timeoutDecision(held)), "deny"
	case err != nil:
		b.storeErr("open", err, "request_id", req.RequestID, "session_id", req.SessionID)
		b.openLater(held)
		return b.receiptReply(ctx, held), "pending"
	case errors.Is(res.Refusal, session.ErrExpired):
		return b.finishAuto(msg, req, d, timeoutDecision(res.Record)), "deny"
	case res.Applied:
		b.opened(ctx, res.Record)
		return b.receiptReply(ctx, res.Record), "pending"
	case res.Record.State == messages.StatePending:
		b.announce(res.Record)
	}
	return b.receiptReply(ctx, res.Record), "retry"
}

// opened counts a request this replica just made pending and carries out
// what its Open recorded in the outbox: the question to its teams.
func (b *Broker) opened(ctx context.Context, rec *session.Record) {
	b.m.Pending.Inc()
	b.log.Info("approval needed", "request_id", rec.ID, "session_id", rec.SessionID, "agent_id", rec.AgentID, "tool", rec.Tool,
		"team", strings.Join(rec.Teams, ","), "expires_at", rec.ExpiresAt)
	b.carryOut(ctx, rec)
}

// finishAuto replies to an automatic decision, then records it (metrics,
// audit, log), and returns nil: the reply is already sent. The receipt goes
// first so that the agent does not wait behind the audit append on the
// connection. Automatic decisions are not stored: a retry re-evaluates and
// gets the same answer from the same policy and state.
//
// In strict audit mode an allow is first appended and acknowledged; if the
// stream cannot take it the agent gets a deny of reason unavailable
// instead (and that deny is audited as usual).
func (b *Broker) finishAuto(msg *nats.Msg, req *messages.Request, d *policy.Decision, dec messages.Decision) []byte {
	risk := riskOf(d)
	audited := false
	if b.strictAllow(&dec) {
		if err := b.appendAudit(context.Background(), req, dec, risk); err != nil {
			b.requestLog(req).Warn("allow withheld: its audit record was not stored (strict audit)", "err", err)
			dec = b.auditUnavailableDecision(req, dec.PolicyVersion)
		} else {
			audited = true
		}
	}
	b.replyReceipt(msg, &messages.Receipt{V: messages.Version, RequestID: req.RequestID, State: messages.StateDecided, Decision: &dec})
	b.m.Decisions.WithLabelValues(string(dec.Outcome), string(dec.ReasonCode)).Inc()
	if !audited {
		b.audit(req, dec, risk)
	}
	if b.log.Enabled(context.Background(), slog.LevelDebug) {
		b.requestLog(req).Debug("decided", "outcome", dec.Outcome, "reason_code", dec.ReasonCode, "rule", d.Rule)
	}
	return nil
}

// requestLog is the logger for one request. It is built only where a line
// is written: the automatic path logs nothing at the default level.
func (b *Broker) requestLog(req *messages.Request) *slog.Logger {
	return b.log.With("request_id", req.RequestID, "session_id", req.SessionID, "tool", req.Tool)
}

// createPending stores an ask held (session.Store.Prepare) with the
// question it publishes once it is opened.
func (b *Broker) createPending(ctx context.Context, pol *policy.Policy, req *messages.Request, d *policy.Decision) (*session.Record, bool, error) {
	team, need := pol.Route(d)
	ttl := pol.TTL(req.TTL(), d.TTL)
	ladder, due := ladderOf(pol, d, team, ttl)
	q := messages.ApprovalNeeded{
		V:                 messages.Version,
		Type:              "approval_needed",
		Request:           *req,
		Team:              team,
		Risk:              riskOf(d),
		BatchRemaining:    req.BatchRemaining,
		ApprovalsRequired: need,
		Offers:            offersFor(pol, d, strings.ToLower(req.Tool), req.AgentID),
		Escalation:        ladder,
	}
	q.Always = alwaysOf(q.Offers)
	if pol.AnswersUser(req.Tool) {
		ask := messages.ParseAskUser(req.Arguments)
		q.AskUser = &ask
	}
	// The request's own batch_remaining is carried once, at the top level.
	q.Request.BatchRemaining = nil
	sctx, cancel := b.storeCtx(ctx)
	defer cancel()
	return b.store.Prepare(sctx, session.Request{
		ID:                req.RequestID,
		SessionID:         req.SessionID,
		AgentID:           req.AgentID,
		RequestedBy:       req.RequestedBy,
		Tool:              strings.ToLower(req.Tool),
		Teams:             []string{team},
		ApprovalsRequired: need,
		TTL:               ttl,
		Question:          q,
		Escalation:        due,
	})
}

// DefaultTeam receives questions whose rule names no route.
const DefaultTeam = policy.DefaultTeam

// riskOf explains d for approvers and the audit log.
func riskOf(d *policy.Decision) messages.Risk {
	r := messages.Risk{
		Tier:           string(d.Tier),
		Rule:           d.Rule,
		Reason:         d.Reason,
		SafetyOverride: d.SafetyOverride,
	}
	if len(d.Subcommands) > 0 {
		r.Subcommands = make([]messages.Verdict, len(d.Subcommands))
		for i, s := range d.Subcommands {
			r.Subcommands[i] = messages.Verdict{Command: s.Command, Words: s.Words, Kind: s.Kind, Action: string(s.Action), Rule: s.Rule, Reason: s.Reason}
		}
	}
	return r
}

package engine

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/natstrace"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
)

// Result is the engine's answer to one agent request.
type Result struct {
	// Label is the result label of signoff_decision_seconds: allow, deny,
	// pending, retry, conflict, or error.
	Label string

	receipt messages.Receipt // a stored request's

	// An automatic decision (auto), recorded by Finish once the reply is
	// out. Held by value: the decision path allocates nothing for it.
	auto     bool
	decision messages.Decision
	risk     messages.Risk
	rule     string
	recorded bool // its audit record is stored already (strict mode)
}

// Receipt is what the agent gets: the decision, or pending. An automatic
// decision's receipt points into r.
func (r *Result) Receipt() messages.Receipt {
	if !r.auto {
		return r.receipt
	}
	return messages.Receipt{V: messages.Version, RequestID: r.decision.RequestID, State: messages.StateDecided, Decision: &r.decision}
}

// Request runs the decision procedure of DESIGN §4 (steps 3–8) for one
// valid agent request: idempotency, hard stop, policy, grants, and the
// pending request of an ask. An automatic decision is not stored (a retry
// re-evaluates it and gets the same answer from the same policy and
// state); the caller replies with res.Receipt() and then calls Finish. An
// error is the agent's error reply: a retry that differs from the stored
// request (a [messages.FieldError]), or a [ReplyError].
func (e *Engine) Request(ctx context.Context, req *messages.Request) (Result, error) {
	pol := e.cfg.Policy.Current()
	live := pol // its breakers count, under a canary too
	if e.cfg.Canary != nil {
		if cand := e.cfg.Canary.PolicyFor(req.SessionID, req.AgentID, req.AgentType); cand != nil {
			pol = cand
		}
	}
	tool := strings.ToLower(req.Tool)
	_, span := e.startSpan(ctx, SpanPolicy)
	d := pol.Evaluate(policy.Call{Tool: tool, Arguments: req.Arguments, AgentType: req.AgentType, Cwd: req.Cwd, Home: req.Home,
		Mode: e.mode(req.SessionID, req.AgentType)})
	policySpan(span, &d)

	// One round trip: an earlier record of this id, the stop signal and,
	// for an ask, the grants that could allow it.
	sctx, span := e.startSpan(ctx, SpanStore+"lookup")
	sctx, cancel := e.storeCtx(sctx)
	look, err := e.cfg.Requests.Lookup(sctx, grantLookup(session.LookupQuery{SessionID: req.SessionID, RequestID: req.RequestID,
		AgentID: req.AgentID, SkipGrants: d.Action != policy.Ask}, &d, tool))
	cancel()
	endSpan(span, err)
	if err != nil {
		e.storeErr("lookup", err, "request_id", req.RequestID, "session_id", req.SessionID)
		dec := e.storeUnavailable(req, pol.Version(), "cannot read the session's state (hard-stop signal, grants)")
		return e.decided(req, &d, dec), nil
	}
	if look.Existing != nil {
		return e.retried(ctx, pol, req, &d, look.Existing)
	}
	if dec, stopped := e.fleetStopped(req, pol.Version()); stopped {
		return e.decided(req, &d, dec), nil
	}
	e.countBreakers(live, req, &d)
	e.breakerAsks(req, &d)
	v := Automatic(pol, &d, tool, req.RequestedBy, req.AgentID, &look)
	if v.Code == "" {
		return e.ask(ctx, pol, req, &d)
	}
	if v.Code == messages.ReasonScopeGrant {
		e.m.GrantsUsed.Add(float64(len(v.Grants)))
	}
	return e.decided(req, &d, e.automaticDecision(req, &d, v, pol.Version(), look.Stop())), nil
}

// retried answers a request whose id is stored: its receipt, after
// opening it if it is still held.
func (e *Engine) retried(ctx context.Context, pol *policy.Policy, req *messages.Request, d *policy.Decision, stored *session.Record) (Result, error) {
	if err := retryConflict(stored, req); err != nil {
		return Result{Label: "conflict"}, err
	}
	if stored.State == session.StateHeld {
		// An earlier attempt stored it held and never opened it (its
		// reply was lost, or its replica died): the agent retried, so it
		// has no decision yet.
		return e.openHeld(ctx, pol, req, d, stored)
	}
	if stored.State == messages.StatePending {
		// The replica that created it may have died before announcing
		// it: announce again (devices key questions by request id).
		e.announce(stored)
	}
	return e.stored(ctx, stored, "retry")
}

// ask stores the ask d of req held with its question, then opens it.
func (e *Engine) ask(ctx context.Context, pol *policy.Policy, req *messages.Request, d *policy.Decision) (Result, error) {
	rec, created, err := e.createPending(ctx, pol, req, d)
	if err == nil && !created {
		// Another attempt of the same request id stored it first.
		if err := retryConflict(rec, req); err != nil {
			return Result{Label: "conflict"}, err
		}
	}
	switch {
	case errors.Is(err, session.ErrStopped):
		return e.decided(req, d, e.hardStopped(req, pol.Version(), "")), nil
	case err != nil:
		// Whether the request was stored is unknown (the write may have
		// landed and its reply been lost), but whatever was stored is held:
		// nobody can answer it, so this deny is the agent's only decision.
		// Left held, it is dropped at its expiry.
		e.storeErr("create", err, "request_id", req.RequestID, "session_id", req.SessionID)
		return e.decided(req, d, e.storeUnavailable(req, pol.Version(), "cannot store the request for approval")), nil
	case rec.State == session.StateHeld:
		// Stored held now, or by an earlier attempt racing this one.
		return e.openHeld(ctx, pol, req, d, rec)
	}
	// Another attempt of the same request id opened it (or it settled).
	if rec.State == messages.StatePending {
		e.announce(rec)
	}
	return e.stored(ctx, rec, "retry")
}

// openHeld makes a held request pending and asks its teams (the second
// step of the two-step create, see docs/STATE.md "Held requests").
//
// If Open fails, the request may have been opened all the same and be
// answered by approvers, so the agent must not get a decision: it is told
// the request is pending, and this replica keeps opening it in the
// background (openLater), which also tells the agent if it cannot be.
func (e *Engine) openHeld(ctx context.Context, pol *policy.Policy, req *messages.Request, d *policy.Decision, held *session.Record) (Result, error) {
	sctx, span := e.startSpan(ctx, SpanStore+"open")
	sctx, cancel := e.storeCtx(sctx)
	res, err := e.cfg.Requests.Open(sctx, held.SessionID, held.ID)
	cancel()
	endSpan(span, err)
	switch {
	case errors.Is(err, session.ErrStopped):
		return e.decided(req, d, e.hardStopped(req, pol.Version(), "")), nil
	case errors.Is(err, session.ErrNotFound):
		// Dropped at its expiry since it was read: the store was out of
		// reach for as long as the request could wait.
		return e.decided(req, d, timeoutDecision(held)), nil
	case err != nil:
		e.storeErr("open", err, "request_id", req.RequestID, "session_id", req.SessionID)
		e.openLater(held)
		return e.stored(ctx, held, "pending")
	case errors.Is(res.Refusal, session.ErrExpired):
		return e.decided(req, d, timeoutDecision(res.Record)), nil
	case res.Applied:
		e.opened(ctx, res.Record)
		return e.stored(ctx, res.Record, "pending")
	case res.Record.State == messages.StatePending:
		e.announce(res.Record)
	}
	return e.stored(ctx, res.Record, "retry")
}

// opened counts a request this replica just made pending and carries out
// what its Open recorded in the outbox: the question to its teams.
func (e *Engine) opened(ctx context.Context, rec *session.Record) {
	e.m.Pending.Inc()
	e.log.Info("approval needed", "request_id", rec.ID, "session_id", rec.SessionID, "agent_id", rec.AgentID, "tool", rec.Tool,
		"team", strings.Join(rec.Teams, ","), "expires_at", rec.ExpiresAt)
	ectx, span := e.startSpan(ctx, SpanEffects)
	e.carryOut(ectx, rec)
	endSpan(span, nil)
}

// decided is the result of the automatic decision dec of req. In strict
// audit mode an allow is first appended and acknowledged; if the stream
// cannot take it the agent gets a deny of reason unavailable instead (and
// that deny is audited as usual, by Finish).
func (e *Engine) decided(req *messages.Request, d *policy.Decision, dec messages.Decision) Result {
	res := Result{Label: string(dec.Outcome), auto: true, risk: riskOf(d), rule: d.Rule}
	if e.strictAllow(&dec) {
		if err := e.cfg.Audit.Append(context.Background(), *req, dec, res.risk, nil); err != nil {
			e.requestLog(req).Warn("allow withheld: its audit record was not stored (strict audit)", "err", err)
			// The label stays the policy's: the latency metric counts
			// what was decided, not what the stream refused.
			dec = e.auditUnavailable(req, dec.PolicyVersion)
		} else {
			res.recorded = true
		}
	}
	res.decision = dec
	return res
}

// Finish records the automatic decision of res, the result of req, if it
// carries one (its metrics, audit record and debug log), once the caller
// has replied: the agent does not wait behind the audit append. Call it
// once per result.
func (e *Engine) Finish(req *messages.Request, res *Result) {
	if !res.auto {
		return
	}
	dec := &res.decision
	e.m.Decisions.WithLabelValues(string(dec.Outcome), string(dec.ReasonCode)).Inc()
	if !res.recorded {
		e.cfg.Audit.Enqueue(*req, *dec, res.risk)
	}
	if e.log.Enabled(context.Background(), slog.LevelDebug) {
		e.requestLog(req).Debug("decided", "outcome", dec.Outcome, "reason_code", dec.ReasonCode, "rule", res.rule)
	}
}

// stored is the result of a stored request: its receipt. In strict audit
// mode a receipt carrying an allow is sent only once the allow's audit
// record is stored (an idempotent append), else the agent gets an
// unavailable error and asks again.
func (e *Engine) stored(ctx context.Context, rec *session.Record, label string) (Result, error) {
	rc := ReceiptFor(rec)
	if rc.Decision != nil && e.strictAllow(rc.Decision) {
		req, risk := requestOf(rec)
		if err := e.cfg.Audit.Append(ctx, req, *rc.Decision, risk, nil); err != nil {
			e.log.Warn("allow withheld: its audit record was not stored (strict audit)",
				"request_id", rec.ID, "session_id", rec.SessionID, "err", err)
			return Result{Label: label}, &ReplyError{Code: messages.CodeUnavailable,
				Message: "audit stream unavailable: the decision cannot be recorded (strict audit); retry later"}
		}
	}
	return Result{receipt: rc, Label: label}, nil
}

// Status is the receipt of a stored request, for an agent that lost track
// of it; an error is a [StoreError] (not found included) or a [ReplyError].
func (e *Engine) Status(ctx context.Context, sessionID, requestID string) (messages.Receipt, error) {
	// Lookup, not Get: it returns a held request too, which the agent was
	// told is pending (see openHeld), and is the cheapest read.
	sctx, cancel := e.storeCtx(ctx)
	look, err := e.cfg.Requests.Lookup(sctx, session.LookupQuery{SessionID: sessionID, RequestID: requestID, SkipGrants: true})
	cancel()
	if err == nil && look.Existing == nil {
		// Never sent, or past its retention.
		err = session.ErrNotFound
	}
	if err != nil {
		return messages.Receipt{}, &StoreError{Op: "status", Err: err}
	}
	res, err := e.stored(ctx, look.Existing, "")
	return res.receipt, err
}

// strictAllow reports whether dec may reach its agent only after its audit
// record is acknowledged.
func (e *Engine) strictAllow(dec *messages.Decision) bool {
	return dec.Outcome == messages.OutcomeAllow && e.cfg.Audit.Strict()
}

// requestLog is the logger for one request. It is built only where a line
// is written: the automatic path logs nothing at the default level.
func (e *Engine) requestLog(req *messages.Request) *slog.Logger {
	return e.log.With("request_id", req.RequestID, "session_id", req.SessionID, "tool", req.Tool)
}

// createPending stores an ask held (session.Store.Prepare) with the
// question it publishes once it is opened.
func (e *Engine) createPending(ctx context.Context, pol *policy.Policy, req *messages.Request, d *policy.Decision) (*session.Record, bool, error) {
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
		StepUp:            pol.StepUp(d),
	}
	q.Always = alwaysOf(q.Offers)
	// Whether the call's command is the script that runs: the displays
	// promote it only then (red team AG F1).
	q.Risk.Shell = pol.IsShellTool(req.Tool)
	if pol.AnswersUser(req.Tool) {
		ask := messages.ParseAskUser(req.Arguments)
		q.AskUser = &ask
	}
	// The request's own batch_remaining is carried once, at the top level.
	q.Request.BatchRemaining = nil
	if e.tracer != nil {
		q.TraceParent = natstrace.Format(ctx)
	}
	sctx, span := e.startSpan(ctx, SpanStore+"prepare")
	sctx, cancel := e.storeCtx(sctx)
	defer cancel()
	rec, created, err := e.cfg.Requests.Prepare(sctx, session.Request{
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
	endSpan(span, err)
	return rec, created, err
}

// riskOf explains d for approvers and the audit log.
func riskOf(d *policy.Decision) messages.Risk {
	r := messages.Risk{
		Tier:           string(d.Tier),
		Rule:           d.Rule,
		Reason:         d.Reason,
		SafetyOverride: d.SafetyOverride,
	}
	r.Breaker, _ = d.Breaker()
	if len(d.Subcommands) > 0 {
		r.Subcommands = make([]messages.Verdict, len(d.Subcommands))
		for i, s := range d.Subcommands {
			r.Subcommands[i] = messages.Verdict{Command: s.Command, Words: s.Words, Kind: s.Kind, Action: string(s.Action), Rule: s.Rule, Reason: s.Reason}
		}
	}
	return r
}

package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
)

// The outbox (DESIGN §4 step 11, docs/STATE.md "Outbox"): every store
// transition with effects outside the store records them in the store's
// outbox in the same atomic step, leased to its caller. The caller carries
// them out at once (CarryOut) and acknowledges them; if it dies or fails
// first, the outbox worker of any replica claims them once the lease has
// run out and carries them out again. Effects are therefore at least once,
// and each is idempotent: decisions and questions are keyed by request id
// (agents and devices drop repeats), audit appends carry a Nats-Msg-Id,
// grants have ids derived from their request (stored once), and the
// cascade and a stop's rejections are compare-and-set transitions with
// outbox entries of their own.

// CarryOut performs the effects that the transitions which left recs as
// they are recorded in the outbox, and has the Acker acknowledge those that
// succeeded. A failure is logged and leaves the entry to the outbox worker
// after the lease. The Acker acknowledges a hard rejection at once, not in
// a batch: until it does, a new turn of its session keeps its stop
// (session.ErrStopOwed), and the agent that got it may begin one soon.
func (e *Engine) CarryOut(ctx context.Context, recs ...*session.Record) {
	e.carryOut(ctx, recs...)
}

func (e *Engine) carryOut(ctx context.Context, recs ...*session.Record) {
	for _, rec := range recs {
		if err := e.effects(ctx, rec); err != nil {
			e.log.Warn("effects of a decision failed; the outbox carries them out after its lease",
				"request_id", rec.ID, "session_id", rec.SessionID, "state", rec.State, "err", err)
			continue
		}
		e.cfg.Acker.Ack(ctx, rec)
	}
}

// effects performs what rec's state calls for: a pending request's question
// (just opened, or an approval counted towards its quorum); a settled
// request's grants (before its decision is published: the agent's next
// call must see them), its stop's rejections, its decision, `resolved` and
// audit record, and its cascade.
func (e *Engine) effects(ctx context.Context, rec *session.Record) error {
	switch rec.State {
	case messages.StatePending:
		e.announce(rec)
		return nil
	case messages.StateExpired:
		return e.settled(ctx, rec, timeoutDecision(rec))
	}
	if rec.Decision == nil {
		return fmt.Errorf("settled request %s has no stored decision", rec.ID)
	}
	switch {
	case rec.State == messages.StateApproved:
		var grant *session.Grant
		if rec.Decision.ReasonCode == messages.ReasonApproved {
			grant = e.approvalGrant(rec) // a cascade's approval grants nothing more
		}
		if grant != nil {
			if _, err := e.storeGrant(ctx, rec, grant); err != nil {
				return err
			}
		}
		if err := e.settled(ctx, rec, *rec.Decision); err != nil {
			return err
		}
		if grant != nil {
			return e.cascade(ctx, rec, grant)
		}
		return nil
	case rec.HardRejection():
		if err := e.stopRest(ctx, rec); err != nil {
			return err
		}
	}
	return e.settled(ctx, rec, *rec.Decision)
}

// approvalGrant returns the grant an approval records, from its stored
// decision and question (checked against the question's offers when the
// response came), or nil.
func (e *Engine) approvalGrant(rec *session.Record) *session.Grant {
	q, err := Question(rec)
	if err != nil {
		e.log.Error("stored question is unreadable; the approval grants nothing", "request_id", rec.ID, "session_id", rec.SessionID, "err", err)
		return nil
	}
	q = approvedQuestion(rec, q)
	g, err := e.grantOf(rec, &q)
	if err != nil {
		e.log.Error("stored approval's scope grants nothing", "request_id", rec.ID, "session_id", rec.SessionID, "err", err)
		return nil
	}
	return g
}

// announce publishes a pending request's question to its teams.
func (e *Engine) announce(rec *session.Record) {
	q, err := Question(rec)
	if err != nil {
		e.log.Error("stored question is unreadable", "request_id", rec.ID, "session_id", rec.SessionID, "err", err)
		return
	}
	for _, team := range rec.Teams {
		q.Team = team
		if err := e.cfg.Publisher.Ask(team, &q); err != nil {
			e.log.Warn("publish failed", "team", team, "request_id", rec.ID, "err", err)
		}
	}
}

// settled tells everyone about a request that settled: the agent on its
// decision subject, every approver device of its teams, and the audit log,
// whose append it waits for. It is an outbox effect: an error leaves it to
// be carried out again, so every part is idempotent (keyed by request id;
// the audit append by its Nats-Msg-Id). In strict audit mode an allow is
// published only once its record is stored: the append comes first, and
// its failure leaves the whole effect to the outbox's retry.
func (e *Engine) settled(ctx context.Context, rec *session.Record, dec messages.Decision) error {
	e.m.Pending.Dec()
	e.m.Decisions.WithLabelValues(string(dec.Outcome), string(dec.ReasonCode)).Inc()
	req, risk := requestOf(rec)
	strict := e.strictAllow(&dec)
	esc, err := e.escalationRan(ctx, rec)
	if err != nil {
		return err
	}
	if strict {
		if err := e.settledAudit(ctx, &req, &dec, &risk, esc); err != nil {
			return err
		}
	}
	if err := e.cfg.Publisher.Decision(&dec, rec.Question.TraceParent); err != nil {
		return fmt.Errorf("publish decision: %w", err)
	}
	for _, team := range rec.Teams {
		r := messages.Resolved{V: messages.Version, Type: "resolved", RequestID: rec.ID, SessionID: rec.SessionID,
			Team: team, State: rec.State, Decision: dec}
		if err := e.cfg.Publisher.Resolved(&r); err != nil {
			e.log.Warn("publish failed", "team", team, "request_id", rec.ID, "err", err)
		}
	}
	if !strict {
		if err := e.settledAudit(ctx, &req, &dec, &risk, esc); err != nil {
			return err
		}
	}
	e.log.Info("settled", "request_id", rec.ID, "session_id", rec.SessionID, "tool", rec.Tool,
		"state", rec.State, "reason_code", dec.ReasonCode, "decided_by", dec.DecidedBy.ID)
	return nil
}

// settledAudit is settled's acknowledged append, with the escalation
// steps that ran before the decision. A record that can never be encoded
// is given up (counted lost by the sink): retrying cannot help.
func (e *Engine) settledAudit(ctx context.Context, req *messages.Request, dec *messages.Decision, risk *messages.Risk, esc []messages.EscalationRun) error {
	if err := e.cfg.Audit.Append(ctx, *req, *dec, *risk, esc); err != nil && !errors.Is(err, ErrUnencodable) {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// tellAgent publishes the decision of a held request that will never be
// opened to the agent that was told it is pending (openLater), and audits
// it. No approver saw the question, so no device is told.
func (e *Engine) tellAgent(rec *session.Record, dec messages.Decision) {
	e.m.Decisions.WithLabelValues(string(dec.Outcome), string(dec.ReasonCode)).Inc()
	if err := e.cfg.Publisher.Decision(&dec, rec.Question.TraceParent); err != nil {
		e.log.Warn("publish failed", "request_id", rec.ID, "session_id", rec.SessionID, "err", err)
	}
	req, risk := requestOf(rec)
	e.cfg.Audit.Enqueue(req, dec, risk)
	e.log.Warn("decided a request that could not be opened", "request_id", rec.ID, "session_id", rec.SessionID,
		"reason_code", dec.ReasonCode)
}

// cascade settles the other pending requests of the call rec's approval
// approved that the grants now allow after it stored g: the session's for
// a session grant, the agent's for an always grant (DESIGN §4 step 10),
// each decided by Automatic, as the request path decides. Only the same
// call (sameCall: tool, arguments, working directory and home, agent)
// cascades: the approver answered the call the card showed, and a grant
// is about later calls; a different call it covers that was already
// waiting — a DROP TABLE beside the SELECT whose card got Session — stays
// open for its own answer (red team AP F7). It is an outbox effect of the
// approval: run again, it finds only what is still pending. It fails only
// when it could not list the pending requests; a request it could not
// re-check or settle stays pending for the approvers.
func (e *Engine) cascade(ctx context.Context, rec *session.Record, g *session.Grant) error {
	sctx, cancel := e.storeCtx(ctx)
	var others []*session.Record
	var err error
	if g.IsSession() {
		others, err = e.cfg.Sessions.ListPendingSession(sctx, rec.SessionID)
	} else {
		others, err = e.cfg.Sessions.ListPendingAgent(sctx, rec.AgentID)
	}
	cancel()
	if err != nil {
		e.storeErr("list pending", err, "request_id", rec.ID, "session_id", rec.SessionID)
		return err
	}
	approved, err := Question(rec)
	if err != nil {
		return nil // nothing cascades from a question the store could not read
	}
	pol := e.cfg.Policy.Current()
	for _, o := range others {
		if o.ID == rec.ID && o.SessionID == rec.SessionID || o.AgentID != rec.AgentID {
			continue
		}
		if q, err := Question(o); err != nil || !sameCall(&approved.Request, &q.Request) {
			continue
		}
		e.cascadeTo(ctx, pol, rec, o)
	}
	return nil
}

// sameCall reports whether two requests make the same call: the same tool
// as spelled, the same arguments (byte for byte once compacted: a call
// the agent spelled otherwise is another card), working directory and
// home.
func sameCall(a, b *messages.Request) bool {
	if a.Tool != b.Tool || a.Cwd != b.Cwd || a.Home != b.Home {
		return false
	}
	if len(bytes.TrimSpace(a.Arguments)) == 0 || len(bytes.TrimSpace(b.Arguments)) == 0 {
		return len(bytes.TrimSpace(a.Arguments)) == len(bytes.TrimSpace(b.Arguments)) // both without arguments
	}
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a.Arguments) != nil || json.Compact(&cb, b.Arguments) != nil {
		return false
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// cascadeTo settles o approved (cascade) if Automatic now allows it; rec
// is the approval whose grant cascades.
func (e *Engine) cascadeTo(ctx context.Context, pol *policy.Policy, rec, o *session.Record) {
	q, err := Question(o)
	if err != nil {
		return
	}
	d := pol.Evaluate(policy.Call{Tool: o.Tool, Arguments: q.Request.Arguments, AgentType: q.Request.AgentType, Cwd: q.Request.Cwd, Home: q.Request.Home,
		Mode: e.mode(o.SessionID, q.Request.AgentType)})
	sctx, cancel := e.storeCtx(ctx)
	look, err := e.cfg.Requests.Lookup(sctx, grantLookup(session.LookupQuery{SessionID: o.SessionID, RequestID: o.ID, AgentID: o.AgentID}, &d, o.Tool))
	cancel()
	if err != nil {
		e.storeErr("lookup", err, "request_id", o.ID, "session_id", o.SessionID)
		return
	}
	if !Automatic(pol, &d, o.Tool, o.RequestedBy, o.AgentID, &look).Allows() {
		return
	}
	f := about(o, rec.Decision.DecidedBy, pol.Version())
	f.Tool, f.Approved = q.Request.Tool, rec.ID
	if settled, ok := e.settleOther(ctx, o, messages.StateApproved, newDecision(messages.ReasonCascade, f)); ok {
		e.log.Info("cascade approved", "request_id", rec.ID, "session_id", rec.SessionID, "cascaded_request_id", o.ID)
		e.carryOut(ctx, settled)
	}
}

// settleOther settles rec, a request other than the one the procedure
// is deciding, to state with decision d under the store timeout. It
// returns the settled record and whether the transition was applied; a
// store failure is counted and logged, and reported as not applied (the
// request keeps its state for a later pass or its expiry).
func (e *Engine) settleOther(ctx context.Context, rec *session.Record, state messages.State, d messages.Decision) (*session.Record, bool) {
	sctx, cancel := e.storeCtx(ctx)
	res, err := e.cfg.Requests.Settle(sctx, rec.SessionID, rec.ID, state, d)
	cancel()
	if err != nil {
		e.storeErr("settle", err, "request_id", rec.ID, "session_id", rec.SessionID)
		return nil, false
	}
	return res.Record, res.Applied
}

// stopRest rejects the other pending requests of rec's session with
// hard_stop, after rec's reject_hard set the stop signal (in its vote),
// before rec's decision is published. The stop is found in force: a new
// turn cannot clear it while rec's effects are owed (session.ErrStopOwed).
// Should it be missing all the same (removed by hand, or cleared by the
// plain new turn of a broker of an earlier version during an upgrade), it
// is set again: the agent is about to hear of a reject_hard, and a
// rejection without its stop must not reach it. (A Redis that lost its
// last writes loses a rejection and its stop together: one script.)
func (e *Engine) stopRest(ctx context.Context, rec *session.Record) error {
	sctx, cancel := e.storeCtx(ctx)
	look, err := e.cfg.Requests.Lookup(sctx, session.LookupQuery{SessionID: rec.SessionID, SkipGrants: true})
	cancel()
	if err != nil {
		e.storeErr("lookup", err, "request_id", rec.ID, "session_id", rec.SessionID)
		return err
	}
	sig := look.Stop()
	if !look.Stopped {
		sig.Reason = stopReason(rec.Decision.DecidedBy.ID, rec)
		e.log.Warn("a hard rejection's stop signal was missing when its effects were carried out; it is set again",
			"request_id", rec.ID, "session_id", rec.SessionID)
	}
	stopped, err := e.hardStop(ctx, rec, sig.Add(rec.ID))
	if err != nil {
		return err
	}
	for _, o := range stopped {
		e.log.Info("hard stop rejected pending request", "request_id", rec.ID, "session_id", rec.SessionID, "stopped_request_id", o.ID)
	}
	e.carryOut(ctx, stopped...)
	return nil
}

// hardStop rejects the other pending requests of rec's session with
// hard_stop (keeping the stop signal, sig, that rec's vote set; its
// rejections, rec among them, are named in each deny); it returns those
// it rejected, whose effects are owed by the caller.
func (e *Engine) hardStop(ctx context.Context, rec *session.Record, sig session.StopSignal) ([]*session.Record, error) {
	sctx, cancel := e.storeCtx(ctx)
	defer cancel()
	version := e.cfg.Policy.Current().Version()
	stopped, err := e.cfg.Sessions.Stop(sctx, rec.SessionID, sig, func(o *session.Record) messages.Decision {
		f := about(o, rec.Decision.DecidedBy, version)
		f.Detail, f.Stops = sig.Reason, sig.Rejections
		return newDecision(messages.ReasonHardStop, f)
	})
	if err != nil {
		e.storeErr("stop", err, "request_id", rec.ID, "session_id", rec.SessionID)
		return nil, err
	}
	return stopped, nil
}

// ladderOf returns the escalation ladder of a question d asks, routed to
// team, that lives ttl: the policy's, cut to the steps before ttl (an
// agent may shorten a question's life), with when each is due
// (docs/POLICY.md "Escalation"; the escalator of every replica runs them).
func ladderOf(pol *policy.Policy, d *policy.Decision, team string, ttl time.Duration) ([]messages.EscalationStep, []time.Duration) {
	steps := pol.Escalation(d, team)
	var due []time.Duration
	for i, s := range steps {
		at := time.Duration(s.AfterMS) * time.Millisecond
		if at >= ttl {
			steps = steps[:i]
			break
		}
		due = append(due, at)
	}
	if len(steps) == 0 {
		return nil, nil
	}
	return slices.Clone(steps), due
}

// escalationRan lists the steps of rec's ladder that ran before it
// settled, for its audit record (the store keeps them until the request's
// expiry). A question without a ladder costs nothing; an error leaves the
// settle effect to the outbox's retry.
func (e *Engine) escalationRan(ctx context.Context, rec *session.Record) ([]messages.EscalationRun, error) {
	ladder := rec.Question.Escalation
	if len(ladder) == 0 {
		return nil, nil
	}
	sctx, cancel := e.storeCtx(ctx)
	done, err := e.cfg.Requests.StepsDone(sctx, rec.SessionID, rec.ID)
	cancel()
	if err != nil {
		e.storeErr("steps done", err, "request_id", rec.ID, "session_id", rec.SessionID)
		return nil, err
	}
	out := make([]messages.EscalationRun, 0, len(done))
	for _, d := range done {
		if d.Index < len(ladder) {
			out = append(out, messages.RunOf(d.Index+1, ladder[d.Index], d.At.UTC()))
		}
	}
	return out, nil
}

// NewTurn clears the session's stop signal for a new user turn and
// reports whether one was set. When the stop holds, unheard names the
// hard rejections behind it that the agent had not heard of when it began
// the turn.
//
// A turn that finds hard rejections of the session not yet carried out
// (session.StopOwedError: their deciding replica died or stalled, and the
// agent has not been told) began before the agent heard of them, unless
// it names them all (turn.Seen: their decisions reached the agent, only
// their acknowledgement had not): NewTurn carries them out here (their
// stops' rejections, their decisions, which reach the agent before this
// turn's reply) and has them acknowledged; a turn that named them then
// ends the stop, any other leaves it in force until the agent's next
// turn. If it cannot carry them out, the error wraps session.ErrStopOwed.
//
// A tracked turn (turn.Tracked) ends a stop only when it names every
// rejection behind it (session.StopUnheardError): one the agent sent
// before it heard of them, delayed past their delivery, cannot end it.
func (e *Engine) NewTurn(ctx context.Context, sessionID string, turn session.Turn) (cleared bool, unheard []string, err error) {
	cleared, unheard, err = e.turnOnce(ctx, sessionID, turn)
	var owed *session.StopOwedError
	if !errors.As(err, &owed) {
		return cleared, unheard, err
	}
	for _, rec := range owed.Records {
		if err := e.effects(ctx, rec); err != nil {
			return false, nil, fmt.Errorf("carrying out the hard rejection %s: %w: %w", rec.ID, session.ErrStopOwed, err)
		}
		e.cfg.Acker.Ack(ctx, rec)
		if !slices.Contains(turn.Seen, rec.ID) {
			unheard = append(unheard, rec.ID)
		}
	}
	if len(unheard) == 0 {
		return e.turnOnce(ctx, sessionID, turn)
	}
	e.log.Info("a new turn came before its session's hard rejection reached the agent: the rejection is delivered and its stop stays until the next turn",
		"session_id", sessionID, "rejections", len(owed.Records))
	return false, unheard, nil
}

// turnOnce asks the store for the turn once; a tracked turn that does not
// name every rejection behind the stop is an answer (unheard), not an
// error.
func (e *Engine) turnOnce(ctx context.Context, sessionID string, turn session.Turn) (bool, []string, error) {
	sctx, cancel := e.storeCtx(ctx)
	defer cancel()
	cleared, err := e.cfg.Sessions.NewTurn(sctx, sessionID, turn)
	var ue *session.StopUnheardError
	if errors.As(err, &ue) {
		e.log.Info("a new turn does not name every hard rejection behind its session's stop: the stop holds",
			"session_id", sessionID, "unheard", len(ue.Unheard))
		return false, ue.Unheard, nil
	}
	return cleared, nil, err
}

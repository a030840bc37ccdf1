package engine

import (
	"context"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// FleetStopPrefix starts the detail of a decision a fleet stop made
// ([messages.FleetStop.Describe]).
const FleetStopPrefix = "fleet stop "

// FleetStops gives the admin's fleet stop that covers a call (DESIGN §4
// step 4). It answers from memory — the request path makes no store round
// trip for it — and returns an error when its copy of the stops is not
// known to be current (the request is then denied: fail closed). Safe for
// concurrent use.
type FleetStops interface {
	StopFor(agentID, agentType, sessionID string) (*messages.FleetStop, error)
}

// fleetStopped is the decision of req when a fleet stop covers it, or when
// the stops cannot be known; ok is false when req may go on.
func (e *Engine) fleetStopped(req *messages.Request, version string) (dec messages.Decision, ok bool) {
	if e.cfg.FleetStops == nil {
		return messages.Decision{}, false
	}
	st, err := e.cfg.FleetStops.StopFor(req.AgentID, req.AgentType, req.SessionID)
	switch {
	case err != nil:
		e.log.Warn("fleet stops unknown; request denied", "request_id", req.RequestID, "session_id", req.SessionID, "err", err)
		return e.unavailable(req, version, "fleet stops cannot be read ("+err.Error()+"); denied to fail closed, retry later"), true
	case st != nil:
		return e.hardStopped(req, version, st.Describe()), true
	}
	return messages.Decision{}, false
}

// stopsApproval is why an approval of rec (whose question is q) may not
// apply because of the fleet stops ("" when it may). A stop can come into
// force while a request waits, and the stop's sweep may miss a request that
// became pending after it ran (a held request opened later, a replica whose
// copy was a refresh behind): the stop is checked again where an approval
// would apply, and a covered request is denied hard_stop there. When the
// stops cannot be read the approval is refused (fail closed) and the
// request stays pending.
func (e *Engine) stopsApproval(ctx context.Context, rec *session.Record, q *messages.ApprovalNeeded) string {
	if e.cfg.FleetStops == nil {
		return ""
	}
	st, err := e.cfg.FleetStops.StopFor(rec.AgentID, q.Request.AgentType, rec.SessionID)
	switch {
	case err != nil:
		return "fleet stops cannot be read (" + err.Error() + "); the approval is refused to fail closed, retry later"
	case st != nil:
		e.StopPending(ctx, []*session.Record{rec}, st)
		return "a fleet stop covers this agent (" + st.Describe() + "): the request is denied hard_stop"
	}
	return ""
}

// StopPending denies hard_stop, naming st, those of recs that are still
// pending, carries out their effects (decision to the agent, resolved to
// the teams, audit) and returns the ids it denied. A request that settled
// meanwhile keeps its outcome. Store failures are logged and skipped: the
// caller sweeps again.
func (e *Engine) StopPending(ctx context.Context, recs []*session.Record, st *messages.FleetStop) []string {
	version := e.cfg.Policy.Current().Version()
	var denied []string
	for _, rec := range recs {
		f := about(rec, messages.Decider{Kind: messages.DeciderPolicy, ID: e.cfg.Replica, Display: "fleet stop " + st.ID}, version)
		f.Detail = st.Describe()
		if settled, ok := e.settleOther(ctx, rec, messages.StateRejected, newDecision(messages.ReasonHardStop, f)); ok {
			e.log.Info("fleet stop denied pending request", "request_id", rec.ID, "session_id", rec.SessionID, "stop", st.ID)
			denied = append(denied, rec.ID)
			e.carryOut(ctx, settled)
		}
	}
	return denied
}

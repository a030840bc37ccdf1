package engine

import (
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
)

// Breakers are the outbreak breakers on the request path (docs/POLICY.md
// "Breakers"). Safe for concurrent use.
type Breakers interface {
	// Hit counts a hit of a breaker. It must not wait for the store: the
	// hits are sent in batches, off the request path.
	Hit(h session.BreakerHit)
	// TripFor returns the tripped breaker that covers a call of agentID,
	// of agentType, or nil. It answers from memory, and returns an error
	// when its copy of the trips is not known to be current: the call then
	// asks (fail closed: a breaker asks, it does not deny).
	TripFor(agentID, agentType string) (*messages.BreakerTrip, error)
}

// countBreakers counts d, a deny or a safety override, toward the
// policy's breakers that watch it and cover req's agent. An allow costs a
// comparison.
func (e *Engine) countBreakers(pol *policy.Policy, req *messages.Request, d *policy.Decision) {
	if e.cfg.Breakers == nil || (d.Action != policy.Deny && d.SafetyOverride == "") {
		return
	}
	bs := pol.Breakers()
	for i := range bs {
		b := &bs[i]
		rule, ok := b.Hit(d)
		if !ok || !b.Select.Matches(req.AgentID, req.AgentType, req.SessionID) {
			continue
		}
		e.cfg.Breakers.Hit(session.BreakerHit{Breaker: b.Name, Rule: rule, AgentID: req.AgentID, SessionID: req.SessionID,
			Threshold: b.Agents, Window: b.Window, Selector: b.Select, Team: b.Team})
	}
}

// breakerAsks makes d ask, no grant settling it, when a tripped breaker
// covers req's agent or the trips cannot be known; a deny stays a deny.
func (e *Engine) breakerAsks(req *messages.Request, d *policy.Decision) {
	if e.cfg.Breakers == nil || d.Action == policy.Deny {
		return
	}
	t, err := e.cfg.Breakers.TripFor(req.AgentID, req.AgentType)
	switch {
	case err != nil:
		e.log.Warn("breaker trips unknown; the call asks", "request_id", req.RequestID, "session_id", req.SessionID, "err", err)
		d.AskForBreaker("", "the outbreak breakers cannot be read ("+err.Error()+"); asked to fail closed")
	case t != nil:
		d.AskForBreaker(t.Breaker, t.Describe()+"; this agent asks every time until the breaker is reset")
	}
}

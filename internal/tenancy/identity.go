package tenancy

import (
	"fmt"
	"slices"
)

// ForbiddenError is a request refused by an identity check: the reply's
// code is forbidden and Reason says why.
type ForbiddenError struct{ Reason string }

func (e *ForbiddenError) Error() string { return e.Reason }

func forbidden(format string, args ...any) *ForbiddenError {
	return &ForbiddenError{Reason: fmt.Sprintf(format, args...)}
}

// Check refuses a request whose declared agent id, agent type or session
// the identity may not use. It allocates nothing when the request passes.
func (id *Identity) Check(agentID, agentType, sessionID string) error {
	if agentID != id.AgentID {
		return forbidden("agent_id %q is not this credential's agent (%q)", agentID, id.AgentID)
	}
	if len(id.AgentTypes) > 0 && !slices.Contains(id.AgentTypes, agentType) {
		if agentType == "" {
			return forbidden("agent %q must declare its agent_type (one of %q)", id.AgentID, id.AgentTypes)
		}
		return forbidden("agent %q may not use agent_type %q (allowed: %q)", id.AgentID, agentType, id.AgentTypes)
	}
	if len(id.sessions) > 0 && !id.mayUseSession(sessionID) {
		return forbidden("agent %q may not use session %q (allowed: %q)", id.AgentID, sessionID, id.Sessions)
	}
	return nil
}

// CheckSession refuses a session the identity may not use (status,
// cancel, turn).
func (id *Identity) CheckSession(sessionID string) error {
	if len(id.sessions) > 0 && !id.mayUseSession(sessionID) {
		return forbidden("agent %q may not use session %q (allowed: %q)", id.AgentID, sessionID, id.Sessions)
	}
	return nil
}

func (id *Identity) mayUseSession(sessionID string) bool {
	for _, g := range id.sessions {
		if g.Match(sessionID) {
			return true
		}
	}
	return false
}

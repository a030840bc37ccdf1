package session

import (
	"context"
	"slices"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Grants keeps the standing grants of sessions and agents
// (docs/STATE.md "Grants"), indexed by team. Lookup (in [Requests]) reads
// them on the hot path.
type Grants interface {
	// AddGrant stores a standing grant: g needs an ID, a scope with its
	// session or agent, a tool and at least one team. The store sets
	// CreatedAt and ExpiresAt (from MaxAge) by its clock and indexes the
	// grant under each of its teams. A grant with the ID of one already
	// stored (an outbox retry) is not stored again: AddGrant returns the
	// stored one and false. A grant id removed from its list — revoked
	// (RevokeGrant, RevokeGrants) or expired — within the store's Retention
	// is not stored again either: AddGrant returns ErrGrantRemoved, so that
	// a retry of the approval that made it cannot undo a revoke or renew an
	// expired grant. Expired grants of the same bucket of the grant index
	// (its tool and [GrantProgram]) are removed on the way and returned as
	// purged.
	AddGrant(ctx context.Context, g Grant) (stored Grant, created bool, purged []Grant, err error)
	// ListGrants returns the grants q selects, session grants first, each
	// session's or agent's grants by creation time then id ([SortGrants]),
	// whatever bucket of the grant index holds them.
	ListGrants(ctx context.Context, q GrantQuery) ([]Grant, error)
	// RevokeGrant removes the grant id of the session (scope session) or
	// agent that g names, atomically: a Lookup either saw it before or does
	// not see it. It returns the grant removed, or ErrNotFound.
	RevokeGrant(ctx context.Context, g Grant) (Grant, error)
	// RevokeGrants removes every grant of sessionID (if not empty) and of
	// agentID (if not empty), and returns those it removed.
	RevokeGrants(ctx context.Context, sessionID, agentID string) ([]Grant, error)
	// ExpireGrants removes the expired grants (by the store's clock) of the
	// sessions and agents indexed under teams and returns them; each
	// expired grant is returned by exactly one call across every caller.
	ExpireGrants(ctx context.Context, teams []string) ([]Grant, error)
}

// Grant is a standing approval as the store keeps it: the wire object
// (id, scope, session or agent, tool and patterns, teams, approvers, the
// request it came from, creation and expiry) and what only the broker
// needs. See docs/STATE.md "Grants".
type Grant struct {
	messages.Grant
	// Origin is the session of the request the grant came from: for an
	// always grant, where the audit records of its life go.
	Origin string
	// MaxAge, given to AddGrant, is how long the grant lasts from its
	// creation by the store's clock (0: no limit of its own; a session
	// grant then ends with the session's grants, Retention after their last
	// use). The store sets CreatedAt and ExpiresAt; MaxAge is not kept.
	MaxAge time.Duration
}

// IsSession reports whether g belongs to a session (else to an agent).
func (g *Grant) IsSession() bool { return g.Scope == messages.ScopeSession }

// Owner returns the session or agent id g belongs to.
func (g *Grant) Owner() string {
	if g.IsSession() {
		return g.SessionID
	}
	return g.AgentID
}

// ApproverCount is how many distinct approvers stand behind g (an id
// listed twice counts once): a legacy grant (stored before grants recorded
// their approvers) counts as one. The broker also leaves out the requester
// of the call a grant would settle.
func (g *Grant) ApproverCount() int {
	ids := make([]string, 0, len(g.Approvers))
	for _, a := range g.Approvers {
		if !slices.Contains(ids, a.ID) {
			ids = append(ids, a.ID)
		}
	}
	return max(len(ids), 1)
}

// GrantQuery selects grants to list: those of SessionID and of AgentID
// (each when set); with neither, those indexed under one of Teams. Teams
// also filters: a grant is listed only when it was approved for one of
// them (when Teams is set). Expired grants are never listed.
type GrantQuery struct {
	SessionID string
	AgentID   string
	Teams     []string
}

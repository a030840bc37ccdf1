package session

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Validate checks the fields a Store relies on and returns an error wrapping
// [ErrInvalid] that names the first bad field. Every Store calls it in
// Prepare before it touches the backend.
func (r Request) Validate() error {
	switch {
	case r.ID == "":
		return invalid("Request.ID is empty")
	case r.SessionID == "":
		return invalid("Request.SessionID is empty")
	case r.AgentID == "":
		return invalid("Request.AgentID is empty")
	case len(r.Teams) == 0:
		return invalid("Request.Teams is empty: a pending request must be routed to at least one team")
	case r.ApprovalsRequired < 1:
		return invalid("Request.ApprovalsRequired is %d: want at least 1", r.ApprovalsRequired)
	case r.TTL <= 0:
		return invalid("Request.TTL is %v: want more than 0", r.TTL)
	}
	for i, team := range r.Teams {
		if team == "" {
			return invalid("Request.Teams[%d] is empty", i)
		}
	}
	return nil
}

// Validate returns an error wrapping [ErrInvalid] when the vote has no
// approver id or one with white space or control characters (a store may
// keep an approval as "<id> <scope>"), is an approval that carries a stop
// reason, or carries an unknown scope or a scope on a deny, or a stop
// reason with a NUL byte ([CheckStopReason]).
func (v Vote) Validate() error {
	if v.ApproverID == "" {
		return invalid("Vote.ApproverID is empty")
	}
	if i := strings.IndexFunc(v.ApproverID, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		return invalid("Vote.ApproverID %q has white space or a control character at byte %d", v.ApproverID, i)
	}
	if v.Scope != "" && !v.Scope.Valid() {
		return invalid("Vote.Scope %q is not a scope (once, session, always, always_prefix)", v.Scope)
	}
	if !v.Approve && v.Scope != "" {
		return invalid("Vote.Scope is set on a deny: only an approval has a scope")
	}
	if v.Approve && v.Stop != "" {
		return invalid("Vote.Stop is set on an approval: only a deny may stop the session")
	}
	if !v.Approve && v.Stop == "" && IsHardRejection(&v.Decision) {
		return invalid("Vote.Stop is empty on a reject_hard: a hard rejection sets its session's stop in the same step")
	}
	return CheckStopReason(v.Stop)
}

// Validate checks what a Store relies on in a grant to add: an id, a
// standing scope with its session or agent, a tool, at least one team and
// no negative MaxAge; the error wraps [ErrInvalid].
func (g *Grant) Validate() error {
	if g.ID == "" {
		return invalid("Grant.ID is empty")
	}
	switch g.Scope {
	case messages.ScopeSession:
		if g.SessionID == "" {
			return invalid("Grant.SessionID is empty for a session grant")
		}
	case messages.ScopeAlways, messages.ScopeAlwaysPrefix:
		if g.AgentID == "" {
			return invalid("Grant.AgentID is empty for an always grant")
		}
	default:
		return invalid("Grant.Scope %q: want session, always or always_prefix", g.Scope)
	}
	if g.Tool == "" {
		return invalid("Grant.Tool is empty")
	}
	if len(g.Teams) == 0 {
		return invalid("Grant.Teams is empty: a grant is approved for at least one team")
	}
	for i, t := range g.Teams {
		if t == "" {
			return invalid("Grant.Teams[%d] is empty", i)
		}
	}
	for i, p := range g.Patterns {
		if p == "" {
			return invalid("Grant.Patterns[%d] is empty", i)
		}
	}
	if g.MaxAge < 0 {
		return invalid("Grant.MaxAge is %v: want 0 (none) or more", g.MaxAge)
	}
	return nil
}

// Validate returns an error wrapping [ErrInvalid] when the query selects
// nothing (no session, agent or team) or names an empty team.
func (q GrantQuery) Validate() error {
	if q.SessionID == "" && q.AgentID == "" && len(q.Teams) == 0 {
		return invalid("GrantQuery selects nothing: set SessionID, AgentID or Teams")
	}
	for i, t := range q.Teams {
		if t == "" {
			return invalid("GrantQuery.Teams[%d] is empty", i)
		}
	}
	return nil
}

// Selects reports whether g passes q's team filter.
func (q GrantQuery) Selects(g *Grant) bool {
	if len(q.Teams) == 0 {
		return true
	}
	for _, t := range g.Teams {
		if slices.Contains(q.Teams, t) {
			return true
		}
	}
	return false
}

// Validate returns an error wrapping [ErrInvalid] when the query has no
// session id. RequestID and AgentID may be empty: nothing is read for them.
func (q LookupQuery) Validate() error {
	if q.SessionID == "" {
		return invalid("LookupQuery.SessionID is empty")
	}
	return nil
}

// CheckKey returns an error wrapping [ErrInvalid] when the session id or the
// request id that address a record is empty.
func CheckKey(sessionID, requestID string) error {
	if sessionID == "" {
		return invalid("session id is empty")
	}
	if requestID == "" {
		return invalid("request id is empty")
	}
	return nil
}

// CheckSession returns an error wrapping [ErrInvalid] when sessionID is empty.
func CheckSession(sessionID string) error {
	if sessionID == "" {
		return invalid("session id is empty")
	}
	return nil
}

// CheckClaimLimit returns an error wrapping [ErrInvalid] unless limit is at
// least 1.
func CheckClaimLimit(limit int) error {
	if limit < 1 {
		return invalid("claim limit is %d: want at least 1", limit)
	}
	return nil
}

// DefaultRetention is how long settled requests stay readable when a store's
// configuration does not say (DESIGN §6).
const DefaultRetention = 24 * time.Hour

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

package session

import (
	"fmt"
	"time"
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
// approver id, or is an approval that carries a stop reason.
func (v Vote) Validate() error {
	if v.ApproverID == "" {
		return invalid("Vote.ApproverID is empty")
	}
	if v.Approve && v.Stop != "" {
		return invalid("Vote.Stop is set on an approval: only a deny may stop the session")
	}
	return nil
}

// Validate checks that the grant names its kind's key and a tool; the error
// wraps [ErrInvalid].
func (g Grant) Validate() error {
	switch g.Kind {
	case GrantSession:
		if g.SessionID == "" {
			return invalid("Grant.SessionID is empty for a session grant")
		}
		if g.Pattern != "" {
			return invalid("Grant.Pattern %q on a session grant: session grants are tool-name scoped", g.Pattern)
		}
	case GrantAgent:
		if g.AgentID == "" {
			return invalid("Grant.AgentID is empty for an agent grant")
		}
	default:
		return invalid("Grant.Kind %q: want %q or %q", g.Kind, GrantSession, GrantAgent)
	}
	if g.Tool == "" {
		return invalid("Grant.Tool is empty")
	}
	return nil
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

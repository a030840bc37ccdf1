package messages

import (
	"strconv"
	"time"
)

// Admin ops of the outbreak breakers (docs/OPERATIONS.md "Operating a
// fleet: breakers").
const (
	// AdminOpListBreakers lists the breakers that are tripped.
	AdminOpListBreakers = "list_breakers"
	// AdminOpBreakerReset resets the breaker AdminRequest.Breaker names:
	// its trip is lifted and its counts start again from zero.
	AdminOpBreakerReset = "breaker_reset"
)

// TypeBreakerEvent is the type of a [BreakerEvent] on the audit stream.
const TypeBreakerEvent = "breaker_event"

// Breaker events.
const (
	BreakerTripped = "tripped"
	BreakerReset   = "reset"
)

// BreakerTrip is a tripped outbreak breaker (docs/POLICY.md "Breakers"):
// Agents distinct agents hit denies or safety overrides of Rule within
// Window, so the agents Selector covers drop to always-ask on every replica
// until an admin resets it.
type BreakerTrip struct {
	// Breaker is the breaker's name in the policy.
	Breaker string `json:"breaker"`
	// Rule is what the agents hit: a rule's text, or "safety override"
	// for a safety override.
	Rule string `json:"rule"`
	// Agents are the distinct agents whose hits within the window tripped
	// it, oldest hit first.
	Agents []string `json:"agents"`
	// Threshold is the breaker's agents: setting; WindowMS its window.
	Threshold int   `json:"threshold"`
	WindowMS  int64 `json:"window_ms"`
	// Selector covers the agents that drop to always-ask.
	Selector Selector `json:"selector"`
	// Team is the team whose escalation ladder is paged ("" none).
	Team string `json:"team,omitempty"`
	// SessionID is the session of the hit that tripped it.
	SessionID string    `json:"session_id"`
	TrippedAt time.Time `json:"tripped_at"`
}

// Window is the breaker's window.
func (b *BreakerTrip) Window() time.Duration { return time.Duration(b.WindowMS) * time.Millisecond }

// Describe is how a question the breaker asks names it.
func (b *BreakerTrip) Describe() string {
	return "breaker " + b.Breaker + " tripped at " + b.TrippedAt.UTC().Format(time.RFC3339) + ": " +
		strconv.Itoa(len(b.Agents)) + " agents hit " + b.Rule + " within " + b.Window().String()
}

// BreakerEvent is the audit record of a breaker's trip or reset, appended to
// the SIGNOFF_AUDIT stream on audit.<session> (the session of the hit
// that tripped it) next to the decisions' [AuditRecord]s, from which its
// "type" tells it apart.
type BreakerEvent struct {
	V     int         `json:"v"`
	Type  string      `json:"type"`  // "breaker_event"
	Event string      `json:"event"` // "tripped" | "reset"
	Trip  BreakerTrip `json:"trip"`
	// By is the admin who reset it (reset).
	By       string    `json:"by,omitempty"`
	Replica  string    `json:"replica,omitempty"`
	Recorded time.Time `json:"recorded"`
}

// validateBreakerOp checks r for the ops of this file; known is false for
// an op it does not serve.
func (r *AdminRequest) validateBreakerOp(op string) (known bool, err error) {
	switch op {
	case AdminOpListBreakers:
		if f := r.fleetExtra("session_id", "agent_id", "agent_type", "mode", "teams", "grant_id", "by"); f != "" {
			return true, &FieldError{Field: f, Problem: op + " takes no fields"}
		}
		if r.Breaker != "" {
			return true, &FieldError{Field: "breaker", Problem: op + " takes no fields"}
		}
	case AdminOpBreakerReset:
		if f := r.fleetExtra("session_id", "agent_id", "agent_type", "mode", "teams", "grant_id"); f != "" {
			return true, &FieldError{Field: f, Problem: op + " takes only breaker and by"}
		}
		if r.Breaker == "" {
			return true, &FieldError{Field: "breaker", Problem: op + " needs the breaker's name"}
		}
		return true, checkToken("breaker", r.Breaker)
	default:
		if r.Breaker != "" {
			return false, &FieldError{Field: "breaker", Problem: "only " + AdminOpBreakerReset + " takes a breaker"}
		}
		return false, nil
	}
	return true, nil
}

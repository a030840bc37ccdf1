package messages

import (
	"fmt"
	"hash/fnv"
	"math"
	"time"
)

// The admin operations of a policy canary (docs/OPERATIONS.md "Canary").
const (
	// AdminOpSetCanary starts a canary: canary.policy is applied for real
	// to the sessions canary selects, on every replica, until it is
	// cleared or rolls back by itself.
	AdminOpSetCanary = "set_canary"
	// AdminOpClearCanary ends the canary (in force or rolled back).
	AdminOpClearCanary = "clear_canary"
	// AdminOpCanaryStatus returns the canary and its counts.
	AdminOpCanaryStatus = "canary_status"
)

// Canary states.
const (
	CanaryActive     = "active"
	CanaryRolledBack = "rolled_back"
)

// Bounds of a canary.
const (
	// MaxCanaryWindow is the longest counting window.
	MaxCanaryWindow = 7 * 24 * time.Hour
	// MinCanaryWindow is the shortest.
	MinCanaryWindow = time.Second
)

// CanarySpec is what set_canary asks for. The canary covers a call when
// its session is in the share and the selector (when set) matches it.
type CanarySpec struct {
	// Policy is the candidate policy, as YAML.
	Policy string `json:"policy"`
	// SharePercent is the share of sessions under the canary, in percent
	// (0 < share ≤ 100), chosen by a stable hash of the session id.
	SharePercent float64 `json:"share_percent"`
	// Selector narrows the canary to an agent type and/or an agent id
	// glob (its session and all fields are not used).
	Selector *Selector `json:"selector,omitempty"`
	// MaxAskRate and MaxDenyRate bound the share of the canary's decisions
	// that ask and that deny (0 ≤ rate ≤ 1); past either, it rolls back.
	MaxAskRate  float64 `json:"max_ask_rate"`
	MaxDenyRate float64 `json:"max_deny_rate"`
	// MinRequests is how many decisions a window needs before its rates
	// count (≥ 1).
	MinRequests int64 `json:"min_requests"`
	// WindowMS is the counting window, in milliseconds.
	WindowMS int64 `json:"window_ms"`
}

// Window is the counting window.
func (c *CanarySpec) Window() time.Duration { return time.Duration(c.WindowMS) * time.Millisecond }

// Validate checks c (not its policy, which the broker parses).
func (c *CanarySpec) Validate() error {
	switch {
	case c.Policy == "":
		return &FieldError{Field: "canary.policy", Problem: "set_canary needs the candidate policy's YAML"}
	case math.IsNaN(c.SharePercent) || c.SharePercent <= 0 || c.SharePercent > 100:
		return &FieldError{Field: "canary.share_percent", Problem: fmt.Sprintf("%v: want more than 0 and at most 100", c.SharePercent)}
	case !rate(c.MaxAskRate):
		return &FieldError{Field: "canary.max_ask_rate", Problem: fmt.Sprintf("%v: want a rate from 0 to 1", c.MaxAskRate)}
	case !rate(c.MaxDenyRate):
		return &FieldError{Field: "canary.max_deny_rate", Problem: fmt.Sprintf("%v: want a rate from 0 to 1", c.MaxDenyRate)}
	case c.MinRequests < 1:
		return &FieldError{Field: "canary.min_requests", Problem: fmt.Sprintf("%d: want at least 1", c.MinRequests)}
	case c.Window() < MinCanaryWindow || c.Window() > MaxCanaryWindow:
		return &FieldError{Field: "canary.window_ms", Problem: fmt.Sprintf("%d: want from %s to %s", c.WindowMS, MinCanaryWindow, MaxCanaryWindow)}
	}
	if s := c.Selector; s != nil {
		if s.All || s.Session != "" {
			return &FieldError{Field: "canary.selector", Problem: "a canary selects by agent and agent_type only (a share of sessions is share_percent)"}
		}
		if s.Agent == "" && s.AgentType == "" {
			return &FieldError{Field: "canary.selector", Problem: "set agent, agent_type or both, or leave the selector out"}
		}
		return s.Validate()
	}
	return nil
}

func rate(r float64) bool { return !math.IsNaN(r) && r >= 0 && r <= 1 }

// Canary is the canary as the brokers keep it (the modes bucket).
type Canary struct {
	// Spec is what set_canary asked for.
	Spec CanarySpec `json:"spec"`
	// ID names this canary: its share's hash and its counts are keyed by it.
	ID string `json:"id"`
	// PolicyVersion is the candidate's version; LiveVersion the live
	// policy's when it was set.
	PolicyVersion string    `json:"policy_version"`
	LiveVersion   string    `json:"live_version,omitempty"`
	SetAt         time.Time `json:"set_at"`
	// State is active or rolled_back; Rollback says why, when.
	State    string          `json:"state"`
	Rollback *CanaryRollback `json:"rollback,omitempty"`
}

// Covers reports whether the canary applies to a call of agentID (of
// agentType) in sessionID: an active canary whose share holds the session
// (a stable hash of the canary id and the session id: a session is in or
// out for the canary's life) and whose selector matches.
func (c *Canary) Covers(sessionID, agentID, agentType string) bool {
	if c.State != CanaryActive {
		return false
	}
	if c.Spec.Selector != nil && !c.Spec.Selector.Matches(agentID, agentType, sessionID) {
		return false
	}
	return InShare(c.ID, sessionID, c.Spec.SharePercent)
}

// InShare reports whether sessionID is in a share of percent of the
// sessions, for the canary id: the session's hash among 10,000 buckets.
func InShare(id, sessionID string, percent float64) bool {
	h := fnv.New64a()
	h.Write([]byte(id))
	h.Write([]byte{0})
	h.Write([]byte(sessionID))
	return float64(h.Sum64()%10000) < percent*100
}

// CanaryCounts are the decisions of a canary's window.
type CanaryCounts struct {
	Allow int64 `json:"allow"`
	Ask   int64 `json:"ask"`
	Deny  int64 `json:"deny"`
}

// Total is the number of decisions counted.
func (n CanaryCounts) Total() int64 { return n.Allow + n.Ask + n.Deny }

// CanaryRollback is why and when a canary rolled back.
type CanaryRollback struct {
	At      time.Time    `json:"at"`
	Replica string       `json:"replica"`
	Reason  string       `json:"reason"`
	Counts  CanaryCounts `json:"counts"`
}

// CanaryStatus is canary_status' answer: the canary (nil: none) and the
// counts of its current window, summed over the replicas.
type CanaryStatus struct {
	Canary *Canary       `json:"canary,omitempty"`
	Counts *CanaryCounts `json:"counts,omitempty"`
}

// CanaryEvent is the audit record of a canary's rollback, on
// <prefix>.audit.canary.<id>.
type CanaryEvent struct {
	V        int       `json:"v"`
	Event    string    `json:"event"` // rolled_back
	Canary   Canary    `json:"canary"`
	Recorded time.Time `json:"recorded"`
}

// CanaryMark marks the audit record of a decision the canary covered: the
// candidate policy decided it.
type CanaryMark struct {
	ID            string `json:"id"`
	PolicyVersion string `json:"policy_version"`
}

// validateCanaryOp checks r for the canary ops; known is false for an op
// it does not serve.
func (r *AdminRequest) validateCanaryOp(op string) (known bool, err error) {
	switch op {
	case AdminOpSetCanary:
		if r.Canary == nil {
			return true, &FieldError{Field: "canary", Problem: "set_canary needs the canary"}
		}
		if f := r.fleetExtra("session_id", "agent_id", "agent_type", "mode", "teams", "grant_id", "by", "policy"); f != "" {
			return true, &FieldError{Field: f, Problem: "set_canary takes only canary"}
		}
		return true, r.Canary.Validate()
	case AdminOpClearCanary, AdminOpCanaryStatus:
		if f := r.fleetExtra("session_id", "agent_id", "agent_type", "mode", "teams", "grant_id", "by", "policy"); f != "" || r.Canary != nil {
			if f == "" {
				f = "canary"
			}
			return true, &FieldError{Field: f, Problem: op + " takes no fields"}
		}
		return true, nil
	}
	if r.Canary != nil {
		return false, &FieldError{Field: "canary", Problem: "only set_canary takes a canary"}
	}
	return false, nil
}

package messages

import (
	"path"
	"strings"
	"time"
)

// Admin operations of fleet operation (issue #27): open questions, fleet
// stops, policy versions, agents' last seen.
const (
	// AdminOpListPending lists open questions (filters: teams, session_id,
	// agent_id, agent_type).
	AdminOpListPending = "list_pending"
	// AdminOpStop stops the agents a selector covers on every replica.
	AdminOpStop = "stop"
	// AdminOpResume lifts the fleet stop of a selector.
	AdminOpResume = "resume"
	// AdminOpListStops lists the fleet stops in force.
	AdminOpListStops = "list_stops"
	// AdminOpStopsChanged tells every replica (no queue group) to read the
	// fleet stops again. Its body is `{"v":1}`; it changes nothing itself.
	AdminOpStopsChanged = "stops_changed"
	// AdminOpPolicyVersion is answered by every replica (no queue group):
	// the policy version in force there.
	AdminOpPolicyVersion = "policy_version"
	// AdminOpListAgents lists the agents' last seen.
	AdminOpListAgents = "list_agents"
)

// MaxSelectorGlobBytes bounds a selector's agent glob.
const MaxSelectorGlobBytes = 256

// Selector selects agents for a fleet stop: every agent (All) or those
// whose agent id matches Agent (a glob in the syntax of [path.Match]: `*`,
// `?`, `[…]` — with no separator: `*` matches '/' too, since an agent id is
// one name, not a path), whose agent type is AgentType (compared without
// case, as the policy compares agent types) and whose session is Session —
// every field set must match.
type Selector struct {
	All       bool   `json:"all,omitempty"`
	Agent     string `json:"agent,omitempty"`
	AgentType string `json:"agent_type,omitempty"`
	Session   string `json:"session,omitempty"`
}

// Validate checks s: All alone, or at least one of the other fields; the
// glob is well formed and bounded; the session is a subject token.
func (s *Selector) Validate() error {
	switch {
	case s.All && (s.Agent != "" || s.AgentType != "" || s.Session != ""):
		return &FieldError{Field: "selector.all", Problem: "all selects every agent: it takes no agent, agent_type or session"}
	case !s.All && s.Agent == "" && s.AgentType == "" && s.Session == "":
		return &FieldError{Field: "selector", Problem: "must set all, or at least one of agent, agent_type and session"}
	}
	if s.Agent != "" {
		if err := checkIdent("selector.agent", s.Agent, MaxSelectorGlobBytes, false); err != nil {
			return err
		}
		if _, err := path.Match(noSeparator(s.Agent), ""); err != nil {
			return withValue("selector.agent", s.Agent, "is not a valid glob: "+err.Error())
		}
	}
	if err := checkIdent("selector.agent_type", s.AgentType, MaxIDBytes, false); err != nil {
		return err
	}
	if s.Session != "" {
		return checkToken("selector.session", s.Session)
	}
	return nil
}

// Matches reports whether s covers a call of agent agentID, of agent type
// agentType, in session sessionID. A malformed glob matches nothing (a
// validated selector has none).
func (s *Selector) Matches(agentID, agentType, sessionID string) bool {
	if s.All {
		return true
	}
	if s.Session != "" && s.Session != sessionID {
		return false
	}
	if s.AgentType != "" && !strings.EqualFold(s.AgentType, agentType) {
		return false
	}
	if s.Agent != "" {
		ok, err := path.Match(noSeparator(s.Agent), noSeparator(agentID))
		return ok && err == nil
	}
	return true
}

// noSeparator maps '/' to a byte no identifier holds (a control
// character), so that path.Match's wildcards match it like any other
// character: `*` must cover `ci/runner` as it covers `ci-runner`.
func noSeparator(s string) string { return strings.ReplaceAll(s, "/", "\x1f") }

// Key is the canonical form of s, the id of its fleet stop: a stop and the
// resume that lifts it name the same selector.
func (s *Selector) Key() string {
	if s.All {
		return "all"
	}
	var parts []string
	if s.Agent != "" {
		parts = append(parts, "agent="+s.Agent)
	}
	if s.AgentType != "" {
		parts = append(parts, "agent_type="+s.AgentType)
	}
	if s.Session != "" {
		parts = append(parts, "session="+s.Session)
	}
	return strings.Join(parts, ",")
}

// FleetStop is an admin's stop of the agents Selector covers, in force on
// every replica until the resume of the same selector (DESIGN §4 step 4).
type FleetStop struct {
	// ID is Selector.Key().
	ID       string   `json:"id"`
	Selector Selector `json:"selector"`
	// Reason is the admin's text; the hard_stop reason of every request
	// the stop denies names the stop and this text.
	Reason    string    `json:"reason,omitempty"`
	By        string    `json:"by,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Describe is how a denied request's reason names the stop.
func (f *FleetStop) Describe() string {
	s := "fleet stop " + f.ID
	if f.By != "" {
		s += " by " + f.By
	}
	if f.Reason != "" {
		s += ": " + f.Reason
	}
	return s
}

// Gate kinds: which gate sent a request (the Signoff-Gate header).
const (
	GateClaudeCode = "claude-code-hook"
	GateCodex      = "codex-hook"
	GateMCP        = "mcp-gateway"
	GateSDK        = "sdk"
)

// GateHeader is the NATS header of a request that names the gate that sent
// it and its version: "<kind>/<version>", e.g. "claude-code-hook/v1.4.0".
const GateHeader = "Signoff-Gate"

// MaxGateBytes bounds the Signoff-Gate header.
const MaxGateBytes = 128

// ParseGate splits a Signoff-Gate header into kind and version. A missing
// header is kind "unknown"; a malformed or oversized one is kind "invalid"
// (last seen records it as sent by nobody it can name, never refuses the
// request for it: the header is information, not identity).
func ParseGate(h string) (kind, version string) {
	if h == "" {
		return "unknown", ""
	}
	if len(h) > MaxGateBytes || charProblem(h, false) != "" {
		return "invalid", ""
	}
	kind, version, _ = strings.Cut(h, "/")
	if kind == "" {
		return "invalid", ""
	}
	return kind, version
}

// AgentSeen is what the broker keeps of an agent identity's last request.
type AgentSeen struct {
	AgentID   string `json:"agent_id"`
	AgentType string `json:"agent_type,omitempty"`
	SessionID string `json:"session_id"`
	RequestID string `json:"request_id"`
	Tool      string `json:"tool"`
	// Gate and GateVersion come from the Signoff-Gate header.
	Gate        string    `json:"gate"`
	GateVersion string    `json:"gate_version,omitempty"`
	FirstSeen   time.Time `json:"first_seen"`
	LastSeen    time.Time `json:"last_seen"`
	// Requests counts the agent's requests since FirstSeen.
	Requests int64 `json:"requests"`
	// Silent is set in list_agents replies: the agent was steadily active
	// and has sent nothing for much longer than its usual gap.
	Silent bool `json:"silent,omitempty"`
}

// PolicyReplica is one replica's answer to policy_version.
type PolicyReplica struct {
	Replica       string `json:"replica"`
	PolicyVersion string `json:"policy_version"`
}

// validateFleetOp checks r for the ops of this file; known is false for
// an op it does not serve.
func (r *AdminRequest) validateFleetOp(op string) (known bool, err error) {
	switch op {
	case AdminOpListPending:
		if f := r.fleetExtra("mode", "grant_id", "by"); f != "" {
			return true, &FieldError{Field: f, Problem: "list_pending takes only teams, session_id, agent_id and agent_type"}
		}
	case AdminOpStop, AdminOpResume:
		if f := r.firstSetField("session_id", "agent_id", "agent_type", "mode", "teams", "grant_id"); f != "" {
			return true, &FieldError{Field: f, Problem: op + " takes only selector, reason and by"}
		}
		if r.Selector == nil {
			return true, &FieldError{Field: "selector", Problem: op + " needs a selector"}
		}
		if err := r.Selector.Validate(); err != nil {
			return true, err
		}
		if err := checkText("reason", r.Reason, MaxReasonBytes); err != nil {
			return true, err
		}
	case AdminOpListStops, AdminOpStopsChanged, AdminOpPolicyVersion, AdminOpListAgents:
		if f := r.fleetExtra("session_id", "agent_id", "agent_type", "mode", "teams", "grant_id", "by"); f != "" {
			return true, &FieldError{Field: f, Problem: op + " takes no fields"}
		}
	default:
		return false, nil
	}
	return true, nil
}

// fleetExtra is firstSetField over names, then selector and reason.
func (r *AdminRequest) fleetExtra(names ...string) string {
	switch f := r.firstSetField(names...); {
	case f != "":
		return f
	case r.Selector != nil:
		return "selector"
	case r.Reason != "":
		return "reason"
	}
	return ""
}

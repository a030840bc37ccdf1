package policy

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/signoff-dev/signoff/pkg/policy/shell"
)

// Defaults of the time-related settings.
const (
	// DefaultTTL is how long a question waits for approvers when neither the
	// policy (ttl:) nor the rule nor the request says otherwise (seed 002:
	// 300 s).
	DefaultTTL = 5 * time.Minute
	// DefaultMaxTTL caps every question's wait when the policy sets no
	// max_ttl:.
	DefaultMaxTTL = time.Hour
)

// Policy is a compiled policy file. It is immutable: every method is safe
// for concurrent use, and a reload builds a new Policy (see [Watcher]).
type Policy struct {
	file    string
	version string
	mode    Mode
	home    string
	// homeSet reports that the file sets home:; when it does not, a call
	// that says its agent's home is judged with that home (home.go).
	homeSet bool
	// source is the file's text, compiled again for another home.
	source []byte
	homes  *homeVariants
	ttl    time.Duration
	maxTTL time.Duration
	tools  toolTable
	static *ruleLayer
	agents map[string]*ruleLayer // by lower-case agent type
	teams  map[string]Team
	// progs is the program table: the built-in one, extended by the
	// file's programs: entries.
	progs *shell.Programs
	// workspace are the directories writes stay in without a question in
	// auto-edit mode; "." is the call's working directory.
	workspace []string
	// grants are the settings of standing approvals (session_grants:,
	// grants:).
	grants grantSettings
	// pagers are the pagers: map, by name (escalation.go).
	pagers map[string]PagerSpec
	// answerTools are the tools declared under tools.answer (lower-case).
	answerTools map[string]bool
	// stepUp are the step_up: settings (stepup.go).
	stepUp stepUpSettings
	// breakers are the outbreak breakers (breakers.go).
	breakers []Breaker
}

// workspaceDirs returns the workspace: the policy's, or the call's
// working directory alone.
func (p *Policy) workspaceDirs() []string {
	if p.workspace == nil {
		return defaultWorkspace
	}
	return p.workspace
}

var defaultWorkspace = []string{"."}

// Version identifies the policy by content: the first 16 hex digits of the
// SHA-256 of its source bytes. Decisions carry it as policy_version.
func (p *Policy) Version() string { return p.version }

// File is the name the policy was parsed under.
func (p *Policy) File() string { return p.file }

// Mode is the deployment's mode (mode:).
func (p *Policy) Mode() Mode { return p.mode }

// ModeFor is the mode for calls of an agent type: the agent layer's mode:
// when it sets one, else the policy's.
func (p *Policy) ModeFor(agentType string) Mode {
	if l := p.agentLayer(agentType); l != nil && l.mode != "" {
		return l.mode
	}
	return p.mode
}

// AgentTypes lists the agent types that have a layer, sorted.
func (p *Policy) AgentTypes() []string {
	return slices.Sorted(maps.Keys(p.agents))
}

// Teams returns a copy of the teams; "default" is always present.
func (p *Policy) Teams() map[string]Team {
	out := make(map[string]Team, len(p.teams))
	for n, t := range p.teams {
		t.Members = slices.Clone(t.Members)
		t.Groups = slices.Clone(t.Groups)
		out[n] = t
	}
	return out
}

// Team returns the named team without copying the whole map. The Members
// slice is shared and must not be modified.
func (p *Policy) Team(name string) (Team, bool) {
	t, ok := p.teams[name]
	return t, ok
}

// TierOf classifies a tool (case-insensitively): declared tiers (tools:
// tiers:), then the built-in lists, then mcp__…/mcp: prefixes; unknown
// tools are exec. An agent's category hint never enters into it.
func (p *Policy) TierOf(tool string) Tier { return p.tools.tierOf(lower(tool)) }

// IsShellTool reports whether the tool's command argument is analysed as a
// shell script (the built-in shell tools plus tools: shell:).
func (p *Policy) IsShellTool(tool string) bool {
	return p.tools.kindOf(lower(tool)) == kindShell
}

// DefaultTTL is the policy's default question lifetime (ttl:).
func (p *Policy) DefaultTTL() time.Duration { return p.ttl }

// MaxTTL is the cap on any question's lifetime (max_ttl:).
func (p *Policy) MaxTTL() time.Duration { return p.maxTTL }

// TTL is how long a question may wait for approvers. requested is the
// agent's ttl_ms (0 = none) and ruleTTL the deciding rule's ttl:
// (Decision.TTL, 0 = none). A rule's ttl is the operator's limit for that
// kind of question, so a request may shorten it but not extend it; without
// a rule ttl the request replaces the policy default. The result never
// exceeds max_ttl.
func (p *Policy) TTL(requested, ruleTTL time.Duration) time.Duration {
	d := p.ttl
	switch {
	case ruleTTL > 0 && requested > 0:
		d = min(ruleTTL, requested)
	case ruleTTL > 0:
		d = ruleTTL
	case requested > 0:
		d = requested
	}
	return min(d, p.maxTTL)
}

// String describes the policy for logs.
func (p *Policy) String() string {
	n := len(p.static.rules)
	for _, l := range p.agents {
		n += len(l.rules)
	}
	return fmt.Sprintf("policy %s (%s, mode %s, %d rules, %d agent types, %d teams)",
		p.file, p.version, p.mode, n, len(p.agents), len(p.teams))
}

func (p *Policy) agentLayer(agentType string) *ruleLayer {
	if agentType == "" || len(p.agents) == 0 {
		return nil
	}
	return p.agents[lower(agentType)]
}

// ParseMode parses a mode name: always-ask, auto-edit or yolo.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeAlwaysAsk, ModeAutoEdit, ModeYolo:
		return m, nil
	}
	return "", fmt.Errorf("unknown mode %q (want always-ask, auto-edit or yolo)", s)
}

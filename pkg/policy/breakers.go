package policy

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy/internal/yamlconf"
)

// Bounds of a breaker (docs/POLICY.md "Breakers").
const (
	// MaxBreakers bounds the breakers: list.
	MaxBreakers = 32
	// MinBreakerAgents: one agent hitting a deny is not an outbreak.
	MinBreakerAgents = 2
	// MaxBreakerAgents bounds agents: the store keeps that many agents
	// per breaker and rule.
	MaxBreakerAgents = 1000
	// MinBreakerWindow and MaxBreakerWindow bound window:.
	MinBreakerWindow = 10 * time.Second
	MaxBreakerWindow = 24 * time.Hour
)

// Breaker is an outbreak breaker: when Agents distinct agents that Select
// covers hit denies or safety overrides of the same rule within Window,
// the agents Select covers drop to always-ask until an admin resets it, and
// Team's escalation ladder is paged.
type Breaker struct {
	Name string
	// Rules are the texts of the deny rules it watches.
	Rules []string
	// AnyDeny watches every deny; SafetyOverrides every safety override.
	AnyDeny, SafetyOverrides bool
	Agents                   int
	Window                   time.Duration
	Select                   messages.Selector
	// Team is the team whose escalation ladder's pagers are paged when it
	// trips ("" none).
	Team string
}

// SafetyHit is the "rule" every safety override counts under. Their
// reasons name what the agent wrote, where and from which host ("writes
// /tmp/a1, outside the workspace"): counted apart, agents that each pick
// another path would never add up, and each would cost the store a set.
const SafetyHit = "safety override"

// Hit returns what an agent hit when d counts for b: the deciding deny
// rule's text ("deny: <layer>" for a deny no rule made), or SafetyHit for a
// safety override; ok is false when d does not count.
func (b *Breaker) Hit(d *Decision) (rule string, ok bool) {
	switch {
	case d.Action == Deny && d.Rule != "" && (b.AnyDeny || slices.Contains(b.Rules, d.Rule)):
		return d.Rule, true
	case d.Action == Deny && d.Rule == "" && b.AnyDeny:
		return "deny: " + d.Layer, true
	case d.SafetyOverride != "" && b.SafetyOverrides:
		return SafetyHit, true
	}
	return "", false
}

// Breakers returns the policy's breakers, in file order. The slice is
// shared: do not modify it.
func (p *Policy) Breakers() []Breaker { return p.breakers }

// Breaker returns the breaker named name.
func (p *Policy) Breaker(name string) (Breaker, bool) {
	for _, b := range p.breakers {
		if b.Name == name {
			return b, true
		}
	}
	return Breaker{}, false
}

// TeamPagers returns the pagers the page: steps of team's escalation
// ladder name, each once, in ladder order.
func (p *Policy) TeamPagers(team string) []string {
	var out []string
	for _, st := range p.teams[team].Escalation {
		if st.Page != "" && !slices.Contains(out, st.Page) {
			out = append(out, st.Page)
		}
	}
	return out
}

var breakerKeys = []string{"name", "rules", "any_deny", "safety_overrides", "agents", "window", "select", "team"}

// breakers decodes the breakers: list; the rules and teams are known.
func (d *decoder) breakers(n *yaml.Node, where string) error {
	items, err := d.Sequence(n, where)
	if err != nil {
		return err
	}
	if len(items) > MaxBreakers {
		return d.Errf(n, where, "at most %d breakers, got %d", MaxBreakers, len(items))
	}
	for i, it := range items {
		at := fmt.Sprintf("%s[%d]", where, i)
		b, err := d.breaker(it, at)
		if err != nil {
			return err
		}
		if _, dup := d.p.Breaker(b.Name); dup {
			return d.Errf(it, at, "breaker %q is defined twice", b.Name)
		}
		d.p.breakers = append(d.p.breakers, b)
	}
	return nil
}

func (d *decoder) breaker(n *yaml.Node, where string) (Breaker, error) {
	b := Breaker{Select: messages.Selector{All: true}}
	if n.Kind != yaml.MappingNode {
		return b, d.Errf(n, where, "want a breaker such as {name: injection, rules: [\"bash(curl *)\"], agents: 3, window: 10m}, got %s", yamlconf.NodeKind(n))
	}
	ms, err := d.Mapping(n, where, breakerKeys)
	if err != nil {
		return b, err
	}
	f := map[string]yamlconf.Member{}
	for _, m := range ms {
		f[m.Key] = m
		if err := d.breakerField(&b, m); err != nil {
			return b, err
		}
	}
	switch {
	case b.Name == "":
		return b, d.Errf(n, where, "a breaker needs a name")
	case len(b.Rules) == 0 && !b.AnyDeny && !b.SafetyOverrides:
		return b, d.Errf(n, where, "breaker %s watches nothing: give rules:, any_deny: true or safety_overrides: true", b.Name)
	case b.Agents == 0:
		return b, d.Errf(n, where, "breaker %s needs agents: (how many distinct agents trip it, at least %d)", b.Name, MinBreakerAgents)
	case b.Window == 0:
		return b, d.Errf(n, where, "breaker %s needs window: (such as 10m)", b.Name)
	}
	return b, nil
}

// breakerField decodes one key of a breaker into b.
func (d *decoder) breakerField(b *Breaker, m yamlconf.Member) error {
	var err error
	switch m.Key {
	case "name":
		if b.Name, err = d.Str(m.Val, m.Location); err != nil {
			return err
		}
		if !validToken(b.Name) || len(b.Name) > messages.MaxIDBytes {
			return d.Errf(m.Val, m.Location, "breaker name %q must be a NATS subject token (no '.', '*', '>' or spaces) of at most %d bytes", b.Name, messages.MaxIDBytes)
		}
		if err := messages.ValidateToken("breaker", b.Name); err != nil {
			return d.Errf(m.Val, m.Location, "breaker name: %v", err)
		}
	case "rules":
		return d.breakerRules(b, m)
	case "any_deny":
		b.AnyDeny, err = d.Boolean(m.Val, m.Location)
	case "safety_overrides":
		b.SafetyOverrides, err = d.Boolean(m.Val, m.Location)
	case "agents":
		if b.Agents, err = d.PositiveInt(m.Val, m.Location); err != nil {
			return err
		}
		if b.Agents < MinBreakerAgents || b.Agents > MaxBreakerAgents {
			return d.Errf(m.Val, m.Location, "agents must be between %d and %d, got %d: one agent hitting a deny is not an outbreak", MinBreakerAgents, MaxBreakerAgents, b.Agents)
		}
	case "window":
		if b.Window, err = d.Duration(m.Val, m.Location); err != nil {
			return err
		}
		if b.Window < MinBreakerWindow || b.Window > MaxBreakerWindow {
			return d.Errf(m.Val, m.Location, "window must be between %s and %s, got %s", MinBreakerWindow, MaxBreakerWindow, b.Window)
		}
	case "select":
		return d.breakerSelect(b, m)
	case "team":
		return d.breakerTeam(b, m)
	}
	return err
}

// breakerRules decodes rules:, the texts of deny rules of the policy.
func (d *decoder) breakerRules(b *Breaker, m yamlconf.Member) error {
	return d.Strings(m.Val, m.Location, func(it *yaml.Node, at, text string) error {
		action, found := d.ruleAction(text)
		switch {
		case !found:
			return d.Errf(it, at, "unknown rule %q: a breaker watches rules of this policy, named as written in their rule: (or their tool/match shorthand)", text)
		case action != Deny:
			return d.Errf(it, at, "rule %q is an %s rule: only denies and safety overrides count toward a breaker (for safety overrides, set safety_overrides: true)", text, action)
		}
		b.Rules = append(b.Rules, text)
		return nil
	})
}

// ruleAction returns the action of the rule whose text is text, in any
// layer (a deny in one layer is enough).
func (d *decoder) ruleAction(text string) (Action, bool) {
	var action Action
	found := false
	check := func(l *ruleLayer) {
		for i := range l.rules {
			if l.rules[i].text == text && (!found || l.rules[i].action == Deny) {
				action, found = l.rules[i].action, true
			}
		}
	}
	check(d.p.static)
	for _, l := range d.p.agents {
		check(l)
	}
	return action, found
}

// breakerSelect decodes select: {all: true} | {agent: GLOB, agent_type: T}.
func (d *decoder) breakerSelect(b *Breaker, m yamlconf.Member) error {
	ms, err := d.Mapping(m.Val, m.Location, []string{"all", "agent", "agent_type"})
	if err != nil {
		return err
	}
	var sel messages.Selector
	for _, f := range ms {
		switch f.Key {
		case "all":
			sel.All, err = d.Boolean(f.Val, f.Location)
		case "agent":
			sel.Agent, err = d.Str(f.Val, f.Location)
		case "agent_type":
			sel.AgentType, err = d.Str(f.Val, f.Location)
		}
		if err != nil {
			return err
		}
	}
	if err := sel.Validate(); err != nil {
		return d.Errf(m.Val, m.Location, "select: %v (want {all: true}, or agent: GLOB and/or agent_type: T)", err)
	}
	b.Select = sel
	return nil
}

// breakerTeam decodes team:, a team whose escalation ladder pages.
func (d *decoder) breakerTeam(b *Breaker, m yamlconf.Member) error {
	name, err := d.Str(m.Val, m.Location)
	if err != nil {
		return err
	}
	if _, ok := d.p.teams[name]; !ok {
		return d.Errf(m.Val, m.Location, "unknown team %q (define it under teams:)", name)
	}
	if len(d.p.TeamPagers(name)) == 0 {
		return d.Errf(m.Val, m.Location, "team %s's escalation ladder has no page: step: a tripped breaker would page nobody", name)
	}
	b.Team = name
	return nil
}

// BreakerLayer starts the [Decision.Layer] of a call a tripped breaker made
// ask: "breaker:<name>" ("breaker:" alone when the breakers could not be
// read and the call asks to fail closed).
const BreakerLayer = "breaker:"

// AskForBreaker makes d, an allow or an ask, a question that no grant
// settles, because the tripped breaker name covers the agent; why is the
// sentence that says so. A deny stays a deny.
func (d *Decision) AskForBreaker(name, why string) {
	if d.Action == Deny {
		return
	}
	if d.Reason != "" {
		why += "; without it: " + string(d.Action) + ", " + d.Reason
	}
	d.Action, d.Layer, d.Reason = Ask, BreakerLayer+name, why
	d.Grantable, d.Always = false, nil
}

// Breaker returns the name of the breaker that made d ask, and whether one
// did (the name is "" when the breakers could not be read).
func (d *Decision) Breaker() (string, bool) {
	return strings.CutPrefix(d.Layer, BreakerLayer)
}

// byBreaker reports whether a tripped breaker made d ask.
func byBreaker(d *Decision) bool {
	_, ok := d.Breaker()
	return ok
}

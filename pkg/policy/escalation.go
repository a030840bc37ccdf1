package policy

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy/internal/yamlconf"
)

// Escalation (docs/POLICY.md "Escalation"): a team or an ask rule may
// carry a ladder of steps that run while nobody answers a question:
//
//	escalation:
//	  - {after: 2m, remind: true}
//	  - {after: 5m, add_team: oncall-secondary}
//	  - {after: 10m, page: oncall-pd}
//
// A rule's ladder replaces its team's (an empty list: no ladder). The
// pagers that page: steps name are the policy's pagers: map
// (docs/PAGING.md).

// MaxEscalationSteps bounds a ladder.
const MaxEscalationSteps = 16

var stepKeys = []string{"after", "remind", "add_team", "page"}

// pendingLadder is a ladder decoded before the names it uses could be
// checked (a team's ladder may add a team defined after it).
type pendingLadder struct {
	steps []messages.EscalationStep
	nodes []stepNodes
}

type stepNodes struct {
	item, after, target *yaml.Node
	where               string
}

// escalation decodes a ladder: each step does exactly one thing, and the
// delays grow. Names are checked by checkLadder, once every team is known.
func (d *decoder) escalation(n *yaml.Node, where string) (*pendingLadder, error) {
	items, err := d.Sequence(n, where)
	if err != nil {
		return nil, err
	}
	if len(items) > MaxEscalationSteps {
		return nil, d.Errf(n, where, "%d steps; at most %d", len(items), MaxEscalationSteps)
	}
	l := &pendingLadder{steps: make([]messages.EscalationStep, 0, len(items))}
	var last time.Duration
	for i, it := range items {
		loc := fmt.Sprintf("%s[%d]", where, i)
		if it.Kind != yaml.MappingNode {
			return nil, d.Errf(it, loc, "want a step such as {after: 5m, remind: true}, got %s", yamlconf.NodeKind(it))
		}
		ms, err := d.Mapping(it, loc, stepKeys)
		if err != nil {
			return nil, err
		}
		var (
			step messages.EscalationStep
			sn   = stepNodes{item: it, where: loc}
			did  []string
		)
		for _, m := range ms {
			switch m.Key {
			case "after":
				v, err := d.Duration(m.Val, m.Location)
				if err != nil {
					return nil, err
				}
				if v%time.Millisecond != 0 {
					return nil, d.Errf(m.Val, m.Location, "%s: escalation delays are whole milliseconds", v)
				}
				if v <= last {
					return nil, d.Errf(m.Val, m.Location, "after %s must be later than the previous step's %s (steps run in order)", v, last)
				}
				last = v
				step.AfterMS = v.Milliseconds()
				sn.after = m.Val
			case "remind":
				if m.Val.Kind != yaml.ScalarNode || m.Val.Tag != "!!bool" {
					return nil, d.Errf(m.Val, m.Location, "want true, got %s", yamlconf.NodeKind(m.Val))
				}
				if m.Val.Value != "true" {
					return nil, d.Errf(m.Val, m.Location, "remind: false does nothing; drop the step")
				}
				step.Remind = true
				did = append(did, "remind")
			case "add_team":
				if step.AddTeam, err = d.Str(m.Val, m.Location); err != nil {
					return nil, err
				}
				sn.target = m.Val
				did = append(did, "add_team")
			case "page":
				if step.Page, err = d.Str(m.Val, m.Location); err != nil {
					return nil, err
				}
				sn.target = m.Val
				did = append(did, "page")
			}
		}
		switch {
		case sn.after == nil:
			return nil, d.Errf(it, loc, "missing after: (how long without an answer before this step runs, e.g. after: 5m)")
		case len(did) == 0:
			return nil, d.Errf(it, loc, "a step must do one thing: remind: true, add_team: <team> or page: <pager>")
		case len(did) > 1:
			return nil, d.Errf(it, loc, "a step does exactly one thing, this one says %s: write one step per action, each with its own after", strings.Join(did, " and "))
		}
		l.steps = append(l.steps, step)
		l.nodes = append(l.nodes, sn)
	}
	return l, nil
}

// checkLadder checks the names a ladder uses and its delays against the
// lifetime of the questions it escalates: a step at or after the ttl would
// never run. owner is the team of the questions (an add_team of it adds
// nothing).
func (d *decoder) checkLadder(l *pendingLadder, ttl time.Duration, ttlFrom, owner string) error {
	for i, s := range l.steps {
		sn := l.nodes[i]
		if after := time.Duration(s.AfterMS) * time.Millisecond; after >= ttl {
			return d.Errf(sn.after, sn.where+".after", "%s is at or after the question's ttl %s (%s): the question has expired by then, so the step would never run", after, ttl, ttlFrom)
		}
		switch {
		case s.AddTeam != "":
			if _, ok := d.p.teams[s.AddTeam]; !ok {
				return d.Errf(sn.target, sn.where+".add_team", "unknown team %q (defined: %s)", s.AddTeam, strings.Join(slices.Sorted(maps.Keys(d.p.teams)), ", "))
			}
			if s.AddTeam == owner {
				return d.Errf(sn.target, sn.where+".add_team", "team %q is the question's own team: adding it changes nothing", s.AddTeam)
			}
		case s.Page != "":
			if _, ok := d.p.pagers[s.Page]; !ok {
				known := "none: add a pagers: section"
				if len(d.p.pagers) > 0 {
					known = strings.Join(slices.Sorted(maps.Keys(d.p.pagers)), ", ")
				}
				return d.Errf(sn.target, sn.where+".page", "unknown pager %q (defined: %s)", s.Page, known)
			}
		}
	}
	return nil
}

// pagerKeys are the YAML keys of a pager entry ([PagerSpec]'s yaml tags).
var pagerKeys = sync.OnceValue(func() []string {
	var out []string
	t := reflect.TypeFor[PagerSpec]()
	for i := range t.NumField() {
		tag := t.Field(i).Tag.Get("yaml")
		if tag != "" && tag != "-" {
			out = append(out, strings.Split(tag, ",")[0])
		}
	}
	return out
})

// pagers decodes the pagers: map (docs/PAGING.md). Keys are not read here:
// the broker reads them when it builds the pagers.
func (d *decoder) pagers(n *yaml.Node, where string) error {
	ms, err := d.Mapping(n, where, nil)
	if err != nil {
		return err
	}
	d.p.pagers = make(map[string]PagerSpec, len(ms))
	for _, m := range ms {
		if !validToken(m.Key) {
			return d.Errf(m.KeyNode, where, "invalid pager name %q (no '.', '*', '>' or whitespace)", m.Key)
		}
		if _, err := d.Mapping(m.Val, m.Location, pagerKeys()); err != nil {
			return err
		}
		if m.Val.Kind != yaml.MappingNode {
			return d.Errf(m.Val, m.Location, "want a pager's settings (kind: pagerduty or opsgenie, …), got %s", yamlconf.NodeKind(m.Val))
		}
		var c PagerSpec
		if err := m.Val.Decode(&c); err != nil {
			return d.Errf(m.Val, m.Location, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
		c.Name = m.Key
		if err := c.Check(); err != nil {
			return d.Errf(m.Val, m.Location, "%v", err)
		}
		d.p.pagers[m.Key] = c
	}
	return nil
}

// Pagers returns the policy's pagers by name, as stated (their keys are
// not read: the broker's escalator builds the pagers). The map is a copy.
func (p *Policy) Pagers() map[string]PagerSpec {
	return maps.Clone(p.pagers)
}

// Escalation returns the ladder of a question that d asks and that is
// routed to team: the deciding rule's ladder if it has one, else the
// team's; nil when there is none. The slice is shared: do not modify it.
func (p *Policy) Escalation(d *Decision, team string) []messages.EscalationStep {
	if d.Escalation != nil {
		if len(d.Escalation) == 0 {
			return nil
		}
		return d.Escalation
	}
	if t, ok := p.teams[team]; ok && len(t.Escalation) > 0 {
		return t.Escalation
	}
	return nil
}

// ruleEscalation decodes an ask rule's escalation: (f holds the rule's
// keys) and checks the ladder its questions will have, its own or its
// team's, against the rule's ttl.
func (d *decoder) ruleEscalation(f map[string]yamlconf.Member, where string, r *rule, team Team) error {
	ttl, ttlFrom := d.p.ttl, "the policy's ttl"
	if r.ttl > 0 {
		ttl, ttlFrom = r.ttl, "this rule's ttl"
	}
	m, ok := f["escalation"]
	if !ok {
		if len(team.Escalation) == 0 || r.ttl == 0 {
			return nil
		}
		last := team.Escalation[len(team.Escalation)-1]
		if after := time.Duration(last.AfterMS) * time.Millisecond; after >= ttl {
			return d.Errf(f["ttl"].Val, where+".ttl", "team %s escalates at %s, at or after this rule's ttl %s: give the rule its own escalation: (an empty list for none) or a longer ttl", team.Name, after, ttl)
		}
		return nil
	}
	l, err := d.escalation(m.Val, m.Location)
	if err != nil {
		return err
	}
	if err := d.checkLadder(l, ttl, ttlFrom, team.Name); err != nil {
		return err
	}
	r.escalation = l.steps // non-nil: replaces the team's, even when empty
	return nil
}

// teamEscalations checks the ladders of the teams once all are known.
func (d *decoder) teamEscalations(ladders map[string]*pendingLadder) error {
	for _, name := range slices.Sorted(maps.Keys(ladders)) {
		l := ladders[name]
		if err := d.checkLadder(l, d.p.ttl, "the policy's ttl", name); err != nil {
			return err
		}
		t := d.p.teams[name]
		t.Escalation = l.steps
		d.p.teams[name] = t
	}
	return nil
}

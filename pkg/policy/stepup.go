package policy

import (
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// DefaultStepUpMaxAge is how fresh a step-up assertion must be when the
// policy's step_up: says nothing else.
const DefaultStepUpMaxAge = 2 * time.Minute

// MaxStepUpMaxAge bounds step_up.max_age: a second factor older than this is
// not "fresh" for any policy.
const MaxStepUpMaxAge = time.Hour

// stepUpSettings are the policy's step_up: settings: which risks need a
// second factor to approve, and how fresh it must be.
type stepUpSettings struct {
	maxAge         time.Duration
	safetyOverride bool
	quorum         bool
	tiers          []Tier
}

var stepUpKeys = []string{"max_age", "safety_overrides", "quorum", "tiers"}

func (d *decoder) stepUpConfig(n *yaml.Node, where string) error {
	ms, err := d.Mapping(n, where, stepUpKeys)
	if err != nil {
		return err
	}
	s := &d.p.stepUp
	for _, m := range ms {
		switch m.Key {
		case "max_age":
			if s.maxAge, err = d.Duration(m.Val, m.Location); err != nil {
				return err
			}
			if s.maxAge < time.Second || s.maxAge > MaxStepUpMaxAge {
				return d.Errf(m.Val, m.Location, "step_up.max_age %s is out of range (want 1s to %s)", s.maxAge, MaxStepUpMaxAge)
			}
		case "safety_overrides":
			if s.safetyOverride, err = d.Boolean(m.Val, m.Location); err != nil {
				return err
			}
		case "quorum":
			if s.quorum, err = d.Boolean(m.Val, m.Location); err != nil {
				return err
			}
		case "tiers":
			err = d.Strings(m.Val, m.Location, func(it *yaml.Node, loc, name string) error {
				tier, ok := tierNames[name]
				if !ok {
					return d.Errf(it, loc, "unknown tier %q (want read, write, exec or mcp)", name)
				}
				s.tiers = append(s.tiers, tier)
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// StepUpMaxAge is how fresh a step-up assertion must be (step_up.max_age).
func (p *Policy) StepUpMaxAge() time.Duration { return p.stepUp.maxAge }

// StepUp says whether approving the ask d needs a second factor, and why:
// a rule with step_up: true made it ask, its team says step_up: true, or
// its risk is one the policy's step_up: names (a safety override, a quorum
// of two or more approvals, a tier). It returns nil when none does, and
// for an allow or a deny (there is nothing to approve).
func (p *Policy) StepUp(d *Decision) *messages.StepUpNeed {
	if d.Action != Ask {
		return nil
	}
	team, approvals := p.Route(d)
	var why []string
	if d.StepUpRule != "" {
		why = append(why, "rule "+d.StepUpRule)
	}
	if t, ok := p.teams[team]; ok && t.StepUp {
		why = append(why, "team "+team)
	}
	if p.stepUp.safetyOverride && d.SafetyOverride != "" {
		why = append(why, "safety override")
	}
	if p.stepUp.quorum && approvals > 1 {
		why = append(why, "quorum")
	}
	if slices.Contains(p.stepUp.tiers, d.Tier) {
		why = append(why, "tier "+string(d.Tier))
	}
	if len(why) == 0 {
		return nil
	}
	return &messages.StepUpNeed{Why: strings.Join(why, "; "), MaxAgeS: int(p.stepUp.maxAge / time.Second)}
}

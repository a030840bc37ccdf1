package policy

import (
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"github.com/signoff-dev/signoff/pkg/policy/internal/yamlconf"
)

// DefaultTeam receives questions whose rule names no route.
const DefaultTeam = "default"

// DefaultAlwaysMaxAge is how long an "always" grant lasts when neither the
// policy (grants: max_age: always:) nor the deciding rule (max_age:) says.
const DefaultAlwaysMaxAge = 720 * time.Hour

// SessionGrants says what a "session" answer to a shell command grants.
type SessionGrants string

// Session grant scopes (session_grants:).
const (
	// SessionGrantPatterns (the default) grants the command's arity-prefix
	// patterns for the session, as "always" does for the agent.
	SessionGrantPatterns SessionGrants = "patterns"
	// SessionGrantTool grants the whole shell tool for the session (the
	// seeds' semantics).
	SessionGrantTool SessionGrants = "tool"
)

// grantSettings are the policy's settings of standing approvals.
type grantSettings struct {
	session       SessionGrants
	sessionMaxAge time.Duration // 0: the session's retention
	alwaysMaxAge  time.Duration // 0: never (only when set explicitly to 0)
}

func defaultGrantSettings() grantSettings {
	return grantSettings{session: SessionGrantPatterns, alwaysMaxAge: DefaultAlwaysMaxAge}
}

// SessionGrants says what a "session" answer to a shell command grants.
func (p *Policy) SessionGrants() SessionGrants { return p.grants.session }

// GrantMaxAge is how long a grant made by answering d lasts: the deciding
// rules' max_age when set (Decision.GrantMaxAge), else the policy's for
// the scope (always: true for "always" grants). Zero means no limit of its
// own: a session grant then ends with the session's retention.
func (p *Policy) GrantMaxAge(d *Decision, always bool) time.Duration {
	if d.GrantMaxAge > 0 {
		return d.GrantMaxAge
	}
	if always {
		return p.grants.alwaysMaxAge
	}
	return p.grants.sessionMaxAge
}

// Route returns the team a question about d is asked of and the distinct
// approvals that settle it (the rule's approvals_required, else the team's,
// at least 1).
func (p *Policy) Route(d *Decision) (team string, approvals int) {
	team = d.Route
	if team == "" {
		team = DefaultTeam
	}
	approvals = d.ApprovalsRequired
	if approvals == 0 {
		approvals = 1
		if t, ok := p.teams[team]; ok && t.ApprovalsRequired > 0 {
			approvals = t.ApprovalsRequired
		}
	}
	return team, approvals
}

// GrantNeed is what a question demands of a grant that would settle it
// instead of a human.
type GrantNeed struct {
	// Team is the team the question is routed to.
	Team string
	// Approvals is how many distinct approvals the question needs.
	Approvals int
	// NotGrantable says why no grant may settle the question ("" when one
	// may): a safety override, an elevated or unanalysable command, or an
	// explicit ask rule without grantable: true.
	NotGrantable string
}

// Authority is what stands behind a grant: the teams it was approved for
// and how many distinct approvers approved it.
type Authority struct {
	Teams     []string
	Approvers int
}

// NeedOf returns what the ask d demands of a grant. It is meaningful for
// asks only; for an allow or a deny it reports that no grant applies.
func (p *Policy) NeedOf(d *Decision) GrantNeed {
	team, approvals := p.Route(d)
	n := GrantNeed{Team: team, Approvals: approvals}
	switch {
	case d.Action != Ask:
		n.NotGrantable = "the policy " + string(d.Action) + "s this call; grants only settle questions"
	case byBreaker(d):
		n.NotGrantable = "a tripped outbreak breaker covers this agent: its calls ask every time until the breaker is reset"
	case d.SafetyOverride != "":
		n.NotGrantable = "a safety override (" + d.SafetyOverride + ") asks every time"
	case !d.Grantable:
		// Why it is not grantable is the decision's own reason: a command
		// that runs elevated or cannot be analysed, a question for a
		// person, an argument that changes how the call runs (README walk
		// W10: an AskUserQuestion was said to run elevated).
		n.NotGrantable = "it asks every time: " + clipReason(d.Reason, 200)
	case d.ExplicitAsk != "":
		n.NotGrantable = "the rule " + d.ExplicitAsk + " asks every time (it does not say grantable: true)"
	case p.StepUp(d) != nil:
		// A grant holds no second factor, so it may not stand in for one.
		n.NotGrantable = "approving it needs step-up (" + p.StepUp(d).Why + "), a fresh second factor every time"
	}
	return n
}

// SettledBy is the rule of standing approvals (docs/POLICY.md "Grants"): a
// grant settles a question only when its approvers could have settled the
// question themselves — the question is grantable, its team is among the
// grant's teams and it needs no more approvals than stood behind the grant.
// Otherwise it returns false and why, as a sentence for humans. The broker
// uses it both to let a grant allow a call and to decide whether an answer
// "session" or "always" is offered (the grant that answer would make must
// settle the same question again).
func (n GrantNeed) SettledBy(a Authority) (bool, string) {
	if n.NotGrantable != "" {
		return false, n.NotGrantable
	}
	if !slices.Contains(a.Teams, n.Team) {
		return false, "it was approved for team " + yamlconf.OrList(a.Teams) + ", and this question is for team " + n.Team
	}
	if a.Approvers < n.Approvals {
		return false, "it was approved by " + countOf(a.Approvers, "approver") + ", and this question needs " +
			countOf(n.Approvals, "approval")
	}
	return true, ""
}

func countOf(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// sessionGrants decodes session_grants: patterns | tool.
func (d *decoder) sessionGrants(n *yaml.Node, where string) error {
	s, err := d.Str(n, where)
	if err != nil {
		return err
	}
	switch v := SessionGrants(s); v {
	case SessionGrantPatterns, SessionGrantTool:
		d.p.grants.session = v
		return nil
	}
	return d.Errf(n, where, "unknown value %q (want patterns or tool)", s)
}

// grantsConfig decodes grants: {max_age: {session: <duration>, always:
// <duration>}}. A max_age of 0 means no limit of its own.
func (d *decoder) grantsConfig(n *yaml.Node, where string) error {
	ms, err := d.Mapping(n, where, []string{"max_age"})
	if err != nil {
		return err
	}
	for _, m := range ms {
		ages, err := d.Mapping(m.Val, m.Location, []string{"session", "always"})
		if err != nil {
			return err
		}
		for _, a := range ages {
			v, err := d.maxAge(a.Val, a.Location)
			if err != nil {
				return err
			}
			if a.Key == "session" {
				d.p.grants.sessionMaxAge = v
			} else {
				d.p.grants.alwaysMaxAge = v
			}
		}
	}
	return nil
}

// maxAge decodes a duration that may be 0 (no limit).
func (d *decoder) maxAge(n *yaml.Node, where string) (time.Duration, error) {
	if n.Kind == yaml.ScalarNode && (n.Value == "0" || n.Value == "0s") {
		return 0, nil
	}
	return d.Duration(n, where)
}

// clipReason is s cut to at most n bytes at a rune boundary, with "…" when cut.
func clipReason(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

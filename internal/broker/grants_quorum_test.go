package broker_test

import (
	"context"
	"slices"
	"testing"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// quorumPolicy routes helm to oncall (two approvals) and helm upgrade of
// prod to oncall with three.
const quorumPolicy = `
mode: auto-edit
teams:
  default: { members: [alice, bob] }
  oncall:  { members: [carol, dave, erin], approvals_required: 2 }
rules:
  - { rule: "bash(helm *)", action: ask, route: oncall, grantable: true }
  - { rule: "bash(helm upgrade prod*)", action: ask, route: oncall, grantable: true, approvals_required: 3 }
`

// sessionGrants lists the grants of sessionID through the admin API.
func sessionGrants(t *testing.T, p *brokertest.Plane, sessionID string) []messages.Grant {
	t.Helper()
	rep, code := admin(t, p, messages.AdminOpListGrants, messages.AdminRequest{SessionID: sessionID})
	if code != "" {
		t.Fatalf("list grants of %s: %s", sessionID, code)
	}
	return rep.Grants
}

func approverIDsOf(g messages.Grant) []string {
	var ids []string
	for _, a := range g.Approvers {
		ids = append(ids, a.ID)
	}
	return ids
}

// A standing answer on a quorum question records a grant only when every
// counted approver chose it (or a wider one: always stands behind
// session); the grant names them all and settles the team's later
// questions of as many approvals, not those that need more.
func TestQuorumGrants(t *testing.T) {
	p := grantsPlane(t, quorumPolicy)
	oncall := p.Approver("oncall")
	ctx := context.Background()

	t.Run("once and session: approved once, no grant", func(t *testing.T) {
		c := p.Agent("s-q-once", "pod-q-1")
		h := brokertest.Ask(ctx, c, "q-once-1", "bash", brokertest.Bash("helm upgrade web ./chart"))
		q := oncall.NextAsk("q-once-1")
		oncall.Approve(q, "carol", messages.ScopeOnce)
		oncall.Approve(q, "dave", messages.ScopeSession)
		d := h.Wait(t)
		brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
		if d.Scope != messages.ScopeOnce {
			t.Errorf("decision scope = %q, want once", d.Scope)
		}
		if gs := sessionGrants(t, p, "s-q-once"); len(gs) != 0 {
			t.Errorf("grants = %+v, want none", gs)
		}
		next := brokertest.Ask(ctx, c, "q-once-2", "bash", brokertest.Bash("helm upgrade api ./chart"))
		oncall.NextAsk("q-once-2")
		stillPending(t, next, "no grant was recorded")
	})

	t.Run("session and session: a grant of both settles the next quorum-2 question", func(t *testing.T) {
		c := p.Agent("s-q-both", "pod-q-2")
		h := brokertest.Ask(ctx, c, "q-both-1", "bash", brokertest.Bash("helm upgrade web ./chart"))
		q := oncall.NextAsk("q-both-1")
		if rep := oncall.Approve(q, "carol", messages.ScopeSession); !rep.Applied || rep.State != messages.StatePending {
			t.Fatalf("carol's session approval: %+v", rep)
		}
		oncall.Approve(q, "dave", messages.ScopeSession)
		d := h.Wait(t)
		brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
		if d.Scope != messages.ScopeSession || !slices.Equal(d.GrantedPattern, []string{"helm upgrade *"}) {
			t.Errorf("decision scope %q granted %v, want session [helm upgrade *]", d.Scope, d.GrantedPattern)
		}
		gs := sessionGrants(t, p, "s-q-both")
		if len(gs) != 1 || gs[0].Scope != messages.ScopeSession || !slices.Equal(approverIDsOf(gs[0]), []string{"carol", "dave"}) ||
			!slices.Equal(gs[0].Teams, []string{"oncall"}) {
			t.Fatalf("grants = %+v, want one session grant of oncall by carol and dave", gs)
		}
		next := request(t, c, "helm upgrade api ./chart")
		brokertest.WantDecision(t, next, messages.OutcomeAllow, messages.ReasonScopeGrant)
		if next.DecidedBy.ID != gs[0].ID {
			t.Errorf("decided_by %+v, want grant %s", next.DecidedBy, gs[0].ID)
		}
		// A question that needs three approvals is not settled by two.
		three := brokertest.Ask(ctx, c, "q-both-3", "bash", brokertest.Bash("helm upgrade prod-db ./chart"))
		q3 := oncall.NextAsk("q-both-3")
		if q3.ApprovalsRequired != 3 {
			t.Fatalf("approvals_required = %d, want 3", q3.ApprovalsRequired)
		}
		stillPending(t, three, "a two-approver grant on a quorum-3 question")
	})

	t.Run("always and session: a session grant of both", func(t *testing.T) {
		c := p.Agent("s-q-mixed", "pod-q-3")
		h := brokertest.Ask(ctx, c, "q-mixed-1", "bash", brokertest.Bash("helm upgrade web ./chart"))
		q := oncall.NextAsk("q-mixed-1")
		oncall.Approve(q, "carol", messages.ScopeAlways)
		oncall.Approve(q, "dave", messages.ScopeSession)
		d := h.Wait(t)
		brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
		if d.Scope != messages.ScopeSession {
			t.Errorf("decision scope = %q, want session", d.Scope)
		}
		gs := sessionGrants(t, p, "s-q-mixed")
		if len(gs) != 1 || gs[0].Scope != messages.ScopeSession || !slices.Equal(approverIDsOf(gs[0]), []string{"carol", "dave"}) {
			t.Fatalf("grants = %+v, want one session grant by carol and dave", gs)
		}
		if rep, _ := admin(t, p, messages.AdminOpListGrants, messages.AdminRequest{AgentID: "pod-q-3"}); len(rep.Grants) != 0 {
			t.Errorf("grants of the agent and session = %+v, want none: dave did not choose always", rep.Grants)
		}
		brokertest.WantDecision(t, request(t, c, "helm upgrade api ./chart"), messages.OutcomeAllow, messages.ReasonScopeGrant)
	})
}

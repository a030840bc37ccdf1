package broker_test

import (
	"context"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// groupsPolicy routes deploys to sre, whose members are listed by id and
// by an identity provider's group.
const groupsPolicy = `
mode: auto-edit
rules:
  - { rule: "bash(make deploy*)", action: ask, route: sre }
teams:
  default: { members: [alice] }
  sre:     { members: [carol], groups: [okta-sre] }
`

func TestATeamsGroupsAdmitTheApproversTheResponseStatesAreInThem(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: groupsPolicy})
	a := p.Approver("sre")
	ctx := context.Background()
	c := p.Agent("s-groups", "pod-1")
	req := brokertest.Ask(ctx, c, "g-1", "bash", brokertest.Bash("make deploy"))
	q := a.NextAsk("g-1")

	respond := func(groups ...string) messages.RespondReply {
		return a.Respond(messages.Response{RequestID: q.Request.RequestID, SessionID: q.Request.SessionID,
			Approver: messages.Approver{ID: "oidc-person@example.com", Channel: "web"}, ApproverGroups: groups,
			Approved: true, Scope: messages.ScopeOnce, Digest: q.Digest})
	}
	if rep := respond(); rep.Applied || !strings.Contains(rep.Reason, "not a member of team sre") {
		t.Fatalf("an approver in no group, not listed: %+v, want refused as no member", rep)
	}
	if rep := respond("okta-sre-readonly", "everyone"); rep.Applied || !strings.Contains(rep.Reason, "not a member") {
		t.Fatalf("an approver in other groups only: %+v, want refused as no member", rep)
	}
	if rep := respond("everyone", "okta-sre"); !rep.Applied || rep.State != messages.StateApproved {
		t.Fatalf("an approver the response says is in okta-sre: %+v, want applied", rep)
	}
	d := req.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if d.DecidedBy.ID != "oidc-person@example.com" {
		t.Errorf("decided_by = %q, want the person admitted by their group", d.DecidedBy.ID)
	}
}

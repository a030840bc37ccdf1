package broker_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// Red-team attacks on grants (issue 13) through the brokers, on real Redis:
// an agent using a grant where it does not belong, an approver making a
// grant stand on approvals that were not given for it, a fault during the
// lookup. Each test states the attack and what must hold.

// notAllowed sends cmd from c and fails the test if the call is allowed
// within a moment: it must ask (the wait ends with the context) or be
// denied or refused.
func notAllowed(t *testing.T, c *client.Client, cmd, why string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 700*time.Millisecond)
	defer cancel()
	d, err := c.Request(ctx, client.Call{Tool: "bash", Arguments: brokertest.Bash(cmd)})
	if err == nil && d.Outcome == messages.OutcomeAllow {
		t.Errorf("%s: %q was allowed (%s, decided by %s)", why, cmd, d.ReasonCode, d.DecidedBy.ID)
	}
}

// Attack: on a quorum question, one approver answers "once" and the second
// answers "session". Before: the grant recorded both as standing behind it,
// so the next quorum question was settled by a standing approval the first
// approver never gave. Now the store keeps each approver's scope, and a
// grant is recorded only when as many approvers as the question needs
// chose the standing answer: here none is, the request is approved once,
// and the next quorum question still asks.
func TestRedTeamAQuorumGrantNeedsEveryApproversStandingAnswer(t *testing.T) {
	p := grantsPlane(t, issue13Policy)
	oncall := p.Approver("oncall")
	c := p.Agent("s-rt-quorum", "pod-rt-1")
	ctx := context.Background()

	h := brokertest.Ask(ctx, c, "rt-helm-1", "bash", brokertest.Bash("helm upgrade web ./chart"))
	q := oncall.NextAsk("rt-helm-1")
	for _, s := range []messages.Scope{messages.ScopeSession, messages.ScopeAlways} {
		if o := q.Offer(s); o == nil || !o.Offered || !strings.Contains(o.Note, "all 2 approvers") {
			t.Errorf("%s offer on a quorum question = %+v, want offered with the note that every approver must choose it", s, o)
		}
	}
	if rep := oncall.Approve(q, "carol", messages.ScopeOnce); !rep.Applied || rep.State != messages.StatePending {
		t.Fatalf("carol's approval (once): %+v", rep)
	}
	if rep := oncall.Approve(q, "dave", messages.ScopeSession); !rep.Applied || rep.State != messages.StateApproved {
		t.Fatalf("dave's approval (session) after carol's once = %+v, want it to settle the request", rep)
	}
	d := h.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if d.Scope != messages.ScopeOnce || len(d.GrantedPattern) != 0 {
		t.Errorf("decision scope %q, granted %v: want once, nothing granted (carol chose once)", d.Scope, d.GrantedPattern)
	}
	notAllowed(t, c, "helm upgrade api ./chart", "a grant nobody but dave chose")
	if rep, _ := admin(t, p, messages.AdminOpListGrants, messages.AdminRequest{SessionID: "s-rt-quorum"}); len(rep.Grants) != 0 {
		t.Errorf("grants after a once/session quorum = %+v, want none", rep.Grants)
	}
}

// Attack: a session grant used from another session of the same agent, and
// an always grant used under agent ids that look like its owner's (glob
// characters, case, a Unicode hyphen, a trailing space) or from another
// agent of the same session's team.
func TestRedTeamGrantsStayWithTheirSessionAndAgent(t *testing.T) {
	p := grantsPlane(t, issue13Policy)
	dev := p.Approver("default")
	ctx := context.Background()
	owner := p.Agent("s-rt-own", "pod-rt-2")

	r := brokertest.Ask(ctx, owner, "rt-npm-1", "bash", brokertest.Bash("npm install"))
	dev.Approve(dev.NextAsk("rt-npm-1"), "alice", messages.ScopeSession)
	brokertest.WantDecision(t, r.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	brokertest.WantDecision(t, request(t, owner, "npm install"), messages.OutcomeAllow, messages.ReasonScopeGrant)

	notAllowed(t, p.Agent("s-rt-other", "pod-rt-2"), "npm install", "pod-rt-2's session grant from its other session")
	notAllowed(t, p.Agent("s-rt-own-2", "pod-rt-2"), "npm install", "a session id with the owner's as prefix")

	r = brokertest.Ask(ctx, owner, "rt-make-1", "bash", brokertest.Bash("make build"))
	dev.Approve(dev.NextAsk("rt-make-1"), "bob", messages.ScopeAlways)
	brokertest.WantDecision(t, r.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	brokertest.WantDecision(t, request(t, p.Agent("s-rt-new", "pod-rt-2"), "make build"), messages.OutcomeAllow, messages.ReasonScopeGrant)
	// Ids with '*', '.', '>' or whitespace are refused at the client and the
	// broker (single subject tokens); these are valid ids.
	for i, agent := range []string{"pod-rt-?", "POD-RT-2", "pod‐rt-2", "pod-rt-", "pod-rt-22", "pod-rt-[2]"} {
		c := p.Agent("s-rt-spoof-"+string(rune('a'+i)), agent)
		notAllowed(t, c, "make build", "pod-rt-2's always grant under agent id "+agent)
	}
}

// Attack: Redis fails while a call that a grant covers is looked up. The
// call must be denied as unavailable, never allowed from a grant the
// broker could not read (redisstore caches decoded entries, never lists).
func TestRedTeamAGrantUnreadableFailsClosed(t *testing.T) {
	p := grantsPlane(t, issue13Policy)
	dev := p.Approver("default")
	ctx := context.Background()
	c := p.Agent("s-rt-down", "pod-rt-3", client.WithAttemptTimeout(3*time.Second))

	r := brokertest.Ask(ctx, c, "rt-down-1", "bash", brokertest.Bash("npm install"))
	dev.Approve(dev.NextAsk("rt-down-1"), "alice", messages.ScopeAlways)
	brokertest.WantDecision(t, r.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	for range 3 { // warm every replica's decoded-entry cache
		brokertest.WantDecision(t, request(t, c, "npm install"), messages.OutcomeAllow, messages.ReasonScopeGrant)
	}
	p.Redis.Stop()
	for range 3 {
		d, err := c.Request(ctx, client.Call{Tool: "bash", Arguments: brokertest.Bash("npm install")})
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			continue // no decision at all is closed too
		}
		if err == nil {
			brokertest.WantDecision(t, d, messages.OutcomeDeny, "unavailable")
		}
	}
}

// Attack: an approver lists or revokes grants of a team they are not a
// member of, by naming the grant's session, its team or its id.
func TestRedTeamAnApproverSeesAndRevokesOnlyTheirTeamsGrants(t *testing.T) {
	p := grantsPlane(t, issue13Policy)
	dev := p.Approver("default")
	ctx := context.Background()
	c := p.Agent("s-rt-admin", "pod-rt-4")

	r := brokertest.Ask(ctx, c, "rt-adm-1", "bash", brokertest.Bash("npm install"))
	dev.Approve(dev.NextAsk("rt-adm-1"), "alice", messages.ScopeSession)
	brokertest.WantDecision(t, r.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	all, code := admin(t, p, messages.AdminOpListGrants, messages.AdminRequest{SessionID: "s-rt-admin"})
	if code != "" || len(all.Grants) != 1 {
		t.Fatalf("list_grants (admin) = %+v, %s", all, code)
	}
	id := all.Grants[0].ID

	for name, req := range map[string]messages.AdminRequest{
		"by its session":       {SessionID: "s-rt-admin", By: "carol"},
		"by its agent":         {AgentID: "pod-rt-4", By: "carol"},
		"by its session+agent": {SessionID: "s-rt-admin", AgentID: "pod-rt-4", By: "erin"},
	} {
		if rep, code := admin(t, p, messages.AdminOpListGrants, req); code != "" || len(rep.Grants) != 0 {
			t.Errorf("list_grants %s by an oncall approver = %+v, %s; want none", name, rep.Grants, code)
		}
	}
	if _, code := admin(t, p, messages.AdminOpListGrants, messages.AdminRequest{Teams: []string{"default"}, By: "carol"}); code != messages.CodeForbidden {
		t.Errorf("list_grants of team default by carol: %q, want forbidden", code)
	}
	for _, by := range []string{"carol", "Alice", "alice ", "*", "mallory"} {
		if _, code := admin(t, p, messages.AdminOpRevokeGrant, messages.AdminRequest{GrantID: id, By: by}); code != messages.CodeForbidden && code != messages.CodeInvalidRequest {
			t.Errorf("revoke_grant by %q: %q, want forbidden (or invalid_request)", by, code)
		}
	}
	brokertest.WantDecision(t, request(t, c, "npm install"), messages.OutcomeAllow, messages.ReasonScopeGrant)
	if _, code := admin(t, p, messages.AdminOpRevokeGrant, messages.AdminRequest{GrantID: id, By: "bob"}); code != "" {
		t.Fatalf("revoke_grant by bob (default): %q", code)
	}
	notAllowed(t, c, "npm install", "a revoked grant")
}

// Attack: self-approval through a grant. bob approves npm install "always"
// for agent pod-rt-5 on alice's request; later bob runs that agent himself
// (requested_by bob). bob may not approve his own requests, so a grant
// standing only on bob must not settle them: the question goes to the
// team. A quorum grant counts the requester out as well.
func TestRedTeamAGrantDoesNotApproveItsApproversOwnRequests(t *testing.T) {
	p := grantsPlane(t, issue13Policy)
	dev := p.Approver("default")
	ctx := context.Background()

	// bob's own request waits while he approves alice's: the cascade of
	// his grant over the agent's pending requests must leave it pending.
	bobs := p.Agent("s-rt-self-b", "pod-rt-5", client.WithRequestedBy("bob"))
	own := brokertest.Ask(ctx, bobs, "rt-self-2", "bash", brokertest.Bash("npm install"))
	q := dev.NextAsk("rt-self-2")
	alices := p.Agent("s-rt-self-a", "pod-rt-5", client.WithRequestedBy("alice"))
	r := brokertest.Ask(ctx, alices, "rt-self-1", "bash", brokertest.Bash("npm install"))
	dev.Approve(dev.NextAsk("rt-self-1"), "bob", messages.ScopeAlways)
	brokertest.WantDecision(t, r.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	stillPending(t, own, "the cascade of bob's grant on bob's own request")
	notAllowed(t, bobs, "npm install", "bob's grant on bob's own request")
	if rep := dev.Approve(q, "bob", messages.ScopeOnce); rep.Applied {
		t.Fatalf("bob approved his own request: %+v", rep)
	}
	dev.Approve(q, "alice", messages.ScopeOnce)
	brokertest.WantDecision(t, own.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	// Anyone else's request is settled by bob's grant.
	carols := p.Agent("s-rt-self-c", "pod-rt-5", client.WithRequestedBy("carol"))
	brokertest.WantDecision(t, request(t, carols, "npm install"), messages.OutcomeAllow, messages.ReasonScopeGrant)

	// A two-approver grant of oncall with erin among its approvers does not
	// settle erin's own quorum question (one independent approver is left).
	store := p.Store()
	g := session.Grant{Grant: messages.Grant{ID: "gr-rt-erin", Scope: messages.ScopeAlwaysPrefix, AgentID: "pod-rt-6", Tool: "bash",
		Patterns: []string{"helm upgrade *"}, Teams: []string{"oncall"}, Approvers: []messages.Approver{{ID: "erin"}, {ID: "dave"}}, RequestID: "old"}}
	if _, _, _, err := store.AddGrant(ctx, g); err != nil {
		t.Fatal(err)
	}
	notAllowed(t, p.Agent("s-rt-self-e", "pod-rt-6", client.WithRequestedBy("erin")), "helm upgrade web ./chart", "erin's grant on erin's quorum question")
	brokertest.WantDecision(t, request(t, p.Agent("s-rt-self-f", "pod-rt-6", client.WithRequestedBy("alice")), "helm upgrade web ./chart"),
		messages.OutcomeAllow, messages.ReasonScopeGrant)
	// Duplicate approver entries count once.
	dup := g
	dup.ID, dup.AgentID, dup.Approvers = "gr-rt-dup", "pod-rt-7", []messages.Approver{{ID: "dave"}, {ID: "dave"}}
	if _, _, _, err := store.AddGrant(ctx, dup); err != nil {
		t.Fatal(err)
	}
	notAllowed(t, p.Agent("s-rt-self-g", "pod-rt-7"), "helm upgrade web ./chart", "a grant naming dave twice")
}

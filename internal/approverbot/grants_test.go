package approverbot

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// TestBotListsAndRevokesGrantsForAnApprover runs the bot's grants side
// against real brokers on a real Redis: a session grant alice made through
// the bot is listed for the members of its team only, revoked by one of
// them only, and the next such call asks again.
func TestBotListsAndRevokesGrantsForAnApprover(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Replicas: 2, Redis: true})
	b, rec := startBot(t, p.NATS.Connect(t), testConfig)
	ctx := context.Background()
	agent := p.Agent("s-grants", "a1")

	first := brokertest.Ask(ctx, agent, "r-npm-1", "bash", brokertest.Bash("npm install left-pad"))
	q := rec.nextAskOf(t, "r-npm-1", func() *brokertest.Pending {
		// A broker on a loaded machine may fail closed before it stores
		// the question (deny unavailable): the agent asks again.
		if d, _ := first.Peek(); d != nil && d.ReasonCode == messages.ReasonUnavailable {
			first = brokertest.Ask(ctx, agent, "r-npm-1", "bash", brokertest.Bash("npm install left-pad"))
		}
		return first
	})
	v := Present(q, Limits{})
	if !v.Session.Offered {
		t.Fatalf("test setup: Session not offered: %+v", q.Offers)
	}
	if rep, err := b.Respond(ctx, Answer{RequestID: "r-npm-1", Approver: "alice", Channel: "test", Choice: ChoiceSession}); err != nil || !rep.Applied {
		t.Fatalf("alice's session approval: %+v, %v", rep, err)
	}
	brokertest.WantDecision(t, first.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)

	// The grant covers the next npm install of the session.
	again := brokertest.Ask(ctx, agent, "r-npm-2", "bash", brokertest.Bash("npm install left-pad"))
	brokertest.WantDecision(t, again.Wait(t), messages.OutcomeAllow, messages.ReasonScopeGrant)

	gs, err := b.Grants(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(gs) != 1 || gs[0].SessionID != "s-grants" || gs[0].RequestID != "r-npm-1" || GrantText(gs[0]) != v.Session.Short()+" "+v.Session.Grantee() {
		t.Fatalf("alice's grants %+v, want the one she made: %s", gs, v.Session.Said())
	}
	id := gs[0].ID

	// dave is a configured approver but no member of team default: he sees
	// none of its grants and may revoke none.
	if gs, err := b.Grants(ctx, "dave"); err == nil && len(gs) != 0 {
		t.Errorf("dave lists %+v", gs)
	}
	if _, err := b.RevokeGrant(ctx, "dave", id); !errors.Is(err, messages.ErrForbidden) {
		t.Errorf("dave's revocation = %v, want forbidden", err)
	}
	// What cannot be right is refused before anything is sent.
	for _, c := range []struct {
		name, approver, id string
		want               error
	}{
		{"an unknown approver", "mallory", id, ErrUnknownApprover},
		{"an empty id", "alice", "", messages.ErrInvalid},
		{"an id with a wildcard", "alice", "gr_>", messages.ErrInvalid},
	} {
		if _, err := b.RevokeGrant(ctx, c.approver, c.id); !errors.Is(err, c.want) {
			t.Errorf("%s: RevokeGrant = %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := b.Grants(ctx, "mallory"); !errors.Is(err, ErrUnknownApprover) {
		t.Errorf("Grants for an unknown approver = %v", err)
	}

	g, err := b.RevokeGrant(ctx, "bob", id)
	if err != nil || g.ID != id {
		t.Fatalf("bob's revocation: %+v, %v", g, err)
	}
	if _, err := b.RevokeGrant(ctx, "alice", id); !errors.Is(err, messages.ErrNotFound) {
		t.Errorf("a second revocation = %v, want not found", err)
	}
	if gs, err := b.Grants(ctx, "alice"); err != nil || len(gs) != 0 {
		t.Errorf("after the revocation alice lists %+v, %v", gs, err)
	}
	// The next such call asks again.
	brokertest.Ask(ctx, agent, "r-npm-3", "bash", brokertest.Bash("npm install left-pad"))
	rec.nextAsk(t, "r-npm-3")
}

func TestBotGrantsWithoutBrokersFailUnconfirmed(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{NoBroker: true})
	b, err := New(mustConfig(t, testConfig), p.NATS.Connect(t), []Channel{newRecorder("rec")}, Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if _, err := b.Grants(ctx, "alice"); !IsUnconfirmed(err) {
		t.Errorf("Grants with no broker = %v, want an unconfirmed failure", err)
	}
	if _, err := b.RevokeGrant(ctx, "alice", "gr_1"); !IsUnconfirmed(err) {
		t.Errorf("RevokeGrant with no broker = %v, want an unconfirmed failure", err)
	}
}

// TestBotListsAndRevokesOnlyTheGrantsOfTheTeamsItShowsAnApprover: carol is
// a member of both of the policy's teams, but this bot lets her answer for
// oncall only (approvers.carol.teams). A grant made for team default is not
// hers to list or revoke here, although the brokers would let her; alice,
// whom the bot lets answer for default, lists and revokes it.
func TestBotListsAndRevokesOnlyTheGrantsOfTheTeamsItShowsAnApprover(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Redis: true})
	b, rec := startBot(t, p.NATS.Connect(t), `
teams: [default, oncall]
approvers:
  alice: {}
  carol: {teams: [oncall]}
im: {}
`)
	ctx := context.Background()
	agent := p.Agent("s-teams", "a1")
	first := brokertest.Ask(ctx, agent, "r-npm-1", "bash", brokertest.Bash("npm install left-pad"))
	rec.nextAsk(t, "r-npm-1")
	if rep, err := b.Respond(ctx, Answer{RequestID: "r-npm-1", Approver: "alice", Channel: "test", Choice: ChoiceSession}); err != nil || !rep.Applied {
		t.Fatalf("alice's session approval: %+v, %v", rep, err)
	}
	brokertest.WantDecision(t, first.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)

	gs, err := b.Grants(ctx, "alice")
	if err != nil || len(gs) != 1 {
		t.Fatalf("alice's grants: %+v, %v; want the one she made", gs, err)
	}
	id := gs[0].ID
	if gs, err := b.Grants(ctx, "carol"); err != nil || len(gs) != 0 {
		t.Errorf("carol lists %+v, %v; want nothing: team default is not hers on this bot", gs, err)
	}
	if _, err := b.RevokeGrant(ctx, "carol", id); !errors.Is(err, messages.ErrNotFound) {
		t.Errorf("carol's revocation = %v, want not found among her teams' grants", err)
	}
	if g, err := b.RevokeGrant(ctx, "alice", id); err != nil || g.ID != id {
		t.Fatalf("alice's revocation: %+v, %v", g, err)
	}
}

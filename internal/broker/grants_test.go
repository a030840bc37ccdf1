package broker_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// issue13Policy is the policy of issue 13's report, plus a grantable
// quorum rule.
const issue13Policy = `
mode: auto-edit
teams:
  default: { members: [alice, bob] }
  oncall:  { members: [carol, dave, erin], approvals_required: 2 }
rules:
  - { rule: "bash(kubectl *)", action: ask, route: oncall }
  - { rule: "@shell(*.env*)", action: ask }
  - { rule: "bash(helm *)", action: ask, route: oncall, grantable: true }
`

// The grant rule's cases that need no transport are tested in
// internal/engine (grants_test.go); these need replicas, Redis or the
// admin subjects.

// grantsPlane is three replicas on a real Redis.
func grantsPlane(t *testing.T, policy string) *brokertest.Plane {
	return brokertest.Start(t, brokertest.Options{Replicas: 3, Redis: true, Policy: policy})
}

// admin sends an admin request and returns its reply, or the error code.
func admin(t *testing.T, p *brokertest.Plane, op string, req messages.AdminRequest) (messages.AdminReply, messages.ErrorCode) {
	t.Helper()
	req.V = messages.Version
	data, _ := json.Marshal(req)
	raw := p.RawRequest(p.Subjects.Admin(op), data)
	if e, ok := messages.IsErrorReply(raw); ok {
		return messages.AdminReply{}, e.Error.Code
	}
	var rep messages.AdminReply
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatalf("%s reply %s: %v", op, raw, err)
	}
	return rep, ""
}

// stillPending fails the test if the request got a decision within a
// moment: a grant must not have settled it.
func stillPending(t *testing.T, req *brokertest.Pending, why string) {
	t.Helper()
	time.Sleep(300 * time.Millisecond)
	if d, err := req.Peek(); d != nil || err != nil {
		t.Fatalf("%s: request %s was decided: %+v, %v", why, req.ID, d, err)
	}
}

func request(t *testing.T, c *client.Client, cmd string) *messages.Decision {
	t.Helper()
	d, err := c.Request(context.Background(), client.Call{Tool: "bash", Arguments: brokertest.Bash(cmd)})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Issue 13, first scenario: alice's session grant of npm install does not
// settle the session's kubectl call, which oncall must approve twice.
func TestASessionGrantDoesNotSettleAnotherTeamsQuorumQuestion(t *testing.T) {
	p := grantsPlane(t, issue13Policy)
	dev, oncall := p.Approver("default"), p.Approver("oncall")
	c := p.Agent("s-issue-1", "pod-1")
	ctx := context.Background()

	// A kubectl call waits for oncall while alice answers npm install: the
	// cascade of her session grant must leave it pending too.
	early := brokertest.Ask(ctx, c, "kube-0", "bash", brokertest.Bash("kubectl get secrets -A"))
	oncall.NextAsk("kube-0")
	npm := brokertest.Ask(ctx, c, "npm-1", "bash", brokertest.Bash("npm install"))
	q := dev.NextAsk("npm-1")
	o := q.Offer(messages.ScopeSession)
	if o == nil || !o.Offered || !slices.Equal(o.Patterns, []string{"npm install"}) {
		t.Fatalf("session offer = %+v, want the pattern npm install", o)
	}
	if rep := dev.Approve(q, "alice", messages.ScopeSession); !rep.Applied {
		t.Fatalf("approve: %+v", rep)
	}
	brokertest.WantDecision(t, npm.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	brokertest.WantDecision(t, request(t, c, "npm install"), messages.OutcomeAllow, messages.ReasonScopeGrant)
	stillPending(t, early, "the cascade of alice's session grant")

	kubectl := brokertest.Ask(ctx, c, "kube-1", "bash", brokertest.Bash("kubectl delete namespace prod"))
	kq := oncall.NextAsk("kube-1")
	if kq.Team != "oncall" || kq.ApprovalsRequired != 2 {
		t.Fatalf("kubectl question = team %s, %d approvals; want oncall, 2", kq.Team, kq.ApprovalsRequired)
	}
	for _, s := range []messages.Scope{messages.ScopeSession, messages.ScopeAlways} {
		if o := kq.Offer(s); o == nil || o.Offered || !strings.Contains(o.WhyNot, "bash(kubectl *) asks every time") {
			t.Errorf("kubectl %s offer = %+v, want refused: the rule asks every time", s, o)
		}
	}
	stillPending(t, kubectl, "alice's session grant")
	oncall.Approve(kq, "carol", messages.ScopeOnce)
	stillPending(t, kubectl, "one approval of two")
	oncall.Approve(kq, "dave", messages.ScopeOnce)
	brokertest.WantDecision(t, kubectl.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
}

// Listing and revoking by id: an approver sees the grants of its teams
// only and may revoke only those; a revoke racing requests that use the
// grant is seen by every request sent after it returned.
func TestListAndRevokeAGrantByIDRacingItsUse(t *testing.T) {
	p := grantsPlane(t, issue13Policy)
	dev := p.Approver("default")
	c := p.Agent("s-revoke", "pod-5")
	ctx := context.Background()

	first := brokertest.Ask(ctx, c, "r-1", "bash", brokertest.Bash("npm install"))
	q := dev.NextAsk("r-1")
	dev.Approve(q, "alice", messages.ScopeAlways)
	brokertest.WantDecision(t, first.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)

	listed, code := admin(t, p, messages.AdminOpListGrants, messages.AdminRequest{By: "bob"})
	if code != "" || len(listed.Grants) != 1 {
		t.Fatalf("list_grants by bob = %+v, %s; want the one grant of his team", listed, code)
	}
	g := listed.Grants[0]
	if g.Scope != messages.ScopeAlwaysPrefix || g.AgentID != "pod-5" || g.RequestID != "r-1" || !slices.Equal(g.Patterns, []string{"npm install"}) ||
		len(g.Approvers) != 1 || g.Approvers[0].ID != "alice" || g.Approvers[0].Channel != "test" || g.ExpiresAt.Sub(g.CreatedAt) != 720*time.Hour {
		t.Errorf("grant = %+v", g)
	}
	if rep, code := admin(t, p, messages.AdminOpListGrants, messages.AdminRequest{By: "carol"}); code != "" || len(rep.Grants) != 0 {
		t.Errorf("list_grants by carol (oncall) = %+v, %s; want none", rep, code)
	}
	if _, code := admin(t, p, messages.AdminOpListGrants, messages.AdminRequest{By: "mallory"}); code != messages.CodeForbidden {
		t.Errorf("list_grants by someone the policy does not know: %q, want forbidden", code)
	}
	if _, code := admin(t, p, messages.AdminOpRevokeGrant, messages.AdminRequest{GrantID: g.ID, By: "carol"}); code != messages.CodeForbidden {
		t.Errorf("revoke_grant by carol (not of the grant's team): %q, want forbidden", code)
	}
	if _, code := admin(t, p, messages.AdminOpRevokeGrant, messages.AdminRequest{GrantID: "gr_nosuchgrant", By: "bob"}); code != messages.CodeNotFound {
		t.Errorf("revoke_grant of an unknown id: %q, want not_found", code)
	}

	// Requests using the grant race its revocation.
	var revoked atomic.Bool
	var allowedAfter atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		agent := p.Agent("s-revoke-"+string(rune('a'+w)), "pod-5")
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				after := revoked.Load()
				try, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
				d, err := agent.Request(try, client.Call{Tool: "bash", Arguments: brokertest.Bash("npm install")})
				cancel()
				if err == nil && d.ReasonCode == messages.ReasonScopeGrant && after {
					allowedAfter.Add(1)
				}
			}
		})
	}
	time.Sleep(200 * time.Millisecond)
	rep, code := admin(t, p, messages.AdminOpRevokeGrant, messages.AdminRequest{GrantID: g.ID, By: "bob"})
	revoked.Store(true)
	time.Sleep(500 * time.Millisecond)
	close(stop)
	wg.Wait()
	if code != "" || rep.Grant == nil || rep.Grant.ID != g.ID {
		t.Fatalf("revoke_grant = %+v, %s", rep, code)
	}
	if n := allowedAfter.Load(); n > 0 {
		t.Errorf("%d requests sent after revoke_grant returned were allowed by the grant", n)
	}
	if _, code := admin(t, p, messages.AdminOpRevokeGrant, messages.AdminRequest{GrantID: g.ID}); code != messages.CodeNotFound {
		t.Errorf("second revoke_grant: %q, want not_found", code)
	}
	if rep, _ := admin(t, p, messages.AdminOpListGrants, messages.AdminRequest{AgentID: "pod-5"}); len(rep.Grants) != 0 {
		t.Errorf("grants after the revoke: %+v", rep.Grants)
	}
	next := brokertest.Ask(ctx, c, "r-2", "bash", brokertest.Bash("npm install"))
	dev.NextAsk("r-2")
	stillPending(t, next, "a revoked grant")
	if v := counter(t, p, "signoff_grants_total", "revoked"); v != 1 {
		t.Errorf("signoff_grants_total{event=revoked} = %v over the replicas, want 1", v)
	}
	if v := counter(t, p, "signoff_grants_total", "created"); v != 1 {
		t.Errorf("signoff_grants_total{event=created} = %v over the replicas, want 1", v)
	}
	if v := counter(t, p, "signoff_grants_total", "used"); v < 1 {
		t.Errorf("signoff_grants_total{event=used} = %v over the replicas, want the racing requests' uses", v)
	}
	events := grantEvents(t, p, "s-revoke", 2)
	if events[g.ID+" created"] != 1 || events[g.ID+" revoked"] != 1 || len(events) != 2 {
		t.Errorf("grant audit records = %v, want one created and one revoked", events)
	}
}

// A grant expires by Redis's clock: the policy's max_age for always
// grants, and the next call asks again.
func TestAGrantExpiresByRedisTime(t *testing.T) {
	p := grantsPlane(t, "grants: { max_age: { always: 2s } }\n"+issue13Policy)
	dev := p.Approver("default")
	c := p.Agent("s-expiry", "pod-6")
	ctx := context.Background()

	first := brokertest.Ask(ctx, c, "e-1", "bash", brokertest.Bash("npm install"))
	dev.Approve(dev.NextAsk("e-1"), "alice", messages.ScopeAlways)
	brokertest.WantDecision(t, first.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	brokertest.WantDecision(t, request(t, c, "npm install"), messages.OutcomeAllow, messages.ReasonScopeGrant)

	rep, _ := admin(t, p, messages.AdminOpListGrants, messages.AdminRequest{AgentID: "pod-6"})
	if len(rep.Grants) != 1 {
		t.Fatalf("grants = %+v", rep.Grants)
	}
	g := rep.Grants[0]
	if got := g.ExpiresAt.Sub(g.CreatedAt); got != 2*time.Second {
		t.Fatalf("expires_at - created_at = %v, want max_age 2s", got)
	}
	store := p.Store()
	for {
		now, err := store.Now(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !now.Before(g.ExpiresAt) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	again := brokertest.Ask(ctx, c, "e-2", "bash", brokertest.Bash("npm install"))
	dev.NextAsk("e-2")
	stillPending(t, again, "an expired grant")
	expired, err := store.ExpireGrants(ctx, []string{"default", "oncall"})
	if err != nil || len(expired) != 1 || expired[0].ID != g.ID {
		t.Errorf("ExpireGrants = %+v, %v; want the expired grant", expired, err)
	}
}

// counter is the value of counter name's series with the given label
// value, summed over the plane's replicas.
func counter(t *testing.T, p *brokertest.Plane, name, label string) float64 {
	t.Helper()
	sum := 0.0
	for _, r := range p.Replicas {
		families, err := r.Metrics.Registry.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range families {
			if f.GetName() != name {
				continue
			}
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetValue() == label {
						sum += m.GetCounter().GetValue()
					}
				}
			}
		}
	}
	return sum
}

// grantEvents counts the grant audit records on a session's audit subject
// by "<grant id> <event>", waiting until there are want of them (or 5 s).
func grantEvents(t *testing.T, p *brokertest.Plane, sess string, want int) map[string]int {
	t.Helper()
	return auditTally(t, p, sess, want, func(data []byte) []string {
		ev, err := messages.Decode[messages.GrantEvent](data, 0)
		if err != nil || ev.Type != "grant_event" {
			return nil // a decision's record
		}
		return []string{ev.Grant.ID + " " + string(ev.Event)}
	})
}

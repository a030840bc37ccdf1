package engine_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// The grant rule as the procedure applies it, moved from internal/broker's
// grants_test.go (which keeps the grant tests that need the transport or
// Redis: issue 13's first scenario across replicas, listing and revoking
// through the admin subjects racing use, expiry by Redis time).

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

// sh is an agent's bash call of command that names no requester.
func sh(sessionID, id, command string) *messages.Request {
	args, _ := json.Marshal(map[string]string{"command": command})
	return call(sessionID, id, "bash", string(args))
}

// lastAsk is the last question the engine published.
func (r *rig) lastAsk(t *testing.T, id string) messages.ApprovalNeeded {
	t.Helper()
	r.rec.mu.Lock()
	defer r.rec.mu.Unlock()
	if n := len(r.rec.asks); n > 0 && r.rec.asks[n-1].Request.RequestID == id {
		return r.rec.asks[n-1]
	}
	t.Fatalf("no question published for %s (asks: %d)", id, len(r.rec.asks))
	return messages.ApprovalNeeded{}
}

func (r *rig) wantDecided(t *testing.T, req *messages.Request, outcome messages.Outcome, code messages.ReasonCode) messages.Decision {
	t.Helper()
	res := r.request(t, req)
	d := res.Receipt().Decision
	if d == nil || d.Outcome != outcome || d.ReasonCode != code {
		t.Fatalf("%s: %+v, want %s %s", req.RequestID, res.Receipt(), outcome, code)
	}
	return *d
}

func (r *rig) addGrant(t *testing.T, g session.Grant) {
	t.Helper()
	if _, _, _, err := r.store.AddGrant(t.Context(), g); err != nil {
		t.Fatal(err)
	}
}

// Issue 13, second scenario: Always is not offered for a call the .env
// rule asked about, an answer "always" is refused, and the next .env read
// still asks.
func TestAnExplicitAskRuleAsksEveryTime(t *testing.T) {
	r := newRig(t, issue13Policy, nil, nil)
	first := sh("s-issue-2", "env-1", "cat .env.production | grep DB_")
	r.request(t, first)
	q := r.lastAsk(t, "env-1")
	if q.Always != nil {
		t.Errorf("always = %+v, want none for old clients either", q.Always)
	}
	for _, s := range []messages.Scope{messages.ScopeSession, messages.ScopeAlways} {
		if o := q.Offer(s); o == nil || o.Offered || !strings.Contains(o.WhyNot, "@shell(*.env*)") {
			t.Errorf("%s offer = %+v, want refused naming the .env rule", s, o)
		}
	}
	for _, s := range []messages.Scope{messages.ScopeAlways, messages.ScopeAlwaysPrefix, messages.ScopeSession} {
		rep := r.respond(t, first, "alice", true, s, "")
		if rep.Applied || !strings.Contains(rep.Reason, "not offered") {
			t.Errorf("approve %s = %+v, want refused: not offered", s, rep)
		}
	}
	if rep := r.respond(t, first, "alice", true, messages.ScopeOnce, ""); !rep.Applied || rep.Decision.ReasonCode != messages.ReasonApproved {
		t.Fatalf("approve once: %+v", rep)
	}
	second := sh("s-issue-2", "env-2", "cat .env.local")
	r.request(t, second)
	r.wantPending(t, second, "the .env rule")
}

// A quorum question is never settled by a grant of fewer approvers (here
// one stored before the team needed two, or a legacy grant), offers its
// standing answers on the condition that every approver chooses them, and
// a grantable: true rule is settled by a grant of as many approvers of its
// team.
func TestAQuorumAskNeedsAGrantOfAsManyApprovers(t *testing.T) {
	r := newRig(t, issue13Policy, nil, nil)
	one := session.Grant{Grant: messages.Grant{ID: "gr-one", Scope: messages.ScopeSession, SessionID: "s-quorum", Tool: "bash",
		Patterns: []string{"helm upgrade *"}, Teams: []string{"oncall"}, Approvers: []messages.Approver{{ID: "carol"}}, RequestID: "old"}}
	r.addGrant(t, one)
	h1 := sh("s-quorum", "helm-1", "helm upgrade web ./chart")
	r.request(t, h1)
	q := r.lastAsk(t, "helm-1")
	// A grant from two approvers of oncall would settle it again, so the
	// standing answers are offered — granted only if both choose them
	// (TestQuorumGrants).
	if o := q.Offer(messages.ScopeSession); o == nil || !o.Offered || !strings.Contains(o.Note, "granted only if all 2 approvers choose Session") {
		t.Fatalf("session offer = %+v, want offered on the condition that both approvers choose it", o)
	}
	r.wantPending(t, h1, "a one-approver grant")
	if rep := r.respond(t, h1, "carol", true, messages.ScopeOnce, ""); !rep.Applied || rep.State != messages.StatePending {
		t.Fatalf("first approval: %+v", rep)
	}
	if rep := r.respond(t, h1, "dave", true, messages.ScopeOnce, ""); !rep.Applied || rep.Decision.ReasonCode != messages.ReasonApproved {
		t.Fatalf("second approval: %+v", rep)
	}

	// A grant of oncall by two approvers settles the next one.
	two := session.Grant{Grant: messages.Grant{ID: "gr-two", Scope: messages.ScopeSession, SessionID: "s-quorum", Tool: "bash",
		Patterns: []string{"helm upgrade *"}, Teams: []string{"oncall"}, Approvers: []messages.Approver{{ID: "carol"}, {ID: "dave"}}, RequestID: "old-0"}}
	r.addGrant(t, two)
	next := r.wantDecided(t, sh("s-quorum", "helm-2", "helm upgrade api ./chart"), messages.OutcomeAllow, messages.ReasonScopeGrant)
	if next.DecidedBy.ID != "gr-two" {
		t.Fatalf("decided_by %+v: want the two-approver grant", next.DecidedBy)
	}

	// A chain asks oncall (the helm rule routes it): every sub-command must
	// be covered by a grant that could settle that question. A default-team
	// grant of npm install cannot; an oncall grant by two approvers can.
	npmDefault := session.Grant{Grant: messages.Grant{ID: "gr-npm-default", Scope: messages.ScopeSession, SessionID: "s-quorum", Tool: "bash",
		Patterns: []string{"npm install"}, Teams: []string{"default"}, Approvers: []messages.Approver{{ID: "alice"}}, RequestID: "old-2"}}
	r.addGrant(t, npmDefault)
	chain := sh("s-quorum", "chain-1", "helm upgrade web ./chart && npm install")
	r.request(t, chain)
	r.wantPending(t, chain, "a chain with one sub-command covered only by another team's grant")
	r.respond(t, chain, "carol", false, "", messages.RejectSoft)
	npmOncall := npmDefault
	npmOncall.ID, npmOncall.Teams = "gr-npm-oncall", []string{"oncall"}
	npmOncall.Approvers = []messages.Approver{{ID: "carol"}, {ID: "erin"}}
	r.addGrant(t, npmOncall)
	d := r.wantDecided(t, sh("s-quorum", "chain-2", "helm upgrade web ./chart && npm install"), messages.OutcomeAllow, messages.ReasonScopeGrant)
	if !slices.Equal(d.GrantedPattern, []string{"helm upgrade *", "npm install"}) || !strings.Contains(d.Reason, "gr-npm-oncall") {
		t.Errorf("chain decision = %+v, want both grants named", d)
	}
}

// Session scope grants the command's patterns by default, the whole shell
// tool with session_grants: tool; a non-shell tool's session grant is the
// tool either way.
func TestSessionGrantsPatternsOrTheTool(t *testing.T) {
	for _, tc := range []struct {
		name, setting string
		lintAllowed   bool
	}{
		{"patterns (default)", "", false},
		{"tool", "session_grants: tool\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, tc.setting+issue13Policy, nil, nil)
			first := sh("s-scope", "b-1", "make build")
			r.request(t, first)
			q := r.lastAsk(t, "b-1")
			o := q.Offer(messages.ScopeSession)
			wantPatterns := []string{"make build"}
			if tc.lintAllowed {
				wantPatterns = nil
			}
			if o == nil || !o.Offered || o.Tool != "bash" || !slices.Equal(o.Patterns, wantPatterns) {
				t.Fatalf("session offer = %+v, want bash %v", o, wantPatterns)
			}
			if rep := r.respond(t, first, "bob", true, messages.ScopeSession, ""); !rep.Applied || rep.Decision.ReasonCode != messages.ReasonApproved {
				t.Fatalf("approve: %+v", rep)
			}
			r.wantDecided(t, sh("s-scope", "b-2", "make build"), messages.OutcomeAllow, messages.ReasonScopeGrant)
			lint := sh("s-scope", "b-lint", "make lint")
			if tc.lintAllowed {
				r.wantDecided(t, lint, messages.OutcomeAllow, messages.ReasonScopeGrant)
			} else {
				r.request(t, lint)
				r.wantPending(t, lint, "a session grant of make build")
			}

			// A non-shell tool: the session grant is the tool.
			mcp := call("s-scope", "m-1", "mcp__jira__create_issue", `{"title":"x"}`)
			r.request(t, mcp)
			mq := r.lastAsk(t, "m-1")
			if o := mq.Offer(messages.ScopeSession); o == nil || !o.Offered || o.Tool != "mcp__jira__create_issue" || len(o.Patterns) != 0 {
				t.Fatalf("non-shell session offer = %+v, want the tool", o)
			}
			if rep := r.respond(t, mcp, "bob", true, messages.ScopeSession, ""); !rep.Applied {
				t.Fatalf("approve: %+v", rep)
			}
			r.wantDecided(t, call("s-scope", "m-2", "mcp__jira__create_issue", `{"title":"y"}`), messages.OutcomeAllow, messages.ReasonScopeGrant)
		})
	}
}

// An Always on `rm -rf build` grants that command exactly: the same
// command runs unasked afterwards, and other deletes — `rm -rf ..`,
// `rm -rf .git`, `rm -rf dist` — still ask (issue 25, item 4). Before,
// the grant was `rm *`.
func TestAlwaysOnRmRfBuildDoesNotGrantOtherDeletes(t *testing.T) {
	r := newRig(t, issue13Policy, nil, nil)
	first := bash("s-rm", "rm-1", "rm -rf build")
	r.request(t, first)
	q := r.lastAsk(t, "rm-1")
	always := q.Offer(messages.ScopeAlwaysPrefix)
	// The command and the write of what it deletes.
	if always == nil || !always.Offered || !slices.Equal(always.Patterns, []string{"rm -rf build", "> build"}) {
		t.Fatalf("always offer = %+v, want the exact command", always)
	}
	// Until when: the policy's default always max_age; a session grant has
	// no limit of its own.
	if always.Expires != "720h0m0s" {
		t.Errorf("always offer expires %q, want 720h0m0s", always.Expires)
	}
	if s := q.Offer(messages.ScopeSession); s == nil || s.Expires != messages.ExpiresNever {
		t.Errorf("session offer = %+v, want expires never", s)
	}
	if rep := r.respond(t, first, "bob", true, messages.ScopeAlwaysPrefix, ""); !rep.Applied || rep.Decision == nil ||
		!slices.Equal(rep.Decision.GrantedPattern, []string{"rm -rf build", "> build"}) {
		t.Fatalf("always approval: %+v", rep)
	}
	// Another session of the same agent: the always grant applies.
	again := r.wantDecided(t, bash("s-rm-2", "rm-2", "rm -rf build"), messages.OutcomeAllow, messages.ReasonScopeGrant)
	if !slices.Equal(again.GrantedPattern, []string{"rm -rf build", "> build"}) {
		t.Errorf("granted pattern %q", again.GrantedPattern)
	}
	for i, cmd := range []string{"rm -rf ..", "rm -rf .git", "rm -rf dist", "rm -rf build src"} {
		req := bash("s-rm-2", fmt.Sprintf("rm-other-%d", i), cmd)
		if d := receiptOf(r.request(t, req)).Decision; d != nil && d.Outcome == messages.OutcomeAllow {
			t.Errorf("%s was allowed (%s) after an Always on rm -rf build", cmd, d.Reason)
		}
	}
	r.wantPending(t, bash("s-rm-2", "rm-other-2", "rm -rf dist"), "rm -rf dist after an Always on rm -rf build")
}

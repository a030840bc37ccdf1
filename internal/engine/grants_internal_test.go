package engine

import (
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
)

// A grant is approved for the question's own team: teams an escalation
// added answer for it, and an answer from one of them must not make the
// grant usable for that team's other questions.
func TestAGrantIsForTheQuestionsTeamNotTheTeamsAnEscalationAdded(t *testing.T) {
	rec := &session.Record{Request: session.Request{Teams: []string{"default", "oncall"}}}
	q := &messages.ApprovalNeeded{Team: "default"}
	if got := grantTeams(rec, q); !slices.Equal(got, []string{"default"}) {
		t.Errorf("grantTeams = %v, want [default]", got)
	}
}

// Offers follow the grant rule: a grantable ask offers both scopes with
// the command's patterns; an explicit ask rule, or a request without an
// agent id for Always, says why not.
func TestOffersFollowTheGrantRule(t *testing.T) {
	pol, err := policy.Parse([]byte(`
mode: always-ask
teams:
  default: { members: [alice, bob] }
rules:
  - { rule: "bash(kubectl *)", action: ask }
`), "offers.yaml")
	if err != nil {
		t.Fatal(err)
	}
	eval := func(cmd string) policy.Decision {
		return pol.Evaluate(policy.Call{Tool: "bash", Arguments: []byte(`{"command":"` + cmd + `"}`), Cwd: "/w"})
	}
	d := eval("npm install")
	o := offersFor(pol, &d, "bash", "pod-1")
	if len(o) != 2 || o[0].Scope != messages.ScopeSession || !o[0].Offered || !slices.Equal(o[0].Patterns, []string{"npm install"}) ||
		o[1].Scope != messages.ScopeAlwaysPrefix || !o[1].Offered || !slices.Equal(o[1].Patterns, []string{"npm install"}) {
		t.Errorf("offers = %+v", o)
	}
	if a := alwaysOf(o); a == nil || a.Scope != messages.ScopeAlwaysPrefix {
		t.Errorf("alwaysOf = %+v, want the always_prefix offer", a)
	}
	if o := offersFor(pol, &d, "bash", ""); o[1].Offered || o[1].WhyNot == "" || !o[0].Offered {
		t.Errorf("offers without an agent id = %+v, want Session only", o)
	}
	d = eval("kubectl get pods")
	for _, o := range offersFor(pol, &d, "bash", "pod-1") {
		if o.Offered || o.WhyNot == "" || len(o.Patterns) != 0 {
			t.Errorf("offer for an explicit ask rule = %+v, want refused with a reason", o)
		}
	}
	if a := alwaysOf(offersFor(pol, &d, "bash", "pod-1")); a != nil {
		t.Errorf("alwaysOf for an explicit ask rule = %+v, want nil", a)
	}
}

// The grant a quorum records: the settling approver's scope when as many
// approvers as needed chose it or a wider one, else session when enough
// chose at least that, else none (once). It names only those approvers.
func TestQuorumScope(t *testing.T) {
	const (
		once    = messages.ScopeOnce
		sess    = messages.ScopeSession
		always  = messages.ScopeAlways
		aprefix = messages.ScopeAlwaysPrefix
	)
	tests := []struct {
		name     string
		scopes   []messages.Scope
		required int
		want     messages.Scope
		behind   []int
	}{
		{"one approver, once", []messages.Scope{once}, 1, once, nil},
		{"one approver, session", []messages.Scope{sess}, 1, sess, []int{0}},
		{"one approver, always_prefix", []messages.Scope{aprefix}, 1, aprefix, []int{0}},
		{"once then session", []messages.Scope{once, sess}, 2, once, nil},
		{"session then once", []messages.Scope{sess, once}, 2, once, nil},
		{"session then session", []messages.Scope{sess, sess}, 2, sess, []int{0, 1}},
		{"always then session", []messages.Scope{always, sess}, 2, sess, []int{0, 1}},
		{"session then always", []messages.Scope{sess, always}, 2, sess, []int{0, 1}},
		{"always_prefix then always", []messages.Scope{aprefix, always}, 2, always, []int{0, 1}},
		{"two of three chose session", []messages.Scope{sess, once, sess}, 3, once, nil},
		{"three chose session or wider", []messages.Scope{always, sess, aprefix}, 3, sess, []int{0, 1, 2}},
		{"no approvals", nil, 2, once, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, behind := quorumScope(tt.scopes, tt.required)
			if got != tt.want || !slices.Equal(behind, tt.behind) {
				t.Errorf("quorumScope(%v, %d) = %s %v, want %s %v", tt.scopes, tt.required, got, behind, tt.want, tt.behind)
			}
		})
	}
}

// Approvals stored before the store kept their scope read as once, but the
// settling one takes the decision's scope: a single-approver approval of
// an older broker keeps its grant, a quorum's earlier votes grant nothing.
func TestApprovalScopesOfARecordWithoutThem(t *testing.T) {
	rec := &session.Record{Approvals: []string{"carol", "dave"},
		Decision: &messages.Decision{Scope: messages.ScopeSession, DecidedBy: messages.Decider{ID: "dave"}}}
	if got := approvalScopes(rec); !slices.Equal(got, []messages.Scope{messages.ScopeOnce, messages.ScopeSession}) {
		t.Errorf("approvalScopes = %v, want [once session]", got)
	}
	rec.ApprovalScopes = []messages.Scope{messages.ScopeSession, messages.ScopeOnce}
	if got := approvalScopes(rec); !slices.Equal(got, []messages.Scope{messages.ScopeSession, messages.ScopeOnce}) {
		t.Errorf("approvalScopes with stored scopes = %v, want them as stored", got)
	}
}

// A standing answer to a command whose program runs code from files (make,
// an interpreter, a test runner) says that it grants whatever those files
// hold when it runs: the agent may rewrite a Makefile without a question
// (red team AT F4). A command whose words are all it does says nothing.
func TestOffersSayWhenTheGrantedCommandRunsFiles(t *testing.T) {
	pol, err := policy.Parse([]byte(`
mode: always-ask
teams:
  default: { members: [alice, bob] }
`), "runs.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ cmd, want string }{
		{"make build", "make does what files say"},
		{"python3 build.py", "python3 does what files say"},
		{"make build && pytest -q", "make and pytest do what files say"},
		// A sub-command the table does not know every effect of (AU F8).
		{"npm test", "npm does what files say"},
		{"cargo build", "cargo does what files say"},
		{"terraform apply", "terraform does what files say"},
		// A verb that runs the repository's hooks (AV F9).
		{"git commit -m wip", "git does what files say"},
		{"git log -5", ""},
		{"ls -la", ""},
		{"rm -rf build", ""},
	} {
		d := pol.Evaluate(policy.Call{Tool: "bash", Arguments: []byte(`{"command":"` + c.cmd + `"}`), Cwd: "/w"})
		for _, o := range offersFor(pol, &d, "bash", "pod-1") {
			if !o.Offered {
				t.Errorf("%s: %s not offered: %s", c.cmd, o.Scope, o.WhyNot)
				continue
			}
			if c.want == "" && o.Note != "" || c.want != "" && !strings.HasPrefix(o.Note, c.want) {
				t.Errorf("%s: %s note %q, want %q", c.cmd, o.Scope, o.Note, c.want)
			}
		}
	}
}

package session_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

func validRequest() session.Request {
	return session.Request{
		ID: "r1", SessionID: "s1", AgentID: "a1", Tool: "bash",
		Teams: []string{"ops"}, ApprovalsRequired: 1, TTL: time.Minute,
	}
}

func TestRequestValidate(t *testing.T) {
	tests := []struct {
		name      string
		change    func(*session.Request)
		wantField string // empty: valid
	}{
		{"a complete request is valid", func(*session.Request) {}, ""},
		{"RequestedBy, Tool and Question are optional", func(r *session.Request) { r.RequestedBy, r.Tool, r.Question = "", "", messages.ApprovalNeeded{} }, ""},
		{"an empty id is named", func(r *session.Request) { r.ID = "" }, "Request.ID"},
		{"an empty session id is named", func(r *session.Request) { r.SessionID = "" }, "Request.SessionID"},
		{"an empty agent id is named", func(r *session.Request) { r.AgentID = "" }, "Request.AgentID"},
		{"no teams is named", func(r *session.Request) { r.Teams = nil }, "Request.Teams"},
		{"an empty team is named with its index", func(r *session.Request) { r.Teams = []string{"ops", ""} }, "Request.Teams[1]"},
		{"zero approvals required is named", func(r *session.Request) { r.ApprovalsRequired = 0 }, "Request.ApprovalsRequired"},
		{"a zero TTL is named", func(r *session.Request) { r.TTL = 0 }, "Request.TTL"},
		{"a negative TTL is named", func(r *session.Request) { r.TTL = -time.Second }, "Request.TTL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := validRequest()
			tc.change(&r)
			checkInvalid(t, r.Validate(), tc.wantField)
		})
	}
}

func TestGrantValidate(t *testing.T) {
	grant := func(scope messages.Scope, sess, agent, tool string, f func(*session.Grant)) session.Grant {
		g := session.Grant{Grant: messages.Grant{ID: "g1", Scope: scope, SessionID: sess, AgentID: agent, Tool: tool, Teams: []string{"default"}}}
		if f != nil {
			f(&g)
		}
		return g
	}
	tests := []struct {
		name      string
		g         session.Grant
		wantField string
	}{
		{"a session grant of a tool is valid", grant(messages.ScopeSession, "s", "", "write", nil), ""},
		{"a session grant of patterns is valid", grant(messages.ScopeSession, "s", "", "bash", func(g *session.Grant) { g.Patterns = []string{"ls *"} }), ""},
		{"an always grant of a tool is valid", grant(messages.ScopeAlways, "", "a", "write", nil), ""},
		{"an always_prefix grant of a pattern is valid", grant(messages.ScopeAlwaysPrefix, "", "a", "bash", func(g *session.Grant) { g.Patterns = []string{"git push *"} }), ""},
		{"a grant without an id is named", grant(messages.ScopeSession, "s", "", "write", func(g *session.Grant) { g.ID = "" }), "Grant.ID"},
		{"scope once is named", grant(messages.ScopeOnce, "s", "", "write", nil), "Grant.Scope"},
		{"a session grant without a session is named", grant(messages.ScopeSession, "", "a", "write", nil), "Grant.SessionID"},
		{"an always grant without an agent is named", grant(messages.ScopeAlways, "s", "", "write", nil), "Grant.AgentID"},
		{"a grant without a tool is named", grant(messages.ScopeAlways, "", "a", "", nil), "Grant.Tool"},
		{"a grant without teams is named", grant(messages.ScopeAlways, "", "a", "write", func(g *session.Grant) { g.Teams = nil }), "Grant.Teams"},
		{"an empty pattern is named", grant(messages.ScopeAlways, "", "a", "bash", func(g *session.Grant) { g.Patterns = []string{""} }), "Grant.Patterns[0]"},
		{"a negative max age is named", grant(messages.ScopeAlways, "", "a", "write", func(g *session.Grant) { g.MaxAge = -1 }), "Grant.MaxAge"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkInvalid(t, tc.g.Validate(), tc.wantField) })
	}
	if err := (session.GrantQuery{}).Validate(); err == nil {
		t.Error("a grant query selecting nothing is valid")
	}
	q := session.GrantQuery{Teams: []string{"oncall"}}
	if g := grant(messages.ScopeSession, "s", "", "write", nil); q.Selects(&g) {
		t.Error("a default-team grant passes an oncall filter")
	}
}

func TestSmallChecks(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		wantField string
	}{
		{"a vote with an approver is valid", session.Vote{ApproverID: "ann"}.Validate(), ""},
		{"a vote without an approver is named", session.Vote{}.Validate(), "Vote.ApproverID"},
		{"a deny may carry a stop", session.Vote{ApproverID: "ann", Stop: "ann rejected bash"}.Validate(), ""},
		{"an approval that would stop the session is named", session.Vote{ApproverID: "ann", Approve: true, Stop: "x"}.Validate(), "Vote.Stop"},
		{"a lookup with only a session is valid", session.LookupQuery{SessionID: "s"}.Validate(), ""},
		{"a lookup without a session is named", session.LookupQuery{RequestID: "r"}.Validate(), "LookupQuery.SessionID"},
		{"a key with both ids is valid", session.CheckKey("s", "r"), ""},
		{"a key without a session is named", session.CheckKey("", "r"), "session id"},
		{"a key without a request is named", session.CheckKey("s", ""), "request id"},
		{"an empty session is named", session.CheckSession(""), "session id"},
		{"a claim limit of 1 is valid", session.CheckClaimLimit(1), ""},
		{"a claim limit of 0 is named", session.CheckClaimLimit(0), "claim limit"},
		{"approved is a settle state", session.CheckSettleState(messages.StateApproved), ""},
		{"rejected is a settle state", session.CheckSettleState(messages.StateRejected), ""},
		{"cancelled is a settle state", session.CheckSettleState(messages.StateCancelled), ""},
		{"expired is reserved to the expiry path", session.CheckSettleState(messages.StateExpired), "settle state"},
		{"pending is not a settle state", session.CheckSettleState(messages.StatePending), "settle state"},
		{"decided is not a settle state", session.CheckSettleState(messages.StateDecided), "settle state"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { checkInvalid(t, tc.err, tc.wantField) })
	}
}

func checkInvalid(t *testing.T, err error, field string) {
	t.Helper()
	if field == "" {
		if err != nil {
			t.Fatalf("error = %v, want nil", err)
		}
		return
	}
	if !errors.Is(err, session.ErrInvalid) {
		t.Fatalf("error = %v, want ErrInvalid", err)
	}
	if !strings.Contains(err.Error(), field) {
		t.Errorf("error %q does not name %s", err, field)
	}
}

package messages

import (
	"errors"
	"testing"
)

func TestSelectorMatchesEveryFieldItSets(t *testing.T) {
	tests := []struct {
		name             string
		sel              Selector
		agent, typ, sess string
		want             bool
	}{
		{"all covers any agent", Selector{All: true}, "a9", "", "s", true},
		{"an agent glob covers a matching id", Selector{Agent: "a2*"}, "a21", "", "s", true},
		{"an agent glob does not cover another id", Selector{Agent: "a2"}, "a3", "", "s", false},
		{"an agent type covers only that type", Selector{AgentType: "coder"}, "a1", "review", "s", false},
		{"a session covers only that session", Selector{Session: "s1"}, "a1", "", "s1", true},
		{"both fields must match", Selector{Agent: "a*", AgentType: "coder"}, "a1", "review", "s", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.sel.Matches(tc.agent, tc.typ, tc.sess); got != tc.want {
				t.Fatalf("Matches(%q, %q, %q) = %v, want %v", tc.agent, tc.typ, tc.sess, got, tc.want)
			}
		})
	}
}

func TestStopRequestsAreValidatedPerOp(t *testing.T) {
	tests := []struct {
		name    string
		op      string
		req     AdminRequest
		wantErr bool
	}{
		{"stop needs a selector", AdminOpStop, AdminRequest{V: 1}, true},
		{"stop with an empty selector is refused", AdminOpStop, AdminRequest{V: 1, Selector: &Selector{}}, true},
		{"stop with all and an agent is refused", AdminOpStop, AdminRequest{V: 1, Selector: &Selector{All: true, Agent: "a"}}, true},
		{"stop with a malformed glob is refused", AdminOpStop, AdminRequest{V: 1, Selector: &Selector{Agent: "a["}}, true},
		{"stop with a session that is not a token is refused", AdminOpStop, AdminRequest{V: 1, Selector: &Selector{Session: "a.b"}}, true},
		{"stop with a glob and a reason is valid", AdminOpStop, AdminRequest{V: 1, Selector: &Selector{Agent: "a*"}, Reason: "incident 12"}, false},
		{"resume does not take a session_id field", AdminOpResume, AdminRequest{V: 1, SessionID: "s", Selector: &Selector{All: true}}, true},
		{"set_mode does not take a selector", AdminOpSetMode, AdminRequest{V: 1, SessionID: "s", Selector: &Selector{All: true}}, true},
		{"list_stops takes no fields", AdminOpListStops, AdminRequest{V: 1, Reason: "x"}, true},
		{"list_pending filters by team", AdminOpListPending, AdminRequest{V: 1, Teams: []string{"oncall"}}, false},
		{"policy_version takes no fields", AdminOpPolicyVersion, AdminRequest{V: 1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.req.ValidateOp(tc.op)
			if (err != nil) != tc.wantErr {
				t.Fatalf("ValidateOp(%s) = %v, want error %v", tc.op, err, tc.wantErr)
			}
			var fe *FieldError
			if err != nil && !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FieldError", err)
			}
		})
	}
}

func TestSelectorKeyIsTheSameForTheSameSelector(t *testing.T) {
	a := Selector{Agent: "a2", AgentType: "coder"}
	b := Selector{AgentType: "coder", Agent: "a2"}
	if a.Key() != b.Key() || a.Key() != "agent=a2,agent_type=coder" {
		t.Fatalf("keys %q and %q", a.Key(), b.Key())
	}
	if (&Selector{All: true}).Key() != "all" {
		t.Fatal("all's key is not all")
	}
}

func TestParseGateNeverFailsAndNamesWhatItCannotRead(t *testing.T) {
	tests := []struct{ in, kind, version string }{
		{"claude-code-hook/v1.2.3", GateClaudeCode, "v1.2.3"},
		{"sdk", GateSDK, ""},
		{"", "unknown", ""},
		{"/v1", "invalid", ""},
		{"bad\x00gate/1", "invalid", ""},
	}
	for _, tc := range tests {
		k, v := ParseGate(tc.in)
		if k != tc.kind || v != tc.version {
			t.Errorf("ParseGate(%q) = %q, %q; want %q, %q", tc.in, k, v, tc.kind, tc.version)
		}
	}
}

// An agent id is one name: a fleet stop's glob covers ids with '/' as it
// covers any other character, and agent types compare without case, as
// the policy compares them (red team: `stop --agent '*'` missed ci/runner).
func TestSelectorGlobsCoverEveryAgentIDAndTypesIgnoreCase(t *testing.T) {
	cases := []struct {
		sel              Selector
		agent, agentType string
		want             bool
	}{
		{Selector{Agent: "*"}, "ci/runner", "", true},
		{Selector{Agent: "ci*"}, "ci/runner/7", "", true},
		{Selector{Agent: "ci-*"}, "ci/runner", "", false},
		{Selector{Agent: "ci/r?nner"}, "ci/runner", "", true},
		{Selector{Agent: `ci\/runner`}, "ci/runner", "", true},
		{Selector{AgentType: "Coder"}, "a1", "coder", true},
		{Selector{AgentType: "coder"}, "a1", "deployer", false},
	}
	for _, c := range cases {
		if err := c.sel.Validate(); err != nil {
			t.Fatalf("%+v: %v", c.sel, err)
		}
		if got := c.sel.Matches(c.agent, c.agentType, "s1"); got != c.want {
			t.Errorf("%+v matches agent %q type %q = %v, want %v", c.sel, c.agent, c.agentType, got, c.want)
		}
	}
}

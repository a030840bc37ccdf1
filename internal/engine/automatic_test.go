package engine_test

import (
	"encoding/json"
	"testing"

	"github.com/signoff-dev/signoff/internal/engine"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
)

// Automatic is the one rule of an automatic decision: the order of its
// inputs (stop signal, then the policy's allow or deny, then grants that
// could have settled the ask) is what both the request path and the
// cascade rely on.
func TestAutomatic(t *testing.T) {
	pol, err := policy.Parse([]byte(testPolicy), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	eval := func(command string) policy.Decision {
		args, _ := json.Marshal(map[string]string{"command": command})
		return pol.Evaluate(policy.Call{Tool: "bash", Arguments: args})
	}
	byBob := session.Grant{Grant: messages.Grant{ID: "gr-1", Scope: messages.ScopeSession, Tool: "bash", Patterns: []string{"make build"},
		Teams: []string{"default"}, Approvers: []messages.Approver{{ID: "bob"}}, SessionID: "s-1"}}
	byAlice := byBob
	byAlice.Approvers = []messages.Approver{{ID: "alice"}}
	// A session grant names the agent whose call was approved: another
	// agent that says the same session does not get it (red team AP F2).
	forPod1, forPod2 := byBob, byBob
	forPod1.AgentID, forPod2.AgentID = "pod-1", "pod-2"
	tests := []struct {
		name        string
		command     string
		requestedBy string
		look        session.Lookup
		want        messages.ReasonCode
	}{
		{"a stop denies what the policy allows", "ls", "alice", session.Lookup{Stopped: true}, messages.ReasonHardStop},
		{"a stop denies what a grant would allow", "make build", "alice", session.Lookup{Stopped: true, Grants: []session.Grant{byBob}}, messages.ReasonHardStop},
		{"the policy's allow stands", "ls", "alice", session.Lookup{}, messages.ReasonPolicyAllow},
		{"the policy's deny stands against a grant", "rm -rf /etc", "alice",
			session.Lookup{Grants: []session.Grant{{Grant: messages.Grant{ID: "gr-2", Scope: messages.ScopeSession, Tool: "bash", Teams: []string{"default"},
				Approvers: []messages.Approver{{ID: "bob"}}}}}}, messages.ReasonPolicyDeny},
		{"an ask without grants asks", "make build", "alice", session.Lookup{}, ""},
		{"an ask a grant covers is allowed by it", "make build", "alice", session.Lookup{Grants: []session.Grant{byBob}}, messages.ReasonScopeGrant},
		{"a grant its own requester approved does not count", "make build", "alice", session.Lookup{Grants: []session.Grant{byAlice}}, ""},
		{"a grant of another command does not count", "make deploy", "alice", session.Lookup{Grants: []session.Grant{byBob}}, ""},
		{"a session grant for this agent counts", "make build", "alice", session.Lookup{Grants: []session.Grant{forPod1}}, messages.ReasonScopeGrant},
		{"a session grant for another agent of the session does not count", "make build", "alice", session.Lookup{Grants: []session.Grant{forPod2}}, ""},
		{"a grant from a team that could not settle the ask does not count", "kubectl apply -f x", "alice",
			session.Lookup{Grants: []session.Grant{{Grant: messages.Grant{ID: "gr-3", Scope: messages.ScopeSession, Tool: "bash",
				Teams: []string{"default"}, Approvers: []messages.Approver{{ID: "bob"}}}}}}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := eval(tc.command)
			v := engine.Automatic(pol, &d, "bash", tc.requestedBy, "pod-1", &tc.look)
			if v.Code != tc.want {
				t.Fatalf("Automatic = %q, want %q (policy said %s: %s)", v.Code, tc.want, d.Action, d.Reason)
			}
			if (v.Code == messages.ReasonScopeGrant) != (len(v.Grants) > 0) {
				t.Errorf("grants %+v with code %q", v.Grants, v.Code)
			}
			wantAllow := tc.want == messages.ReasonPolicyAllow || tc.want == messages.ReasonScopeGrant
			if v.Allows() != wantAllow {
				t.Errorf("Allows() = %v, want %v", v.Allows(), wantAllow)
			}
		})
	}
}

package storetest

import (
	"cmp"
	"slices"
	"testing"

	"github.com/signoff-dev/signoff/pkg/session"
)

// grantTests cover AddGrant, Lookup of grants and RevokeGrants.
func (r *runner) grantTests() []test {
	return []test{
		{"Lookup returns the session's tools and the agent's grants and nobody else's", testGrants},
		{"Adding an existing grant is a no-op", testGrantTwice},
		{"RevokeGrants removes session and agent grants and counts them", testRevoke},
		{"AddGrant rejects malformed grants", testGrantInvalid},
		{"RevokeGrants with neither a session nor an agent is invalid", testRevokeInvalid},
	}
}

func (e *env) lookupGrants(t *testing.T, sess, agent string) ([]string, []session.Grant) {
	t.Helper()
	l, err := e.s.Lookup(e.ctx, session.LookupQuery{SessionID: sess, AgentID: agent})
	if err != nil {
		t.Fatalf("Lookup(%s, %s): %v", sess, agent, err)
	}
	tools := sorted(l.SessionTools)
	grants := slices.Clone(l.AgentGrants)
	slices.SortFunc(grants, func(a, b session.Grant) int {
		return cmp.Or(cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Pattern, b.Pattern))
	})
	return tools, grants
}

func (e *env) addGrants(t *testing.T, gs ...session.Grant) {
	t.Helper()
	for _, g := range gs {
		if err := e.s.AddGrant(e.ctx, g); err != nil {
			t.Fatalf("AddGrant(%+v): %v", g, err)
		}
	}
}

func testGrants(t *testing.T, e *env) {
	sess, otherSess := e.name("sess"), e.name("sess")
	agent, otherAgent := e.name("agent"), e.name("agent")
	agentGrants := []session.Grant{
		{Kind: session.GrantAgent, AgentID: agent, Tool: "bash", Pattern: "git push *"},
		{Kind: session.GrantAgent, AgentID: agent, Tool: "bash", Pattern: "npm run build"},
		{Kind: session.GrantAgent, AgentID: agent, Tool: "mcp__github__create_issue"},
	}
	e.addGrants(t,
		session.Grant{Kind: session.GrantSession, SessionID: sess, Tool: "write"},
		session.Grant{Kind: session.GrantSession, SessionID: sess, Tool: "edit"},
		session.Grant{Kind: session.GrantSession, SessionID: otherSess, Tool: "bash"},
		session.Grant{Kind: session.GrantAgent, AgentID: otherAgent, Tool: "write"},
	)
	e.addGrants(t, agentGrants...)

	tools, grants := e.lookupGrants(t, sess, agent)
	if !slices.Equal(tools, []string{"edit", "write"}) {
		t.Errorf("SessionTools = %v, want [edit write]", tools)
	}
	if !slices.Equal(grants, agentGrants) {
		t.Errorf("AgentGrants = %+v, want %+v", grants, agentGrants)
	}
	if tools, grants := e.lookupGrants(t, e.name("sess"), ""); len(tools) != 0 || len(grants) != 0 {
		t.Errorf("Lookup of a fresh session without an agent = %v, %v; want nothing", tools, grants)
	}
	if tools, _ := e.lookupGrants(t, otherSess, ""); !slices.Equal(tools, []string{"bash"}) {
		t.Errorf("other session's tools = %v, want [bash]", tools)
	}
}

func testGrantTwice(t *testing.T, e *env) {
	sess, agent := e.name("sess"), e.name("agent")
	sg := session.Grant{Kind: session.GrantSession, SessionID: sess, Tool: "write"}
	ag := session.Grant{Kind: session.GrantAgent, AgentID: agent, Tool: "bash", Pattern: "ls *"}
	e.addGrants(t, sg, ag, sg, ag)
	tools, grants := e.lookupGrants(t, sess, agent)
	if !slices.Equal(tools, []string{"write"}) || !slices.Equal(grants, []session.Grant{ag}) {
		t.Errorf("Lookup = %v, %+v; want each grant once", tools, grants)
	}
	if n, err := e.s.RevokeGrants(e.ctx, sess, agent); err != nil || n != 2 {
		t.Errorf("RevokeGrants = %d, %v; want 2", n, err)
	}
}

func testRevoke(t *testing.T, e *env) {
	sess, agent := e.name("sess"), e.name("agent")
	otherSess, otherAgent := e.name("sess"), e.name("agent")
	e.addGrants(t,
		session.Grant{Kind: session.GrantSession, SessionID: sess, Tool: "write"},
		session.Grant{Kind: session.GrantSession, SessionID: sess, Tool: "edit"},
		session.Grant{Kind: session.GrantSession, SessionID: otherSess, Tool: "edit"},
		session.Grant{Kind: session.GrantAgent, AgentID: agent, Tool: "bash", Pattern: "git push *"},
		session.Grant{Kind: session.GrantAgent, AgentID: agent, Tool: "write"},
		session.Grant{Kind: session.GrantAgent, AgentID: agent, Tool: "edit"},
		session.Grant{Kind: session.GrantAgent, AgentID: otherAgent, Tool: "edit"},
	)
	if n, err := e.s.RevokeGrants(e.ctx, sess, ""); err != nil || n != 2 {
		t.Fatalf("RevokeGrants(session) = %d, %v; want 2", n, err)
	}
	tools, grants := e.lookupGrants(t, sess, agent)
	if len(tools) != 0 || len(grants) != 3 {
		t.Errorf("after revoking the session: tools %v, agent grants %+v; want none and 3", tools, grants)
	}
	if n, err := e.s.RevokeGrants(e.ctx, "", agent); err != nil || n != 3 {
		t.Fatalf("RevokeGrants(agent) = %d, %v; want 3", n, err)
	}
	if tools, grants := e.lookupGrants(t, sess, agent); len(tools) != 0 || len(grants) != 0 {
		t.Errorf("after revoking both: %v, %+v; want nothing", tools, grants)
	}
	if n, err := e.s.RevokeGrants(e.ctx, sess, agent); err != nil || n != 0 {
		t.Errorf("second RevokeGrants = %d, %v; want 0", n, err)
	}
	if tools, grants := e.lookupGrants(t, otherSess, otherAgent); len(tools) != 1 || len(grants) != 1 {
		t.Errorf("others' grants after revoking = %v, %+v; want untouched", tools, grants)
	}
}

func testGrantInvalid(t *testing.T, e *env) {
	sess, agent := e.name("sess"), e.name("agent")
	tests := []struct {
		name string
		g    session.Grant
	}{
		{"no kind", session.Grant{SessionID: sess, Tool: "write"}},
		{"unknown kind", session.Grant{Kind: "turn", SessionID: sess, Tool: "write"}},
		{"session grant without a session", session.Grant{Kind: session.GrantSession, AgentID: agent, Tool: "write"}},
		{"session grant without a tool", session.Grant{Kind: session.GrantSession, SessionID: sess}},
		{"session grant with a pattern", session.Grant{Kind: session.GrantSession, SessionID: sess, Tool: "bash", Pattern: "ls *"}},
		{"agent grant without an agent", session.Grant{Kind: session.GrantAgent, SessionID: sess, Tool: "write"}},
		{"agent grant without a tool", session.Grant{Kind: session.GrantAgent, AgentID: agent, Pattern: "ls *"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantErr(t, "AddGrant", e.s.AddGrant(e.ctx, tc.g), session.ErrInvalid)
		})
	}
	if tools, grants := e.lookupGrants(t, sess, agent); len(tools) != 0 || len(grants) != 0 {
		t.Errorf("invalid grants were stored: %v, %+v", tools, grants)
	}
}

func testRevokeInvalid(t *testing.T, e *env) {
	_, err := e.s.RevokeGrants(e.ctx, "", "")
	wantErr(t, "RevokeGrants", err, session.ErrInvalid)
}

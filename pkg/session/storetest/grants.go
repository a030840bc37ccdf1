package storetest

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// grantTests cover AddGrant, Lookup of grants, ListGrants, RevokeGrant,
// RevokeGrants and ExpireGrants.
func (r *runner) grantTests() []test {
	return []test{
		{"Lookup returns the session's and the agent's grants and nobody else's", testGrants},
		{"Adding a grant with a stored id returns the stored one", testGrantTwice},
		{"ListGrants selects by session, agent and teams", testListGrants},
		{"RevokeGrant removes one grant by id", testRevokeOne},
		{"RevokeGrants removes session and agent grants and returns them", testRevoke},
		{"AddGrant rejects malformed grants", testGrantInvalid},
		{"RevokeGrants with neither a session nor an agent is invalid", testRevokeInvalid},
		{"A revoke racing lookups is seen by every lookup that starts after it", testRevokeRace},
		{"Grants expire by the store's clock, each reported expired once", r.testGrantExpiry},
		{"A grant revoked or expired is never stored again under its id", testGrantRemovedStaysRemoved},
		{"Lookup reads the tool's own grants and those of the call's programs", testGrantIndexReads},
		{"An indexed grant revoked or expired is gone from every read", r.testGrantIndexRemoval},
		{"ListGrants returns the grants of every bucket by creation time then id", testGrantIndexListing},
	}
}

// sessionGrant and agentGrant build grants to add; ids are unique per test.
func (e *env) sessionGrant(sess, tool string, patterns ...string) session.Grant {
	return session.Grant{Grant: messages.Grant{ID: e.name("gr"), Scope: messages.ScopeSession, SessionID: sess, Tool: tool,
		Patterns: patterns, Teams: []string{"default"}, Approvers: []messages.Approver{{ID: "alice", Channel: "web"}}, RequestID: e.name("req")},
		Origin: sess}
}

func (e *env) agentGrant(agent, tool string, patterns ...string) session.Grant {
	scope := messages.ScopeAlways
	if len(patterns) > 0 {
		scope = messages.ScopeAlwaysPrefix
	}
	return session.Grant{Grant: messages.Grant{ID: e.name("gr"), Scope: scope, AgentID: agent, Tool: tool, Patterns: patterns,
		Teams: []string{"oncall"}, Approvers: []messages.Approver{{ID: "carol"}, {ID: "dave", Channel: "slack"}}, RequestID: e.name("req")},
		Origin: e.name("sess")}
}

func (e *env) lookupGrants(t *testing.T, sess, agent string) []session.Grant {
	t.Helper()
	l, err := e.requests.Lookup(e.ctx, session.LookupQuery{SessionID: sess, AgentID: agent})
	if err != nil {
		t.Fatalf("Lookup(%s, %s): %v", sess, agent, err)
	}
	return l.Grants
}

// addGrants adds gs and returns them as stored.
func (e *env) addGrants(t *testing.T, gs ...session.Grant) []session.Grant {
	t.Helper()
	out := make([]session.Grant, len(gs))
	for i, g := range gs {
		stored, created, _, err := e.grants.AddGrant(e.ctx, g)
		if err != nil || !created {
			t.Fatalf("AddGrant(%+v) = created %v, %v", g, created, err)
		}
		out[i] = stored
	}
	return out
}

// grantIDs returns the ids of gs, in order.
func grantIDs(gs []session.Grant) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.ID
	}
	return out
}

// listGrantIDs returns the ids of the grants ListGrants lists for q, in
// its order; it fails the test when ListGrants fails.
func (e *env) listGrantIDs(t *testing.T, q session.GrantQuery) []string {
	t.Helper()
	gs, err := e.grants.ListGrants(e.ctx, q)
	return mustGrantIDs(t, "ListGrants", q, gs, err)
}

// mustGrantIDs returns the ids of gs, in order, which call listed for
// query q; it fails the test when the call failed (err).
func mustGrantIDs(t *testing.T, call string, q any, gs []session.Grant, err error) []string {
	t.Helper()
	if err != nil {
		t.Fatalf("%s(%+v): %v", call, q, err)
	}
	return grantIDs(gs)
}

// sameGrant reports whether got is want as stored: every wire field, the
// origin, and the store's times.
func sameGrant(t *testing.T, what string, got, want session.Grant) {
	t.Helper()
	if got.ID != want.ID || got.Scope != want.Scope || got.SessionID != want.SessionID || got.AgentID != want.AgentID ||
		got.Tool != want.Tool || !slices.Equal(got.Patterns, want.Patterns) || !slices.Equal(got.Teams, want.Teams) ||
		!slices.Equal(got.Approvers, want.Approvers) || got.RequestID != want.RequestID || got.Origin != want.Origin ||
		!got.CreatedAt.Equal(want.CreatedAt) || !got.ExpiresAt.Equal(want.ExpiresAt) || got.Legacy != want.Legacy || got.MaxAge != 0 {
		t.Errorf("%s = %+v, want %+v", what, got, want)
	}
}

func testGrants(t *testing.T, e *env) {
	sess, otherSess := e.name("sess"), e.name("sess")
	agent, otherAgent := e.name("agent"), e.name("agent")
	before := e.now(t)
	want := e.addGrants(t,
		e.sessionGrant(sess, "write"),
		e.sessionGrant(sess, "bash", "npm install *", "npm run build"),
	)
	e.addGrants(t, e.sessionGrant(otherSess, "bash"), e.agentGrant(otherAgent, "write"))
	aged := e.agentGrant(agent, "bash", "git push *")
	aged.MaxAge = time.Hour
	want = append(want, e.addGrants(t, aged, e.agentGrant(agent, "mcp__github__create_issue"))...)
	after := e.now(t)

	got := e.lookupGrants(t, sess, agent)
	if !slices.Equal(grantIDs(got), grantIDs(want)) {
		t.Fatalf("Lookup grants = %v, want %v (session's, then agent's, in creation order)", grantIDs(got), grantIDs(want))
	}
	for i := range got {
		sameGrant(t, "grant "+got[i].ID, got[i], want[i])
		between(t, "CreatedAt", got[i].CreatedAt, before, after)
	}
	if want[2].ExpiresAt.Sub(want[2].CreatedAt) != time.Hour {
		t.Errorf("ExpiresAt - CreatedAt = %v, want the MaxAge 1h", want[2].ExpiresAt.Sub(want[2].CreatedAt))
	}
	if !want[0].ExpiresAt.IsZero() {
		t.Errorf("a grant without MaxAge expires at %v, want never", want[0].ExpiresAt)
	}
	if gs := e.lookupGrants(t, e.name("sess"), ""); len(gs) != 0 {
		t.Errorf("Lookup of a fresh session without an agent = %+v; want nothing", gs)
	}
	if l, err := e.requests.Lookup(e.ctx, session.LookupQuery{SessionID: sess, AgentID: agent, SkipGrants: true}); err != nil || len(l.Grants) != 0 {
		t.Errorf("Lookup with SkipGrants = %+v, %v; want no grants", l.Grants, err)
	}
}

func testGrantTwice(t *testing.T, e *env) {
	sess, agent := e.name("sess"), e.name("agent")
	sg, ag := e.sessionGrant(sess, "write"), e.agentGrant(agent, "bash", "ls *")
	stored := e.addGrants(t, sg, ag)
	for i, g := range []session.Grant{sg, ag} {
		again := g
		again.Tool = "edit" // a retry carries the same grant; the stored one stands
		got, created, _, err := e.grants.AddGrant(e.ctx, again)
		if err != nil || created {
			t.Fatalf("second AddGrant = created %v, %v; want not created", created, err)
		}
		sameGrant(t, "second AddGrant", got, stored[i])
	}
	if gs := e.lookupGrants(t, sess, agent); !slices.Equal(grantIDs(gs), grantIDs(stored)) || gs[0].Tool != "write" {
		t.Errorf("Lookup = %+v; want each grant once, as first stored", gs)
	}
}

func testListGrants(t *testing.T, e *env) {
	sess, agent := e.name("sess"), e.name("agent")
	team := e.name("team")
	sg := e.sessionGrant(sess, "write")
	sg.Teams = []string{team, "default"}
	ag := e.agentGrant(agent, "bash", "git push *")
	ag.Teams = []string{team}
	other := e.agentGrant(agent, "edit")
	stored := e.addGrants(t, sg, ag, other)

	if got := e.listGrantIDs(t, session.GrantQuery{SessionID: sess}); !slices.Equal(got, grantIDs(stored[:1])) {
		t.Errorf("by session = %v, want %v", got, grantIDs(stored[:1]))
	}
	if got := e.listGrantIDs(t, session.GrantQuery{AgentID: agent}); !slices.Equal(got, grantIDs(stored[1:])) {
		t.Errorf("by agent = %v, want %v", got, grantIDs(stored[1:]))
	}
	if got := e.listGrantIDs(t, session.GrantQuery{SessionID: sess, AgentID: agent, Teams: []string{team}}); !slices.Equal(got, grantIDs(stored[:2])) {
		t.Errorf("by session and agent for team = %v, want %v", got, grantIDs(stored[:2]))
	}
	if got := e.listGrantIDs(t, session.GrantQuery{Teams: []string{team}}); !slices.Equal(got, grantIDs(stored[:2])) {
		t.Errorf("by team = %v, want %v (session grants first)", got, grantIDs(stored[:2]))
	}
	if got := e.listGrantIDs(t, session.GrantQuery{Teams: []string{e.name("team")}}); len(got) != 0 {
		t.Errorf("by an unused team = %v, want nothing", got)
	}
	if _, err := e.grants.ListGrants(e.ctx, session.GrantQuery{}); !errors.Is(err, session.ErrInvalid) {
		t.Errorf("ListGrants selecting nothing: err = %v, want ErrInvalid", err)
	}
	if _, err := e.grants.RevokeGrants(e.ctx, sess, agent); err != nil {
		t.Fatal(err)
	}
	if got := e.listGrantIDs(t, session.GrantQuery{Teams: []string{team}}); len(got) != 0 {
		t.Errorf("by team after revoking everything = %v, want nothing", got)
	}
}

func testRevokeOne(t *testing.T, e *env) {
	sess, agent := e.name("sess"), e.name("agent")
	stored := e.addGrants(t, e.sessionGrant(sess, "write"), e.sessionGrant(sess, "edit"), e.agentGrant(agent, "bash", "ls *"))
	got, err := e.grants.RevokeGrant(e.ctx, stored[0])
	if err != nil {
		t.Fatalf("RevokeGrant: %v", err)
	}
	sameGrant(t, "revoked", got, stored[0])
	// Only the id and owner matter: a grant as listed or as a bare reference.
	ref := session.Grant{Grant: messages.Grant{ID: stored[2].ID, Scope: stored[2].Scope, AgentID: agent}}
	if _, err := e.grants.RevokeGrant(e.ctx, ref); err != nil {
		t.Fatalf("RevokeGrant by reference: %v", err)
	}
	if gs := e.lookupGrants(t, sess, agent); !slices.Equal(grantIDs(gs), grantIDs(stored[1:2])) {
		t.Errorf("after revoking two: %v, want %v", grantIDs(gs), grantIDs(stored[1:2]))
	}
	_, err = e.grants.RevokeGrant(e.ctx, stored[0])
	wantErr(t, "second RevokeGrant", err, session.ErrNotFound)
	wrongOwner := stored[1]
	wrongOwner.SessionID = e.name("sess")
	_, err = e.grants.RevokeGrant(e.ctx, wrongOwner)
	wantErr(t, "RevokeGrant in another session", err, session.ErrNotFound)
	_, err = e.grants.RevokeGrant(e.ctx, session.Grant{Grant: messages.Grant{Scope: messages.ScopeSession, SessionID: sess}})
	wantErr(t, "RevokeGrant without an id", err, session.ErrInvalid)
}

func testRevoke(t *testing.T, e *env) {
	sess, agent := e.name("sess"), e.name("agent")
	otherSess, otherAgent := e.name("sess"), e.name("agent")
	stored := e.addGrants(t,
		e.sessionGrant(sess, "write"),
		e.sessionGrant(sess, "edit"),
		e.agentGrant(agent, "bash", "git push *"),
		e.agentGrant(agent, "write"),
		e.agentGrant(agent, "edit"),
	)
	others := e.addGrants(t, e.sessionGrant(otherSess, "edit"), e.agentGrant(otherAgent, "edit"))
	gs, err := e.grants.RevokeGrants(e.ctx, sess, "")
	if err != nil || !slices.Equal(grantIDs(gs), grantIDs(stored[:2])) {
		t.Fatalf("RevokeGrants(session) = %v, %v; want %v", grantIDs(gs), err, grantIDs(stored[:2]))
	}
	if gs := e.lookupGrants(t, sess, agent); !slices.Equal(grantIDs(gs), grantIDs(stored[2:])) {
		t.Errorf("after revoking the session: %v; want the agent's %v", grantIDs(gs), grantIDs(stored[2:]))
	}
	if gs, err := e.grants.RevokeGrants(e.ctx, "", agent); err != nil || len(gs) != 3 {
		t.Fatalf("RevokeGrants(agent) = %d grants, %v; want 3", len(gs), err)
	}
	if gs := e.lookupGrants(t, sess, agent); len(gs) != 0 {
		t.Errorf("after revoking both: %+v; want nothing", gs)
	}
	if gs, err := e.grants.RevokeGrants(e.ctx, sess, agent); err != nil || len(gs) != 0 {
		t.Errorf("second RevokeGrants = %v, %v; want none", gs, err)
	}
	if gs := e.lookupGrants(t, otherSess, otherAgent); !slices.Equal(grantIDs(gs), grantIDs(others)) {
		t.Errorf("others' grants after revoking = %v, want untouched %v", grantIDs(gs), grantIDs(others))
	}
}

func testGrantInvalid(t *testing.T, e *env) {
	sess, agent := e.name("sess"), e.name("agent")
	edit := func(g session.Grant, f func(*session.Grant)) session.Grant { f(&g); return g }
	base := e.sessionGrant(sess, "write")
	tests := []struct {
		name string
		g    session.Grant
	}{
		{"no id", edit(base, func(g *session.Grant) { g.ID = "" })},
		{"no scope", edit(base, func(g *session.Grant) { g.Scope = "" })},
		{"scope once", edit(base, func(g *session.Grant) { g.Scope = messages.ScopeOnce })},
		{"session grant without a session", edit(base, func(g *session.Grant) { g.SessionID, g.AgentID = "", agent })},
		{"always grant without an agent", edit(base, func(g *session.Grant) { g.Scope = messages.ScopeAlways })},
		{"no tool", edit(base, func(g *session.Grant) { g.Tool = "" })},
		{"no team", edit(base, func(g *session.Grant) { g.Teams = nil })},
		{"an empty team", edit(base, func(g *session.Grant) { g.Teams = []string{""} })},
		{"an empty pattern", edit(base, func(g *session.Grant) { g.Patterns = []string{""} })},
		{"a negative max age", edit(base, func(g *session.Grant) { g.MaxAge = -time.Second })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, err := e.grants.AddGrant(e.ctx, tc.g)
			wantErr(t, "AddGrant", err, session.ErrInvalid)
		})
	}
	if gs := e.lookupGrants(t, sess, agent); len(gs) != 0 {
		t.Errorf("invalid grants were stored: %+v", gs)
	}
}

func testRevokeInvalid(t *testing.T, e *env) {
	_, err := e.grants.RevokeGrants(e.ctx, "", "")
	wantErr(t, "RevokeGrants", err, session.ErrInvalid)
}

// testRevokeRace runs lookups against a revoke: a lookup that started after
// RevokeGrant returned never sees the grant, and every lookup sees either
// the whole list before the revoke or the list without the grant.
func testRevokeRace(t *testing.T, e *env) {
	sess := e.name("sess")
	stored := e.addGrants(t, e.sessionGrant(sess, "bash", "npm install *"), e.sessionGrant(sess, "write"))
	var revoked atomic.Bool
	var wg sync.WaitGroup
	var seenAfter, seenBefore atomic.Int64
	errs := make(chan error, 8)
	for range 4 {
		wg.Go(func() {
			for i := 0; i < 200; i++ {
				after := revoked.Load()
				l, err := e.requests.Lookup(e.ctx, session.LookupQuery{SessionID: sess})
				if err != nil {
					errs <- err
					return
				}
				ids := grantIDs(l.Grants)
				switch {
				case slices.Equal(ids, grantIDs(stored)):
					if after {
						seenAfter.Add(1)
					}
					seenBefore.Add(1)
				case slices.Equal(ids, grantIDs(stored[1:])):
				default:
					errs <- errors.New("a lookup saw a list that is neither before nor after the revoke")
					return
				}
			}
		})
	}
	time.Sleep(5 * time.Millisecond)
	if _, err := e.grants.RevokeGrant(e.ctx, stored[0]); err != nil {
		t.Fatalf("RevokeGrant: %v", err)
	}
	revoked.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := seenAfter.Load(); n > 0 {
		t.Errorf("%d lookups that started after RevokeGrant returned still saw the grant", n)
	}
}

// testGrantExpiry checks expiry by the store's clock: an expired grant is
// gone from Lookup and ListGrants, and ExpireGrants, called concurrently,
// reports it exactly once.
func (r *runner) testGrantExpiry(t *testing.T, e *env) {
	sess, agent := e.name("sess"), e.name("agent")
	team := e.name("team")
	short := e.sessionGrant(sess, "write")
	short.Teams, short.MaxAge = []string{team}, 300*time.Millisecond
	long := e.agentGrant(agent, "bash", "ls *")
	long.Teams, long.MaxAge = []string{team}, time.Hour
	shortAgent := e.agentGrant(agent, "edit")
	shortAgent.Teams, shortAgent.MaxAge = []string{team}, 300*time.Millisecond
	stored := e.addGrants(t, short, long, shortAgent)
	if gs := e.lookupGrants(t, sess, agent); len(gs) != 3 {
		t.Fatalf("before the expiry: %v, want all three", grantIDs(gs))
	}
	deadline := stored[2].ExpiresAt
	for e.now(t).Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if gs := e.lookupGrants(t, sess, agent); !slices.Equal(grantIDs(gs), grantIDs(stored[1:2])) {
		t.Errorf("after the expiry: Lookup = %v, want only %v", grantIDs(gs), grantIDs(stored[1:2]))
	}
	if gs, err := e.grants.ListGrants(e.ctx, session.GrantQuery{Teams: []string{team}}); err != nil || !slices.Equal(grantIDs(gs), grantIDs(stored[1:2])) {
		t.Errorf("after the expiry: ListGrants = %v, %v; want only %v", grantIDs(gs), err, grantIDs(stored[1:2]))
	}
	_, err := e.grants.RevokeGrant(e.ctx, stored[0])
	wantErr(t, "RevokeGrant of an expired grant", err, session.ErrNotFound)

	var mu sync.Mutex
	var expired []string
	var wg sync.WaitGroup
	teams := []string{team, e.name("team")}
	for range 4 {
		wg.Go(func() {
			gs, err := e.grants.ExpireGrants(e.ctx, teams)
			if err != nil {
				t.Errorf("ExpireGrants: %v", err)
				return
			}
			mu.Lock()
			expired = append(expired, grantIDs(gs)...)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.Sort(expired)
	want := []string{stored[0].ID, stored[2].ID}
	slices.Sort(want)
	if !slices.Equal(expired, want) {
		t.Errorf("ExpireGrants reported %v, want each expired grant once: %v", expired, want)
	}
	if gs := e.lookupGrants(t, sess, agent); !slices.Equal(grantIDs(gs), grantIDs(stored[1:2])) {
		t.Errorf("after ExpireGrants: %v, want the live grant %v", grantIDs(gs), grantIDs(stored[1:2]))
	}
}

// testGrantRemovedStaysRemoved: the broker stores an approval's grant as an
// outbox effect, retried until every effect of the approval is done. A
// retry after the grant was revoked (one by id, or all of a session or
// agent) or expired must not bring it back, nor renew its expiry.
func testGrantRemovedStaysRemoved(t *testing.T, e *env) {
	sess, agent := e.name("sess"), e.name("agent")
	one, all, allAgent := e.sessionGrant(sess, "write"), e.sessionGrant(e.name("sess2"), "edit"), e.agentGrant(agent, "bash", "ls *")
	short := e.agentGrant(e.name("agent2"), "bash", "make *")
	short.MaxAge = 300 * time.Millisecond
	stored := e.addGrants(t, one, all, allAgent, short)
	if _, err := e.grants.RevokeGrant(e.ctx, stored[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := e.grants.RevokeGrants(e.ctx, all.SessionID, allAgent.AgentID); err != nil {
		t.Fatal(err)
	}
	for e.now(t).Before(stored[3].ExpiresAt) {
		time.Sleep(50 * time.Millisecond)
	}
	for i, g := range []session.Grant{one, all, allAgent, short} {
		got, created, _, err := e.grants.AddGrant(e.ctx, g)
		if created || !errors.Is(err, session.ErrGrantRemoved) {
			t.Errorf("AddGrant of removed grant %d again = %+v, created %v, %v; want ErrGrantRemoved", i, got, created, err)
		}
	}
	for _, q := range [][2]string{{sess, ""}, {all.SessionID, allAgent.AgentID}, {e.name("sess3"), short.AgentID}} {
		if gs := e.lookupGrants(t, q[0], q[1]); len(gs) != 0 {
			t.Errorf("Lookup(%s, %s) after the retries = %v, want nothing", q[0], q[1], grantIDs(gs))
		}
	}
	// Another grant of the same lists is stored as usual.
	fresh := e.sessionGrant(sess, "write")
	if _, created, _, err := e.grants.AddGrant(e.ctx, fresh); err != nil || !created {
		t.Errorf("AddGrant of a new grant in a list with removed ones = created %v, %v", created, err)
	}
}

// indexedGrants stores, for agent and sess, grants of every shape the
// grant index (session.GrantProgram) sorts, and returns them by name.
func (e *env) indexedGrants(t *testing.T, sess, agent string) map[string]session.Grant {
	t.Helper()
	names := []string{"wildcard", "rm", "cd", "mixed", "write", "make", "session-rm", "whole"}
	stored := e.addGrants(t,
		e.agentGrant(agent, "bash", "* --version"),            // a glob first: the tool's own bucket
		e.agentGrant(agent, "bash", "rm build", "rm -rf x"),   // program rm
		e.agentGrant(agent, "bash", "cd *"),                   // program cd
		e.agentGrant(agent, "bash", "git push *", "npm test"), // first words differ: the tool's own bucket
		e.agentGrant(agent, "write"),
		e.agentGrant(agent, "bash", "make deploy"),
		e.sessionGrant(sess, "bash", "rm -rf build"),
		e.sessionGrant(sess, "edit"),
	)
	out := make(map[string]session.Grant, len(names))
	for i, n := range names {
		out[n] = stored[i]
	}
	return out
}

// lookupIDs returns the ids of the grants Lookup reads for q, in its
// order; it fails the test when Lookup fails.
func (e *env) lookupIDs(t *testing.T, q session.LookupQuery) []string {
	t.Helper()
	l, err := e.requests.Lookup(e.ctx, q)
	return mustGrantIDs(t, "Lookup", q, l.Grants, err)
}

func idsOf(gs map[string]session.Grant, names ...string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = gs[n].ID
	}
	return out
}

// testGrantIndexReads: a Lookup that names the tool and the programs of
// the call returns the grants of the tool's own bucket (no patterns, a
// glob first, first words that differ) and of those programs, the
// session's first, each by creation time; one that cannot say the
// programs returns every grant of the tool; one without a tool, all.
func testGrantIndexReads(t *testing.T, e *env) {
	sess, agent := e.name("sess"), e.name("agent")
	gs := e.indexedGrants(t, sess, agent)
	q := func(tool string, known bool, programs ...string) session.LookupQuery {
		return session.LookupQuery{SessionID: sess, AgentID: agent, Tool: tool, Programs: programs, ProgramsKnown: known}
	}
	tests := []struct {
		name string
		q    session.LookupQuery
		want []string
	}{
		{"rm build: the rm grants and the tool's own", q("bash", true, "rm"), idsOf(gs, "session-rm", "wildcard", "rm", "mixed")},
		{"cd x && rm build: both programs' grants", q("bash", true, "cd", "rm"), idsOf(gs, "session-rm", "wildcard", "rm", "cd", "mixed")},
		{"a program without grants: the tool's own", q("bash", true, "ls"), idsOf(gs, "wildcard", "mixed")},
		{"no programs: the tool's own", q("bash", true), idsOf(gs, "wildcard", "mixed")},
		{"programs unknown: every grant of the tool", q("bash", false, "rm"), idsOf(gs, "session-rm", "wildcard", "rm", "cd", "mixed", "make")},
		{"another tool", q("write", true), idsOf(gs, "write")},
		{"a tool without grants", q("delete", true, "rm"), []string{}},
		{"no tool: every grant", q("", false), idsOf(gs, "session-rm", "whole", "wildcard", "rm", "cd", "mixed", "write", "make")},
	}
	for _, tc := range tests {
		if got := e.lookupIDs(t, tc.q); !slices.Equal(got, tc.want) {
			t.Errorf("%s: Lookup = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// testGrantIndexRemoval: revoking or expiring a grant indexed under a
// program removes it from the reads of that program, of the whole tool
// and from listings; it is never stored again; its bucket's other grants
// stay.
func (r *runner) testGrantIndexRemoval(t *testing.T, e *env) {
	sess, agent := e.name("sess"), e.name("agent")
	team := e.name("team")
	gs := e.indexedGrants(t, sess, agent)
	short := e.agentGrant(agent, "bash", "rm -rf dist")
	short.Teams, short.MaxAge = []string{team}, 300*time.Millisecond
	gs["short"] = e.addGrants(t, short)[0]
	if _, err := e.grants.RevokeGrant(e.ctx, session.Grant{Grant: messages.Grant{ID: gs["rm"].ID, Scope: gs["rm"].Scope, AgentID: agent}}); err != nil {
		t.Fatalf("RevokeGrant by reference: %v", err)
	}
	for e.now(t).Before(gs["short"].ExpiresAt) {
		time.Sleep(50 * time.Millisecond)
	}
	rm := session.LookupQuery{SessionID: sess, AgentID: agent, Tool: "bash", Programs: []string{"rm"}, ProgramsKnown: true}
	if got, want := e.lookupIDs(t, rm), idsOf(gs, "session-rm", "wildcard", "mixed"); !slices.Equal(got, want) {
		t.Errorf("Lookup(rm) after the revoke and the expiry = %v, want %v", got, want)
	}
	all := session.LookupQuery{SessionID: sess, AgentID: agent}
	if got := e.lookupIDs(t, all); slices.Contains(got, gs["rm"].ID) || slices.Contains(got, gs["short"].ID) {
		t.Errorf("Lookup of every grant = %v: the revoked or expired grant is still there", got)
	}
	listed, err := e.grants.ListGrants(e.ctx, session.GrantQuery{AgentID: agent})
	if err != nil || slices.Contains(grantIDs(listed), gs["rm"].ID) || slices.Contains(grantIDs(listed), gs["short"].ID) {
		t.Errorf("ListGrants = %v, %v: the revoked or expired grant is still there", grantIDs(listed), err)
	}
	expired, err := e.grants.ExpireGrants(e.ctx, []string{team})
	if err != nil || !slices.Equal(grantIDs(expired), idsOf(gs, "short")) {
		t.Errorf("ExpireGrants = %v, %v; want %v", grantIDs(expired), err, idsOf(gs, "short"))
	}
	for _, n := range []string{"rm", "short"} {
		g := e.agentGrant(agent, "bash", gs[n].Patterns...)
		g.ID = gs[n].ID
		if _, created, _, err := e.grants.AddGrant(e.ctx, g); created || !errors.Is(err, session.ErrGrantRemoved) {
			t.Errorf("AddGrant of the removed %s grant again = created %v, %v; want ErrGrantRemoved", n, created, err)
		}
	}
	if got := e.lookupIDs(t, rm); slices.Contains(got, gs["rm"].ID) || slices.Contains(got, gs["short"].ID) {
		t.Errorf("Lookup(rm) after adding the removed grants again = %v", got)
	}
}

// testGrantIndexListing: listing by agent, by session and by team returns
// the grants of every bucket, each owner's by creation time then id.
func testGrantIndexListing(t *testing.T, e *env) {
	sess, agent := e.name("sess"), e.name("agent")
	gs := e.indexedGrants(t, sess, agent)
	byAgent := idsOf(gs, "wildcard", "rm", "cd", "mixed", "write", "make")
	if got := e.listGrantIDs(t, session.GrantQuery{AgentID: agent}); !slices.Equal(got, byAgent) {
		t.Errorf("by agent = %v, want %v", got, byAgent)
	}
	if got, want := e.listGrantIDs(t, session.GrantQuery{SessionID: sess, AgentID: agent}), append(idsOf(gs, "session-rm", "whole"), byAgent...); !slices.Equal(got, want) {
		t.Errorf("by session and agent = %v, want %v", got, want)
	}
	if got := e.listGrantIDs(t, session.GrantQuery{Teams: []string{"oncall"}}); !containsInOrder(got, byAgent) {
		t.Errorf("by team = %v, want %v among them in order", got, byAgent)
	}
}

// containsInOrder reports whether want appears in got as a contiguous run.
func containsInOrder(got, want []string) bool {
	for i := 0; i+len(want) <= len(got); i++ {
		if slices.Equal(got[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

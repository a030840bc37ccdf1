package redisstore_test

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// oldFields encodes entries as the grant lists were written before grants
// were objects: length-prefixed fields.
func oldFields(entries ...string) string {
	var b []byte
	for _, e := range entries {
		b = strconv.AppendInt(b, int64(len(e)), 10)
		b = append(b, ':')
		b = append(b, e...)
	}
	return string(b)
}

// TestLegacyGrantsKeepWorking writes grant lists the old way (a session's
// tool names, an agent's "<len(tool)>:<tool><pattern>" entries) and checks
// that they are read as legacy grants of the default team by one approver,
// live next to new grants, and can be listed and revoked by id
// (docs/STATE.md "Migration").
func TestLegacyGrantsKeepWorking(t *testing.T) {
	srv := testenv.Redis(t)
	admin := srv.Client()
	s := newStore(t, options(srv.URL(), time.Hour))
	ctx := context.Background()
	sess, agent := uniq("sess"), uniq("agent")
	if err := admin.Set(ctx, "signoff:{"+sess+"}:grants", oldFields("write", "bash"), time.Hour).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Set(ctx, "signoff:agent:{"+agent+"}:grants", oldFields("4:bashgit push *", "5:write"), 0).Err(); err != nil {
		t.Fatal(err)
	}
	fresh, _, _, err := s.AddGrant(ctx, testGrant(uniq("g"), messages.ScopeAlwaysPrefix, agent, "bash", "npm install *"))
	if err != nil {
		t.Fatal(err)
	}

	l, err := s.Lookup(ctx, session.LookupQuery{SessionID: sess, AgentID: agent})
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		scope    messages.Scope
		tool     string
		patterns []string
		legacy   bool
	}
	var got []view
	for _, g := range l.Grants {
		got = append(got, view{g.Scope, g.Tool, g.Patterns, g.Legacy})
		if g.Legacy {
			if !slices.Equal(g.Teams, []string{"default"}) || g.ApproverCount() != 1 || g.ID == "" {
				t.Errorf("legacy grant %+v: want team default, one approver, an id", g)
			}
		}
	}
	want := []view{
		{messages.ScopeSession, "write", nil, true},
		{messages.ScopeSession, "bash", nil, true},
		{messages.ScopeAlwaysPrefix, "bash", []string{"git push *"}, true},
		{messages.ScopeAlways, "write", nil, true},
		{messages.ScopeAlwaysPrefix, "bash", []string{"npm install *"}, false},
	}
	// Legacy grants have no creation time: they come first, by id (the
	// agent's list was migrated into its grant index by the AddGrant).
	cmpView := func(a, b view) int {
		return cmp.Or(strings.Compare(string(a.scope), string(b.scope)), strings.Compare(a.tool, b.tool), strings.Compare(strings.Join(a.patterns, "|"), strings.Join(b.patterns, "|")))
	}
	slices.SortFunc(got[:2], cmpView)
	slices.SortFunc(got[2:4], cmpView)
	slices.SortFunc(want[:2], cmpView)
	slices.SortFunc(want[2:4], cmpView)
	if !slices.EqualFunc(got, want, func(a, b view) bool { return cmpView(a, b) == 0 && a.legacy == b.legacy }) {
		t.Fatalf("Lookup grants = %+v, want %+v", got, want)
	}
	if !slices.IsSortedFunc(l.Grants[2:4], func(a, b session.Grant) int { return strings.Compare(a.ID, b.ID) }) {
		t.Errorf("the agent's legacy grants are not by id: %v", grantIDs(l.Grants))
	}
	again, _ := s.Lookup(ctx, session.LookupQuery{SessionID: sess, AgentID: agent})
	if !slices.Equal(grantIDs(again.Grants), grantIDs(l.Grants)) {
		t.Errorf("legacy ids change between reads: %v then %v", grantIDs(l.Grants), grantIDs(again.Grants))
	}

	listed, err := s.ListGrants(ctx, session.GrantQuery{AgentID: agent})
	if err != nil || len(listed) != 3 {
		t.Fatalf("ListGrants(agent) = %+v, %v; want 3", listed, err)
	}
	revoked, err := s.RevokeGrant(ctx, listed[0])
	if err != nil || revoked.ID != listed[0].ID || !revoked.Legacy {
		t.Fatalf("RevokeGrant(legacy) = %+v, %v", revoked, err)
	}
	if _, err := s.RevokeGrant(ctx, listed[0]); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("second RevokeGrant(legacy): err = %v, want ErrNotFound", err)
	}
	l, _ = s.Lookup(ctx, session.LookupQuery{AgentID: agent, SessionID: uniq("sess")})
	if !slices.Equal(grantIDs(l.Grants), []string{listed[1].ID, fresh.ID}) {
		t.Errorf("after revoking one legacy grant: %v, want %v", grantIDs(l.Grants), []string{listed[1].ID, fresh.ID})
	}
	if ttl, err := admin.PTTL(ctx, "signoff:agent:{"+agent+"}:grants:b").Result(); err != nil || ttl != -1 {
		t.Errorf("PTTL of an agent list with a legacy grant = %v, %v; want none (-1): legacy grants do not expire", ttl, err)
	}
	if gs, err := s.RevokeGrants(ctx, sess, ""); err != nil || len(gs) != 2 || !gs[0].Legacy {
		t.Errorf("RevokeGrants(session) = %+v, %v; want the 2 legacy grants", gs, err)
	}
}

func grantIDs(gs []session.Grant) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.ID
	}
	return out
}

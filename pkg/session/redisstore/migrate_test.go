package redisstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/redisstore"
)

// oldEntry is a grant entry as the store wrote it before the grant index,
// in the one string list of its owner: 'g1 <id> <created µs> <expires µs>
// <json>'.
func oldEntry(t *testing.T, g session.Grant, created, expires time.Time) string {
	t.Helper()
	j := struct {
		messages.Grant
		Origin string `json:"origin,omitempty"`
	}{g.Grant, g.Origin}
	b, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	exp := int64(0)
	if !expires.IsZero() {
		exp = expires.UnixMicro()
	}
	return fmt.Sprintf("g1 %s %d %d %s", g.ID, created.UnixMicro(), exp, b)
}

// oldOwner writes the grants of one session ("s") or agent ("a") in the
// layout before the grant index, with raw Redis commands: the list, and
// the owner in the team index of "default".
type oldOwner struct {
	kind, id string
	live     []session.Grant // by creation
	expired  session.Grant
}

func writeOld(t *testing.T, admin *redis.Client, kind, id string, ttl time.Duration) oldOwner {
	t.Helper()
	ctx := context.Background()
	scope := messages.ScopeAlwaysPrefix
	key := "signoff:agent:{" + id + "}:grants"
	legacy := "4:bashnpm *"
	if kind == "s" {
		scope, key, legacy = messages.ScopeSession, "signoff:{"+id+"}:grants", "edit"
	}
	o := oldOwner{kind: kind, id: id}
	now := time.Now()
	// Then shapes whose bucket g_program must get right as Go does: a
	// class, an escape or a '?' in the first word, first words that
	// differ (all in the tool's own bucket).
	for i, ps := range [][]string{{"rm build"}, {"cd *"}, {"* --version"}, {"make deploy"},
		{"[r]m x"}, {`\rm x`}, {"?m x"}, {"git push *", "npm test"}} {
		o.live = append(o.live, testGrant(uniq("g"), scope, id, "bash", ps...))
		o.live[i].CreatedAt = now.Add(time.Duration(i-10) * time.Second).Truncate(time.Microsecond).UTC()
	}
	o.expired = testGrant(uniq("g"), scope, id, "bash", "rm dist")
	o.expired.CreatedAt = now.Add(-time.Hour).Truncate(time.Microsecond).UTC()
	o.expired.ExpiresAt = now.Add(-time.Minute).Truncate(time.Microsecond).UTC()
	var entries []string
	for _, g := range o.live {
		entries = append(entries, oldEntry(t, g, g.CreatedAt, time.Time{}))
	}
	entries = append(entries, oldEntry(t, o.expired, o.expired.CreatedAt, o.expired.ExpiresAt), legacy)
	if err := admin.Set(ctx, key, oldFields(entries...), ttl).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.SAdd(ctx, "signoff:team:{default}:grants", kind+":"+id).Err(); err != nil {
		t.Fatal(err)
	}
	return o
}

// TestOldLayoutGrantListsAreReadThenMigrated writes grant lists in the
// layout before the grant index (one string per session or agent, as a
// running plane holds them when it is upgraded) and checks that Lookup and
// ListGrants read them in place, and that the first script to touch an
// owner — ExpireGrants, RevokeGrant, AddGrant, RevokeGrants — moves them
// into the index, each grant in its bucket, keeping their ids, times,
// lifetime and the removed ids (docs/STATE.md "Migration").
func TestOldLayoutGrantListsAreReadThenMigrated(t *testing.T) {
	srv := testenv.Redis(t)
	admin := srv.Client()
	s := newStore(t, options(srv.URL(), time.Hour))
	ctx := context.Background()
	expireS := writeOld(t, admin, "s", uniq("sess"), 30*time.Minute)
	revokeA := writeOld(t, admin, "a", uniq("agent"), 0)
	addA := writeOld(t, admin, "a", uniq("agent"), 0)
	allS := writeOld(t, admin, "s", uniq("sess"), 30*time.Minute)

	rm := func(o oldOwner, sess, agent string) []string {
		t.Helper()
		l, err := s.Lookup(ctx, session.LookupQuery{SessionID: sess, AgentID: agent, Tool: "bash", Programs: []string{"rm"}, ProgramsKnown: true})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, g := range l.Grants {
			if !g.Legacy {
				ids = append(ids, g.ID)
			}
		}
		return ids
	}
	// rm build, then the tool's own bucket.
	wantRm := func(o oldOwner) []string {
		return []string{o.live[0].ID, o.live[2].ID, o.live[4].ID, o.live[5].ID, o.live[6].ID, o.live[7].ID}
	}
	// Read in place, before any migration.
	if got := rm(revokeA, uniq("sess"), revokeA.id); !slices.Equal(got, wantRm(revokeA)) {
		t.Errorf("Lookup(rm) of an old agent list = %v, want %v", got, wantRm(revokeA))
	}
	if got := rm(expireS, expireS.id, ""); !slices.Equal(got, wantRm(expireS)) {
		t.Errorf("Lookup(rm) of an old session list = %v, want %v", got, wantRm(expireS))
	}
	listed, err := s.ListGrants(ctx, session.GrantQuery{AgentID: addA.id})
	if err != nil || len(listed) != 9 || !listed[0].Legacy || listed[1].ID != addA.live[0].ID || !listed[1].CreatedAt.Equal(addA.live[0].CreatedAt) {
		t.Errorf("ListGrants of an old list = %+v, %v; want the legacy grant, then the 8 live ones by creation", listed, err)
	}

	// ExpireGrants migrates (and reports the expired grant once).
	expired, err := s.ExpireGrants(ctx, []string{"default"})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []oldOwner{expireS, revokeA, addA, allS} {
		if !slices.Contains(grantIDs(expired), o.expired.ID) {
			t.Errorf("ExpireGrants = %v, want %s among them", grantIDs(expired), o.expired.ID)
		}
		checkMigrated(t, admin, o)
	}
	if ttl := admin.PTTL(ctx, "signoff:{"+allS.id+"}:grants:b").Val(); ttl < 29*time.Minute || ttl > 30*time.Minute {
		t.Errorf("PTTL of a migrated session index = %v, want the old list's 30m", ttl)
	}
	if ttl := admin.PTTL(ctx, "signoff:{"+expireS.id+"}:grants:b").Val(); ttl < 59*time.Minute {
		t.Errorf("PTTL of a migrated session index = %v, want the retention (1h) its Lookup renewed", ttl)
	}
	if ttl := admin.PTTL(ctx, "signoff:agent:{"+addA.id+"}:grants:b").Val(); ttl != -1 {
		t.Errorf("PTTL of a migrated agent index = %v, want none, as the old list", ttl)
	}
	if got := rm(expireS, expireS.id, ""); !slices.Equal(got, wantRm(expireS)) {
		t.Errorf("Lookup(rm) after the migration = %v, want %v", got, wantRm(expireS))
	}

	// Revoke, add and revoke-all on lists an older broker writes again
	// (a rolling upgrade): each migrates first.
	revokeB := writeOld(t, admin, "a", uniq("agent"), 0)
	if g, err := s.RevokeGrant(ctx, session.Grant{Grant: messages.Grant{ID: revokeB.live[0].ID, Scope: messages.ScopeAlwaysPrefix, AgentID: revokeB.id}}); err != nil || g.ID != revokeB.live[0].ID {
		t.Errorf("RevokeGrant of an old list's grant = %+v, %v", g, err)
	}
	if got, want := rm(revokeB, uniq("sess"), revokeB.id), wantRm(revokeB)[1:]; !slices.Equal(got, want) {
		t.Errorf("Lookup(rm) after revoking the rm grant = %v, want %v", got, want)
	}
	addB := writeOld(t, admin, "a", uniq("agent"), 0)
	again := addB.live[0]
	again.CreatedAt = time.Time{}
	if g, created, _, err := s.AddGrant(ctx, again); err != nil || created || !g.CreatedAt.Equal(addB.live[0].CreatedAt) {
		t.Errorf("AddGrant of an old list's grant again = %+v, created %v, %v; want the stored one", g, created, err)
	}
	if _, _, _, err := s.AddGrant(ctx, addB.expired); !errors.Is(err, session.ErrGrantRemoved) {
		t.Errorf("AddGrant of an old list's expired grant = %v, want ErrGrantRemoved", err)
	}
	fresh := testGrant(uniq("g"), messages.ScopeAlwaysPrefix, addB.id, "bash", "rm -rf out")
	if _, created, _, err := s.AddGrant(ctx, fresh); err != nil || !created {
		t.Errorf("AddGrant of a new grant = created %v, %v", created, err)
	}
	if got, want := rm(addB, uniq("sess"), addB.id), append(wantRm(addB), fresh.ID); !slices.Equal(got, want) {
		t.Errorf("Lookup(rm) after AddGrant = %v, want %v", got, want)
	}
	allB := writeOld(t, admin, "s", uniq("sess"), 30*time.Minute)
	if gs, err := s.RevokeGrants(ctx, allB.id, ""); err != nil || len(gs) != 9 {
		t.Errorf("RevokeGrants of an old list = %d grants, %v; want the 9 live ones", len(gs), err)
	}
	if n := admin.Exists(ctx, "signoff:{"+allB.id+"}:grants:b").Val(); n != 0 {
		t.Errorf("the revoked session's grant index remains")
	}
	checkMoved(t, admin, "signoff:{"+allB.id+"}:grants")
	if _, _, _, err := s.AddGrant(ctx, allB.live[1]); !errors.Is(err, session.ErrGrantRemoved) {
		t.Errorf("AddGrant of a revoked old grant = %v, want ErrGrantRemoved", err)
	}
	// A grant stored for an owner that never had an old list marks it
	// too: a broker of the old layout must not find "no grant" there.
	newcomer := uniq("agent")
	if _, created, _, err := s.AddGrant(ctx, testGrant(uniq("g"), messages.ScopeAlwaysPrefix, newcomer, "bash", "make x")); err != nil || !created {
		t.Fatalf("AddGrant for a new agent = created %v, %v", created, err)
	}
	checkMoved(t, admin, "signoff:agent:{"+newcomer+"}:grants")
}

// oldDec is the field decoder of the scripts of the layout before the
// grant index (lua/prelude.lua at 282cc8d), which its grant_add,
// grant_revoke, revoke and grant_expire ran on the old list.
const oldDec = `local function dec(v, n)
  local f, p, len = {}, 1, #v
  while p <= len and (n == nil or #f < n) do
    local c = string.find(v, ':', p, true)
    local l = tonumber(string.sub(v, p, c - 1))
    f[#f + 1] = string.sub(v, c + 1, c + l)
    p = c + l + 1
  end
  return f, string.sub(v, p)
end
`

// checkMoved checks that old holds the moved mark for about a day, and
// that a broker of the layout before the index fails on it rather than
// reading no grants: its Go reader (splitFields, unchanged) refuses it,
// and its scripts' decoder raises an error (red team: an old broker that
// found nothing answered "no grant" to a revoke of a grant the index kept
// in force).
func checkMoved(t *testing.T, admin *redis.Client, old string) {
	t.Helper()
	ctx := context.Background()
	v, err := admin.Get(ctx, old).Result()
	if err != nil || v != redisstore.MovedMark {
		t.Fatalf("%s = %q, %v after the migration; want the moved mark", old, v, err)
	}
	if ttl := admin.PTTL(ctx, old).Val(); ttl < 23*time.Hour || ttl > 24*time.Hour {
		t.Errorf("PTTL of the moved mark = %v, want a day", ttl)
	}
	if _, err := redisstore.SplitFields(v); err == nil {
		t.Error("the old layout's reader takes the moved mark for a list")
	}
	if err := admin.Eval(ctx, oldDec+"return dec(redis.call('GET', KEYS[1]))", []string{old}).Err(); err == nil {
		t.Error("the old layout's scripts take the moved mark for a list")
	}
}

// checkMigrated checks that o's old list is gone and each of its live
// grants sits in its bucket, with an id field naming the bucket.
func checkMigrated(t *testing.T, admin *redis.Client, o oldOwner) {
	t.Helper()
	ctx := context.Background()
	old, idx := "signoff:agent:{"+o.id+"}:grants", "signoff:agent:{"+o.id+"}:grants:b"
	if o.kind == "s" {
		old, idx = "signoff:{"+o.id+"}:grants", "signoff:{"+o.id+"}:grants:b"
	}
	checkMoved(t, admin, old)
	for _, g := range o.live {
		b := fmt.Sprintf("4:bash%s", session.GrantProgram(&g))
		if got := admin.HGet(ctx, idx, "#"+g.ID).Val(); got != b {
			t.Errorf("%s: id field of %s = %q, want %q", idx, g.ID, got, b)
		}
	}
	if got := admin.HGet(ctx, idx, "#"+o.expired.ID).Val(); got != "" {
		t.Errorf("%s: the expired grant's id field remains (%q)", idx, got)
	}
}

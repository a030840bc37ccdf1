package redisstore

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// Grants (docs/STATE.md "Grants"): each session and each agent has one
// grant index (grantindex.go), a hash of buckets, each a string of
// length-prefixed entries, which the hot path reads with one HMGET. An
// entry is
//
//	g1 <id> <created µs> <expires µs, 0: none> <json>
//
// with the grant object (messages.Grant without its times, plus the
// origin session) as JSON. Entries without the "g1 " prefix were stored
// before grants were objects and are read as legacy grants (a session
// entry is a tool name, an agent entry "<len(tool)>:<tool><pattern>"). The
// teams' indexes P:team:{T}:grants name the lists holding grants approved
// for T, for listing and expiring by team.

const entryPrefix = "g1 "

// grantJSON is the JSON part of an entry.
type grantJSON struct {
	messages.Grant
	Origin string `json:"origin,omitempty"`
}

// encodeGrantJSON returns the JSON part of g's entry: times are in the
// entry's header, set by the script from Redis TIME.
func encodeGrantJSON(g *session.Grant) (string, error) {
	j := grantJSON{Grant: g.Grant, Origin: g.Origin}
	j.CreatedAt, j.ExpiresAt, j.Legacy = time.Time{}, time.Time{}, false
	b, err := json.Marshal(j)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// parseEntry decodes one entry of the grant list of owner (a session id
// for a session list, else an agent id).
func parseEntry(e string, sessionList bool, owner string) (session.Grant, error) {
	rest, ok := strings.CutPrefix(e, entryPrefix)
	if !ok {
		return legacyGrant(e, sessionList, owner)
	}
	f := strings.SplitN(rest, " ", 4)
	if len(f) != 4 {
		return session.Grant{}, fmt.Errorf("grant entry has %d header fields, want 4", len(f))
	}
	created, err1 := strconv.ParseInt(f[1], 10, 64)
	expires, err2 := strconv.ParseInt(f[2], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return session.Grant{}, fmt.Errorf("grant entry %s: %w", f[0], err)
	}
	var j grantJSON
	if err := json.Unmarshal([]byte(f[3]), &j); err != nil {
		return session.Grant{}, fmt.Errorf("grant entry %s: %w", f[0], err)
	}
	g := session.Grant{Grant: j.Grant, Origin: j.Origin}
	g.ID = f[0]
	g.CreatedAt = time.UnixMicro(created).UTC()
	if expires != 0 {
		g.ExpiresAt = time.UnixMicro(expires).UTC()
	}
	return g, nil
}

// legacyGrant reads an entry stored before grants were objects: it counts
// as approved for the default team by one approver (docs/STATE.md
// "Migration"). Its id is derived from the entry, so that it stays the
// same across reads and can be revoked.
func legacyGrant(e string, sessionList bool, owner string) (session.Grant, error) {
	g := session.Grant{Grant: messages.Grant{Teams: []string{LegacyTeam}, Legacy: true}}
	if sessionList {
		g.Scope, g.SessionID, g.Tool = messages.ScopeSession, owner, e
		g.Origin = owner
	} else {
		tool, pattern, ok := parseAgentGrantMember(e)
		if !ok {
			return session.Grant{}, fmt.Errorf("legacy agent grant %q", e)
		}
		g.Scope, g.AgentID, g.Tool = messages.ScopeAlways, owner, tool
		if pattern != "" {
			g.Scope, g.Patterns = messages.ScopeAlwaysPrefix, []string{pattern}
		}
	}
	if g.Tool == "" {
		return session.Grant{}, errors.New("legacy grant without a tool")
	}
	g.ID = legacyID(sessionList, owner, e)
	return g, nil
}

// LegacyTeam is the team legacy grants count as approved for.
const LegacyTeam = "default"

func legacyID(sessionList bool, owner, entry string) string {
	kind := "a"
	if sessionList {
		kind = "s"
	}
	sum := sha256.Sum256([]byte(kind + "\x00" + owner + "\x00" + entry))
	return "gl_" + hex.EncodeToString(sum[:10])
}

// legacyEntry is the stored text of a legacy grant (for revoking it).
func legacyEntry(g *session.Grant) string {
	if g.IsSession() {
		return g.Tool
	}
	pattern := ""
	if len(g.Patterns) == 1 {
		pattern = g.Patterns[0]
	}
	return agentGrantMember(g.Tool, pattern)
}

// parsedGrants caches decoded entries by their text for the read path: an
// entry never changes (a grant is replaced, never edited), and decoding its
// JSON on every Lookup would cost the calls grants allow a few µs each.
// Grants from the cache share their slices: callers must not modify them.
var parsedGrants = grantCache{m: make(map[string]session.Grant)}

// grantCacheSize bounds parsedGrants; when full it starts over.
const grantCacheSize = 4096

type grantCache struct {
	mu sync.Mutex
	m  map[string]session.Grant
}

func (c *grantCache) parse(e string, sessionList bool, owner string) (session.Grant, error) {
	if !strings.HasPrefix(e, entryPrefix) {
		return legacyGrant(e, sessionList, owner) // cheap, and depends on the owner
	}
	c.mu.Lock()
	g, ok := c.m[e]
	c.mu.Unlock()
	if ok {
		return g, nil
	}
	g, err := parseEntry(e, sessionList, owner)
	if err != nil {
		return g, err
	}
	c.mu.Lock()
	if len(c.m) >= grantCacheSize {
		clear(c.m)
	}
	c.m[strings.Clone(e)] = g
	c.mu.Unlock()
	return g, nil
}

// parseList decodes a grant list (or bucket), keeping the grants live at
// now that keep accepts.
func parseList(out []session.Grant, raw string, sessionList bool, owner string, now time.Time, keep func(*session.Grant) bool) ([]session.Grant, error) {
	entries, err := splitFields(raw)
	if err != nil {
		return out, err
	}
	for _, e := range entries {
		g, err := parsedGrants.parse(e, sessionList, owner)
		if err != nil {
			return out, err
		}
		if !g.ExpiresAt.IsZero() && !now.Before(g.ExpiresAt) {
			continue
		}
		if keep(&g) {
			out = append(out, g)
		}
	}
	return out, nil
}

// parseEntries decodes script-returned entries of one list.
func parseEntries(vals []any, sessionList bool, owner string) ([]session.Grant, error) {
	out := make([]session.Grant, 0, len(vals))
	for _, v := range vals {
		e, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("grant entry of type %T", v)
		}
		g, err := parseEntry(e, sessionList, owner)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// removedKey is the set of the grant ids removed (revoked or expired) from
// the grant list key, kept for the store's Retention: grant_add refuses
// them (an outbox retry must not bring a removed grant back). Same hash
// tag as the list.
func removedKey(list string) string { return list + ":gone" }

// ownerRef names a grant list in a team's index.
func ownerRef(g *session.Grant) string {
	if g.IsSession() {
		return "s:" + g.SessionID
	}
	return "a:" + g.AgentID
}

// AddGrant stores a standing grant; see [session.Grants.AddGrant]. A
// session grant (re)starts the retention of the session's grants; an
// agent's list lives as long as its longest-lived grant. The team indexes
// are written first, in the same pipeline: a list is never without them.
func (s *Store) AddGrant(ctx context.Context, g session.Grant) (session.Grant, bool, []session.Grant, error) {
	const op = "add grant"
	if err := g.Validate(); err != nil {
		return session.Grant{}, false, nil, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	if err := checkNames(g.SessionID, g.AgentID, g.Teams...); err != nil {
		return session.Grant{}, false, nil, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	if strings.ContainsAny(g.ID, " \t\r\n") {
		return session.Grant{}, false, nil, fmt.Errorf("redisstore: %s: %w: grant id %q contains whitespace", op, session.ErrInvalid, g.ID)
	}
	body, err := encodeGrantJSON(&g)
	if err != nil {
		return session.Grant{}, false, nil, fmt.Errorf("redisstore: %s: %w: %w", op, session.ErrInvalid, err)
	}
	ctx, cancel, err := s.begin(ctx, op)
	if err != nil {
		return session.Grant{}, false, nil, err
	}
	defer cancel()
	ttl := ""
	if g.IsSession() {
		ttl = s.retMillis
	}
	p := s.rdb.Pipeline()
	for _, t := range g.Teams {
		p.SAdd(ctx, s.k.teamGrants(t), ownerRef(&g))
	}
	if _, err := p.Exec(ctx); err != nil {
		return session.Grant{}, false, nil, s.fail(op, err)
	}
	k := s.grantKeysOf(&g)
	v, err := s.run(ctx, scriptGrantAdd, k.keys(), g.ID, strconv.FormatInt(g.MaxAge.Microseconds(), 10), body, ttl, s.retMillis,
		bucketOf(&g), k.kind())
	if err != nil {
		return session.Grant{}, false, nil, s.fail(op, err)
	}
	vals, ok := v.([]any)
	if !ok || len(vals) < 1 {
		return session.Grant{}, false, nil, s.corrupt(op, fmt.Errorf("reply %T", v))
	}
	created, err := asInt(vals[0])
	if err != nil {
		return session.Grant{}, false, nil, s.corrupt(op, err)
	}
	if created == 2 {
		return session.Grant{}, false, nil, fmt.Errorf("redisstore: %s %s: %w", op, g.ID, session.ErrGrantRemoved)
	}
	if len(vals) < 2 {
		return session.Grant{}, false, nil, s.corrupt(op, fmt.Errorf("reply of %d values", len(vals)))
	}
	got, err := parseEntries(vals[1:], g.IsSession(), g.Owner())
	if err != nil {
		return session.Grant{}, false, nil, s.corrupt(op, err)
	}
	return got[0], created == 1, got[1:], nil
}

// ListGrants returns the live grants q selects; see
// [session.Grants.ListGrants]. By team, it reads the teams' indexes, then
// the lists they name in one pipeline; names of lists that are gone are
// removed from the indexes on the way.
func (s *Store) ListGrants(ctx context.Context, q session.GrantQuery) ([]session.Grant, error) {
	const op = "list grants"
	if err := q.Validate(); err != nil {
		return nil, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	ctx, cancel, err := s.beginNames(ctx, op, q.SessionID, q.AgentID, q.Teams...)
	if err != nil {
		return nil, err
	}
	defer cancel()
	var refs []string
	if q.SessionID != "" || q.AgentID != "" {
		if q.SessionID != "" {
			refs = append(refs, "s:"+q.SessionID)
		}
		if q.AgentID != "" {
			refs = append(refs, "a:"+q.AgentID)
		}
	} else {
		p := s.rdb.Pipeline()
		cmds := make([]*redis.StringSliceCmd, len(q.Teams))
		for i, t := range q.Teams {
			cmds[i] = p.SMembers(ctx, s.k.teamGrants(t))
		}
		if _, err := p.Exec(ctx); err != nil {
			return nil, s.fail(op, err)
		}
		for _, c := range cmds {
			refs = append(refs, c.Val()...)
		}
		// Session lists first, each kind in a stable order.
		slices.SortFunc(refs, func(a, b string) int { return cmp.Or(strings.Compare(b[:1], a[:1]), strings.Compare(a, b)) })
		refs = slices.Compact(refs)
	}
	p := s.rdb.Pipeline()
	now := p.Time(ctx)
	reads := make([]grantReads, len(refs))
	for i, ref := range refs {
		var cmds []redis.Cmder
		reads[i], cmds = readGrants(ctx, s.refKeys(ref), nil, "", "")
		for _, c := range cmds {
			_ = p.Process(ctx, c)
		}
	}
	if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, s.fail(op, err)
	}
	if err := now.Err(); err != nil {
		return nil, s.fail(op, err)
	}
	var out []session.Grant
	var gone []string
	for i, ref := range refs {
		r := &reads[i]
		if err := r.all.Err(); err != nil {
			return nil, s.fail(op, err)
		}
		if err := r.old.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return nil, s.fail(op, err)
		}
		if !r.found() {
			gone = append(gone, ref)
			continue
		}
		if out, err = r.grants(out, now.Val(), q.Selects); err != nil {
			return nil, s.corrupt(op, err)
		}
	}
	if len(gone) > 0 && q.SessionID == "" && q.AgentID == "" {
		s.forgetLists(ctx, q.Teams, gone)
	}
	return out, nil
}

// forgetLists removes lists that are gone from the teams' indexes. A list
// recreated meanwhile is indexed again by its AddGrant, which writes the
// index first; a failure only leaves a stale name for the next listing.
func (s *Store) forgetLists(ctx context.Context, teams, refs []string) {
	p := s.rdb.Pipeline()
	for _, t := range teams {
		p.SRem(ctx, s.k.teamGrants(t), toAny(refs)...)
	}
	_, _ = p.Exec(ctx)
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// RevokeGrant removes one grant of the list g names, atomically; see
// [session.Grants.RevokeGrant].
func (s *Store) RevokeGrant(ctx context.Context, g session.Grant) (session.Grant, error) {
	const op = "revoke grant"
	if g.ID == "" || g.Owner() == "" {
		return session.Grant{}, fmt.Errorf("redisstore: %s: %w: the grant's id and its session or agent are needed", op, session.ErrInvalid)
	}
	ctx, cancel, err := s.beginNames(ctx, op, g.SessionID, g.AgentID)
	if err != nil {
		return session.Grant{}, err
	}
	defer cancel()
	legacy := ""
	if g.Legacy {
		legacy = legacyEntry(&g)
	}
	k := s.grantKeysOf(&g)
	v, err := s.run(ctx, scriptGrantRevoke, k.keys(), g.ID, legacy, s.retMillis, bucketField(g.Tool, ""), k.kind())
	if errors.Is(err, redis.Nil) {
		return session.Grant{}, fmt.Errorf("redisstore: %s %s: %w", op, g.ID, session.ErrNotFound)
	}
	if err != nil {
		return session.Grant{}, s.fail(op, err)
	}
	got, err := parseEntries([]any{v}, g.IsSession(), g.Owner())
	if err != nil {
		return session.Grant{}, s.corrupt(op, err)
	}
	return got[0], nil
}

// RevokeGrants removes the grants of sessionID and of agentID (each when
// not empty) and returns the live ones it removed; both empty is
// ErrInvalid. Both deletions go in one pipeline; each is atomic.
func (s *Store) RevokeGrants(ctx context.Context, sessionID, agentID string) ([]session.Grant, error) {
	const op = "revoke grants"
	if sessionID == "" && agentID == "" {
		return nil, fmt.Errorf("redisstore: %s: %w: session id and agent id are both empty", op, session.ErrInvalid)
	}
	ctx, cancel, err := s.beginNames(ctx, op, sessionID, agentID)
	if err != nil {
		return nil, err
	}
	defer cancel()
	type list struct {
		c       *call
		session bool
		owner   string
	}
	var lists []list
	for _, k := range []grantKeys{s.ownerKeys(true, sessionID), s.ownerKeys(false, agentID)} {
		if k.owner != "" {
			lists = append(lists, list{scall(scriptRevoke, k.keys(), s.retMillis, k.kind()), k.session, k.owner})
		}
	}
	calls := make([]*call, len(lists))
	for i, l := range lists {
		calls[i] = l.c
	}
	s.exec(ctx, calls...)
	var out []session.Grant
	for _, l := range lists {
		v, err := l.c.reply()
		if err != nil {
			return out, s.fail(op, err)
		}
		vals, ok := v.([]any)
		if !ok {
			return out, s.corrupt(op, fmt.Errorf("reply %T", v))
		}
		gs, err := parseEntries(vals, l.session, l.owner)
		if err != nil {
			return out, s.corrupt(op, err)
		}
		session.SortGrants(gs)
		out = append(out, gs...)
	}
	return out, nil
}

// ExpireGrants removes and returns the expired grants of the lists the
// teams' indexes name; see [session.Grants.ExpireGrants]. Each list's
// removal is one script: an expired grant is returned once.
func (s *Store) ExpireGrants(ctx context.Context, teams []string) ([]session.Grant, error) {
	const op = "expire grants"
	ctx, cancel, err := s.beginNames(ctx, op, "", "", teams...)
	if err != nil {
		return nil, err
	}
	defer cancel()
	p := s.rdb.Pipeline()
	members := make([]*redis.StringSliceCmd, len(teams))
	for i, t := range teams {
		members[i] = p.SMembers(ctx, s.k.teamGrants(t))
	}
	if len(teams) > 0 {
		if _, err := p.Exec(ctx); err != nil {
			return nil, s.fail(op, err)
		}
	}
	var refs []string
	for _, m := range members {
		refs = append(refs, m.Val()...)
	}
	slices.Sort(refs)
	refs = slices.Compact(refs)
	if len(refs) == 0 {
		return nil, nil
	}
	calls := make([]*call, len(refs))
	for i, ref := range refs {
		k := s.refKeys(ref)
		calls[i] = scall(scriptGrantExpire, k.keys(), s.retMillis, k.kind())
	}
	s.exec(ctx, calls...)
	var out []session.Grant
	var gone []string
	for i, c := range calls {
		v, err := c.reply()
		if err != nil {
			return out, s.fail(op, err)
		}
		vals, ok := v.([]any)
		if !ok || len(vals) == 0 {
			return out, s.corrupt(op, fmt.Errorf("reply %T", v))
		}
		if n, _ := asInt(vals[0]); n == 0 {
			gone = append(gone, refs[i])
			continue
		}
		gs, err := parseEntries(vals[1:], refs[i][0] == 's', refs[i][2:])
		if err != nil {
			return out, s.corrupt(op, err)
		}
		out = append(out, gs...)
	}
	if len(gone) > 0 {
		s.forgetLists(ctx, teams, gone)
	}
	return out, nil
}

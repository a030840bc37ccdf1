package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/signoff-dev/signoff/pkg/session"
)

// The grant index (docs/STATE.md "Grants"): the grants of a session or an
// agent are one hash, P:{S}:grants:b or P:agent:{A}:grants:b. A field
// "<len(tool)>:<tool><program>" is a bucket: the entries (length-prefixed,
// as the list before it) of the grants of that tool indexed under that
// program (session.GrantProgram; "" is the tool's own bucket); a field
// "#<id>" names the bucket of grant <id>. Lookup reads the buckets its
// query names with one HMGET; the scripts keep both kinds of field in step.
// The single-string list of the layout before (P:{S}:grants), while it
// exists, is read beside the index and moved into it by the first grant
// script that touches its owner (g_migrate in prelude.lua).

// bucketField is the field of the grant index holding the grants of tool
// indexed under program.
func bucketField(tool, program string) string {
	return strconv.Itoa(len(tool)) + ":" + tool + program
}

// bucketOf is the bucket field of g.
func bucketOf(g *session.Grant) string { return bucketField(g.Tool, session.GrantProgram(g)) }

// bucketTool returns the tool of a bucket field; false for an id field.
func bucketTool(field string) (string, bool) {
	if field == "" || field[0] == '#' {
		return "", false
	}
	tool, _, ok := parseAgentGrantMember(field)
	return tool, ok
}

// lookupFields are the buckets a Lookup for q reads, or nil when it reads
// the whole index (q names no tool, or not its programs).
func lookupFields(q *session.LookupQuery) []string {
	if q.Tool == "" || !q.ProgramsKnown {
		return nil
	}
	out := make([]string, 1, 1+len(q.Programs))
	out[0] = bucketField(q.Tool, "")
	for _, p := range q.Programs {
		if f := bucketField(q.Tool, p); p != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// grantKeys are the keys of one session's or agent's grants.
type grantKeys struct {
	idx, gone, old string
	session        bool
	owner          string
}

func (s *Store) ownerKeys(sessionList bool, owner string) grantKeys {
	old := s.k.agentGrants(owner)
	idx := s.k.agentGrantIndex(owner)
	if sessionList {
		old, idx = s.k.sessionGrants(owner), s.k.sessionGrantIndex(owner)
	}
	return grantKeys{idx: idx, gone: removedKey(old), old: old, session: sessionList, owner: owner}
}

// grantKeysOf returns the keys of the grants g belongs with.
func (s *Store) grantKeysOf(g *session.Grant) grantKeys { return s.ownerKeys(g.IsSession(), g.Owner()) }

// refKeys returns the keys of the grants a team index entry names.
func (s *Store) refKeys(ref string) grantKeys { return s.ownerKeys(ref[0] == 's', ref[2:]) }

// keys lists the keys a grant script takes: the index, the removed ids,
// the old list.
func (k grantKeys) keys() []string { return []string{k.idx, k.gone, k.old} }

// kind is the scripts' argument for the owner's kind.
func (k grantKeys) kind() string {
	if k.session {
		return "s"
	}
	return "a"
}

// grantReads are the plain commands that read one owner's grants: the old
// list, and the index whole (all) or the buckets fields (some).
type grantReads struct {
	k    grantKeys
	old  *redis.StringCmd
	all  *redis.MapStringStringCmd
	some *redis.SliceCmd
	// tool, with all, keeps only the buckets of that tool.
	tool string
}

// readGrants returns the commands reading k's grants: every bucket when
// fields is nil (of tool only, when set), else those buckets. touch, for a
// session's grants, renews their retention (ms): a read counts as a use.
func readGrants(ctx context.Context, k grantKeys, fields []string, tool, touch string) (grantReads, []redis.Cmder) {
	r := grantReads{k: k, tool: tool}
	var cmds []redis.Cmder
	if touch != "" {
		r.old = redis.NewStringCmd(ctx, "getex", k.old, "px", touch)
		cmds = append(cmds, r.old, redis.NewBoolCmd(ctx, "pexpire", k.idx, touch))
	} else {
		r.old = redis.NewStringCmd(ctx, "get", k.old)
		cmds = append(cmds, r.old)
	}
	if fields == nil {
		r.all = redis.NewMapStringStringCmd(ctx, "hgetall", k.idx)
		return r, append(cmds, r.all)
	}
	args := make([]any, 2, 2+len(fields))
	args[0], args[1] = "hmget", k.idx
	for _, f := range fields {
		args = append(args, f)
	}
	r.some = redis.NewSliceCmd(ctx, args...)
	return r, append(cmds, r.some)
}

// movedMark is what an owner's old list key holds once its grants are in
// the index (G_MOVED in lua/prelude.lua): an empty list here, a value
// brokers of the old layout cannot read, so that they fail instead of
// missing the grants (docs/STATE.md "Upgrading to the grant index").
const movedMark = "!grants moved to the grant index; upgrade every broker"

// oldList returns the old-layout list read, if there is one.
func (r *grantReads) oldList() (string, bool) {
	raw, err := r.old.Result()
	return raw, err == nil && raw != movedMark
}

// found reports whether the owner has grants in either layout.
func (r *grantReads) found() bool {
	if _, ok := r.oldList(); ok {
		return true
	}
	return r.all != nil && len(r.all.Val()) > 0
}

// grants appends the live grants read that keep accepts, by creation time
// then id, each id once (a grant an older broker stored again in the old
// list during an upgrade is in both layouts).
func (r *grantReads) grants(out []session.Grant, now time.Time, keep func(*session.Grant) bool) ([]session.Grant, error) {
	n := len(out)
	var err error
	if raw, ok := r.oldList(); ok {
		if out, err = parseList(out, raw, r.k.session, r.k.owner, now, keep); err != nil {
			return out, fmt.Errorf("grant list %s: %w", r.k.old, err)
		}
	}
	switch {
	case r.all != nil:
		for f, raw := range r.all.Val() {
			if tool, ok := bucketTool(f); !ok || (r.tool != "" && tool != r.tool) {
				continue
			}
			if out, err = parseList(out, raw, r.k.session, r.k.owner, now, keep); err != nil {
				return out, fmt.Errorf("grant index %s: %w", r.k.idx, err)
			}
		}
	case r.some != nil:
		for _, v := range r.some.Val() {
			raw, ok := v.(string)
			if !ok {
				continue // no such bucket
			}
			if out, err = parseList(out, raw, r.k.session, r.k.owner, now, keep); err != nil {
				return out, fmt.Errorf("grant index %s: %w", r.k.idx, err)
			}
		}
	}
	session.SortGrants(out[n:])
	return slices.CompactFunc(out, func(a, b session.Grant) bool { return a.ID == b.ID }), nil
}

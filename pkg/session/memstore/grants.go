package memstore

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/signoff-dev/signoff/pkg/session"
)

// Lookup reads the existing record, the stop signal and the grants for one
// request; see [session.Requests.Lookup]. It counts as a use of the session's
// grants: their list lives Retention from now.
func (s *Store) Lookup(ctx context.Context, q session.LookupQuery) (session.Lookup, error) {
	if err := q.Validate(); err != nil {
		return session.Lookup{}, fmt.Errorf("memstore: lookup: %w", err)
	}
	now, err := s.lock(ctx, "lookup")
	if err != nil {
		return session.Lookup{}, err
	}
	defer s.mu.Unlock()
	var l session.Lookup
	if q.RequestID != "" {
		if e, ok := s.requests[key{q.SessionID, q.RequestID}]; ok {
			l.Existing = e.rec.Clone()
		}
	}
	if st, ok := s.stops[q.SessionID]; ok {
		l.Stopped, l.StopReason, l.StopRejections = true, st.Reason, slices.Clone(st.Rejections)
	}
	if q.SkipGrants {
		return l, nil
	}
	// The grants q reads (the buckets of the grant index it names, see
	// [session.LookupQuery.Reads]): the memory store scans whole lists,
	// filtering what the Redis store leaves unread.
	if gl := s.sessionGrants[q.SessionID]; gl != nil {
		s.grantExpiry.reset(gl.expiry, now.Add(s.retention))
		l.Grants = appendLive(l.Grants, gl, now, q.Reads)
	}
	if q.AgentID != "" {
		l.Grants = appendLive(l.Grants, s.agentGrants[q.AgentID], now, q.Reads)
	}
	return l, nil
}

// appendLive appends the grants of gl that keep selects and that have not
// expired at now, as copies, by creation time then id.
func appendLive(out []session.Grant, gl *grantList, now time.Time, keep func(*session.Grant) bool) []session.Grant {
	if gl == nil {
		return out
	}
	n := len(out)
	for i := range gl.grants {
		g := &gl.grants[i]
		if !expired(g, now) && keep(g) {
			out = append(out, cloneGrant(g))
		}
	}
	session.SortGrants(out[n:])
	return out
}

func expired(g *session.Grant, now time.Time) bool {
	return !g.ExpiresAt.IsZero() && !now.Before(g.ExpiresAt)
}

func cloneGrant(g *session.Grant) session.Grant {
	c := *g
	c.Patterns = slices.Clone(g.Patterns)
	c.Teams = slices.Clone(g.Teams)
	c.Approvers = slices.Clone(g.Approvers)
	return c
}

// ownerRef names the list of a grant in a team's index.
func ownerRef(g *session.Grant) string {
	if g.IsSession() {
		return "s:" + g.SessionID
	}
	return "a:" + g.AgentID
}

// grantListOf returns the list a grant belongs to, creating it when create is set.
func (s *Store) grantListOf(g *session.Grant, now time.Time, create bool) *grantList {
	if g.IsSession() {
		gl := s.sessionGrants[g.SessionID]
		if gl == nil && create {
			gl = &grantList{expiry: &timer[string]{at: now.Add(s.retention), seq: s.nextSeq(), v: g.SessionID}}
			s.sessionGrants[g.SessionID] = gl
			s.grantExpiry.add(gl.expiry)
		}
		return gl
	}
	gl := s.agentGrants[g.AgentID]
	if gl == nil && create {
		gl = &grantList{}
		s.agentGrants[g.AgentID] = gl
	}
	return gl
}

// purgeExpired removes the expired grants of gl (of bucket b's tool and
// program only, when b is not nil, as the Redis store's grant_add) and
// returns them.
func purgeExpired(gl *grantList, now time.Time, b *session.Grant) []session.Grant {
	var out []session.Grant
	gl.grants = slices.DeleteFunc(gl.grants, func(g session.Grant) bool {
		if expired(&g, now) && (b == nil || (g.Tool == b.Tool && session.GrantProgram(&g) == session.GrantProgram(b))) {
			out = append(out, g)
			return true
		}
		return false
	})
	return out
}

// grantsRemoved records the ids of grants revoked or expired, which
// AddGrant refuses for Retention (an outbox retry must not bring one back),
// and forgets those past that (swept when the map grows).
func (s *Store) grantsRemoved(gs []session.Grant, now time.Time) {
	if len(s.removedGrants) >= removedSweep {
		for id, until := range s.removedGrants {
			if !now.Before(until) {
				delete(s.removedGrants, id)
			}
		}
	}
	for i := range gs {
		s.removedGrants[gs[i].ID] = now.Add(s.retention)
	}
}

// removedSweep is the size of removedGrants from which a removal sweeps it.
const removedSweep = 1024

// grantRemoved reports whether the grant id was revoked or expired within
// Retention.
func (s *Store) grantRemoved(id string, now time.Time) bool {
	until, ok := s.removedGrants[id]
	return ok && now.Before(until)
}

// AddGrant stores a standing grant; see [session.Grants.AddGrant]. Adding
// a session grant (re)starts the retention of the session's grants.
func (s *Store) AddGrant(ctx context.Context, g session.Grant) (session.Grant, bool, []session.Grant, error) {
	if err := g.Validate(); err != nil {
		return session.Grant{}, false, nil, fmt.Errorf("memstore: add grant: %w", err)
	}
	now, err := s.lock(ctx, "add grant")
	if err != nil {
		return session.Grant{}, false, nil, err
	}
	defer s.mu.Unlock()
	if s.grantRemoved(g.ID, now) {
		return session.Grant{}, false, nil, fmt.Errorf("memstore: add grant %s: %w", g.ID, session.ErrGrantRemoved)
	}
	gl := s.grantListOf(&g, now, true)
	if g.IsSession() {
		s.grantExpiry.reset(gl.expiry, now.Add(s.retention))
	}
	// The stored grant with g's id, if any, decides the bucket (a retry
	// stands for the grant first stored).
	b := &g
	if i := slices.IndexFunc(gl.grants, func(x session.Grant) bool { return x.ID == g.ID }); i >= 0 {
		b = &session.Grant{Grant: gl.grants[i].Grant}
	}
	purged := purgeExpired(gl, now, b)
	s.grantsRemoved(purged, now)
	if slices.ContainsFunc(purged, func(p session.Grant) bool { return p.ID == g.ID }) {
		return session.Grant{}, false, nil, fmt.Errorf("memstore: add grant %s: %w", g.ID, session.ErrGrantRemoved)
	}
	for i := range gl.grants {
		if gl.grants[i].ID == g.ID {
			return cloneGrant(&gl.grants[i]), false, purged, nil
		}
	}
	g = cloneGrant(&g)
	g.CreatedAt = now.UTC()
	g.ExpiresAt = time.Time{}
	if g.MaxAge > 0 {
		g.ExpiresAt = g.CreatedAt.Add(g.MaxAge)
	}
	g.MaxAge = 0
	g.Legacy = false
	gl.grants = append(gl.grants, g)
	for _, t := range g.Teams {
		idx := s.teamGrants[t]
		if idx == nil {
			idx = make(map[string]struct{})
			s.teamGrants[t] = idx
		}
		idx[ownerRef(&g)] = struct{}{}
	}
	return cloneGrant(&g), true, purged, nil
}

// ListGrants returns the live grants q selects; see
// [session.Grants.ListGrants].
func (s *Store) ListGrants(ctx context.Context, q session.GrantQuery) ([]session.Grant, error) {
	if err := q.Validate(); err != nil {
		return nil, fmt.Errorf("memstore: list grants: %w", err)
	}
	now, err := s.lock(ctx, "list grants")
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []session.Grant
	if q.SessionID != "" || q.AgentID != "" {
		if q.SessionID != "" {
			out = appendLive(out, s.sessionGrants[q.SessionID], now, q.Selects)
		}
		if q.AgentID != "" {
			out = appendLive(out, s.agentGrants[q.AgentID], now, q.Selects)
		}
		return out, nil
	}
	var sessions, agents []string
	for _, t := range q.Teams {
		for ref := range s.teamGrants[t] {
			if id, ok := cutRef(ref, "s:"); ok {
				sessions = append(sessions, id)
			} else if id, ok := cutRef(ref, "a:"); ok {
				agents = append(agents, id)
			}
		}
	}
	slices.Sort(sessions)
	slices.Sort(agents)
	for _, id := range slices.Compact(sessions) {
		out = appendLive(out, s.sessionGrants[id], now, q.Selects)
	}
	for _, id := range slices.Compact(agents) {
		out = appendLive(out, s.agentGrants[id], now, q.Selects)
	}
	return out, nil
}

func cutRef(ref, prefix string) (string, bool) {
	if len(ref) > len(prefix) && ref[:len(prefix)] == prefix {
		return ref[len(prefix):], true
	}
	return "", false
}

// RevokeGrant removes one grant by id; see [session.Grants.RevokeGrant].
func (s *Store) RevokeGrant(ctx context.Context, g session.Grant) (session.Grant, error) {
	if g.ID == "" || g.Owner() == "" {
		return session.Grant{}, fmt.Errorf("memstore: revoke grant: %w: the grant's id and its session or agent are needed", session.ErrInvalid)
	}
	now, err := s.lock(ctx, "revoke grant")
	if err != nil {
		return session.Grant{}, err
	}
	defer s.mu.Unlock()
	gl := s.grantListOf(&g, now, false)
	if gl == nil {
		return session.Grant{}, fmt.Errorf("memstore: revoke grant %s: %w", g.ID, session.ErrNotFound)
	}
	for i := range gl.grants {
		if gl.grants[i].ID == g.ID && !expired(&gl.grants[i], now) {
			out := gl.grants[i]
			gl.grants = slices.Delete(gl.grants, i, i+1)
			s.grantsRemoved([]session.Grant{out}, now)
			return out, nil
		}
	}
	return session.Grant{}, fmt.Errorf("memstore: revoke grant %s: %w", g.ID, session.ErrNotFound)
}

// RevokeGrants removes the grants of sessionID and of agentID (each when
// not empty) and returns them. Both empty is ErrInvalid: a revoke that
// names nothing is a caller bug.
func (s *Store) RevokeGrants(ctx context.Context, sessionID, agentID string) ([]session.Grant, error) {
	if sessionID == "" && agentID == "" {
		return nil, fmt.Errorf("memstore: revoke grants: %w: session id and agent id are both empty", session.ErrInvalid)
	}
	now, err := s.lock(ctx, "revoke grants")
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []session.Grant
	if gl := s.sessionGrants[sessionID]; sessionID != "" && gl != nil {
		out = appendLive(out, gl, now, session.GrantQuery{}.Selects)
		s.grantsRemoved(gl.grants, now)
		s.grantExpiry.remove(gl.expiry)
		delete(s.sessionGrants, sessionID)
	}
	if gl := s.agentGrants[agentID]; agentID != "" && gl != nil {
		out = appendLive(out, gl, now, session.GrantQuery{}.Selects)
		s.grantsRemoved(gl.grants, now)
		delete(s.agentGrants, agentID)
	}
	return out, nil
}

// ExpireGrants removes and returns the expired grants of the lists indexed
// under teams; see [session.Grants.ExpireGrants].
func (s *Store) ExpireGrants(ctx context.Context, teams []string) ([]session.Grant, error) {
	now, err := s.lock(ctx, "expire grants")
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []session.Grant
	for _, t := range teams {
		for ref := range s.teamGrants[t] {
			var gl *grantList
			if id, ok := cutRef(ref, "s:"); ok {
				gl = s.sessionGrants[id]
			} else if id, ok := cutRef(ref, "a:"); ok {
				gl = s.agentGrants[id]
			}
			if gl == nil {
				delete(s.teamGrants[t], ref) // the list is gone
				continue
			}
			purged := purgeExpired(gl, now, nil)
			s.grantsRemoved(purged, now)
			out = append(out, purged...)
		}
	}
	return out, nil
}

package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/signoff-dev/signoff/pkg/session"
)

// Lookup reads the existing record, the stop signal and the grants for one
// request; see [session.Store.Lookup]. It counts as a use of the session's
// grants: their expiry moves to Retention from now.
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
	l.StopReason, l.Stopped = s.stops[q.SessionID]
	if sg := s.sessionGrants[q.SessionID]; sg != nil {
		s.grantExpiry.reset(sg.expiry, now.Add(s.retention))
		l.SessionTools = make([]string, 0, len(sg.tools))
		for tool := range sg.tools {
			l.SessionTools = append(l.SessionTools, tool)
		}
		slices.Sort(l.SessionTools)
	}
	if q.AgentID != "" {
		for g := range s.agentGrants[q.AgentID] {
			l.AgentGrants = append(l.AgentGrants, session.Grant{
				Kind: session.GrantAgent, AgentID: q.AgentID, Tool: g.tool, Pattern: g.pattern,
			})
		}
		slices.SortFunc(l.AgentGrants, func(a, b session.Grant) int {
			return cmp.Or(cmp.Compare(a.Tool, b.Tool), cmp.Compare(a.Pattern, b.Pattern))
		})
	}
	return l, nil
}

// AddGrant stores a standing grant; adding an existing one only refreshes a
// session grant's expiry.
func (s *Store) AddGrant(ctx context.Context, g session.Grant) error {
	if err := g.Validate(); err != nil {
		return fmt.Errorf("memstore: add grant: %w", err)
	}
	now, err := s.lock(ctx, "add grant")
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	switch g.Kind {
	case session.GrantSession:
		sg := s.sessionGrants[g.SessionID]
		if sg == nil {
			sg = &sessionGrants{
				tools:  make(map[string]struct{}),
				expiry: &timer[string]{at: now.Add(s.retention), seq: s.nextSeq(), v: g.SessionID},
			}
			s.sessionGrants[g.SessionID] = sg
			s.grantExpiry.add(sg.expiry)
		} else {
			s.grantExpiry.reset(sg.expiry, now.Add(s.retention))
		}
		sg.tools[g.Tool] = struct{}{}
	case session.GrantAgent:
		set := s.agentGrants[g.AgentID]
		if set == nil {
			set = make(map[agentGrant]struct{})
			s.agentGrants[g.AgentID] = set
		}
		set[agentGrant{g.Tool, g.Pattern}] = struct{}{}
	}
	return nil
}

// RevokeGrants removes the session grants of sessionID and the agent grants
// of agentID (each when not empty) and returns how many it removed. Both
// empty is ErrInvalid: a revoke that names nothing is a caller bug.
func (s *Store) RevokeGrants(ctx context.Context, sessionID, agentID string) (int, error) {
	if sessionID == "" && agentID == "" {
		return 0, fmt.Errorf("memstore: revoke grants: %w: session id and agent id are both empty", session.ErrInvalid)
	}
	if _, err := s.lock(ctx, "revoke grants"); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	n := 0
	if sg := s.sessionGrants[sessionID]; sessionID != "" && sg != nil {
		n += len(sg.tools)
		s.grantExpiry.remove(sg.expiry)
		delete(s.sessionGrants, sessionID)
	}
	if agentID != "" {
		n += len(s.agentGrants[agentID])
		delete(s.agentGrants, agentID)
	}
	return n, nil
}

package redisstore

import (
	"context"
	"fmt"

	"github.com/signoff-dev/signoff/pkg/session"
)

// AddGrant stores a standing grant. A session grant (re)starts the
// retention period of the session's grants; an agent grant lasts until
// revoked. Adding an existing grant is a no-op otherwise.
func (s *Store) AddGrant(ctx context.Context, g session.Grant) error {
	const op = "add grant"
	if err := g.Validate(); err != nil {
		return fmt.Errorf("redisstore: %s: %w", op, err)
	}
	switch g.Kind {
	case session.GrantSession:
		if err := checkTag("session id", g.SessionID); err != nil {
			return fmt.Errorf("redisstore: %s: %w", op, err)
		}
	case session.GrantAgent:
		if err := checkTag("agent id", g.AgentID); err != nil {
			return fmt.Errorf("redisstore: %s: %w", op, err)
		}
	}
	ctx, cancel, err := s.begin(ctx, op)
	if err != nil {
		return err
	}
	defer cancel()
	if g.Kind == session.GrantSession {
		_, err = s.run(ctx, scriptGrantAdd, []string{s.k.sessionGrants(g.SessionID)}, g.Tool, s.retMillis)
	} else {
		_, err = s.run(ctx, scriptGrantAdd, []string{s.k.agentGrants(g.AgentID)}, agentGrantMember(g.Tool, g.Pattern), "")
	}
	if err != nil {
		return s.fail(op, err)
	}
	return nil
}

// RevokeGrants removes the session grants of sessionID and the agent grants
// of agentID (each when not empty) and returns how many it removed; both
// empty is ErrInvalid. Both deletions go in one pipeline; each is atomic.
func (s *Store) RevokeGrants(ctx context.Context, sessionID, agentID string) (int, error) {
	const op = "revoke grants"
	if sessionID == "" && agentID == "" {
		return 0, fmt.Errorf("redisstore: %s: %w: session id and agent id are both empty", op, session.ErrInvalid)
	}
	if err := checkNames(sessionID, agentID); err != nil {
		return 0, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	ctx, cancel, err := s.begin(ctx, op)
	if err != nil {
		return 0, err
	}
	defer cancel()
	var calls []*call
	if sessionID != "" {
		calls = append(calls, scall(scriptRevoke, []string{s.k.sessionGrants(sessionID)}))
	}
	if agentID != "" {
		calls = append(calls, scall(scriptRevoke, []string{s.k.agentGrants(agentID)}))
	}
	s.exec(ctx, calls...)
	n := 0
	for _, c := range calls {
		v, err := c.reply()
		if err != nil {
			return n, s.fail(op, err)
		}
		k, err := asInt(v)
		if err != nil {
			return n, s.corrupt(op, err)
		}
		n += int(k)
	}
	return n, nil
}

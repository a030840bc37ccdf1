package session

import (
	"context"
	"fmt"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Fleet keeps what an operator sets for the whole fleet and every replica
// reads whole: the fleet stops (DESIGN §4 step 4) and the agents' last
// seen (docs/OPERATIONS.md "Operating a fleet"). Neither is on a request's
// round trip: replicas read the stops in the background and write last
// seen in batches.
type Fleet interface {
	// PutFleetStop stores s, replacing the stop with its ID. s.ID must be
	// s.Selector.Key() and the selector valid (else ErrInvalid). The store
	// sets CreatedAt by its clock and returns the stop stored.
	PutFleetStop(ctx context.Context, s messages.FleetStop) (messages.FleetStop, error)
	// DeleteFleetStop removes the stop id and returns it, or ErrNotFound.
	DeleteFleetStop(ctx context.Context, id string) (messages.FleetStop, error)
	// FleetStops returns every stop in force, by ID.
	FleetStops(ctx context.Context) ([]messages.FleetStop, error)

	// RecordSeen merges a batch of last-seen entries, one per agent id
	// (each entry's Requests are the requests it counts): per agent the
	// fields of the entry with the latest LastSeen win, FirstSeen is the
	// earliest and Requests add up. Atomic per agent: concurrent batches
	// of many replicas lose no count.
	RecordSeen(ctx context.Context, seen []messages.AgentSeen) error
	// ListSeen returns every agent's last seen, by agent id.
	ListSeen(ctx context.Context) ([]messages.AgentSeen, error)
}

// CheckFleetStop returns an error wrapping [ErrInvalid] unless s can be
// stored: a valid selector and the ID that is its key.
func CheckFleetStop(s *messages.FleetStop) error {
	if err := s.Selector.Validate(); err != nil {
		return fmt.Errorf("%w: fleet stop: %w", ErrInvalid, err)
	}
	if s.ID != s.Selector.Key() {
		return fmt.Errorf("%w: fleet stop id %q is not its selector's key %q", ErrInvalid, s.ID, s.Selector.Key())
	}
	return nil
}

// CheckSeen returns an error wrapping [ErrInvalid] unless every entry names
// a valid agent id and has LastSeen set.
func CheckSeen(seen []messages.AgentSeen) error {
	for i := range seen {
		if err := messages.ValidateToken("agent id", seen[i].AgentID); err != nil {
			return fmt.Errorf("%w: last seen %d: %w", ErrInvalid, i, err)
		}
		if seen[i].LastSeen.IsZero() {
			return fmt.Errorf("%w: last seen of %s: last_seen is not set", ErrInvalid, seen[i].AgentID)
		}
	}
	return nil
}

// MergeSeen merges b into a (the same agent), as RecordSeen does.
func MergeSeen(a, b messages.AgentSeen) messages.AgentSeen {
	out := a
	if b.LastSeen.After(a.LastSeen) {
		out = b
	}
	out.Requests = a.Requests + b.Requests
	out.FirstSeen = a.FirstSeen
	if a.FirstSeen.IsZero() || (!b.FirstSeen.IsZero() && b.FirstSeen.Before(a.FirstSeen)) {
		out.FirstSeen = b.FirstSeen
	}
	return out
}

// MergeSeenInto merges each entry of seen into m by agent id, as
// RecordSeen does, and returns m (a new map when m is nil).
func MergeSeenInto(m map[string]messages.AgentSeen, seen []messages.AgentSeen) map[string]messages.AgentSeen {
	if m == nil {
		m = make(map[string]messages.AgentSeen, len(seen))
	}
	for _, a := range seen {
		if old, ok := m[a.AgentID]; ok {
			a = MergeSeen(old, a)
		}
		m[a.AgentID] = a
	}
	return m
}

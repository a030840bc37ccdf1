package memstore

import (
	"context"
	"fmt"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// PutFleetStop implements [session.Fleet].
func (s *Store) PutFleetStop(ctx context.Context, st messages.FleetStop) (messages.FleetStop, error) {
	if err := session.CheckFleetStop(&st); err != nil {
		return messages.FleetStop{}, fmt.Errorf("memstore: put fleet stop: %w", err)
	}
	now, err := s.lock(ctx, "put fleet stop")
	if err != nil {
		return messages.FleetStop{}, err
	}
	defer s.mu.Unlock()
	st.CreatedAt = now.UTC()
	if s.fleetStops == nil {
		s.fleetStops = map[string]messages.FleetStop{}
	}
	s.fleetStops[st.ID] = st
	return st, nil
}

// DeleteFleetStop implements [session.Fleet].
func (s *Store) DeleteFleetStop(ctx context.Context, id string) (messages.FleetStop, error) {
	if _, err := s.lock(ctx, "delete fleet stop"); err != nil {
		return messages.FleetStop{}, err
	}
	defer s.mu.Unlock()
	st, ok := s.fleetStops[id]
	if !ok {
		return messages.FleetStop{}, fmt.Errorf("memstore: delete fleet stop %q: %w", id, session.ErrNotFound)
	}
	delete(s.fleetStops, id)
	return st, nil
}

// FleetStops implements [session.Fleet].
func (s *Store) FleetStops(ctx context.Context) ([]messages.FleetStop, error) {
	if _, err := s.lock(ctx, "fleet stops"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	return byKey(s.fleetStops), nil
}

// RecordSeen implements [session.Fleet].
func (s *Store) RecordSeen(ctx context.Context, seen []messages.AgentSeen) error {
	if err := session.CheckSeen(seen); err != nil {
		return fmt.Errorf("memstore: record seen: %w", err)
	}
	if _, err := s.lock(ctx, "record seen"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	s.seen = session.MergeSeenInto(s.seen, seen)
	return nil
}

// ListSeen implements [session.Fleet].
func (s *Store) ListSeen(ctx context.Context) ([]messages.AgentSeen, error) {
	if _, err := s.lock(ctx, "list seen"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	return byKey(s.seen), nil
}

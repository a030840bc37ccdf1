package memstore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// breakerState is the memory store's breaker state: per breaker and rule,
// each agent's last hit; the tripped breakers by name.
type breakerState struct {
	hits  map[string]map[string]map[string]time.Time
	trips map[string]messages.BreakerTrip
}

// HitBreakers implements [session.Breakers].
func (s *Store) HitBreakers(ctx context.Context, hits []session.BreakerHit) ([]messages.BreakerTrip, error) {
	if err := session.CheckBreakerHits(hits); err != nil {
		return nil, fmt.Errorf("memstore: hit breakers: %w", err)
	}
	now, err := s.lock(ctx, "hit breakers")
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	b := &s.breakers
	if b.hits == nil {
		b.hits, b.trips = map[string]map[string]map[string]time.Time{}, map[string]messages.BreakerTrip{}
	}
	var out []messages.BreakerTrip
	for i := range hits {
		h := &hits[i]
		agents := b.hit(h, now)
		if _, tripped := b.trips[h.Breaker]; tripped || len(agents) < h.Threshold {
			continue
		}
		t := h.Trip(agents, now)
		b.trips[h.Breaker] = t
		out = append(out, t)
	}
	return out, nil
}

// hit records h at now and returns the agents counted for its breaker and
// rule, oldest hit first: those within the window, at most the threshold.
func (b *breakerState) hit(h *session.BreakerHit, now time.Time) []string {
	rules := b.hits[h.Breaker]
	if rules == nil {
		rules = map[string]map[string]time.Time{}
		b.hits[h.Breaker] = rules
	}
	last := rules[h.Rule]
	if last == nil {
		last = map[string]time.Time{}
		rules[h.Rule] = last
	}
	last[h.AgentID] = now
	// Every rule's hits past the window go, and rules left without any:
	// memory stays bounded by what was hit within the window.
	maps.DeleteFunc(rules, func(_ string, agents map[string]time.Time) bool {
		maps.DeleteFunc(agents, func(_ string, at time.Time) bool { return now.Sub(at) >= h.Window })
		return len(agents) == 0
	})
	agents := slices.SortedFunc(maps.Keys(last), func(a, c string) int {
		return cmp.Or(last[a].Compare(last[c]), cmp.Compare(a, c))
	})
	if n := len(agents) - h.Threshold; n > 0 {
		for _, a := range agents[:n] {
			delete(last, a)
		}
		agents = agents[n:]
	}
	return agents
}

// BreakerTrips implements [session.Breakers].
func (s *Store) BreakerTrips(ctx context.Context) ([]messages.BreakerTrip, error) {
	if _, err := s.lock(ctx, "breaker trips"); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	return byKey(s.breakers.trips), nil
}

// ResetBreaker implements [session.Breakers].
func (s *Store) ResetBreaker(ctx context.Context, name string) (messages.BreakerTrip, error) {
	if _, err := s.lock(ctx, "reset breaker"); err != nil {
		return messages.BreakerTrip{}, err
	}
	defer s.mu.Unlock()
	delete(s.breakers.hits, name)
	t, ok := s.breakers.trips[name]
	if !ok {
		return messages.BreakerTrip{}, fmt.Errorf("memstore: reset breaker %q: not tripped: %w", name, session.ErrNotFound)
	}
	delete(s.breakers.trips, name)
	return t, nil
}

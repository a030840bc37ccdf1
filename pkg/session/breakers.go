package session

import (
	"context"
	"fmt"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// BreakerHit is one agent hitting a deny or safety override that a
// breaker watches (docs/POLICY.md "Breakers"). It carries the breaker's
// settings, so that the store can trip it without the policy.
type BreakerHit struct {
	Breaker   string
	Rule      string // what was hit (messages.BreakerTrip.Rule)
	AgentID   string
	SessionID string
	// Threshold distinct agents within Window trip the breaker.
	Threshold int
	Window    time.Duration
	Selector  messages.Selector
	Team      string
}

// Breakers counts the agents that hit what the outbreak breakers watch and
// keeps the breakers that tripped, for every replica. Counting is off the
// request path: replicas send their hits in batches.
type Breakers interface {
	// HitBreakers records hits, each at the store's clock: per breaker
	// and rule, the distinct agents whose last hit is within the window
	// are counted (an agent that hits twice counts once). A breaker that
	// is not tripped trips when a hit brings its count to the threshold;
	// the trips this call made are returned. Atomic per breaker: of many
	// callers racing, exactly one trips it, until ResetBreaker.
	HitBreakers(ctx context.Context, hits []BreakerHit) ([]messages.BreakerTrip, error)
	// BreakerTrips returns the tripped breakers, by name.
	BreakerTrips(ctx context.Context) ([]messages.BreakerTrip, error)
	// ResetBreaker lifts the trip of breaker name and forgets its counts.
	// It returns the trip it lifted, or ErrNotFound (wrapped) when the
	// breaker was not tripped (its counts are forgotten all the same).
	ResetBreaker(ctx context.Context, name string) (messages.BreakerTrip, error)
}

// CheckBreakerHits returns an error wrapping [ErrInvalid] unless every hit
// can be counted.
func CheckBreakerHits(hits []BreakerHit) error {
	for i := range hits {
		h := &hits[i]
		for _, f := range [][2]string{{"breaker", h.Breaker}, {"agent id", h.AgentID}, {"session id", h.SessionID}} {
			if err := messages.ValidateToken(f[0], f[1]); err != nil {
				return fmt.Errorf("%w: breaker hit %d: %w", ErrInvalid, i, err)
			}
		}
		switch {
		case h.Rule == "":
			return fmt.Errorf("%w: breaker hit %d: rule is empty", ErrInvalid, i)
		case h.Threshold < 1:
			return fmt.Errorf("%w: breaker hit %d: threshold %d is not positive", ErrInvalid, i, h.Threshold)
		case h.Window < time.Millisecond:
			return fmt.Errorf("%w: breaker hit %d: window %s is under a millisecond", ErrInvalid, i, h.Window)
		}
		if err := h.Selector.Validate(); err != nil {
			return fmt.Errorf("%w: breaker hit %d: %w", ErrInvalid, i, err)
		}
	}
	return nil
}

// Trip is the trip h makes, with the agents counted and the time.
func (h *BreakerHit) Trip(agents []string, at time.Time) messages.BreakerTrip {
	return messages.BreakerTrip{Breaker: h.Breaker, Rule: h.Rule, Agents: agents, Threshold: h.Threshold,
		WindowMS: h.Window.Milliseconds(), Selector: h.Selector, Team: h.Team, SessionID: h.SessionID, TrippedAt: at.UTC()}
}

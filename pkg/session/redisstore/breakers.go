package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// The breakers' state (docs/STATE.md "Breakers") shares one hash tag per
// store, so that one script counts a batch of hits and trips atomically:
// the trips hash (breaker → "<µs>\n<agents>\n<JSON>"), per breaker and rule
// a sorted set of agents by last hit (µs), and per breaker an index of its
// sets. The sets and the index expire after the breaker's window.
func (k keys) breakers() string                { return k.prefix + ":brk:{" + k.prefix + "}" }
func (k keys) breakerTrips() string            { return k.breakers() + ":trips" }
func (k keys) breakerIndex(name string) string { return k.breakers() + ":x:" + name }

// breakerHits names a rule by a digest: rule texts are long and free.
func (k keys) breakerHits(name, rule string) string {
	sum := sha256.Sum256([]byte(rule))
	return k.breakers() + ":h:" + name + ":" + hex.EncodeToString(sum[:12])
}

// HitBreakers implements [session.Breakers]: one script call for the batch.
func (s *Store) HitBreakers(ctx context.Context, hits []session.BreakerHit) ([]messages.BreakerTrip, error) {
	const op = "hit breakers"
	if err := session.CheckBreakerHits(hits); err != nil {
		return nil, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	if len(hits) == 0 {
		return nil, nil
	}
	ks := make([]string, 0, 1+2*len(hits))
	ks = append(ks, s.k.breakerTrips())
	args := make([]any, 0, 5*len(hits))
	for i := range hits {
		h := &hits[i]
		js, err := json.Marshal(h.Trip(nil, time.Time{}))
		if err != nil {
			return nil, fmt.Errorf("redisstore: %s: %w", op, err)
		}
		ks = append(ks, s.k.breakerHits(h.Breaker, h.Rule), s.k.breakerIndex(h.Breaker))
		args = append(args, h.Breaker, h.AgentID, h.Threshold, h.Window.Microseconds(), js)
	}
	ctx, cancel, err := s.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	defer cancel()
	a, err := s.runStrings(ctx, op, scriptBreakerHit, ks, args...)
	if err != nil {
		return nil, err
	}
	out := make([]messages.BreakerTrip, 0, len(a))
	for _, raw := range a {
		t, err := decodeTrip(raw)
		if err != nil {
			return nil, s.corrupt(op, err)
		}
		out = append(out, t)
	}
	return out, nil
}

// BreakerTrips implements [session.Breakers]. A trip that cannot be read
// is an error: the caller cannot know whom it covers, and fails closed.
func (s *Store) BreakerTrips(ctx context.Context) ([]messages.BreakerTrip, error) {
	const op = "breaker trips"
	return readHash(ctx, s, op, s.k.breakerTrips(), func(name, v string) (messages.BreakerTrip, error) {
		t, err := decodeTrip(v)
		if err != nil {
			return t, s.corrupt(op, fmt.Errorf("breaker %q: %w", name, err))
		}
		return t, nil
	}, func(a, b messages.BreakerTrip) int { return strings.Compare(a.Breaker, b.Breaker) })
}

// ResetBreaker implements [session.Breakers].
func (s *Store) ResetBreaker(ctx context.Context, name string) (messages.BreakerTrip, error) {
	const op = "reset breaker"
	ctx, cancel, err := s.begin(ctx, op)
	if err != nil {
		return messages.BreakerTrip{}, err
	}
	defer cancel()
	v, err := s.run(ctx, scriptBreakerReset, []string{s.k.breakerTrips(), s.k.breakerIndex(name)}, name)
	if errors.Is(err, redis.Nil) || (err == nil && v == "") {
		return messages.BreakerTrip{}, fmt.Errorf("redisstore: %s %q: not tripped: %w", op, name, session.ErrNotFound)
	}
	if err != nil {
		return messages.BreakerTrip{}, s.fail(op, err)
	}
	raw, _ := asString(v)
	t, err := decodeTrip(raw)
	if err != nil {
		return messages.BreakerTrip{}, s.corrupt(op, err)
	}
	return t, nil
}

// decodeTrip reads a stored trip: "<µs>\n<agents>\n<JSON>".
func decodeTrip(v string) (messages.BreakerTrip, error) {
	parts := strings.SplitN(v, "\n", 3)
	if len(parts) != 3 {
		return messages.BreakerTrip{}, errors.New("stored breaker trip is not readable")
	}
	us, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return messages.BreakerTrip{}, fmt.Errorf("stored breaker trip is not readable: %w", err)
	}
	var t messages.BreakerTrip
	if err := json.Unmarshal([]byte(parts[2]), &t); err != nil {
		return messages.BreakerTrip{}, fmt.Errorf("stored breaker trip is not readable: %w", err)
	}
	t.Agents, t.TrippedAt = strings.Fields(parts[1]), time.UnixMicro(us).UTC()
	return t, nil
}

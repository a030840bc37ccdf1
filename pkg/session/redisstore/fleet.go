package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// The fleet's state is two hashes (docs/STATE.md "Fleet"): the stops by id
// (JSON of messages.FleetStop) and the last seen by agent id
// ("<last µs>|<first µs>|<requests>|<JSON of messages.AgentSeen>", so that
// the merge script compares numbers without decoding JSON).
func (k keys) fleetStops() string { return k.prefix + ":fleet:stops" }
func (k keys) fleetSeen() string  { return k.prefix + ":fleet:seen" }

// scriptFleetStopDelete removes a stop and returns it (nil when absent).
var scriptFleetStopDelete = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], ARGV[1])
if v then redis.call('HDEL', KEYS[1], ARGV[1]) end
return v`)

// scriptSeenMerge merges last-seen entries: ARGV holds, per agent, the
// agent id, last and first seen (µs), the request count and the JSON.
var scriptSeenMerge = redis.NewScript(`
for i = 1, #ARGV, 5 do
  local agent, last, first, n, js = ARGV[i], tonumber(ARGV[i+1]), tonumber(ARGV[i+2]), tonumber(ARGV[i+3]), ARGV[i+4]
  local old = redis.call('HGET', KEYS[1], agent)
  if old then
    local ol, of, on, ojs = string.match(old, '^(%d+)|(%d+)|(%d+)|(.*)$')
    if ol then
      ol, of, on = tonumber(ol), tonumber(of), tonumber(on)
      if ol > last then last, js = ol, ojs end
      if of < first then first = of end
      n = n + on
    end
  end
  redis.call('HSET', KEYS[1], agent, string.format('%d|%d|%d|', last, first, n) .. js)
end
return #ARGV / 5`)

// PutFleetStop implements [session.Fleet].
func (s *Store) PutFleetStop(ctx context.Context, st messages.FleetStop) (messages.FleetStop, error) {
	const op = "put fleet stop"
	if err := session.CheckFleetStop(&st); err != nil {
		return messages.FleetStop{}, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	now, err := s.Now(ctx)
	if err != nil {
		return messages.FleetStop{}, err
	}
	st.CreatedAt = now
	data, err := json.Marshal(st)
	if err != nil {
		return messages.FleetStop{}, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	ctx, cancel, err := s.begin(ctx, op)
	if err != nil {
		return messages.FleetStop{}, err
	}
	defer cancel()
	if err := s.rdb.HSet(ctx, s.k.fleetStops(), st.ID, data).Err(); err != nil {
		return messages.FleetStop{}, s.fail(op, err)
	}
	return st, nil
}

// DeleteFleetStop implements [session.Fleet].
func (s *Store) DeleteFleetStop(ctx context.Context, id string) (messages.FleetStop, error) {
	const op = "delete fleet stop"
	ctx, cancel, err := s.begin(ctx, op)
	if err != nil {
		return messages.FleetStop{}, err
	}
	defer cancel()
	v, err := scriptFleetStopDelete.Run(ctx, s.rdb, []string{s.k.fleetStops()}, id).Text()
	if errors.Is(err, redis.Nil) {
		return messages.FleetStop{}, fmt.Errorf("redisstore: %s %q: %w", op, id, session.ErrNotFound)
	}
	if err != nil {
		return messages.FleetStop{}, s.fail(op, err)
	}
	var st messages.FleetStop
	if err := json.Unmarshal([]byte(v), &st); err != nil {
		return messages.FleetStop{}, fmt.Errorf("redisstore: %s %q: stored stop is not readable: %w", op, id, err)
	}
	return st, nil
}

// FleetStops implements [session.Fleet]. A stored stop that cannot be read
// is an error: the caller cannot know whom it stops, and fails closed.
func (s *Store) FleetStops(ctx context.Context) ([]messages.FleetStop, error) {
	const op = "fleet stops"
	return readHash(ctx, s, op, s.k.fleetStops(), func(id, v string) (messages.FleetStop, error) {
		var st messages.FleetStop
		if err := json.Unmarshal([]byte(v), &st); err != nil {
			return st, fmt.Errorf("redisstore: %s: stop %q is not readable: %w", op, id, err)
		}
		return st, nil
	}, func(a, b messages.FleetStop) int { return strings.Compare(a.ID, b.ID) })
}

// readHash reads every field of the hash key (one call of op), decodes
// each value and returns them in cmp's order. The first value decode
// refuses is the error: the caller cannot know whom it covers, and fails
// closed.
func readHash[T any](ctx context.Context, s *Store, op, key string, decode func(field, value string) (T, error), cmp func(a, b T) int) ([]T, error) {
	ctx, cancel, err := s.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	defer cancel()
	m, err := s.rdb.HGetAll(ctx, key).Result()
	if err != nil {
		return nil, s.fail(op, err)
	}
	out := make([]T, 0, len(m))
	for field, raw := range m {
		v, err := decode(field, raw)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	slices.SortFunc(out, cmp)
	return out, nil
}

// RecordSeen implements [session.Fleet]: one script call for the batch.
func (s *Store) RecordSeen(ctx context.Context, seen []messages.AgentSeen) error {
	const op = "record seen"
	if err := session.CheckSeen(seen); err != nil {
		return fmt.Errorf("redisstore: %s: %w", op, err)
	}
	if len(seen) == 0 {
		return nil
	}
	args := make([]any, 0, 5*len(seen))
	for _, a := range seen {
		first := a.FirstSeen
		if first.IsZero() {
			first = a.LastSeen
		}
		data, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("redisstore: %s: %w", op, err)
		}
		args = append(args, a.AgentID, a.LastSeen.UnixMicro(), first.UnixMicro(), a.Requests, data)
	}
	ctx, cancel, err := s.begin(ctx, op)
	if err != nil {
		return err
	}
	defer cancel()
	if err := scriptSeenMerge.Run(ctx, s.rdb, []string{s.k.fleetSeen()}, args...).Err(); err != nil {
		return s.fail(op, err)
	}
	return nil
}

// ListSeen implements [session.Fleet].
func (s *Store) ListSeen(ctx context.Context) ([]messages.AgentSeen, error) {
	const op = "list seen"
	return readHash(ctx, s, op, s.k.fleetSeen(), func(agent, v string) (messages.AgentSeen, error) {
		a, err := decodeSeen(v)
		if err != nil {
			return a, fmt.Errorf("redisstore: %s: agent %q: %w", op, agent, err)
		}
		return a, nil
	}, func(a, b messages.AgentSeen) int { return strings.Compare(a.AgentID, b.AgentID) })
}

func decodeSeen(v string) (messages.AgentSeen, error) {
	parts := strings.SplitN(v, "|", 4)
	if len(parts) != 4 {
		return messages.AgentSeen{}, errors.New("stored last seen is not readable")
	}
	var nums [3]int64
	for i := range nums {
		n, err := strconv.ParseInt(parts[i], 10, 64)
		if err != nil {
			return messages.AgentSeen{}, fmt.Errorf("stored last seen is not readable: %w", err)
		}
		nums[i] = n
	}
	var a messages.AgentSeen
	if err := json.Unmarshal([]byte(parts[3]), &a); err != nil {
		return messages.AgentSeen{}, fmt.Errorf("stored last seen is not readable: %w", err)
	}
	a.LastSeen, a.FirstSeen, a.Requests = time.UnixMicro(nums[0]).UTC(), time.UnixMicro(nums[1]).UTC(), nums[2]
	return a, nil
}

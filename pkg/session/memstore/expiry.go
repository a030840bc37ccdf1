package memstore

import (
	"context"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// ClaimExpired moves up to limit due requests to expired and returns them,
// earliest expiry first; see [session.Expiry.ClaimExpired]. Requests that a
// transition already expired are returned here too, once; held ones are
// dropped. It costs
// O(k log n) for k claimed requests.
func (s *Store) ClaimExpired(ctx context.Context, limit int) ([]*session.Record, error) {
	now, err := s.lockClaim(ctx, "claim expired", limit)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []*session.Record
	for len(out) < limit {
		t := s.expiry.popDue(now)
		if t == nil {
			break
		}
		e := t.v
		e.expiry = nil
		if e.rec.State == session.StateHeld {
			// Held until its expiry: nobody was told it is pending.
			delete(s.requests, key{e.rec.SessionID, e.rec.ID})
			continue
		}
		if e.rec.State == messages.StatePending {
			e.rec.State = messages.StateExpired
			e.rec.DecidedAt = now
			s.unindex(e)
		}
		s.retain(e, now)
		s.record(e, now)
		out = append(out, e.rec.Clone())
	}
	return out, nil
}

// NextExpiry returns how long, by the store's clock, until the earliest
// unclaimed expiry (zero when one is due); ok is false when nothing waits.
// The reaper uses it to wake up on time without reading any clock itself.
func (s *Store) NextExpiry(ctx context.Context) (d time.Duration, ok bool, err error) {
	now, err := s.lock(ctx, "next expiry")
	if err != nil {
		return 0, false, err
	}
	defer s.mu.Unlock()
	t := s.expiry.peek()
	if t == nil {
		return 0, false, nil
	}
	return max(t.at.Sub(now), 0), true, nil
}

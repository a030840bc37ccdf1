package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/signoff-dev/signoff/pkg/session"
)

// obEntry is a request's outbox entry: the transition it names
// (session.EffectMark) and when its lease ends.
type obEntry struct {
	mark string
	ends time.Time
}

// record puts e's outbox entry for the transition that just changed it,
// leased to the caller (see session.DefaultEffectLease). Callers hold s.mu.
func (s *Store) record(e *entry, now time.Time) {
	s.outbox[key{e.rec.SessionID, e.rec.ID}] = &obEntry{mark: session.EffectMark(&e.rec), ends: now.Add(s.effectLease)}
}

// ClaimEffects leases up to limit outbox entries whose lease has run out
// and returns their records, oldest first; see [session.Outbox.ClaimEffects].
// It scans the outbox, which holds only unacknowledged entries.
func (s *Store) ClaimEffects(ctx context.Context, limit int) ([]*session.Record, error) {
	now, err := s.lockClaim(ctx, "claim effects", limit)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var ripe []key
	for k, ob := range s.outbox {
		if !now.Before(ob.ends) {
			ripe = append(ripe, k)
		}
	}
	slices.SortFunc(ripe, func(a, b key) int {
		return cmp.Or(s.outbox[a].ends.Compare(s.outbox[b].ends), cmp.Compare(a.session, b.session), cmp.Compare(a.id, b.id))
	})
	var out []*session.Record
	for _, k := range ripe {
		if len(out) == limit {
			break
		}
		e, ok := s.requests[k]
		if !ok {
			delete(s.outbox, k) // gone after its retention
			continue
		}
		s.outbox[k].ends = now.Add(s.effectLease)
		out = append(out, e.rec.Clone())
	}
	return out, nil
}

// AckEffects removes the outbox entries of recs unless a later transition
// replaced them; see [session.Outbox.AckEffects].
func (s *Store) AckEffects(ctx context.Context, recs ...*session.Record) error {
	for _, r := range recs {
		if r == nil {
			return fmt.Errorf("memstore: ack effects: %w: nil record", session.ErrInvalid)
		}
		if err := session.CheckKey(r.SessionID, r.ID); err != nil {
			return fmt.Errorf("memstore: ack effects: %w", err)
		}
	}
	if _, err := s.lock(ctx, "ack effects"); err != nil {
		return err
	}
	defer s.mu.Unlock()
	for _, r := range recs {
		k := key{r.SessionID, r.ID}
		if ob, ok := s.outbox[k]; ok && ob.mark == session.EffectMark(r) {
			delete(s.outbox, k)
		}
	}
	return nil
}

// owedStops returns the hard rejections of sessionID whose outbox entries
// are not acknowledged, oldest first. Callers hold s.mu.
func (s *Store) owedStops(sessionID string) []*session.Record {
	var out []*session.Record
	for k := range s.outbox {
		if k.session != sessionID {
			continue
		}
		if e, ok := s.requests[k]; ok && e.rec.HardRejection() {
			out = append(out, e.rec.Clone())
		}
	}
	slices.SortFunc(out, func(a, b *session.Record) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	return out
}

package redisstore

import (
	"cmp"
	"context"
	"fmt"

	"github.com/signoff-dev/signoff/pkg/session"
)

// The outbox (docs/STATE.md "Outbox"; the rules are at
// session.DefaultEffectLease).
//
// Each transition with effects outside Redis records an entry in its
// session's outbox hash P:{S}:ob, in its own script. A worker must find
// that entry even if the replica that made the transition dies, and on
// Redis Cluster no script may reach from the session's slot into a shared
// index. So, as for expiry, the index is two-level: the sharded outbox
// index P:obx:{n} names sessions, scored by when a worker must look; the
// mark is pipelined *before* the transition, at the time the new entry's
// lease ends. A worker may therefore find an empty outbox (the transition
// was not applied, or its effects were acknowledged), and drops the
// session; it never misses an entry because the index did not name it.

// recording sends c, a transition script that may record an outbox entry,
// after the outbox-index mark of its session, in one round trip, and
// returns c's reply.
func (s *Store) recording(ctx context.Context, sess string, c *call) (any, error) {
	mark := s.obMark(sess)
	s.exec(ctx, mark, c)
	v, err := c.reply()
	if err == nil {
		s.ensureMarked(ctx, mark, sess)
	}
	return v, err
}

func (s *Store) obMark(sess string) *call {
	return scall(scriptObMark, []string{s.k.obx(sess)}, sess, s.obLease)
}

// ensureMarked sends a mark again when it failed while the transition it
// came with ran: on one server the pipeline runs in order, so this takes
// a failure of the mark alone. Best effort: the transition's caller carries
// the effects out itself anyway; only its death would then leave the entry
// unclaimed.
func (s *Store) ensureMarked(ctx context.Context, mark *call, sess string) {
	if mark.cmd.Err() == nil {
		return
	}
	again := s.obMark(sess)
	s.exec(context.WithoutCancel(ctx), again)
	if err := again.cmd.Err(); err != nil {
		s.log.Warn("redisstore: could not schedule an outbox entry; its effects rely on the replica that recorded them",
			"session_id", sess, "err", err)
	}
}

// ClaimEffects leases outbox entries whose lease has run out; see
// [session.Outbox.ClaimEffects]. Like ClaimExpired: lease sessions of each
// index shard (score now + lease, odd), claim the ripe entries of each
// leased session, then finalize each session's score to the earliest lease
// left in its outbox, or drop it, unless a mark changed it meanwhile.
func (s *Store) ClaimEffects(ctx context.Context, limit int) ([]*session.Record, error) {
	out, err := claimIndex(ctx, s, "claim effects", limit, s.k.obxShard,
		func(l *leased, share int) *call {
			return scall(scriptObClaim, []string{s.k.outbox(l.sess)}, s.k.recordPrefix(l.sess), share, s.obLease)
		}, parseClaim)
	sortRecords(out)
	return out, err
}

// claimIndex is ClaimEffects and ClaimSteps: the claim of a two-level
// index with odd lease scores (the outbox's scripts), whose per-session
// claim script is claim and its reply's parser parse.
//
//  1. Lease (after releasing leases that earlier calls could not) sessions
//     of each index shard (score now + lease, odd).
//  2. Claim, sharing limit out: sessions past the first limit get no share
//     and keep their old score (looked at again by the next call).
//  3. Finalize each session's score to the earliest lease or step left, or
//     drop it, unless a mark changed it meanwhile (the due index's script:
//     it acts on a lease score only).
//
// What it claimed is leased to this caller, so it is returned with a nil
// error even if some shards or sessions failed (an error would only delay
// them by a lease; it is logged); with nothing claimed, the first error.
func claimIndex[T any](ctx context.Context, s *Store, op string, limit int, shard func(int) string,
	claim func(l *leased, share int) *call, parse func(sess string, v any) ([]T, string, error)) ([]T, error) {
	ctx, cancel, err := s.beginClaim(ctx, op, limit)
	if err != nil {
		return nil, err
	}
	defer cancel()

	s.releaseFailed(ctx)
	per := limit/dueShards + 1
	leases := make([]*call, dueShards)
	for i := range leases {
		leases[i] = scall(scriptObLease, []string{shard(i)}, per, s.obLease)
	}
	s.exec(ctx, leases...)
	var got []*leased
	var firstErr error
	for i, c := range leases {
		v, err := c.reply()
		if err != nil {
			firstErr = cmp.Or(firstErr, s.fail(op, err))
			continue
		}
		ls, err := parseLease(i, v)
		if err != nil {
			firstErr = cmp.Or(firstErr, s.corrupt(op, err))
			continue
		}
		got = append(got, ls...)
	}
	if len(got) == 0 {
		return nil, firstErr
	}

	n := min(len(got), limit)
	claims := make([]*call, n)
	for i, l := range got[:n] {
		share := limit / n
		if i < limit%n {
			share++
		}
		claims[i] = claim(l, share)
	}
	s.exec(ctx, claims...)
	for _, l := range got {
		l.next = l.old // unless claimed below: look again soon
	}
	var out []T
	for i, l := range got[:n] {
		v, err := claims[i].reply()
		if err != nil {
			firstErr = cmp.Or(firstErr, s.fail(op, err))
			continue
		}
		items, next, err := parse(l.sess, v)
		if err != nil {
			firstErr = cmp.Or(firstErr, s.corrupt(op, err))
			continue
		}
		l.next = next
		out = append(out, items...)
	}
	s.finalize(ctx, op, shard, got)

	if len(out) > 0 {
		if firstErr != nil {
			s.log.Warn("redisstore: "+op+": partial failure", "err", firstErr)
		}
		return out, nil
	}
	return nil, firstErr
}

// AckEffects removes the outbox entries of recs unless a later transition
// replaced them; see [session.Outbox.AckEffects]. One script per session,
// pipelined.
func (s *Store) AckEffects(ctx context.Context, recs ...*session.Record) error {
	const op = "ack effects"
	if len(recs) == 0 {
		return nil
	}
	bySess := map[string][]any{}
	var order []string
	for _, r := range recs {
		if r == nil {
			return fmt.Errorf("redisstore: %s: %w: nil record", op, session.ErrInvalid)
		}
		if err := session.CheckKey(r.SessionID, r.ID); err != nil {
			return fmt.Errorf("redisstore: %s: %w", op, err)
		}
		if err := checkTag("session id", r.SessionID); err != nil {
			return fmt.Errorf("redisstore: %s: %w", op, err)
		}
		if bySess[r.SessionID] == nil {
			order = append(order, r.SessionID)
		}
		bySess[r.SessionID] = append(bySess[r.SessionID], r.ID, session.EffectMark(r))
	}
	ctx, cancel, err := s.begin(ctx, op)
	if err != nil {
		return err
	}
	defer cancel()
	calls := make([]*call, len(order))
	for i, sess := range order {
		calls[i] = scall(scriptObAck, []string{s.k.outbox(sess)}, bySess[sess]...)
	}
	return s.execAll(ctx, op, calls...)
}

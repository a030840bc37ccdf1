package redisstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// ListPendingSession returns the open requests of a session (pending and
// not yet due), oldest first.
func (s *Store) ListPendingSession(ctx context.Context, sessionID string) ([]*session.Record, error) {
	const op = "list pending session"
	ctx, cancel, err := s.beginSession(ctx, op, sessionID)
	if err != nil {
		return nil, err
	}
	defer cancel()
	recs, due, err := s.pending(ctx, op, sessionID, nil)
	if err != nil {
		return nil, err
	}
	if due > 0 {
		s.remark(ctx, sessionID)
	}
	sortRecords(recs)
	return recs, nil
}

// pending runs the pending script: the open requests of a session (the
// named ones, or all), and how many requests of the session are due.
func (s *Store) pending(ctx context.Context, op, sess string, ids []string) ([]*session.Record, int64, error) {
	c := s.pendingCall(sess, ids)
	s.exec(ctx, c)
	return s.pendingReply(op, sess, c)
}

func (s *Store) pendingCall(sess string, ids []string) *call {
	args := make([]any, 0, len(ids)+1)
	args = append(args, s.k.recordPrefix(sess))
	for _, id := range ids {
		args = append(args, id)
	}
	return scall(scriptPending, []string{s.k.expiry(sess)}, args...)
}

// pendingReply decodes the pending script's reply; its errors are wrapped
// for op.
func (s *Store) pendingReply(op, sess string, c *call) ([]*session.Record, int64, error) {
	v, err := c.reply()
	if err != nil {
		return nil, 0, s.fail(op, err)
	}
	recs, due, err := dueAndRecords(sess, v)
	if err != nil {
		return nil, 0, s.corrupt(op, err)
	}
	return recs, due, nil
}

// dueAndRecords decodes {due count, {id, record, …}}.
func dueAndRecords(sess string, v any) ([]*session.Record, int64, error) {
	a, err := asSlice(v)
	if err != nil {
		return nil, 0, err
	}
	if len(a) != 2 {
		return nil, 0, fmt.Errorf("script reply has %d elements, want 2", len(a))
	}
	due, err := asInt(a[0])
	if err != nil {
		return nil, 0, err
	}
	recs, err := pairs(sess, a[1])
	return recs, due, err
}

// dueReply decodes the {due count, {id, record, …}} reply v (or the error
// err) of a script that met requests of sess, expiring the due ones: it
// returns the records and schedules the session in the due index when any
// were due (see remark). Its errors are wrapped for op.
func (s *Store) dueReply(ctx context.Context, op, sess string, v any, err error) ([]*session.Record, error) {
	if err != nil {
		return nil, s.fail(op, err)
	}
	recs, due, err := dueAndRecords(sess, v)
	if err != nil {
		return nil, s.corrupt(op, err)
	}
	if due > 0 {
		s.remark(ctx, sess)
	}
	return recs, nil
}

// ListPendingAgent returns the open requests of an agent id, oldest first.
func (s *Store) ListPendingAgent(ctx context.Context, agentID string) ([]*session.Record, error) {
	return s.listIndex(ctx, "list pending agent", "agent id", agentID, s.k.agentIndex,
		func(r *session.Record) bool { return r.AgentID == agentID })
}

// ListPendingTeam returns the open requests routed to team, oldest first.
func (s *Store) ListPendingTeam(ctx context.Context, team string) ([]*session.Record, error) {
	return s.listIndex(ctx, "list pending team", "team", team, s.k.teamIndex,
		func(r *session.Record) bool { return slices.Contains(r.Teams, team) })
}

// listIndex reads an agent or team index: the sessions it names that may
// still have an open request, then, in one pipeline, the open requests of
// each of them, which it filters with match.
func (s *Store) listIndex(ctx context.Context, op, what, name string, key func(string) string, match func(*session.Record) bool) ([]*session.Record, error) {
	if name == "" {
		return nil, fmt.Errorf("redisstore: %s: %w: %s is empty", op, session.ErrInvalid, what)
	}
	if err := checkTag(what, name); err != nil {
		return nil, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	ctx, cancel, err := s.begin(ctx, op)
	if err != nil {
		return nil, err
	}
	defer cancel()
	sessions, err := s.runStrings(ctx, op, scriptIndexRead, []string{key(name)}, indexSlack)
	if err != nil {
		return nil, err
	}
	calls := make([]*call, len(sessions))
	for i, sess := range sessions {
		calls[i] = s.pendingCall(sess, nil)
	}
	if len(calls) > 0 {
		s.exec(ctx, calls...)
	}
	var out []*session.Record
	var remark []string
	for i, sess := range sessions {
		recs, due, err := s.pendingReply(op, sess, calls[i])
		if err != nil {
			return nil, err
		}
		if due > 0 {
			remark = append(remark, sess)
		}
		for _, r := range recs {
			if match(r) {
				out = append(out, r)
			}
		}
	}
	s.remark(ctx, remark...)
	sortRecords(out)
	return out, nil
}

// Stop sets the session's stop signal and settles its open requests
// rejected; see [session.Sessions.Stop]. It takes two round trips: the stop
// script (which sets the signal and reads the open requests), then, with
// mk's decisions, the settle script. mk runs between them, outside any
// lock: a request settled meanwhile keeps its outcome, one that became due
// meanwhile is expired instead, and neither is returned.
func (s *Store) Stop(ctx context.Context, sessionID string, sig session.StopSignal, mk func(*session.Record) messages.Decision) ([]*session.Record, error) {
	const op = "stop"
	if err := session.CheckSession(sessionID); err != nil {
		return nil, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	if err := session.CheckStopReason(sig.Reason); err != nil {
		return nil, fmt.Errorf("redisstore: %s %s: %w", op, sessionID, err)
	}
	ctx, cancel, err := s.beginSettle(ctx, op, sessionID, mk)
	if err != nil {
		return nil, err
	}
	defer cancel()
	args := []any{sig.Reason, s.k.recordPrefix(sessionID)}
	for _, id := range sig.Rejections {
		args = append(args, id)
	}
	v, err := s.run(ctx, scriptStop, []string{s.k.stop(sessionID), s.k.expiry(sessionID)}, args...)
	open, err := s.dueReply(ctx, op, sessionID, v, err)
	if err != nil {
		return nil, err
	}
	return s.settleMany(ctx, op, sessionID, open, messages.StateRejected, mk)
}

// NewTurn clears the session's stop signal and reports whether one was
// set, unless a hard rejection of the session is still in its outbox
// ([session.StopOwedError]) or a tracked turn does not name every
// rejection behind the stop ([session.StopUnheardError]); see
// [session.Sessions.NewTurn]. One script: the outbox and the stop are
// read and the stop cleared in the same step.
func (s *Store) NewTurn(ctx context.Context, sessionID string, turn session.Turn) (bool, error) {
	const op = "new turn"
	ctx, cancel, err := s.beginSession(ctx, op, sessionID)
	if err != nil {
		return false, err
	}
	defer cancel()
	v, err := s.run(ctx, scriptNewTurn, []string{s.k.stop(sessionID), s.k.outbox(sessionID)}, turnArgs(s.k.recordPrefix(sessionID), turn)...)
	if err != nil {
		return false, s.fail(op, err)
	}
	a, err := asSlice(v)
	if err != nil || len(a) != 2 {
		return false, s.corrupt(op, err)
	}
	switch code, _ := asString(a[0]); code {
	case "ok":
		n, err := asInt(a[1])
		if err != nil {
			return false, s.corrupt(op, err)
		}
		return n == 1, nil
	case "owed":
		owed, err := pairs(sessionID, a[1])
		if err != nil {
			return false, s.corrupt(op, err)
		}
		sortRecords(owed)
		return false, fmt.Errorf("redisstore: %s: %w", op, &session.StopOwedError{SessionID: sessionID, Records: owed})
	case "unheard":
		unheard, err := asStrings(a[1])
		if err != nil {
			return false, s.corrupt(op, err)
		}
		return false, fmt.Errorf("redisstore: %s: %w", op, &session.StopUnheardError{SessionID: sessionID, Unheard: unheard})
	default:
		return false, s.corrupt(op, fmt.Errorf("unknown reply code %q", code))
	}
}

// CancelSession settles open requests of a session cancelled; see
// [session.Sessions.CancelSession]. Ids that are unknown or no longer open are
// skipped. Like Stop it reads, calls mk, then settles with compare-and-set.
func (s *Store) CancelSession(ctx context.Context, sessionID string, ids []string, mk func(*session.Record) messages.Decision) ([]*session.Record, error) {
	const op = "cancel"
	if err := session.CheckSession(sessionID); err != nil {
		return nil, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	for i, id := range ids {
		if id == "" {
			return nil, fmt.Errorf("redisstore: %s %s: %w: ids[%d] is empty", op, sessionID, session.ErrInvalid, i)
		}
	}
	ctx, cancel, err := s.beginSettle(ctx, op, sessionID, mk)
	if err != nil {
		return nil, err
	}
	defer cancel()
	open, due, err := s.pending(ctx, op, sessionID, dedup(ids))
	if err != nil {
		return nil, err
	}
	if due > 0 {
		s.remark(ctx, sessionID)
	}
	return s.settleMany(ctx, op, sessionID, open, messages.StateCancelled, mk)
}

// beginSettle begins op, which settles open requests of sessionID with
// mk's decisions (Stop, CancelSession): mk is required.
func (s *Store) beginSettle(ctx context.Context, op, sessionID string, mk func(*session.Record) messages.Decision) (context.Context, context.CancelFunc, error) {
	if mk == nil {
		return nil, nil, fmt.Errorf("redisstore: %s %s: %w: decision func is nil", op, sessionID, session.ErrInvalid)
	}
	return s.beginNames(ctx, op, sessionID, "")
}

// settleMany settles the given open records to state with mk's decisions,
// each with compare-and-set, and returns those it settled.
func (s *Store) settleMany(ctx context.Context, op, sess string, open []*session.Record, state messages.State, mk func(*session.Record) messages.Decision) ([]*session.Record, error) {
	if len(open) == 0 {
		return nil, nil
	}
	sortRecords(open)
	args := make([]any, 0, 4+2*len(open))
	args = append(args, s.k.recordPrefix(sess), string(state), s.retMillis, s.obLease)
	for _, r := range open {
		d := mk(r.Clone())
		dj, err := json.Marshal(&d)
		if err != nil {
			return nil, fmt.Errorf("redisstore: %s %s/%s: %w: decision: %v", op, sess, r.ID, session.ErrInvalid, err)
		}
		args = append(args, r.ID, dj)
	}
	v, err := s.recording(ctx, sess, scall(scriptSettleMany, []string{s.k.expiry(sess), s.k.outbox(sess)}, args...))
	settled, err := s.dueReply(ctx, op, sess, v, err)
	if err != nil {
		return nil, err
	}
	sortRecords(settled)
	return settled, nil
}

// remark schedules sessions in the due index now, in one round trip.
// Transitions and readers call it when they see a due request: normally
// the session is scheduled already and this changes nothing, but it
// repairs a schedule that a failed Prepare could not write. Best effort.
func (s *Store) remark(ctx context.Context, sessions ...string) {
	if len(sessions) == 0 {
		return
	}
	calls := make([]*call, len(sessions))
	for i, sess := range sessions {
		calls[i] = scall(scriptMark, []string{s.k.due(sess)}, sess, 0, leaseMicros)
	}
	s.exec(ctx, calls...)
	s.logFailures("schedule", calls)
}

func (s *Store) logFailures(what string, calls []*call) {
	for _, c := range calls {
		if err := c.cmd.Err(); err != nil {
			s.log.Warn("redisstore: best-effort "+what+" failed", "err", err)
			return
		}
	}
}

// sortRecords orders records oldest first (then by request id and session).
func sortRecords(recs []*session.Record) {
	slices.SortFunc(recs, func(a, b *session.Record) int {
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID), cmp.Compare(a.SessionID, b.SessionID))
	})
}

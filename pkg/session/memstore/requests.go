package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// Prepare stores req held ([session.StateHeld]); see [session.Requests.Prepare].
// A held request is in the expiry heap but in no pending index until Open.
// An existing record is returned whatever its state, even while the
// session is stopped, so that an agent retry gets its receipt.
func (s *Store) Prepare(ctx context.Context, req session.Request) (*session.Record, bool, error) {
	const op = "prepare"
	if err := session.CheckPrepare(&req); err != nil {
		return nil, false, fmt.Errorf("memstore: %s: %w", op, err)
	}
	now, err := s.lock(ctx, op)
	if err != nil {
		return nil, false, err
	}
	defer s.mu.Unlock()
	k := key{req.SessionID, req.ID}
	if e, ok := s.requests[k]; ok {
		return e.rec.Clone(), false, nil
	}
	if _, stopped := s.stops[req.SessionID]; stopped {
		return nil, false, fmt.Errorf("memstore: %s %s/%s: %w", op, req.SessionID, req.ID, session.ErrStopped)
	}
	e := &entry{rec: session.Record{
		Request:   req,
		State:     session.StateHeld,
		CreatedAt: now,
		ExpiresAt: now.Add(req.TTL),
	}}
	e.rec = *e.rec.Clone() // own the caller's slices
	s.requests[k] = e
	e.expiry = &timer[*entry]{at: e.rec.ExpiresAt, seq: s.nextSeq(), v: e}
	s.expiry.add(e.expiry)
	s.schedule(&e.rec)
	return e.rec.Clone(), true, nil
}

// Open makes a held request pending; see [session.Requests.Open].
func (s *Store) Open(ctx context.Context, sessionID, requestID string) (session.Result, error) {
	now, err := s.lockKey(ctx, "open", sessionID, requestID)
	if err != nil {
		return session.Result{}, err
	}
	defer s.mu.Unlock()
	e, ok := s.requests[key{sessionID, requestID}]
	switch {
	case !ok:
		return session.Result{}, fmt.Errorf("memstore: open %s/%s: %w", sessionID, requestID, session.ErrNotFound)
	case e.rec.State == messages.StatePending:
		return session.Result{Record: e.rec.Clone()}, nil
	case e.rec.State != session.StateHeld:
		return refused(e, session.ErrSettled), nil
	case !now.Before(e.rec.ExpiresAt):
		return refused(e, session.ErrExpired), nil // ClaimExpired drops it
	}
	if _, stopped := s.stops[sessionID]; stopped {
		return session.Result{}, fmt.Errorf("memstore: open %s/%s: %w", sessionID, requestID, session.ErrStopped)
	}
	e.rec.State = messages.StatePending
	s.record(e, now)
	s.index(e)
	return session.Result{Applied: true, Record: e.rec.Clone()}, nil
}

// answerable returns the entry of a request that may be read or decided:
// a held one is reported as not found (see [session.Requests.Prepare]).
func (s *Store) answerable(sessionID, requestID string) (*entry, bool) {
	e, ok := s.requests[key{sessionID, requestID}]
	if !ok || e.rec.State == session.StateHeld {
		return nil, false
	}
	return e, true
}

// Get returns a copy of the record, or ErrNotFound.
func (s *Store) Get(ctx context.Context, sessionID, requestID string) (*session.Record, error) {
	if _, err := s.lockKey(ctx, "get", sessionID, requestID); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	e, ok := s.answerable(sessionID, requestID)
	if !ok {
		return nil, fmt.Errorf("memstore: get %s/%s: %w", sessionID, requestID, session.ErrNotFound)
	}
	return e.rec.Clone(), nil
}

// Decide applies one vote; see [session.Requests.Decide]. A vote that arrives
// once the request is due settles it expired (not applied, ErrSettled) and
// leaves it to ClaimExpired. A second vote of an approver whose approval
// was counted is refused with ErrDuplicateVote, a deny included.
func (s *Store) Decide(ctx context.Context, sessionID, requestID string, v session.Vote) (session.Result, error) {
	if err := session.CheckKey(sessionID, requestID); err != nil {
		return session.Result{}, fmt.Errorf("memstore: decide: %w", err)
	}
	if err := v.Validate(); err != nil {
		return session.Result{}, fmt.Errorf("memstore: decide %s/%s: %w", sessionID, requestID, err)
	}
	return s.transition(ctx, "decide", sessionID, requestID, func(e *entry, now time.Time) session.Result {
		if e.rec.HasApproval(v.ApproverID) {
			return refused(e, session.ErrDuplicateVote)
		}
		if _, stopped := s.stops[sessionID]; stopped && v.Approve {
			return refused(e, session.ErrStopped)
		}
		switch {
		case !v.Approve:
			s.settle(e, messages.StateRejected, &v.Decision, now)
			if v.Stop != "" {
				s.addStop(sessionID, session.StopSignal{Reason: v.Stop, Rejections: []string{requestID}})
			}
		default:
			e.rec.Approvals = append(e.rec.Approvals, v.ApproverID)
			e.rec.ApprovalScopes = append(e.rec.ApprovalScopes, v.Scope)
			if len(e.rec.Approvals) >= e.rec.ApprovalsRequired {
				s.settle(e, messages.StateApproved, &v.Decision, now)
			}
		}
		s.record(e, now)
		return session.Result{Applied: true, Record: e.rec.Clone()}
	})
}

// Settle moves a pending request to state with decision d; see
// [session.Requests.Settle].
func (s *Store) Settle(ctx context.Context, sessionID, requestID string, state messages.State, d messages.Decision) (session.Result, error) {
	if err := session.CheckKey(sessionID, requestID); err != nil {
		return session.Result{}, fmt.Errorf("memstore: settle: %w", err)
	}
	if err := session.CheckSettle(state, &d); err != nil {
		return session.Result{}, fmt.Errorf("memstore: settle %s/%s: %w", sessionID, requestID, err)
	}
	return s.transition(ctx, "settle", sessionID, requestID, func(e *entry, now time.Time) session.Result {
		if _, stopped := s.stops[sessionID]; stopped && state == messages.StateApproved {
			return refused(e, session.ErrStopped)
		}
		s.settle(e, state, &d, now)
		s.record(e, now)
		return session.Result{Applied: true, Record: e.rec.Clone()}
	})
}

// ListPendingSession returns the open requests of a session, oldest first.
func (s *Store) ListPendingSession(ctx context.Context, sessionID string) ([]*session.Record, error) {
	return s.list(ctx, "list pending session", s.bySession, sessionID)
}

// ListPendingAgent returns the open requests of an agent id, oldest first.
func (s *Store) ListPendingAgent(ctx context.Context, agentID string) ([]*session.Record, error) {
	return s.list(ctx, "list pending agent", s.byAgent, agentID)
}

// ListPendingTeam returns the open requests routed to team, oldest first.
func (s *Store) ListPendingTeam(ctx context.Context, team string) ([]*session.Record, error) {
	return s.list(ctx, "list pending team", s.byTeam, team)
}

// list reads one pending index; due requests are left out.
func (s *Store) list(ctx context.Context, op string, idx map[string]map[*entry]struct{}, k string) ([]*session.Record, error) {
	if k == "" {
		return nil, fmt.Errorf("memstore: %s: %w: key is empty", op, session.ErrInvalid)
	}
	now, err := s.lock(ctx, op)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	entries := sortedOpen(idx[k], now)
	out := make([]*session.Record, len(entries))
	for i, e := range entries {
		out[i] = e.rec.Clone()
	}
	return out, nil
}

// Stop sets the session's stop signal and settles its open requests
// rejected; see [session.Sessions.Stop]. mk runs under the store's lock and must
// not call the store. Due requests are expired, not rejected, and left to
// ClaimExpired; they are not returned.
func (s *Store) Stop(ctx context.Context, sessionID string, sig session.StopSignal, mk func(*session.Record) messages.Decision) ([]*session.Record, error) {
	if err := session.CheckSession(sessionID); err != nil {
		return nil, fmt.Errorf("memstore: stop: %w", err)
	}
	if err := session.CheckStopReason(sig.Reason); err != nil {
		return nil, fmt.Errorf("memstore: stop %s: %w", sessionID, err)
	}
	now, err := s.lockSettle(ctx, "stop", sessionID, mk)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	s.addStop(sessionID, sig)
	return s.settleAll(sortedPending(s.bySession[sessionID]), messages.StateRejected, mk, now), nil
}

// addStop sets the session's stop signal to sig, or adds sig's
// rejections to the one in force. Callers hold s.mu.
func (s *Store) addStop(sessionID string, sig session.StopSignal) {
	st, ok := s.stops[sessionID]
	if !ok {
		st = session.StopSignal{Reason: sig.Reason}
	}
	s.stops[sessionID] = st.Add(sig.Rejections...)
}

// NewTurn clears the session's stop signal and reports whether one was
// set, unless a hard rejection of the session is still in the outbox
// ([session.StopOwedError]) or a tracked turn does not name every
// rejection behind the stop ([session.StopUnheardError]); see
// [session.Sessions.NewTurn].
func (s *Store) NewTurn(ctx context.Context, sessionID string, turn session.Turn) (bool, error) {
	if err := session.CheckSession(sessionID); err != nil {
		return false, fmt.Errorf("memstore: new turn: %w", err)
	}
	if _, err := s.lock(ctx, "new turn"); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	if owed := s.owedStops(sessionID); len(owed) > 0 {
		return false, fmt.Errorf("memstore: new turn: %w", &session.StopOwedError{SessionID: sessionID, Records: owed})
	}
	st, ok := s.stops[sessionID]
	if unheard := st.Unheard(turn); ok && len(unheard) > 0 {
		return false, fmt.Errorf("memstore: new turn: %w", &session.StopUnheardError{SessionID: sessionID, Unheard: unheard})
	}
	delete(s.stops, sessionID)
	return ok, nil
}

// CancelSession settles open requests of a session cancelled; see
// [session.Sessions.CancelSession]. Ids that are unknown or no longer open are
// skipped; mk runs under the store's lock and must not call the store.
func (s *Store) CancelSession(ctx context.Context, sessionID string, ids []string, mk func(*session.Record) messages.Decision) ([]*session.Record, error) {
	if err := session.CheckSession(sessionID); err != nil {
		return nil, fmt.Errorf("memstore: cancel: %w", err)
	}
	for i, id := range ids {
		if id == "" {
			return nil, fmt.Errorf("memstore: cancel %s: %w: ids[%d] is empty", sessionID, session.ErrInvalid, i)
		}
	}
	now, err := s.lockSettle(ctx, "cancel", sessionID, mk)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var entries []*entry
	if len(ids) == 0 {
		entries = sortedPending(s.bySession[sessionID])
	} else {
		for _, id := range ids {
			if e, ok := s.requests[key{sessionID, id}]; ok && e.rec.State == messages.StatePending {
				entries = append(entries, e)
			}
		}
	}
	return s.settleAll(entries, messages.StateCancelled, mk, now), nil
}

// settleAll settles each open entry to state with the decision mk returns,
// expires the due ones, and returns copies of those it settled.
func (s *Store) settleAll(entries []*entry, state messages.State, mk func(*session.Record) messages.Decision, now time.Time) []*session.Record {
	var out []*session.Record
	for _, e := range entries {
		if !s.open(e, now) { // due (now expired), or settled earlier in this loop
			continue
		}
		d := mk(e.rec.Clone())
		s.settle(e, state, &d, now)
		s.record(e, now)
		out = append(out, e.rec.Clone())
	}
	return out
}

// transition applies op to the pending request sessionID/requestID: under
// the store's lock (see lock) it calls apply with the request's entry and
// the store time, and returns apply's result. Without a pending request it
// answers as every transition does: ErrNotFound when there is no such
// request (or it is held), a refusal with ErrSettled when it is settled or
// due (open expires a due one).
func (s *Store) transition(ctx context.Context, op, sessionID, requestID string, apply func(e *entry, now time.Time) session.Result) (session.Result, error) {
	now, err := s.lock(ctx, op)
	if err != nil {
		return session.Result{}, err
	}
	defer s.mu.Unlock()
	e, ok := s.answerable(sessionID, requestID)
	if !ok {
		return session.Result{}, fmt.Errorf("memstore: %s %s/%s: %w", op, sessionID, requestID, session.ErrNotFound)
	}
	if !s.open(e, now) {
		return refused(e, session.ErrSettled), nil
	}
	return apply(e, now), nil
}

// open reports whether e can still be decided; a due request is expired on
// the spot (see the expiry rules in package session).
func (s *Store) open(e *entry, now time.Time) bool {
	if e.rec.Due(now) {
		e.rec.State = messages.StateExpired
		e.rec.DecidedAt = now
		s.unindex(e) // stays in s.expiry until claimed
		return false
	}
	return e.rec.State == messages.StatePending
}

// settle moves an open entry to a final state chosen by a caller.
func (s *Store) settle(e *entry, state messages.State, d *messages.Decision, now time.Time) {
	e.rec.State = state
	e.rec.DecidedAt = now
	dc := *d // own the decision's slices
	dc.GrantedPattern = slices.Clone(d.GrantedPattern)
	dc.Answer = slices.Clone(d.Answer)
	e.rec.Decision = &dc
	s.unindex(e)
	s.expiry.remove(e.expiry)
	e.expiry = nil
	s.retain(e, now)
}

// retain schedules the drop of a settled, reported entry.
func (s *Store) retain(e *entry, now time.Time) {
	e.purge = &timer[*entry]{at: now.Add(s.retention), seq: s.nextSeq(), v: e}
	s.purge.add(e.purge)
}

func refused(e *entry, why error) session.Result {
	return session.Result{Record: e.rec.Clone(), Refusal: why}
}

func (s *Store) index(e *entry) {
	addTo(s.bySession, e.rec.SessionID, e)
	addTo(s.byAgent, e.rec.AgentID, e)
	for _, t := range e.rec.Teams {
		addTo(s.byTeam, t, e)
	}
}

func (s *Store) unindex(e *entry) {
	removeFrom(s.bySession, e.rec.SessionID, e)
	removeFrom(s.byAgent, e.rec.AgentID, e)
	for _, t := range e.rec.Teams {
		removeFrom(s.byTeam, t, e)
	}
}

func addTo(idx map[string]map[*entry]struct{}, k string, e *entry) {
	set := idx[k]
	if set == nil {
		set = make(map[*entry]struct{})
		idx[k] = set
	}
	set[e] = struct{}{}
}

func removeFrom(idx map[string]map[*entry]struct{}, k string, e *entry) {
	if set := idx[k]; set != nil {
		delete(set, e)
		if len(set) == 0 {
			delete(idx, k)
		}
	}
}

// sortedPending returns the entries of set oldest first.
func sortedPending(set map[*entry]struct{}) []*entry {
	out := make([]*entry, 0, len(set))
	for e := range set {
		out = append(out, e)
	}
	slices.SortFunc(out, oldestFirst)
	return out
}

// sortedOpen is sortedPending without the due entries.
func sortedOpen(set map[*entry]struct{}, now time.Time) []*entry {
	out := make([]*entry, 0, len(set))
	for e := range set {
		if e.rec.Open(now) {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, oldestFirst)
	return out
}

func oldestFirst(a, b *entry) int {
	return cmp.Or(
		a.rec.CreatedAt.Compare(b.rec.CreatedAt),
		cmp.Compare(a.rec.ID, b.rec.ID),
		cmp.Compare(a.rec.SessionID, b.rec.SessionID),
	)
}

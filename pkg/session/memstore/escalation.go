package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/signoff-dev/signoff/pkg/session"
)

// stepKey names one escalation step of one request.
type stepKey struct {
	session, id string
	index       int
}

// stepEntry is a scheduled step: due (or leased) until at; a watch once
// its page step paged, looked at every watchEvery. done is set once it ran
// (finished in phase due), at doneAt.
type stepEntry struct {
	at         time.Time
	watch      bool
	watchEvery time.Duration
	done       bool
	doneAt     time.Time
	// expires is the request's expiry: done steps are kept until then.
	expires time.Time
}

// schedule adds the escalation steps of a request just stored. Callers
// hold s.mu.
func (s *Store) schedule(r *session.Record) {
	for i, d := range r.Escalation {
		s.steps[stepKey{r.SessionID, r.ID, i}] = &stepEntry{at: r.CreatedAt.Add(d), expires: r.ExpiresAt}
	}
}

// ClaimSteps leases up to limit due steps, earliest first; see
// [session.Escalations]. It scans the scheduled steps: dev mode holds few.
func (s *Store) ClaimSteps(ctx context.Context, limit int) ([]session.Step, error) {
	now, err := s.lockClaim(ctx, "claim steps", limit)
	if err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var due []stepKey
	for k, st := range s.steps {
		if st.done && !st.watch {
			if !now.Before(st.expires) {
				delete(s.steps, k) // kept for StepsDone until the expiry
			}
			continue
		}
		if !now.Before(st.at) {
			due = append(due, k)
		}
	}
	slices.SortFunc(due, func(a, b stepKey) int {
		return cmp.Or(s.steps[a].at.Compare(s.steps[b].at), cmp.Compare(a.session, b.session), cmp.Compare(a.id, b.id), cmp.Compare(a.index, b.index))
	})
	var out []session.Step
	for _, k := range due {
		if len(out) == limit {
			break
		}
		st := s.steps[k]
		e, ok := s.requests[key{k.session, k.id}]
		switch {
		case !ok:
			delete(s.steps, k) // gone after its retention
			continue
		case e.rec.State == session.StateHeld:
			st.at = now.Add(s.effectLease) // not asked yet: look again later
			continue
		}
		open := e.rec.Open(now)
		phase := session.StepDue
		switch {
		case !st.watch && !open:
			delete(s.steps, k) // settled before its time: nothing to do
			continue
		case st.watch && open:
			st.at = now.Add(st.watchEvery)
			continue
		case st.watch:
			phase = session.StepResolve
		}
		st.at = now.Add(s.effectLease)
		out = append(out, session.Step{SessionID: k.session, RequestID: k.id, Index: k.index, Phase: phase, Record: e.rec.Clone()})
	}
	return out, nil
}

// FinishStep removes a claimed step, or keeps a page step as a watch; see
// [session.Escalations].
func (s *Store) FinishStep(ctx context.Context, st session.Step, watch time.Duration) error {
	if err := session.CheckStep(st); err != nil {
		return fmt.Errorf("memstore: finish step: %w", err)
	}
	if watch < 0 {
		return fmt.Errorf("memstore: finish step: %w: watch %v is negative", session.ErrInvalid, watch)
	}
	now, err := s.lock(ctx, "finish step")
	if err != nil {
		return err
	}
	defer s.mu.Unlock()
	k := stepKey{st.SessionID, st.RequestID, st.Index}
	cur, ok := s.steps[k]
	switch {
	case !ok:
		return nil
	case st.Phase == session.StepDue:
		if cur.done {
			return nil // another caller finished it already
		}
		cur.done, cur.doneAt = true, now
		if watch > 0 {
			cur.watch, cur.watchEvery, cur.at = true, watch, now.Add(watch)
		}
		return nil
	case cur.watch:
		cur.watch = false // resolved; kept as done until the expiry
		if !now.Before(cur.expires) {
			delete(s.steps, k)
		}
	}
	return nil
}

// AddTeam routes an open request to team as well; see [session.Escalations].
func (s *Store) AddTeam(ctx context.Context, sessionID, requestID, team string) (session.Result, error) {
	if err := session.CheckKey(sessionID, requestID); err != nil {
		return session.Result{}, fmt.Errorf("memstore: add team: %w", err)
	}
	if team == "" {
		return session.Result{}, fmt.Errorf("memstore: add team: %w: team is empty", session.ErrInvalid)
	}
	return s.transition(ctx, "add team", sessionID, requestID, func(e *entry, _ time.Time) session.Result {
		if slices.Contains(e.rec.Teams, team) {
			return session.Result{Record: e.rec.Clone()}
		}
		e.rec.Teams = append(slices.Clone(e.rec.Teams), team)
		addTo(s.byTeam, team, e)
		return session.Result{Applied: true, Record: e.rec.Clone()}
	})
}

// StepsDone returns the steps of a request that ran; see
// [session.Escalations].
func (s *Store) StepsDone(ctx context.Context, sessionID, requestID string) ([]session.StepDone, error) {
	if _, err := s.lockKey(ctx, "steps done", sessionID, requestID); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	var out []session.StepDone
	for k, st := range s.steps {
		if k.session == sessionID && k.id == requestID && st.done {
			out = append(out, session.StepDone{Index: k.index, At: st.doneAt})
		}
	}
	slices.SortFunc(out, func(a, b session.StepDone) int { return cmp.Compare(a.Index, b.Index) })
	return out, nil
}

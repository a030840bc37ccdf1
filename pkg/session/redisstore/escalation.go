package redisstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/pkg/session"
)

// Escalation steps (docs/STATE.md "Escalation"; the rules are at
// session.Escalations).
//
// A session's steps are the sorted set P:{S}:esc, scored by when each is
// due (µs, Redis TIME): members 's<step>:<id>' (to run) and
// 'w<step>|<watch µs>:<id>' (a page that paged, watching for its request
// to settle). The create script adds a request's steps with the request.
// As for expiry and the outbox, a worker must find them from any replica,
// and on Redis Cluster no script may reach from the session's slot into a
// shared index, so the index is two-level: the sharded P:escx:{n} names
// sessions, scored by when a worker must look, marked before the create
// (the outbox's mark script and its odd lease scores). A worker may find
// nothing due (it reschedules or drops the session); it never misses a
// step because the index did not name it.

// escMark schedules a session in the escalation index no later than after.
func (s *Store) escMark(sess string, after time.Duration) *call {
	return scall(scriptObMark, []string{s.k.escx(sess)}, sess, micros(after))
}

// ClaimSteps leases due escalation steps; see [session.Escalations]. Like
// ClaimEffects: lease sessions of each index shard, claim the due steps of
// each leased session, then finalize each session's score to its earliest
// step left, or drop it, unless a mark changed it meanwhile.
func (s *Store) ClaimSteps(ctx context.Context, limit int) ([]session.Step, error) {
	out, err := claimIndex(ctx, s, "claim steps", limit, s.k.escxShard,
		func(l *leased, share int) *call {
			return scall(scriptEscClaim, []string{s.k.escalation(l.sess)}, s.k.recordPrefix(l.sess), share, s.obLease, 4*share)
		}, parseSteps)
	slices.SortFunc(out, func(a, b session.Step) int {
		return cmp.Or(cmp.Compare(a.SessionID, b.SessionID), cmp.Compare(a.RequestID, b.RequestID), cmp.Compare(a.Index, b.Index))
	})
	return out, err
}

// parseSteps decodes {next score or ”, {member, record, …}}.
func parseSteps(sess string, v any) ([]session.Step, string, error) {
	next, rest, err := claimReply(v)
	if err != nil {
		return nil, "", err
	}
	m, err := asSlice(rest)
	if err != nil || len(m)%2 != 0 {
		return nil, "", cmp.Or(err, fmt.Errorf("claim reply has %d members and records", len(m)))
	}
	out := make([]session.Step, 0, len(m)/2)
	for i := 0; i < len(m); i += 2 {
		member, err1 := asString(m[i])
		raw, err2 := asString(m[i+1])
		if err := cmp.Or(err1, err2); err != nil {
			return nil, "", err
		}
		st, err := parseStepMember(member)
		if err != nil {
			return nil, "", err
		}
		st.SessionID = sess
		if st.Record, err = decodeRecord(sess, st.RequestID, raw); err != nil {
			return nil, "", err
		}
		out = append(out, st)
	}
	return out, next, nil
}

// parseStepMember reads 's<step>:<id>' or 'w<step>|<µs>:<id>'.
func parseStepMember(m string) (session.Step, error) {
	c := strings.IndexByte(m, ':')
	if c < 2 {
		return session.Step{}, fmt.Errorf("escalation member %q", m)
	}
	head, id := m[1:c], m[c+1:]
	st := session.Step{RequestID: id, Phase: session.StepDue}
	switch m[0] {
	case 's':
	case 'w':
		st.Phase = session.StepResolve
		bar := strings.IndexByte(head, '|')
		if bar < 0 {
			return session.Step{}, fmt.Errorf("escalation member %q", m)
		}
		head = head[:bar]
	default:
		return session.Step{}, fmt.Errorf("escalation member %q", m)
	}
	i, err := strconv.Atoi(head)
	if err != nil || i < 0 || id == "" {
		return session.Step{}, fmt.Errorf("escalation member %q", m)
	}
	st.Index = i
	return st, nil
}

// stepMember is the member of st in its session's steps (a watch's
// carries its period, which ClaimSteps does not return: FinishStep of a
// watch is given none, so the member is found by a range; see below).
func stepMember(st session.Step) string {
	return "s" + strconv.Itoa(st.Index) + ":" + st.RequestID
}

func watchMember(st session.Step, watch time.Duration) string {
	return "w" + strconv.Itoa(st.Index) + "|" + micros(watch) + ":" + st.RequestID
}

// FinishStep ends a claimed step; see [session.Escalations]. A resolved
// watch's member holds its watch period, which the Step does not carry:
// the claim returned it, so it is looked up by its stable prefix.
func (s *Store) FinishStep(ctx context.Context, st session.Step, watch time.Duration) error {
	const op = "finish step"
	if err := session.CheckStep(st); err != nil {
		return fmt.Errorf("redisstore: %s: %w", op, err)
	}
	if err := checkTag("session id", st.SessionID); err != nil {
		return fmt.Errorf("redisstore: %s: %w", op, err)
	}
	if watch < 0 || watch%time.Microsecond != 0 {
		return fmt.Errorf("redisstore: %s: %w: watch %v: want 0 or whole microseconds", op, session.ErrInvalid, watch)
	}
	ctx, cancel, err := s.begin(ctx, op)
	if err != nil {
		return err
	}
	defer cancel()
	key := s.k.escalation(st.SessionID)
	var calls []*call
	switch {
	case st.Phase == session.StepResolve:
		calls = []*call{scall(scriptEscFinishWatch, []string{key}, "w"+strconv.Itoa(st.Index)+"|", ":"+st.RequestID)}
	default:
		expires := strconv.FormatInt(st.Record.ExpiresAt.UnixMicro(), 10)
		wm := ""
		if watch > 0 {
			wm = watchMember(st, watch)
		}
		// The done member is scored at the expiry. The index needs no mark
		// for it: the claim that leased the step left the session scheduled
		// at the lease's end at the latest, and that visit's finalize
		// reschedules it at its earliest member.
		calls = []*call{scall(scriptEscFinish, []string{key}, stepMember(st), wm, micros(watch), st.Index, st.RequestID, expires)}
		if watch > 0 {
			calls = append([]*call{s.escMark(st.SessionID, watch)}, calls...)
		}
	}
	return s.execAll(ctx, op, calls...)
}

// AddTeam routes an open request to team as well; see
// [session.Escalations]. The team index is marked first, in the same
// round trip: its readers filter by the record's teams, so a mark without
// the team costs nothing.
func (s *Store) AddTeam(ctx context.Context, sessionID, requestID, team string) (session.Result, error) {
	const op = "add team"
	if err := session.CheckKey(sessionID, requestID); err != nil {
		return session.Result{}, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	if team == "" {
		return session.Result{}, fmt.Errorf("redisstore: %s: %w: team is empty", op, session.ErrInvalid)
	}
	ctx, cancel, err := s.beginNames(ctx, op, sessionID, "", team)
	if err != nil {
		return session.Result{}, err
	}
	defer cancel()
	// The index entry must outlive the request: its whole TTL bounds what
	// is left of it (the score only says when the entry may be dropped).
	rec, err := s.Get(ctx, sessionID, requestID)
	if err != nil {
		return session.Result{}, err
	}
	mark := scall(scriptIndexAdd, []string{s.k.teamIndex(team)}, sessionID, micros(rec.TTL), indexSlack)
	add := scall(scriptEscTeam, []string{s.k.record(sessionID, requestID)}, team)
	s.exec(ctx, mark, add)
	v, err := add.reply()
	code, out, err := s.recordReply(op, sessionID, requestID, v, err)
	if err != nil {
		return session.Result{}, err
	}
	switch code {
	case "ok":
		if err := mark.cmd.Err(); err != nil {
			// The team was added but its index may not name the session:
			// report the failure; the escalator runs the step again, and
			// the add is then a no-op after a fresh mark.
			return session.Result{}, s.fail(op+" "+sessionID+"/"+requestID+": index", err)
		}
		return session.Result{Applied: true, Record: out}, nil
	case "has":
		if err := mark.cmd.Err(); err != nil {
			return session.Result{}, s.fail(op+" "+sessionID+"/"+requestID+": index", err)
		}
		return session.Result{Record: out}, nil
	}
	// settled or due (the script refuses nothing else).
	return s.refused(ctx, op, sessionID, code, out)
}

// StepsDone returns the steps of a request that ran; see
// [session.Escalations]. One read-only script.
func (s *Store) StepsDone(ctx context.Context, sessionID, requestID string) ([]session.StepDone, error) {
	const op = "steps done"
	ctx, cancel, err := s.beginKey(ctx, op, sessionID, requestID)
	if err != nil {
		return nil, err
	}
	defer cancel()
	ms, err := s.runStrings(ctx, op, scriptEscDone, []string{s.k.escalation(sessionID)}, requestID)
	if err != nil {
		return nil, err
	}
	out := make([]session.StepDone, 0, len(ms))
	for _, m := range ms {
		// d<step>|<µs>:<id>
		c := strings.IndexByte(m, ':')
		step, at, ok := strings.Cut(m[1:max(c, 1)], "|")
		i, err1 := strconv.Atoi(step)
		us, err2 := strconv.ParseInt(at, 10, 64)
		if c < 0 || !ok || err1 != nil || err2 != nil {
			return nil, s.corrupt(op, fmt.Errorf("escalation member %q", m))
		}
		out = append(out, session.StepDone{Index: i, At: time.UnixMicro(us)})
	}
	slices.SortFunc(out, func(a, b session.StepDone) int { return cmp.Compare(a.Index, b.Index) })
	return out, nil
}

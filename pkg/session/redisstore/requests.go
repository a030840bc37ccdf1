package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// markAhead is how much earlier than a new request's expiry its session is
// scheduled in the due index. The due shard may live on another node than
// the session (Redis Cluster), whose clock may differ a little; a visit
// that comes early costs one script call, one that comes late would delay
// the timeout.
const markAhead = 250_000 // µs

// Prepare stores req held ([session.StateHeld]); see [session.Requests.Prepare].
// An existing record is returned whatever its state, even while the
// session is stopped. It costs one round trip: the create script, then the
// due-index mark and the agent and team index entries, pipelined. The
// indexes name sessions, and their readers skip held requests.
func (s *Store) Prepare(ctx context.Context, req session.Request) (*session.Record, bool, error) {
	const op = "prepare"
	if err := session.CheckPrepare(&req); err != nil {
		return nil, false, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	ctx, cancel, err := s.beginNames(ctx, op, req.SessionID, req.AgentID, req.Teams...)
	if err != nil {
		return nil, false, err
	}
	defer cancel()

	sess, id := req.SessionID, req.ID
	tail, err := encodeTail(&req)
	if err != nil {
		return nil, false, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	calls, create := s.prepareCalls(&req, tail)
	s.exec(ctx, calls...)

	v, err := create.reply()
	if err != nil {
		return nil, false, s.fail(op, err)
	}
	a, err := asSlice(v)
	if err != nil || len(a) == 0 {
		return nil, false, s.corrupt(op, err)
	}
	code, _ := asInt(a[0])
	if code == 2 {
		return nil, false, fmt.Errorf("redisstore: %s %s/%s: %w", op, sess, id, session.ErrStopped)
	}
	if len(a) != 2 {
		return nil, false, s.corrupt(op, fmt.Errorf("reply has %d elements", len(a)))
	}
	raw, _ := asString(a[1])
	// A new record holds req's question: no need to decode it back.
	var known *messages.ApprovalNeeded
	if code == 1 {
		known = &req.Question
	}
	rec, err := decodeRecordAsking(sess, id, raw, known)
	if err != nil {
		return nil, false, s.corrupt(op, err)
	}
	if code == 0 {
		return rec, false, nil
	}
	for _, c := range calls {
		if c == create {
			continue
		}
		if err := c.cmd.Err(); err != nil {
			// The request exists but the reaper or the index readers may not
			// find it: take it back, so that the failure leaves nothing
			// behind and a retry starts afresh.
			s.retract(ctx, rec)
			return nil, false, s.fail(op+" "+sess+"/"+id+": index", err)
		}
	}
	return rec, true, nil
}

// prepareCalls returns the pipeline that stores req held, its record's
// tail being tail: the create script (create, also in calls), the
// due-index mark, the escalation index's mark when req has a ladder, and
// the agent and team index entries, in the order they must run.
func (s *Store) prepareCalls(req *session.Request, tail []byte) (calls []*call, create *call) {
	sess, id := req.SessionID, req.ID
	ttl := micros(req.TTL)
	args := []any{id, ttl, req.ApprovalsRequired, tail, string(session.StateHeld)}
	for _, d := range req.Escalation {
		args = append(args, micros(d))
	}
	create = scall(scriptCreate,
		[]string{s.k.expiry(sess), s.k.record(sess, id), s.k.stop(sess), s.k.escalation(sess)}, args...)
	delay := max(int64(req.TTL/1000)-markAhead, 0)
	// The create script runs first: a mark that comes after it never
	// schedules a request that does not exist yet, so a reaper may drop a
	// session it found empty without fearing an in-flight Create (see
	// docs/STATE.md, Expiry).
	calls = []*call{create, scall(scriptMark, []string{s.k.due(sess)}, sess, delay, leaseMicros)}
	if len(req.Escalation) > 0 {
		// Before the create, as the outbox's mark: a worker may find no
		// step (the create was not applied), never a step the index does
		// not name.
		calls = append([]*call{s.escMark(sess, req.Escalation[0])}, calls...)
		create = calls[1]
	}
	calls = append(calls, scall(scriptIndexAdd, []string{s.k.agentIndex(req.AgentID)}, sess, ttl, indexSlack))
	for _, team := range dedup(req.Teams) {
		calls = append(calls, scall(scriptIndexAdd, []string{s.k.teamIndex(team)}, sess, ttl, indexSlack))
	}
	return calls, create
}

// retract deletes a request that Prepare just stored (rec) when
// its index updates failed, unless it left rec's state or was voted on
// meanwhile: a held request an agent's retry opened on another replica has
// been announced, and stays. It gets a fresh deadline: the caller's may be
// what ran out.
func (s *Store) retract(ctx context.Context, rec *session.Record) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opTimeout)
	defer cancel()
	sess := rec.SessionID
	if _, err := s.run(ctx, scriptRetract, []string{s.k.expiry(sess), s.k.record(sess, rec.ID)}, rec.ID, string(rec.State)); err != nil {
		s.log.Warn("redisstore: could not retract a request whose indexes failed; it stays until it is settled or expires",
			"session_id", sess, "request_id", rec.ID, "err", err)
	}
}

// Open makes a held request pending; see [session.Requests.Open]. One script
// call: it checks the stop signal in the same step.
func (s *Store) Open(ctx context.Context, sessionID, requestID string) (session.Result, error) {
	ctx, cancel, err := s.beginKey(ctx, "open", sessionID, requestID)
	if err != nil {
		return session.Result{}, err
	}
	defer cancel()
	reply, err := s.recording(ctx, sessionID, scall(scriptOpen,
		[]string{s.k.record(sessionID, requestID), s.k.stop(sessionID), s.k.outbox(sessionID)}, requestID, s.obLease))
	if err != nil {
		return session.Result{}, s.fail("open", err)
	}
	a, err := asSlice(reply)
	if err != nil || len(a) == 0 {
		return session.Result{}, s.corrupt("open", err)
	}
	code, _ := asString(a[0])
	switch code {
	case "nf":
		return session.Result{}, fmt.Errorf("redisstore: open %s/%s: %w", sessionID, requestID, session.ErrNotFound)
	case "stopped":
		return session.Result{}, fmt.Errorf("redisstore: open %s/%s: %w", sessionID, requestID, session.ErrStopped)
	}
	if len(a) != 2 {
		return session.Result{}, s.corrupt("open", fmt.Errorf("reply has %d elements", len(a)))
	}
	raw, _ := asString(a[1])
	rec, err := decodeRecord(sessionID, requestID, raw)
	if err != nil {
		return session.Result{}, s.corrupt("open", err)
	}
	switch code {
	case "ok":
		return session.Result{Applied: true, Record: rec}, nil
	case "pending":
		return session.Result{Record: rec}, nil
	case "settled":
		return session.Result{Record: rec, Refusal: session.ErrSettled}, nil
	case "due":
		return session.Result{Record: rec, Refusal: session.ErrExpired}, nil
	}
	return session.Result{}, s.corrupt("open", fmt.Errorf("unknown reply code %q", code))
}

// Get returns the record of a request, or ErrNotFound (also for a held
// request: see [session.Requests.Prepare]).
func (s *Store) Get(ctx context.Context, sessionID, requestID string) (*session.Record, error) {
	ctx, cancel, err := s.beginKey(ctx, "get", sessionID, requestID)
	if err != nil {
		return nil, err
	}
	defer cancel()
	raw, err := s.rdb.Get(ctx, s.k.record(sessionID, requestID)).Result()
	if errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("redisstore: get %s/%s: %w", sessionID, requestID, session.ErrNotFound)
	}
	if err != nil {
		return nil, s.fail("get", err)
	}
	rec, err := decodeRecord(sessionID, requestID, raw)
	if err != nil {
		return nil, s.corrupt("get", err)
	}
	if rec.State == session.StateHeld {
		return nil, fmt.Errorf("redisstore: get %s/%s: %w (held, not yet opened)", sessionID, requestID, session.ErrNotFound)
	}
	return rec, nil
}

// Decide applies one vote; see [session.Requests.Decide]. A vote that arrives
// once the request is due (by Redis TIME) expires it, is refused with
// ErrSettled and leaves the request to ClaimExpired.
func (s *Store) Decide(ctx context.Context, sessionID, requestID string, v session.Vote) (session.Result, error) {
	approve := "0"
	if v.Approve {
		approve = "1"
	}
	return s.transit(ctx, "decide", sessionID, requestID, v.Validate(), &v.Decision, scriptDecide, func(d []byte) []any {
		return []any{requestID, v.ApproverID, approve, d, s.retMillis, v.Stop, s.obLease, approvalEntry(v)}
	})
}

// Settle moves a pending request to state with decision d; see
// [session.Requests.Settle].
func (s *Store) Settle(ctx context.Context, sessionID, requestID string, state messages.State, d messages.Decision) (session.Result, error) {
	return s.transit(ctx, "settle", sessionID, requestID, session.CheckSettle(state, &d), &d, scriptSettle, func(dj []byte) []any {
		return []any{requestID, string(state), dj, s.retMillis, s.obLease}
	})
}

// transit runs op (decide, settle), a transition of one request: it
// checks the ids, then reports checked (the op's own check of its
// arguments) and the request's hash tag, encodes decision d, and runs sc
// on the request's keys with the arguments args makes of d's JSON.
func (s *Store) transit(ctx context.Context, op, sessionID, requestID string, checked error, d *messages.Decision,
	sc *script, args func(dj []byte) []any) (session.Result, error) {
	if err := session.CheckKey(sessionID, requestID); err != nil {
		return session.Result{}, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	if checked != nil {
		return session.Result{}, fmt.Errorf("redisstore: %s %s/%s: %w", op, sessionID, requestID, checked)
	}
	if err := checkTag("session id", sessionID); err != nil {
		return session.Result{}, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	dj, err := json.Marshal(d)
	if err != nil {
		return session.Result{}, fmt.Errorf("redisstore: %s %s/%s: %w: decision: %v", op, sessionID, requestID, session.ErrInvalid, err)
	}
	ctx, cancel, err := s.begin(ctx, op)
	if err != nil {
		return session.Result{}, err
	}
	defer cancel()
	reply, err := s.recording(ctx, sessionID, scall(sc,
		[]string{s.k.expiry(sessionID), s.k.record(sessionID, requestID), s.k.stop(sessionID), s.k.outbox(sessionID)},
		args(dj)...))
	return s.transition(ctx, op, sessionID, requestID, reply, err)
}

// transition turns the reply of decide or settle into a Result; a request
// found due makes sure its session is scheduled for the reaper.
func (s *Store) transition(ctx context.Context, op, sess, id string, reply any, err error) (session.Result, error) {
	code, rec, err := s.recordReply(op, sess, id, reply, err)
	if err != nil {
		return session.Result{}, err
	}
	if code == "ok" {
		return session.Result{Applied: true, Record: rec}, nil
	}
	return s.refused(ctx, op, sess, code, rec)
}

// recordReply decodes the {code, record} or {'nf'} reply (or the error
// err) of a script that transitions one request; 'nf' is
// [session.ErrNotFound].
func (s *Store) recordReply(op, sess, id string, reply any, err error) (string, *session.Record, error) {
	if err != nil {
		return "", nil, s.fail(op, err)
	}
	a, err := asSlice(reply)
	if err != nil || len(a) == 0 {
		return "", nil, s.corrupt(op, err)
	}
	code, _ := asString(a[0])
	if code == "nf" {
		return "", nil, fmt.Errorf("redisstore: %s %s/%s: %w", op, sess, id, session.ErrNotFound)
	}
	if len(a) != 2 {
		return "", nil, s.corrupt(op, fmt.Errorf("reply has %d elements", len(a)))
	}
	raw, _ := asString(a[1])
	rec, err := decodeRecord(sess, id, raw)
	if err != nil {
		return "", nil, s.corrupt(op, err)
	}
	return code, rec, nil
}

// refused is the Result of a transition script's refusal code with the
// record rec as it stands; a request found due makes sure its session is
// scheduled for the reaper.
func (s *Store) refused(ctx context.Context, op, sess, code string, rec *session.Record) (session.Result, error) {
	switch code {
	case "settled":
		return session.Result{Record: rec, Refusal: session.ErrSettled}, nil
	case "due":
		s.remark(ctx, sess)
		return session.Result{Record: rec, Refusal: session.ErrSettled}, nil
	case "dup":
		return session.Result{Record: rec, Refusal: session.ErrDuplicateVote}, nil
	case "stopped":
		return session.Result{Record: rec, Refusal: session.ErrStopped}, nil
	}
	return session.Result{}, s.corrupt(op, fmt.Errorf("unknown reply code %q", code))
}

// Lookup reads the existing record, the stop signal and the grants for one
// request in one round trip: with SkipGrants one MGET (stop signal and
// record); otherwise a pipeline of that MGET, TIME, and for the session
// and for the agent an HMGET of the buckets of their grant index the query
// names (the tool's own and its programs', see grantindex.go; HGETALL when
// it names no tool or not its programs) and a GET of the list of the old
// layout (a missing key until it is migrated); for the session, GETEX and
// PEXPIRE keep its grants for another retention period (a Lookup counts as
// their use). Buckets are strings so that this path needs nothing heavier
// than a read of the few a call can use.
//
// The reads are not one script, unlike the transitions: they decide
// nothing by themselves, and what a decision depends on is checked again
// atomically by the transition that records it (Prepare and Open refuse while the
// session is stopped). Plain reads cost Redis a fraction of a script call,
// which keeps this hot path close to a bare GET (docs/BENCHMARKS.md). On one
// server the pipelined commands run back to back anyway.
//
// Concurrent Lookups share round trips once Options.ReadRoundTrips are in
// flight (coalesce.go).
func (s *Store) Lookup(ctx context.Context, q session.LookupQuery) (session.Lookup, error) {
	if err := q.Validate(); err != nil {
		return session.Lookup{}, fmt.Errorf("redisstore: lookup: %w", err)
	}
	ctx, cancel, err := s.beginNames(ctx, "lookup", q.SessionID, q.AgentID)
	if err != nil {
		return session.Lookup{}, err
	}
	defer cancel()
	// No scripts, so no NOSCRIPT fallback: plain commands, sent by
	// s.reads, alone or with other Lookups' commands.
	lc := s.lookupReads(ctx, q)
	if err := s.reads.do(ctx, lc.all); err != nil {
		return session.Lookup{}, s.fail("lookup", err)
	}
	for _, c := range lc.all {
		// Each command's own error: a missing key (redis.Nil) is an
		// answer, anything else fails the Lookup.
		if err := c.Err(); err != nil && !errors.Is(err, redis.Nil) {
			return session.Lookup{}, s.fail("lookup", err)
		}
	}

	var l session.Lookup
	vals := lc.stopRec.Val()
	if len(vals) != lc.keys {
		return session.Lookup{}, s.corrupt("lookup", fmt.Errorf("MGET returned %d values for %d keys", len(vals), lc.keys))
	}
	if raw, ok := vals[0].(string); ok {
		st, err := decodeStop(raw)
		if err != nil {
			return session.Lookup{}, s.corrupt("lookup", err)
		}
		l.Stopped, l.StopReason, l.StopRejections = true, st.Reason, st.Rejections
	}
	if len(vals) == 2 {
		if raw, ok := vals[1].(string); ok {
			if l.Existing, err = decodeRecord(q.SessionID, q.RequestID, raw); err != nil {
				return session.Lookup{}, s.corrupt("lookup", err)
			}
		}
	}
	if lc.sess == nil {
		return l, nil
	}
	t := lc.now.Val()
	if l.Grants, err = lc.sess.grants(nil, t, q.Reads); err != nil {
		return session.Lookup{}, s.corrupt("lookup", fmt.Errorf("session grants: %w", err))
	}
	if lc.agent != nil {
		if l.Grants, err = lc.agent.grants(l.Grants, t, q.Reads); err != nil {
			return session.Lookup{}, s.corrupt("lookup", fmt.Errorf("agent grants: %w", err))
		}
	}
	return l, nil
}

// lookupCmds are the plain commands of one Lookup.
type lookupCmds struct {
	all []redis.Cmder
	// stopRec reads the session's stop and, for a query with a request ID,
	// the request's record: keys keys.
	stopRec *redis.SliceCmd
	keys    int
	// now, sess and agent read Redis's clock and the session's and the
	// agent's grants; nil when the query skips grants (agent also without
	// an agent ID).
	now   *redis.TimeCmd
	sess  *grantReads
	agent *grantReads
}

// lookupReads builds the commands that answer q.
func (s *Store) lookupReads(ctx context.Context, q session.LookupQuery) lookupCmds {
	var lc lookupCmds
	sessKeys := []string{s.k.stop(q.SessionID)}
	if q.RequestID != "" {
		sessKeys = append(sessKeys, s.k.record(q.SessionID, q.RequestID))
	}
	lc.keys = len(sessKeys)
	lc.all = make([]redis.Cmder, 0, 8)
	mget := make([]any, 1, 1+len(sessKeys))
	mget[0] = "mget"
	for _, k := range sessKeys {
		mget = append(mget, k)
	}
	lc.stopRec = redis.NewSliceCmd(ctx, mget...)
	lc.all = append(lc.all, lc.stopRec)
	if !q.SkipGrants {
		// Not for an allow or a deny, which need no grants. TIME rides
		// along: grants expire by Redis's clock, not this process's.
		lc.now = redis.NewTimeCmd(ctx, "time")
		lc.all = append(lc.all, lc.now)
		fields := lookupFields(&q)
		sess, cmds := readGrants(ctx, s.ownerKeys(true, q.SessionID), fields, q.Tool, s.retMillis)
		lc.sess = &sess
		lc.all = append(lc.all, cmds...)
		if q.AgentID != "" {
			agent, cmds := readGrants(ctx, s.ownerKeys(false, q.AgentID), fields, q.Tool, "")
			lc.agent = &agent
			lc.all = append(lc.all, cmds...)
		}
	}
	return lc
}

// corrupt reports a reply or record the store cannot read: a bug or
// foreign data under the key prefix, not an outage.
func (s *Store) corrupt(op string, err error) error {
	if err == nil {
		err = errors.New("malformed script reply")
	}
	return fmt.Errorf("redisstore: %s: unreadable data: %w", op, err)
}

// checkNames checks that a session, an agent and teams can be hash tags.
func checkNames(sess, agent string, teams ...string) error {
	if err := checkTag("session id", sess); err != nil {
		return err
	}
	if err := checkTag("agent id", agent); err != nil {
		return err
	}
	for _, t := range teams {
		if err := checkTag("team", t); err != nil {
			return err
		}
	}
	return nil
}

func dedup(s []string) []string {
	out := make([]string, 0, len(s))
	for _, x := range s {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

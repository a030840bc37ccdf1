package redisstore

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signoff-dev/signoff/pkg/session"
)

// leaseMicros is how long a reaper holds the sessions it is expiring; if
// the reaper dies mid-claim, another one takes the sessions over when the
// lease runs out.
const leaseMicros = 5_000_000

// claimBudget bounds a ClaimExpired call (besides OpTimeout). It is shorter
// than the lease, so that no finalize is sent after its lease ran out and
// another reaper (or a Prepare's mark, which treats only a recent score as a
// possible lease) could have acted on the session.
const claimBudget = 4 * time.Second

// leased is a session taken from a due shard.
type leased struct {
	sess  string
	shard int
	lease string // the lease score it holds
	old   string // its score before the lease
	oldF  float64
	count int64 // due requests
	alloc int64 // how many of them this call claims
	next  string
	claim *call
	mark  *call // the outbox-index mark sent with the claim
}

// beginClaim checks a claim's limit and begins its call (see
// [Store.begin]) under the claim budget; cancel ends both.
func (s *Store) beginClaim(ctx context.Context, op string, limit int) (context.Context, context.CancelFunc, error) {
	if err := session.CheckClaimLimit(limit); err != nil {
		return nil, nil, fmt.Errorf("redisstore: %s: %w", op, err)
	}
	ctx, cancel, err := s.begin(ctx, op)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancelBudget := context.WithTimeout(ctx, claimBudget)
	return ctx, func() { cancelBudget(); cancel() }, nil
}

// ClaimExpired moves up to limit due requests (by Redis TIME) to expired
// and returns them, earliest expiry first; see [session.Expiry.ClaimExpired].
//
// Each step is one pipeline of scripts, one per due shard or per session,
// so that no script spans two hash slots:
//
//  1. lease due sessions (their score becomes now + 5 s, so other reapers
//     skip them): about as many as limit needs, going by how many due
//     requests recent sessions held;
//  2. count the due requests of each leased session, to share limit out;
//  3. claim: per session with a share, expire that many due requests with
//     compare-and-set and return them with the session's next expiry;
//     while limit is not used up and the shards had more, lease again (at
//     most four rounds);
//  4. finalize: reschedule each session at its next expiry, or drop it,
//     unless a Prepare marked it meanwhile.
//
// Each request is returned exactly once: removing it from its session's
// expiry index inside the claim script is the compare-and-set. A claim
// whose reply is lost in transit (the connection drops after Redis ran it)
// expires its requests without anyone being told; a status query still
// reports them expired.
func (s *Store) ClaimExpired(ctx context.Context, limit int) ([]*session.Record, error) {
	const op = "claim expired"
	ctx, cancel, err := s.beginClaim(ctx, op, limit)
	if err != nil {
		return nil, err
	}
	defer cancel()

	var (
		all      []*leased
		out      []*session.Record
		firstErr error
		budget   = int64(limit)
		shards   = make([]int, dueShards)
	)
	for i := range shards {
		shards[i] = i
	}
	// Leases an earlier call could not finalize (Redis failed after it
	// leased) are released first, so that a failed sweep delays its
	// sessions by one retry of the reaper, not by the whole lease.
	s.releaseFailed(ctx)
	for round := 0; round < 4 && budget > 0 && len(shards) > 0; round++ {
		got, more, err := s.leaseDue(ctx, op, shards, budget)
		firstErr = cmp.Or(firstErr, err)
		shards = more
		if len(got) == 0 {
			break
		}
		all = append(all, got...)
		// Serve the sessions that have waited longest first.
		slices.SortFunc(got, func(a, b *leased) int { return cmp.Compare(a.oldF, b.oldF) })
		budget, err = s.shareDue(ctx, op, got, budget)
		firstErr = cmp.Or(firstErr, err)
		recs, unused, err := s.claimLeased(ctx, op, got)
		firstErr = cmp.Or(firstErr, err)
		out = append(out, recs...)
		budget += unused
	}
	if len(all) == 0 {
		return nil, firstErr
	}

	// Finalize the leases (a session whose steps failed gets its old, due
	// score back, so that the next call retries it at once).
	s.finalize(ctx, op, s.k.dueShard, all)

	slices.SortFunc(out, func(a, b *session.Record) int {
		return cmp.Or(a.ExpiresAt.Compare(b.ExpiresAt), cmp.Compare(a.SessionID, b.SessionID), cmp.Compare(a.ID, b.ID))
	})
	if len(out) > 0 {
		// Claimed requests must reach the caller: an error now would lose
		// them, since no later call returns them again.
		if firstErr != nil {
			s.log.Warn("redisstore: claim expired: partial failure", "err", firstErr)
		}
		return out, nil
	}
	return nil, firstErr
}

// leaseDue leases due sessions from shards for a claim of up to budget
// requests (ClaimExpired's step 1). more are the shards that may hold
// further due sessions; err is the first error of a shard, whose sessions
// are left for a later call.
func (s *Store) leaseDue(ctx context.Context, op string, shards []int, budget int64) (got []*leased, more []int, err error) {
	want := min(budget, int64(math.Ceil(float64(budget)/s.duePerSession.load()))+1)
	per := (want + int64(len(shards)) - 1) / int64(len(shards))
	leases := make([]*call, len(shards))
	for i, shard := range shards {
		leases[i] = scall(scriptLease, []string{s.k.dueShard(shard)}, per, leaseMicros)
	}
	s.exec(ctx, leases...)
	for i, c := range leases {
		v, cerr := c.reply()
		if cerr != nil {
			err = cmp.Or(err, s.fail(op, cerr))
			continue
		}
		ls, cerr := parseLease(shards[i], v)
		if cerr != nil {
			err = cmp.Or(err, s.corrupt(op, cerr))
			continue
		}
		got = append(got, ls...)
		if int64(len(ls)) == per {
			more = append(more, shards[i])
		}
	}
	return got, more, err
}

// shareDue counts the due requests of each leased session and shares
// budget out among them, in order (ClaimExpired's step 2); it returns the
// budget left. A session it could not count keeps its old score as its
// next, so that it is retried soon; err is the first such failure.
func (s *Store) shareDue(ctx context.Context, op string, got []*leased, budget int64) (left int64, err error) {
	counts := make([]*call, len(got))
	for i, l := range got {
		counts[i] = scall(scriptCountDue, []string{s.k.expiry(l.sess)})
	}
	s.exec(ctx, counts...)
	var due, withDue int64
	for i, l := range got {
		l.next = l.old // unless counted below: retry it soon
		v, cerr := counts[i].reply()
		if cerr != nil {
			err = cmp.Or(err, s.fail(op, cerr))
			continue
		}
		var perr error
		if l.count, l.next, perr = parseCount(v); perr != nil {
			err = cmp.Or(err, s.corrupt(op, perr))
			l.next = l.old
			continue
		}
		l.alloc = min(l.count, budget)
		budget -= l.alloc
		if l.count > 0 {
			due += l.count
			withDue++
		}
	}
	if withDue > 0 {
		s.duePerSession.update(float64(due) / float64(withDue))
	}
	return budget, err
}

// claimLeased claims their share of due requests from the leased sessions
// that have one (ClaimExpired's step 3) and returns them, with unused, the
// part of the shares the sessions did not have after all (claimed meanwhile
// by a reaper whose lease had run out). Sessions without a share keep their
// next expiry from the count (still due if they had more than the budget).
// err is the first failure; a session whose claim failed keeps its old
// score as its next, so that the next call retries it.
func (s *Store) claimLeased(ctx context.Context, op string, got []*leased) (recs []*session.Record, unused int64, err error) {
	// Each claim records its timeouts in the session's outbox: the outbox
	// index is marked first, in the same pipeline (outbox.go).
	var claims []*call
	for _, l := range got {
		if l.alloc > 0 {
			l.claim = scall(scriptClaim, []string{s.k.expiry(l.sess), s.k.outbox(l.sess)}, s.k.recordPrefix(l.sess), l.alloc, s.retMillis, s.obLease)
			l.mark = s.obMark(l.sess)
			claims = append(claims, l.mark, l.claim)
		}
	}
	if len(claims) > 0 {
		s.exec(ctx, claims...)
	}
	for _, l := range got {
		if l.claim == nil {
			continue
		}
		v, cerr := l.claim.reply()
		if cerr != nil {
			// The lease score is still there: rescheduling the session at
			// its old score lets the next call retry it.
			err = cmp.Or(err, s.fail(op, cerr))
			l.next = l.old
			continue
		}
		rs, next, cerr := parseClaim(l.sess, v)
		if cerr != nil {
			err = cmp.Or(err, s.corrupt(op, cerr))
			l.next = l.old
			continue
		}
		l.next = next
		if len(rs) > 0 {
			s.ensureMarked(ctx, l.mark, l.sess)
		}
		recs = append(recs, rs...)
		unused += l.alloc - int64(len(rs))
	}
	return recs, unused, err
}

// parseCount decodes {count, earliest expiry or ”}.
func parseCount(v any) (int64, string, error) {
	a, err := asSlice(v)
	if err != nil || len(a) != 2 {
		return 0, "", cmp.Or(err, fmt.Errorf("count reply has %d elements", len(a)))
	}
	n, err := asInt(a[0])
	if err != nil {
		return 0, "", err
	}
	first, err := asString(a[1])
	return n, first, err
}

// ewma is a moving average shared by concurrent calls (a float64 in an
// atomic word); it starts at 1.
type ewma struct{ bits atomic.Uint64 }

func (e *ewma) load() float64 {
	if b := e.bits.Load(); b != 0 {
		return math.Float64frombits(b)
	}
	return 1
}

func (e *ewma) update(x float64) {
	e.bits.Store(math.Float64bits(max(1, (e.load()+x)/2)))
}

// parseLease decodes {lease score, {session, old score, …}} or {”}.
func parseLease(shard int, v any) ([]*leased, error) {
	a, err := asSlice(v)
	if err != nil || len(a) == 0 {
		return nil, cmp.Or(err, fmt.Errorf("empty lease reply"))
	}
	score, err := asString(a[0])
	if err != nil || score == "" {
		return nil, err
	}
	if len(a) != 2 {
		return nil, fmt.Errorf("lease reply has %d elements", len(a))
	}
	m, err := asSlice(a[1])
	if err != nil || len(m)%2 != 0 {
		return nil, cmp.Or(err, fmt.Errorf("lease reply has %d members and scores", len(m)))
	}
	out := make([]*leased, 0, len(m)/2)
	for i := 0; i < len(m); i += 2 {
		sess, err1 := asString(m[i])
		old, err2 := asString(m[i+1])
		f, err3 := strconv.ParseFloat(old, 64)
		if err := cmp.Or(err1, err2, err3); err != nil {
			return nil, err
		}
		out = append(out, &leased{sess: sess, shard: shard, lease: score, old: old, oldF: f})
	}
	return out, nil
}

// claimReply splits a claim script's reply {next score or ”, rest}.
func claimReply(v any) (string, any, error) {
	a, err := asSlice(v)
	if err != nil || len(a) != 2 {
		return "", nil, cmp.Or(err, fmt.Errorf("claim reply has %d elements", len(a)))
	}
	next, err := asString(a[0])
	if err != nil {
		return "", nil, err
	}
	return next, a[1], nil
}

// parseClaim decodes {next expiry or ”, {id, record, …}}.
func parseClaim(sess string, v any) ([]*session.Record, string, error) {
	next, rest, err := claimReply(v)
	if err != nil {
		return nil, "", err
	}
	recs, err := pairs(sess, rest)
	return recs, next, err
}

// NextExpiry returns how long, by Redis TIME, until the earliest scheduled
// look at a session in the due index (zero when one is due now); ok is
// false when nothing is scheduled. A reaper can sleep that long without
// reading any clock of its own. The schedule may come a little early (see
// docs/STATE.md), never late.
func (s *Store) NextExpiry(ctx context.Context) (d time.Duration, ok bool, err error) {
	const op = "next expiry"
	ctx, cancel, err := s.begin(ctx, op)
	if err != nil {
		return 0, false, err
	}
	defer cancel()
	calls := make([]*call, dueShards)
	for i := range calls {
		calls[i] = scall(scriptNextDue, []string{s.k.dueShard(i)})
	}
	s.exec(ctx, calls...)
	best := int64(math.MaxInt64)
	for _, c := range calls {
		v, err := c.reply()
		if err != nil {
			return 0, false, s.fail(op, err)
		}
		a, err := asSlice(v)
		if err != nil || len(a) != 2 {
			return 0, false, s.corrupt(op, err)
		}
		score, _ := asString(a[1])
		if score == "" {
			continue
		}
		now, err1 := asInt(a[0])
		at, err2 := strconv.ParseFloat(score, 64)
		if err := cmp.Or(err1, err2); err != nil {
			return 0, false, s.corrupt(op, err)
		}
		best = min(best, int64(at)-now)
		ok = true
	}
	if !ok {
		return 0, false, nil
	}
	return time.Duration(max(best, 0)) * time.Microsecond, true, nil
}

// finalize ends the leases of ls (sessions of the shards key names): each
// session still holding its lease score is rescheduled at its next time, or
// dropped. Finalizations that fail are kept and sent again before the next
// claim of any kind (releaseFailed): Redis may be back by then, and a
// lease left in place would hold its sessions for the whole lease.
func (s *Store) finalize(ctx context.Context, op string, key func(int) string, ls []*leased) {
	type leaseKey struct {
		shard int
		score string
	}
	byLease := map[leaseKey][]any{}
	for _, l := range ls {
		k := leaseKey{l.shard, l.lease}
		if byLease[k] == nil {
			byLease[k] = []any{l.lease}
		}
		byLease[k] = append(byLease[k], l.sess, l.next)
	}
	var after []*call
	for k, args := range byLease {
		after = append(after, scall(scriptFinalize, []string{key(k.shard)}, args...))
	}
	// A fresh deadline: the caller's may be what ran out.
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opTimeout)
	defer cancel()
	s.exec(fctx, after...)
	var failed []*call
	var firstErr error
	for _, c := range after {
		if err := c.cmd.Err(); err != nil {
			firstErr = cmp.Or(firstErr, err)
			failed = append(failed, scall(scriptFinalize, c.keys, c.args...))
		}
	}
	if len(failed) > 0 {
		s.log.Warn("redisstore: "+op+": could not release leases; retrying with the next claim", "count", len(failed), "err", firstErr)
		s.unreleased.add(failed)
	}
}

// releaseFailed sends again the finalizations that failed before. Each
// acts only while its lease score stands, so a late one is harmless.
func (s *Store) releaseFailed(ctx context.Context) {
	calls := s.unreleased.take()
	if len(calls) == 0 {
		return
	}
	s.exec(ctx, calls...)
	var again []*call
	for _, c := range calls {
		if c.cmd.Err() != nil {
			again = append(again, scall(scriptFinalize, c.keys, c.args...))
		}
	}
	s.unreleased.add(again)
}

// releases is a list of finalize calls to send again, bounded: past
// maxReleases the oldest are dropped (their leases run out by themselves).
type releases struct {
	mu    sync.Mutex
	calls []*call
}

const maxReleases = 1024

func (r *releases) add(calls []*call) {
	if len(calls) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, calls...)
	if n := len(r.calls); n > maxReleases {
		r.calls = slices.Clone(r.calls[n-maxReleases:])
	}
}

func (r *releases) take() []*call {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

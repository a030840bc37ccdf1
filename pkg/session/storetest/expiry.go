package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// expiryTests cover ClaimExpired and the expiry rules of package session.
// They run one after the other: ClaimExpired claims across the backend.
func (r *runner) expiryTests() []test {
	return []test{
		{"ClaimExpired expires a due request exactly once and leaves the others", testClaim},
		{"ClaimExpired returns at most its limit, earliest expiry first", testClaimOrder},
		{"A vote after the expiry is refused, expires the request and leaves it to ClaimExpired", testVoteAfterExpiry},
		{"Settle, Stop and CancelSession after the expiry leave the request to ClaimExpired", testSettleAfterExpiry},
		{"Concurrent ClaimExpired callers claim each of 200 requests exactly once", testRaceClaim},
		{"Votes racing ClaimExpired at the expiry give every request exactly one outcome", testRaceVoteClaim},
		{"A held request past its expiry is not opened and is dropped, not claimed", testHeldExpiry},
	}
}

const shortTTL = 300 * time.Millisecond

func (e *env) shortRequest(sess string, ttl time.Duration) session.Request {
	req := e.request(sess)
	req.TTL = ttl
	return req
}

// createShort creates a pending request of session sess that expires
// after ttl. The two steps of a create (Prepare, then Open) must both come
// within ttl, a few hundred milliseconds: when a loaded machine stalls
// longer between them, Open rightly refuses the expired request, and the
// request is made again with a new id (up to five times).
func (e *env) createShort(t *testing.T, sess string, ttl time.Duration) *session.Record {
	t.Helper()
	for range 4 {
		rec, created, err := Create(e.ctx, e.requests, e.shortRequest(sess, ttl))
		if errors.Is(err, session.ErrExpired) {
			continue
		}
		if err != nil || !created {
			t.Fatalf("Create(%s, ttl %v): created=%v, %v", sess, ttl, created, err)
		}
		return rec
	}
	return e.create(t, e.shortRequest(sess, ttl))
}

// waitDue waits until the store's clock reaches at.
func (e *env) waitDue(t *testing.T, at time.Time) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		now := e.now(t)
		if !now.Before(at) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store's clock did not reach %v (now %v)", at, now)
		}
		time.Sleep(min(at.Sub(now), 50*time.Millisecond) + time.Millisecond)
	}
}

// claims counts what ClaimExpired returned for the records a test owns and
// ignores the others (a shared backend may hold other tests' requests).
type claims struct {
	mu     sync.Mutex
	want   map[string]bool // false: watched, must not be claimed
	count  map[string]int
	recs   map[string]*session.Record
	order  []string
	left   atomic.Int64
	others int
}

func newClaims(recs ...*session.Record) *claims {
	c := &claims{want: map[string]bool{}, count: map[string]int{}, recs: map[string]*session.Record{}}
	for _, r := range recs {
		c.want[keyOf(r)] = true
	}
	c.left.Store(int64(len(recs)))
	return c
}

// forbid watches records that must not be claimed.
func (c *claims) forbid(recs ...*session.Record) {
	for _, r := range recs {
		c.want[keyOf(r)] = false
	}
}

func (c *claims) add(got []*session.Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range got {
		k := keyOf(r)
		want, watched := c.want[k]
		if !watched {
			c.others++
			continue
		}
		c.count[k]++
		c.recs[k] = r
		c.order = append(c.order, k)
		if want && c.count[k] == 1 {
			c.left.Add(-1)
		}
	}
}

// drain calls ClaimExpired until every wanted record was claimed, then once
// more to check that none comes back.
func (e *env) drain(t *testing.T, c *claims, limit int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for c.left.Load() > 0 {
		got, err := e.expiry.ClaimExpired(e.ctx, limit)
		if err != nil {
			t.Fatalf("ClaimExpired: %v", err)
		}
		if len(got) > limit {
			t.Fatalf("ClaimExpired(%d) returned %d records", limit, len(got))
		}
		c.add(got)
		if time.Now().After(deadline) {
			t.Fatalf("%d requests were never claimed", c.left.Load())
		}
		if len(got) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	got, err := e.expiry.ClaimExpired(e.ctx, 1000)
	if err != nil {
		t.Fatalf("ClaimExpired: %v", err)
	}
	c.add(got)
}

// checkOnce fails the test unless every wanted record was claimed exactly
// once, expired, with no decision.
func (c *claims) checkOnce(t *testing.T) {
	t.Helper()
	for k, want := range c.want {
		if !want {
			continue
		}
		if c.count[k] != 1 {
			t.Errorf("%s claimed %d times, want exactly once", k, c.count[k])
			continue
		}
		r := c.recs[k]
		if r.State != messages.StateExpired || r.Decision != nil || r.DecidedAt.Before(r.ExpiresAt) {
			t.Errorf("claimed %s, want expired with no decision and DecidedAt at or after ExpiresAt", describe(r))
		}
	}
	if c.others > 0 {
		t.Logf("ClaimExpired also returned %d requests of other tests sharing the backend", c.others)
	}
	for k, n := range c.count {
		if !c.want[k] {
			t.Errorf("claimed %s %d times, which must not expire", k, n)
		}
	}
}

// createMany creates n requests in sessions of 10, from 8 goroutines so
// that they expire close together.
func (e *env) createMany(t *testing.T, n int, ttl time.Duration) []*session.Record {
	t.Helper()
	reqs := make([]session.Request, n)
	var sess string
	for i := range reqs {
		if i%10 == 0 {
			sess = e.name("sess")
		}
		reqs[i] = e.shortRequest(sess, ttl)
	}
	recs := make([]*session.Record, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < n; i += 8 {
				recs[i], _, errs[i] = Create(e.ctx, e.requests, reqs[i])
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Create(%s/%s): %v", reqs[i].SessionID, reqs[i].ID, err)
		}
	}
	return recs
}

func testClaim(t *testing.T, e *env) {
	sess := e.name("sess")
	due := e.createShort(t, sess, shortTTL)
	later := e.create(t, e.request(sess))
	approved := e.createShort(t, sess, shortTTL)
	quorumReq := e.shortRequest(sess, shortTTL)
	quorumReq.ApprovalsRequired = 2
	quorum := e.create(t, quorumReq)
	if _, err := e.requests.Decide(e.ctx, sess, approved.ID, approve(approved, "ann")); err != nil {
		t.Fatal(err)
	}
	if _, err := e.requests.Decide(e.ctx, sess, quorum.ID, approve(quorum, "ann")); err != nil {
		t.Fatal(err)
	}

	c := newClaims(due, quorum)
	c.forbid(later, approved)
	got, err := e.expiry.ClaimExpired(e.ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	c.add(got)
	if now := e.now(t); now.Before(due.ExpiresAt) && len(c.order) > 0 {
		t.Fatalf("ClaimExpired before the expiry claimed %v", c.order)
	}

	e.waitDue(t, quorum.ExpiresAt)
	e.drain(t, c, 1000)
	c.checkOnce(t)
	checkRequest(t, c.recs[keyOf(due)], due.Request)
	if got := c.recs[keyOf(quorum)].Approvals; !slices.Equal(got, []string{"ann"}) {
		t.Errorf("expired quorum request has approvals %v, want [ann]", got)
	}
	for _, r := range []*session.Record{due, quorum} {
		checkSame(t, "Get after the claim", e.get(t, r), c.recs[keyOf(r)])
	}
	if got := e.get(t, later); got.State != messages.StatePending {
		t.Errorf("request not due is %s after ClaimExpired", got.State)
	}
	if got := e.get(t, approved); got.State != messages.StateApproved {
		t.Errorf("request approved before its expiry is %s after ClaimExpired", got.State)
	}
}

func testClaimOrder(t *testing.T, e *env) {
	sess := e.name("sess")
	var recs []*session.Record
	for i := range 6 {
		// Descending TTLs: creation order is not expiry order.
		recs = append(recs, e.createShort(t, sess, shortTTL-time.Duration(i)*20*time.Millisecond))
	}
	e.waitDue(t, slices.MaxFunc(recs, func(a, b *session.Record) int { return a.ExpiresAt.Compare(b.ExpiresAt) }).ExpiresAt)
	c := newClaims(recs...)
	e.drain(t, c, 2)
	c.checkOnce(t)
	want := slices.Clone(recs)
	slices.SortFunc(want, func(a, b *session.Record) int { return a.ExpiresAt.Compare(b.ExpiresAt) })
	var wantKeys []string
	for _, r := range want {
		wantKeys = append(wantKeys, keyOf(r))
	}
	if !slices.Equal(c.order, wantKeys) {
		t.Errorf("claimed in order %v, want earliest expiry first %v", c.order, wantKeys)
	}
}

func testVoteAfterExpiry(t *testing.T, e *env) {
	sess := e.name("sess")
	req := e.shortRequest(sess, shortTTL)
	req.ApprovalsRequired = 2
	rec := e.create(t, req)
	if _, err := e.requests.Decide(e.ctx, sess, rec.ID, approve(rec, "ann")); err != nil {
		t.Fatal(err)
	}
	e.waitDue(t, rec.ExpiresAt)

	res, err := e.requests.Decide(e.ctx, sess, rec.ID, approve(rec, "bob"))
	if err != nil {
		t.Fatal(err)
	}
	checkRefused(t, "approval after the expiry", res, session.ErrSettled, messages.StateExpired)
	if res.Record.Decision != nil || res.Record.DecidedAt.Before(rec.ExpiresAt) || !slices.Equal(res.Record.Approvals, []string{"ann"}) {
		t.Errorf("record after a late approval = %s, want expired with approvals [ann] and no decision", describe(res.Record))
	}
	checkSame(t, "Get after a late approval", e.get(t, rec), res.Record)
	res, err = e.requests.Decide(e.ctx, sess, rec.ID, deny(rec, "cid"))
	if err != nil {
		t.Fatal(err)
	}
	checkRefused(t, "deny after the expiry", res, session.ErrSettled, messages.StateExpired)

	c := newClaims(rec)
	e.drain(t, c, 10)
	c.checkOnce(t)
	checkSame(t, "Get after the claim", e.get(t, rec), c.recs[keyOf(rec)])
}

func testSettleAfterExpiry(t *testing.T, e *env) {
	sess := e.name("sess")
	r1 := e.createShort(t, sess, shortTTL)
	r2 := e.createShort(t, sess, shortTTL)
	r3 := e.createShort(t, sess, shortTTL)
	open := e.create(t, e.request(sess))
	e.waitDue(t, r3.ExpiresAt)

	lists := map[string]func() ([]*session.Record, error){
		"session": func() ([]*session.Record, error) { return e.pending.ListPendingSession(e.ctx, sess) },
		"agent":   func() ([]*session.Record, error) { return e.pending.ListPendingAgent(e.ctx, open.AgentID) },
		"team":    func() ([]*session.Record, error) { return e.pending.ListPendingTeam(e.ctx, open.Teams[0]) },
	}
	for name, list := range lists {
		if got, err := list(); err != nil || !slices.Equal(ids(got), []string{open.ID}) {
			t.Errorf("ListPending %s after the expiry = %v, %v; want only %s", name, ids(got), err, open.ID)
		}
	}

	res, err := e.requests.Settle(e.ctx, sess, r1.ID, messages.StateApproved, decision(r1, messages.OutcomeAllow, messages.ReasonCascade, "cascade"))
	if err != nil {
		t.Fatal(err)
	}
	checkRefused(t, "Settle after the expiry", res, session.ErrSettled, messages.StateExpired)
	m := &mkRecorder{code: messages.ReasonCancelled}
	if got, err := e.sessions.CancelSession(e.ctx, sess, []string{r2.ID}, m.mk); err != nil || len(got) != 0 {
		t.Errorf("CancelSession after the expiry = %v, %v; want nothing", ids(got), err)
	}
	got, err := e.sessions.Stop(e.ctx, sess, session.StopSignal{Reason: "stop"}, m.mk)
	if err != nil || !slices.Equal(ids(got), []string{open.ID}) {
		t.Errorf("Stop after the expiry settled %v (%v), want only the open request %s", ids(got), err, open.ID)
	}
	if !slices.Equal(m.called(), []string{open.ID}) {
		t.Errorf("mk called for %v, want only %s", m.called(), open.ID)
	}
	c := newClaims(r1, r2, r3)
	c.forbid(open)
	e.drain(t, c, 10)
	c.checkOnce(t)
}

// claimers starts callers goroutines on wg that claim up to limit due
// requests at a time into c until c expects no more or deadline passes;
// the first that fails stores its error in failed and stops.
func (e *env) claimers(wg *sync.WaitGroup, c *claims, callers, limit int, deadline time.Time, failed *atomic.Value) {
	for range callers {
		wg.Go(func() {
			for c.left.Load() > 0 && time.Now().Before(deadline) {
				got, err := e.expiry.ClaimExpired(e.ctx, limit)
				if err != nil {
					failed.Store(err)
					return
				}
				c.add(got)
				if len(got) == 0 {
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
}

func testRaceClaim(t *testing.T, e *env) {
	for _, callers := range []int{2, 8} {
		t.Run(fmt.Sprintf("%d callers", callers), func(t *testing.T) {
			const n = 200
			recs := e.createMany(t, n, shortTTL)
			c := newClaims(recs...)
			var wg sync.WaitGroup
			var failed atomic.Value
			e.claimers(&wg, c, callers, 7, time.Now().Add(10*time.Second), &failed)
			wg.Wait()
			if err, _ := failed.Load().(error); err != nil {
				t.Fatalf("ClaimExpired: %v", err)
			}
			e.drain(t, c, 1000)
			c.checkOnce(t)
		})
	}
}

func testRaceVoteClaim(t *testing.T, e *env) {
	const n = 200
	recs := e.createMany(t, n, 2*shortTTL)
	// Map the store's clock to the local one to aim each vote at its
	// request's expiry.
	before := e.now(t)
	local := time.Now()
	after := e.now(t)
	storeNow := before.Add(after.Sub(before) / 2)
	offset := storeNow.Sub(local)

	c := newClaims(recs...)
	votes := make([]outcome, n)
	var wg sync.WaitGroup
	deadline := time.Now().Add(10 * time.Second)
	for i, rec := range recs {
		wg.Go(func() {
			// Aim from 30ms before to 10ms after the expiry: a vote's round
			// trip lands it later than it was sent.
			jitter := time.Duration(i%41-30) * time.Millisecond
			time.Sleep(time.Until(rec.ExpiresAt.Add(-offset + jitter)))
			votes[i].res, votes[i].err = e.requests.Decide(e.ctx, rec.SessionID, rec.ID, approve(rec, "ann"))
			if votes[i].err == nil && votes[i].res.Applied {
				c.left.Add(-1)
			}
		})
	}
	var failed atomic.Value
	e.claimers(&wg, c, 3, 16, deadline, &failed)
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatalf("ClaimExpired: %v", err)
	}
	got, err := e.expiry.ClaimExpired(e.ctx, 1000)
	if err != nil {
		t.Fatal(err)
	}
	c.add(got)

	// The records are judged by what the calls returned: a Get now could
	// come after the (short) retention of the first ones settled.
	checkVoteOrClaim(t, recs, votes, c)
}

// checkVoteOrClaim checks that each request of recs had one outcome: the
// approval of its vote (votes[i]) or its expiry, claimed once (c), with the
// state and the refusal that outcome gives.
func checkVoteOrClaim(t *testing.T, recs []*session.Record, votes []outcome, c *claims) {
	t.Helper()
	approved, expired := 0, 0
	for i, rec := range recs {
		v := votes[i]
		if v.err != nil && !errors.Is(v.err, session.ErrNotFound) {
			t.Fatalf("vote on %s: %v", keyOf(rec), v.err)
		}
		k := keyOf(rec)
		switch {
		case errors.Is(v.err, session.ErrNotFound) && c.count[k] == 1:
			// The vote came so late that the claimed record had already
			// passed its (short) retention: refused all the same.
			expired++
		case v.res.Applied && c.count[k] == 0:
			approved++
			if v.res.Record.State != messages.StateApproved {
				t.Errorf("%s: the vote applied but left %s", k, describe(v.res.Record))
			}
		case !v.res.Applied && c.count[k] == 1:
			expired++
			if !errors.Is(v.res.Refusal, session.ErrSettled) || v.res.Record.State != messages.StateExpired {
				t.Errorf("%s: refused vote: refusal %v, state %s; want ErrSettled, expired", k, v.res.Refusal, v.res.Record.State)
			}
			if r := c.recs[k]; r.State != messages.StateExpired || len(r.Approvals) != 0 {
				t.Errorf("%s: claimed %s, want expired without approvals", k, describe(r))
			}
		default:
			t.Errorf("%s: vote applied = %v and claimed %d times; want exactly one outcome", k, v.res.Applied, c.count[k])
		}
	}
	t.Logf("%d approved by the vote, %d expired", approved, expired)
}

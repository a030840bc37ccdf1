package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// raceTests start many callers at once on one request or one session: each
// atomic transition must win exactly once.
func (r *runner) raceTests() []test {
	return []test{
		{"Fifty votes racing on one request settle it once and every voter sees the same outcome", testRaceVotes},
		{"Fifty Prepares racing with one request id store it once", testRacePrepare},
		{"Approvals from five approvers racing on a quorum of two approve it once with two approvals", testRaceQuorum},
		{"Stop racing two-step creates (Prepare, Open) leaves no pending request in the session", testRaceStopCreate},
		{"Votes, Settle, CancelSession and Stop racing on one request settle it once", testRaceMixed},
	}
}

// race runs fn(i) for i in [0, n) on n goroutines released together.
func race(n int, fn func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			fn(i)
		})
	}
	close(start)
	wg.Wait()
}

// claimLog records when each leased item (an outbox entry, an escalation
// step) was claimed, to tell a second claim within one lease, which is a
// bug, from one after the lease ran out, which is what a lease is for: the
// suite runs with a lease of a few hundred milliseconds, and a loaded
// machine (-race, other packages' tests) can take that long between two
// claims of the same test.
type claimLog struct {
	lease time.Duration
	mu    sync.Mutex
	spans map[string][]claimSpan
}

// claimSpan is when a claim call started and returned: the store took its
// lease at some moment in between.
type claimSpan struct{ start, end time.Time }

func newClaimLog(lease time.Duration) *claimLog {
	return &claimLog{lease: lease, spans: map[string][]claimSpan{}}
}

// add records that a claim call that ran from start to end returned key.
func (l *claimLog) add(key string, start, end time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.spans[key] = append(l.spans[key], claimSpan{start, end})
}

// count is how many claims returned key.
func (l *claimLog) count(key string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.spans[key])
}

// withinLease reports, for each key claimed more than once, the claims
// that certainly fell within one lease: a later claim that returned before
// the lease an earlier one took could have run out (that claim's start
// plus the lease).
func (l *claimLog) withinLease() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for key, spans := range l.spans {
		for i, a := range spans {
			for _, b := range spans[i+1:] {
				first, second := a, b
				if b.start.Before(a.start) {
					first, second = b, a
				}
				if second.end.Before(first.start.Add(l.lease)) {
					out = append(out, fmt.Sprintf("%s claimed twice within one lease (%v): at %s–%s and %s–%s", key, l.lease,
						first.start.Format("15:04:05.000"), first.end.Format("15:04:05.000"),
						second.start.Format("15:04:05.000"), second.end.Format("15:04:05.000")))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// claimConcurrently runs claimers goroutines released together, each
// calling claim until it returns nothing, and logs each claimed item that
// key accepts (by its key) with the span of the call that returned it. A
// claimer still getting items after 100 calls fails the test: a store that
// never leases would hand them out forever.
func claimConcurrently[T any](t *testing.T, claimers int, lease time.Duration, name string,
	claim func() ([]T, error), key func(T) (string, bool)) *claimLog {
	claims := newClaimLog(lease)
	race(claimers, func(int) {
		for calls := 0; ; calls++ {
			if calls == 100 {
				t.Errorf("%s still returned items after %d calls", name, calls)
				return
			}
			start := time.Now()
			got, err := claim()
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			if len(got) == 0 {
				return
			}
			end := time.Now()
			for _, item := range got {
				if k, ok := key(item); ok {
					claims.add(k, start, end)
				}
			}
		}
	})
	return claims
}

type outcome struct {
	res session.Result
	err error
}

func testRaceVotes(t *testing.T, e *env) {
	rec := e.create(t, e.request(e.name("sess")))
	const n = 50
	out := make([]outcome, n)
	race(n, func(i int) {
		v := approve(rec, fmt.Sprintf("ap-%d", i))
		if i%2 == 1 {
			v = deny(rec, fmt.Sprintf("ap-%d", i))
		}
		out[i].res, out[i].err = e.requests.Decide(e.ctx, rec.SessionID, rec.ID, v)
	})
	final := e.get(t, rec)
	if final.State != messages.StateApproved && final.State != messages.StateRejected {
		t.Fatalf("final record %s, want approved or rejected", describe(final))
	}
	applied := 0
	for i, o := range out {
		if o.err != nil {
			t.Fatalf("vote %d: %v", i, o.err)
		}
		if o.res.Applied {
			applied++
			checkSame(t, "the applied vote's record", o.res.Record, final)
			if want := fmt.Sprintf("ap-%d", i); final.Decision.DecidedBy.ID != want {
				t.Errorf("final decision by %s, want the applied voter %s", final.Decision.DecidedBy.ID, want)
			}
			continue
		}
		if !errors.Is(o.res.Refusal, session.ErrSettled) {
			t.Errorf("vote %d: refusal %v, want ErrSettled", i, o.res.Refusal)
		}
		checkSame(t, fmt.Sprintf("vote %d's standing record", i), o.res.Record, final)
	}
	if applied != 1 {
		t.Fatalf("%d votes applied, want exactly 1", applied)
	}
}

func testRacePrepare(t *testing.T, e *env) {
	req := e.request(e.name("sess"))
	const n = 50
	recs := make([]*session.Record, n)
	created := make([]bool, n)
	errs := make([]error, n)
	race(n, func(i int) { recs[i], created[i], errs[i] = e.requests.Prepare(e.ctx, req) })
	l, err := e.requests.Lookup(e.ctx, session.LookupQuery{SessionID: req.SessionID, RequestID: req.ID, SkipGrants: true})
	if err != nil || l.Existing == nil {
		t.Fatalf("Lookup after the race: %v, %v", l.Existing, err)
	}
	final := l.Existing
	count := 0
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("Prepare %d: %v", i, errs[i])
		}
		if created[i] {
			count++
		}
		checkSame(t, fmt.Sprintf("Prepare %d's record", i), recs[i], final)
	}
	if count != 1 {
		t.Fatalf("%d Prepares reported created, want exactly 1", count)
	}
	if final.State != session.StateHeld {
		t.Fatalf("after the race: %s, want it held", describe(final))
	}
}

func testRaceQuorum(t *testing.T, e *env) {
	req := e.request(e.name("sess"))
	req.ApprovalsRequired = 2
	rec := e.create(t, req)
	const n = 5
	out := make([]outcome, n)
	race(n, func(i int) {
		out[i].res, out[i].err = e.requests.Decide(e.ctx, rec.SessionID, rec.ID, approve(rec, fmt.Sprintf("ap-%d", i)))
	})
	final := e.get(t, rec)
	var applied, approvedBy []string
	for i, o := range out {
		if o.err != nil {
			t.Fatalf("vote %d: %v", i, o.err)
		}
		switch {
		case o.res.Applied && o.res.Record.State == messages.StateApproved:
			approvedBy = append(approvedBy, fmt.Sprintf("ap-%d", i))
			applied = append(applied, fmt.Sprintf("ap-%d", i))
			checkSame(t, "the approving vote's record", o.res.Record, final)
		case o.res.Applied:
			applied = append(applied, fmt.Sprintf("ap-%d", i))
			if o.res.Record.State != messages.StatePending || len(o.res.Record.Approvals) != 1 {
				t.Errorf("first counted vote left %s, want pending with one approval", describe(o.res.Record))
			}
		default:
			checkRefused(t, fmt.Sprintf("vote %d", i), o.res, session.ErrSettled, messages.StateApproved)
		}
	}
	if len(applied) != 2 || len(approvedBy) != 1 {
		t.Fatalf("applied votes %v (approving: %v), want 2 applied and 1 approving", applied, approvedBy)
	}
	if final.State != messages.StateApproved || !slices.Equal(sorted(final.Approvals), sorted(applied)) {
		t.Fatalf("final record %s, want approved with approvals %v", describe(final), applied)
	}
	if final.Decision.DecidedBy.ID != approvedBy[0] {
		t.Errorf("final decision by %s, want %s", final.Decision.DecidedBy.ID, approvedBy[0])
	}
}

func testRaceStopCreate(t *testing.T, e *env) {
	for round := range 5 {
		sess := e.name("sess")
		const n = 50
		reqs := make([]session.Request, n)
		for i := range reqs {
			reqs[i] = e.request(sess)
		}
		created := make([]bool, n)
		errs := make([]error, n)
		var stopped []*session.Record
		var stopErr error
		m := &mkRecorder{code: messages.ReasonHardStop}
		race(n+1, func(i int) {
			if i == n/2 {
				stopped, stopErr = e.sessions.Stop(e.ctx, sess, session.StopSignal{Reason: "stop"}, m.mk)
				return
			}
			if i > n/2 {
				i--
			}
			_, created[i], errs[i] = Create(e.ctx, e.requests, reqs[i])
		})
		if stopErr != nil {
			t.Fatal(stopErr)
		}
		var made []string
		for i := range reqs[:n] {
			switch {
			case errs[i] == nil && created[i]:
				made = append(made, reqs[i].ID)
				if got := e.get(t, &session.Record{Request: reqs[i]}); got.State != messages.StateRejected {
					t.Errorf("round %d: request created before the stop is %s, want rejected by Stop", round, got.State)
				}
			case errors.Is(errs[i], session.ErrStopped):
			default:
				t.Fatalf("round %d: create %d: created %v, err %v; want created or ErrStopped", round, i, created[i], errs[i])
			}
		}
		if got, want := sorted(ids(stopped)), sorted(made); !slices.Equal(got, want) {
			t.Fatalf("round %d: Stop settled %v, want every request created before it %v", round, got, want)
		}
		if pending, err := e.pending.ListPendingSession(e.ctx, sess); err != nil || len(pending) != 0 {
			t.Fatalf("round %d: pending after Stop = %v, %v; want none", round, ids(pending), err)
		}
		t.Logf("round %d: %d of %d creates ran before the stop", round, len(made), n)
	}
}

func testRaceMixed(t *testing.T, e *env) {
	const rounds = 20
	for round := range rounds {
		sess := e.name("sess")
		rec := e.create(t, e.request(sess))
		var (
			mu      sync.Mutex
			winners []string
		)
		win := func(who string, applied bool, err error) {
			if err != nil {
				t.Errorf("round %d: %s: %v", round, who, err)
			}
			if applied {
				mu.Lock()
				winners = append(winners, who)
				mu.Unlock()
			}
		}
		mk := (&mkRecorder{code: messages.ReasonCancelled}).mk
		race(5, func(i int) {
			switch i {
			case 0:
				res, err := e.requests.Decide(e.ctx, sess, rec.ID, approve(rec, "ann"))
				win("approve", res.Applied, err)
			case 1:
				res, err := e.requests.Decide(e.ctx, sess, rec.ID, deny(rec, "bob"))
				win("deny", res.Applied, err)
			case 2:
				res, err := e.requests.Settle(e.ctx, sess, rec.ID, messages.StateApproved, decision(rec, messages.OutcomeAllow, messages.ReasonCascade, "cascade"))
				win("settle", res.Applied, err)
			case 3:
				got, err := e.sessions.CancelSession(e.ctx, sess, []string{rec.ID}, mk)
				win("cancel", len(got) == 1, err)
			case 4:
				got, err := e.sessions.Stop(e.ctx, sess, session.StopSignal{Reason: "stop"}, mk)
				win("stop", len(got) == 1, err)
			}
		})
		if len(winners) != 1 {
			t.Fatalf("round %d: applied by %v, want exactly one", round, winners)
		}
		want := map[string]messages.State{
			"approve": messages.StateApproved, "deny": messages.StateRejected, "settle": messages.StateApproved,
			"cancel": messages.StateCancelled, "stop": messages.StateRejected,
		}[winners[0]]
		by := map[string]string{"approve": "ann", "deny": "bob", "settle": "cascade", "cancel": "mk", "stop": "mk"}[winners[0]]
		if got := e.get(t, rec); got.State != want || got.Decision == nil || got.Decision.DecidedBy.ID != by {
			t.Fatalf("round %d: %s won but the record is %s, want %s decided by %s", round, winners[0], describe(got), want, by)
		}
	}
}

package memstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
	"github.com/signoff-dev/signoff/pkg/session/storetest"
)

// fakeClock is a store clock that moves only when told.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func newStore(retention time.Duration) (*memstore.Store, *fakeClock) {
	c := &fakeClock{now: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	return memstore.New(memstore.Options{Clock: c.Now, Retention: retention}), c
}

func request(sess, id string, ttl time.Duration) session.Request {
	return session.Request{ID: id, SessionID: sess, AgentID: "agent-" + sess, Tool: "bash", Teams: []string{"ops"}, ApprovalsRequired: 1, TTL: ttl}
}

func mustCreate(t testing.TB, s *memstore.Store, req session.Request) *session.Record {
	t.Helper()
	rec, created, err := storetest.Create(t.Context(), s, req)
	if err != nil || !created {
		t.Fatalf("Create(%s/%s) = %v, %v", req.SessionID, req.ID, created, err)
	}
	return rec
}

func vote(by string, approve bool) session.Vote {
	return session.Vote{ApproverID: by, Approve: approve, Decision: messages.Decision{RequestID: "r", DecidedBy: messages.Decider{ID: by}}}
}

func TestARequestIsDueExactlyAtItsExpiry(t *testing.T) {
	s, clock := newStore(time.Hour)
	early := mustCreate(t, s, request("s", "early", time.Minute))
	onTime := mustCreate(t, s, request("s", "on-time", time.Minute))
	clock.Add(time.Minute - time.Nanosecond)
	res, err := s.Decide(t.Context(), "s", early.ID, vote("ann", true))
	if err != nil || !res.Applied || res.Record.State != messages.StateApproved {
		t.Fatalf("vote 1ns before the expiry = %+v, %v; want applied", res, err)
	}
	clock.Add(time.Nanosecond)
	res, err = s.Decide(t.Context(), "s", onTime.ID, vote("ann", true))
	if err != nil || res.Applied || !errors.Is(res.Refusal, session.ErrSettled) || res.Record.State != messages.StateExpired {
		t.Fatalf("vote at the expiry = %+v, %v; want refused, expired", res, err)
	}
	if !res.Record.DecidedAt.Equal(clock.Now()) {
		t.Errorf("DecidedAt = %v, want the store's time %v", res.Record.DecidedAt, clock.Now())
	}
}

func TestAnExpiredRequestIsKeptUntilClaimedThenForTheRetention(t *testing.T) {
	const retention = time.Hour
	s, clock := newStore(retention)
	rec := mustCreate(t, s, request("s", "r", time.Minute))
	clock.Add(time.Minute + 3*retention)
	if got, err := s.Get(t.Context(), "s", "r"); err != nil || got.State != messages.StatePending {
		t.Fatalf("unclaimed due request = %v, %v; want it kept, pending", got, err)
	}
	if res, err := s.Decide(t.Context(), "s", "r", vote("ann", true)); err != nil || res.Record.State != messages.StateExpired {
		t.Fatalf("late vote = %+v, %v; want the request expired", res, err)
	}
	clock.Add(2 * retention)
	if _, err := s.Get(t.Context(), "s", "r"); err != nil {
		t.Fatalf("an expired request the reaper has not reported was dropped: %v", err)
	}
	got, err := s.ClaimExpired(t.Context(), 10)
	if err != nil || len(got) != 1 || got[0].ID != rec.ID {
		t.Fatalf("ClaimExpired = %v, %v; want the request", got, err)
	}
	clock.Add(retention - time.Nanosecond)
	if _, err := s.Get(t.Context(), "s", "r"); err != nil {
		t.Fatalf("claimed request dropped within its retention: %v", err)
	}
	clock.Add(time.Nanosecond)
	if _, err := s.Get(t.Context(), "s", "r"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Get at the end of the retention = %v, want ErrNotFound", err)
	}
}

func TestRetentionCountsFromTheDecision(t *testing.T) {
	const retention = time.Hour
	s, clock := newStore(retention)
	mustCreate(t, s, request("s", "r", 10*time.Hour))
	clock.Add(5 * time.Hour)
	if _, err := s.Decide(t.Context(), "s", "r", vote("ann", false)); err != nil {
		t.Fatal(err)
	}
	clock.Add(retention - time.Nanosecond)
	if _, err := s.Get(t.Context(), "s", "r"); err != nil {
		t.Fatalf("dropped within the retention: %v", err)
	}
	clock.Add(time.Nanosecond)
	if _, err := s.Get(t.Context(), "s", "r"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Get at the end of the retention = %v, want ErrNotFound", err)
	}
}

func TestListsBreakCreationTimeTiesByRequestID(t *testing.T) {
	s, _ := newStore(time.Hour) // the clock stands still: equal CreatedAt
	for _, id := range []string{"c", "a", "d", "b"} {
		mustCreate(t, s, request("s", id, time.Minute))
	}
	got, err := s.ListPendingTeam(t.Context(), "ops")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, r.ID)
	}
	if !slices.Equal(ids, []string{"a", "b", "c", "d"}) {
		t.Errorf("list = %v, want [a b c d]", ids)
	}
}

func TestNextExpiryFollowsTheStoreClock(t *testing.T) {
	s, clock := newStore(time.Hour)
	check := func(wantD time.Duration, wantOK bool) {
		t.Helper()
		d, ok, err := s.NextExpiry(t.Context())
		if err != nil || d != wantD || ok != wantOK {
			t.Fatalf("NextExpiry = %v, %v, %v; want %v, %v", d, ok, err, wantD, wantOK)
		}
	}
	check(0, false)
	mustCreate(t, s, request("s", "late", time.Minute))
	mustCreate(t, s, request("s", "soon", 30*time.Second))
	check(30*time.Second, true)
	clock.Add(10 * time.Second)
	check(20*time.Second, true)
	clock.Add(time.Minute)
	check(0, true)
	if got, err := s.ClaimExpired(t.Context(), 1); err != nil || len(got) != 1 || got[0].ID != "soon" {
		t.Fatalf("ClaimExpired(1) = %v, %v; want soon", got, err)
	}
	check(0, true) // "late" is due too
	if _, err := s.ClaimExpired(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	check(0, false)
	mustCreate(t, s, request("s", "approved", time.Minute))
	if _, err := s.Decide(t.Context(), "s", "approved", vote("ann", true)); err != nil {
		t.Fatal(err)
	}
	check(0, false) // a settled request no longer waits for expiry
}

func testGrant(id, sess string) session.Grant {
	return session.Grant{Grant: messages.Grant{ID: id, Scope: messages.ScopeSession, SessionID: sess, Tool: "write", Teams: []string{"default"}}}
}

func TestSessionGrantsLapseByTheStoreClock(t *testing.T) {
	const retention = time.Hour
	s, clock := newStore(retention)
	ctx := t.Context()
	if _, _, _, err := s.AddGrant(ctx, testGrant("g1", "s")); err != nil {
		t.Fatal(err)
	}
	clock.Add(retention - time.Nanosecond)
	l, err := s.Lookup(ctx, session.LookupQuery{SessionID: "s"}) // refreshes
	if err != nil || len(l.Grants) != 1 {
		t.Fatalf("Lookup within the retention = %+v, %v", l, err)
	}
	clock.Add(retention - time.Nanosecond)
	if gs, err := s.RevokeGrants(ctx, "s", ""); err != nil || len(gs) != 1 {
		t.Fatalf("grant lapsed before Retention after its last Lookup (revoke returned %d, %v)", len(gs), err)
	}
	if _, _, _, err := s.AddGrant(ctx, testGrant("g2", "s")); err != nil {
		t.Fatal(err)
	}
	clock.Add(retention)
	if gs, err := s.RevokeGrants(ctx, "s", ""); err != nil || len(gs) != 0 {
		t.Fatalf("grant outlived Retention without use (revoke returned %d, %v)", len(gs), err)
	}
}

func TestGrantsExpireByTheStoreClock(t *testing.T) {
	s, clock := newStore(time.Hour)
	ctx := t.Context()
	g := testGrant("g1", "s")
	g.MaxAge = time.Minute
	stored, _, _, err := s.AddGrant(ctx, g)
	if err != nil {
		t.Fatal(err)
	}
	if !stored.ExpiresAt.Equal(clock.Now().Add(time.Minute)) {
		t.Errorf("ExpiresAt = %v, want the store clock's now + 1m (%v)", stored.ExpiresAt, clock.Now().Add(time.Minute))
	}
	clock.Add(time.Minute - time.Nanosecond)
	if l, _ := s.Lookup(ctx, session.LookupQuery{SessionID: "s"}); len(l.Grants) != 1 {
		t.Fatalf("grant gone before its expiry: %+v", l.Grants)
	}
	clock.Add(time.Nanosecond)
	if l, _ := s.Lookup(ctx, session.LookupQuery{SessionID: "s"}); len(l.Grants) != 0 {
		t.Fatalf("grant outlived its expiry: %+v", l.Grants)
	}
	if gs, err := s.ExpireGrants(ctx, []string{"default"}); err != nil || len(gs) != 1 || gs[0].ID != "g1" {
		t.Fatalf("ExpireGrants = %+v, %v; want g1", gs, err)
	}
}

func TestRecordTimesComeFromTheStoreClock(t *testing.T) {
	s, clock := newStore(time.Hour)
	start := clock.Now()
	rec := mustCreate(t, s, request("s", "r", 90*time.Second))
	if !rec.CreatedAt.Equal(start) || !rec.ExpiresAt.Equal(start.Add(90*time.Second)) {
		t.Errorf("CreatedAt, ExpiresAt = %v, %v; want %v and 90s later", rec.CreatedAt, rec.ExpiresAt, start)
	}
	clock.Add(time.Second)
	res, err := s.Settle(t.Context(), "s", "r", messages.StateCancelled, messages.Decision{})
	if err != nil || !res.Record.DecidedAt.Equal(start.Add(time.Second)) {
		t.Errorf("DecidedAt = %v (%v), want %v", res.Record.DecidedAt, err, start.Add(time.Second))
	}
	if now, err := s.Now(t.Context()); err != nil || !now.Equal(start.Add(time.Second)) {
		t.Errorf("Now = %v, %v; want the configured clock", now, err)
	}
}

func ExampleNew() {
	ctx := context.Background()
	s := memstore.New(memstore.Options{Retention: time.Hour})
	defer s.Close()
	// Held first (nobody can answer it), then opened: pending.
	rec, created, err := s.Prepare(ctx, session.Request{
		ID: "req-1", SessionID: "sess-1", AgentID: "worker-7", Tool: "bash",
		Teams: []string{"ops"}, ApprovalsRequired: 1, TTL: 5 * time.Minute,
	})
	fmt.Println(rec.State, created, err)
	opened, _ := s.Open(ctx, "sess-1", "req-1")
	fmt.Println(opened.Applied, opened.Record.State)
	res, _ := s.Decide(ctx, "sess-1", "req-1", session.Vote{ApproverID: "ann", Approve: true})
	fmt.Println(res.Applied, res.Record.State, res.Record.Approvals)
	// Output:
	// creating true <nil>
	// true pending
	// true approved [ann]
}

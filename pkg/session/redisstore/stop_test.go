package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/session"
)

// TestAStopOfAnOlderVersionIsReadAndEndedByAnyTurn: a broker of an
// earlier version wrote the stop as its bare reason. It reads as a stop
// that names no rejection, and any turn ends it, a tracked one too (as
// before stops kept their rejections).
func TestAStopOfAnOlderVersionIsReadAndEndedByAnyTurn(t *testing.T) {
	srv := testenv.Redis(t)
	s := newStore(t, options(srv.URL(), time.Minute))
	rdb := storeClient(t, srv.Addr())
	ctx := context.Background()
	for _, turn := range []session.Turn{{}, {Tracked: true}} {
		sess := uniq("sess")
		if err := rdb.Set(ctx, "signoff:{"+sess+"}:stop", "alice rejected Bash (r1)", 0).Err(); err != nil {
			t.Fatal(err)
		}
		l, err := s.Lookup(ctx, session.LookupQuery{SessionID: sess})
		if err != nil || !l.Stopped || l.StopReason != "alice rejected Bash (r1)" || l.StopRejections != nil {
			t.Fatalf("Lookup of an older stop = %+v, %v; want its reason, no rejections", l, err)
		}
		if cleared, err := s.NewTurn(ctx, sess, turn); err != nil || !cleared {
			t.Fatalf("NewTurn(%+v) of an older stop = %v, %v; want cleared", turn, cleared, err)
		}
	}
}

// TestAStopIsStoredAsItsReasonThenItsRejections pins the stored form
// docs/STATE.md describes: what an older broker reads as the reason
// starts with the reason.
func TestAStopIsStoredAsItsReasonThenItsRejections(t *testing.T) {
	srv := testenv.Redis(t)
	s := newStore(t, options(srv.URL(), time.Minute))
	rdb := storeClient(t, srv.Addr())
	ctx := context.Background()
	sess := uniq("sess")
	if _, err := s.Stop(ctx, sess, session.StopSignal{Reason: "why", Rejections: []string{"r1", "r:2"}}, denyAll); err != nil {
		t.Fatal(err)
	}
	v, err := rdb.Get(ctx, "signoff:{"+sess+"}:stop").Result()
	if want := "why\x002:r13:r:2"; err != nil || v != want {
		t.Fatalf("stored stop = %q, %v; want %q", v, err, want)
	}
	// A damaged value fails the read: nothing is allowed on a stop that
	// cannot be read.
	if err := rdb.Set(ctx, "signoff:{"+sess+"}:stop", "why\x009:r1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	l, err := s.Lookup(ctx, session.LookupQuery{SessionID: sess})
	if err == nil {
		t.Fatalf("Lookup of a damaged stop = %+v, nil; want an error", l)
	}
}

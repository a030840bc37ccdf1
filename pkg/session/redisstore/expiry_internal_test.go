package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/session"
)

// TestAPrepareDuringALeaseKeepsItsSchedule plays the race that the lease's
// compare-and-set must win: a reaper leases a session, finds it empty, and
// finalizes, while a Prepare lands in between. Whatever the new request's
// TTL, the finalize must not drop the session from the due index.
func TestAPrepareDuringALeaseKeepsItsSchedule(t *testing.T) {
	srv := testenv.Redis(t)
	ctx := context.Background()
	s, err := New(ctx, Options{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, ttl := range []time.Duration{100 * time.Millisecond, 3 * time.Second, time.Minute} {
		t.Run(ttl.String(), func(t *testing.T) {
			sess := "lease-race-" + ttl.String()
			shard := s.k.due(sess)
			// An earlier request made the session due now, and a reaper leases it.
			if err := srv.Client().ZAdd(ctx, shard, zmember(sess, 1)).Err(); err != nil {
				t.Fatal(err)
			}
			v, err := s.run(ctx, scriptLease, []string{shard}, 100, leaseMicros)
			if err != nil {
				t.Fatal(err)
			}
			leased, err := parseLease(shardOf(sess), v)
			if err != nil || len(leased) != 1 || leased[0].sess != sess {
				t.Fatalf("lease = %+v, %v", leased, err)
			}
			// The reaper counted the session empty; now a Prepare lands.
			req := session.Request{ID: "r1", SessionID: sess, AgentID: "a", Teams: []string{"t"}, ApprovalsRequired: 1, TTL: ttl}
			held, created, err := s.Prepare(ctx, req)
			if err != nil || !created {
				t.Fatalf("Prepare = %v, %v", created, err)
			}
			// The reaper finalizes what it saw: nothing left.
			if _, err := s.run(ctx, scriptFinalize, []string{shard}, leased[0].lease, sess, ""); err != nil {
				t.Fatal(err)
			}
			score, err := srv.Client().ZScore(ctx, shard, sess).Result()
			if err != nil {
				t.Fatalf("the session left the due index with a pending request: %v", err)
			}
			if at := time.UnixMicro(int64(score)); at.After(held.ExpiresAt) {
				t.Errorf("the session is scheduled at %v, after its request's expiry %v", at, held.ExpiresAt)
			}
		})
	}
}

func zmember(m string, score float64) redis.Z { return redis.Z{Score: score, Member: m} }

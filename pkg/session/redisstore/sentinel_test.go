package redisstore_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/redisstore"
)

// TestSentinelFailover reaches a master through a Sentinel URL, kills the
// master, and checks that calls fail closed (ErrUnavailable) until the
// Sentinel has promoted the replica, then work on the new master with the
// replicated state.
func TestSentinelFailover(t *testing.T) {
	master := testenv.Redis(t)
	replica := testenv.Redis(t, testenv.WithReplicaOf(master))
	sentinel := testenv.Sentinel(t, master, "signoff-master")
	waitReplicaInSync(t, replica)

	s := newStore(t, redisstore.Options{
		URL:       "redis+sentinel://" + sentinel.Addr() + "/signoff-master",
		OpTimeout: 300 * time.Millisecond,
	})
	ctx := context.Background()
	sess := uniq("sess")
	before := mustCreate(t, s, request(sess, time.Minute))
	// The record must reach the replica before the master dies: replication
	// is asynchronous (docs/STATE.md, Topologies).
	if n, err := master.Client().Do(ctx, "WAIT", 1, 2000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT for the replica = %d, %v", n, err)
	}

	master.Stop()
	sawUnavailable := false
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := s.Get(ctx, sess, before.ID)
		if err == nil {
			break
		}
		if !errors.Is(err, session.ErrUnavailable) {
			t.Fatalf("Get during the failover: err = %v, want ErrUnavailable", err)
		}
		sawUnavailable = true
		if time.Now().After(deadline) {
			t.Fatalf("no failover within 20s: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !sawUnavailable {
		t.Error("no call failed while the master was down")
	}

	res, err := s.Decide(ctx, sess, before.ID, session.Vote{ApproverID: "ann", Approve: true})
	if err != nil || !res.Applied || res.Record.State != messages.StateApproved {
		t.Fatalf("Decide on the new master = %+v, %v", res, err)
	}
	mustCreate(t, s, request(sess, time.Minute))
}

func waitReplicaInSync(t *testing.T, replica *testenv.RedisServer) {
	t.Helper()
	c := replica.Client()
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := c.Info(context.Background(), "replication").Result()
		if err == nil && containsLine(info, "master_link_status:up") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica not in sync: %v %s", err, info)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func containsLine(text, line string) bool {
	return slices.Contains(strings.Split(text, "\r\n"), line)
}

package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// TestAHostCrashLosesAHardRejectAndItsStopTogether: with appendfsync
// everysec a host crash loses the tail of the append-only file — whatever
// Redis wrote in the last second or so, cut anywhere. Redis loads a
// truncated file up to its last whole command and drops a MULTI/EXEC it
// finds unfinished, and a script's writes are one MULTI/EXEC in the file.
// So whatever the tail lost, a hard reject's record, its stop signal and
// its outbox entry are all there or all gone (docs/OPERATIONS.md, failure
// table): the store never comes back with a rejection whose stop is lost,
// nor with a stop whose rejection (and its entry) is.
func TestAHostCrashLosesAHardRejectAndItsStopTogether(t *testing.T) {
	srv := testenv.Redis(t, testenv.WithAOF(), testenv.WithRedisArgs("--aof-use-rdb-preamble", "no", "--aof-load-truncated", "yes"))
	ctx := context.Background()
	s := newStore(t, options(srv.URL(), time.Hour))
	const n = 12
	type sess struct{ id, req string }
	var all []sess
	for range n {
		id := uniq("sess")
		rec := mustCreate(t, s, request(id, time.Hour))
		v := session.Vote{ApproverID: "alice", Decision: messages.Decision{
			V: messages.Version, RequestID: rec.ID, SessionID: id, Outcome: messages.OutcomeDeny,
			ReasonCode: messages.ReasonRejected, RejectMode: messages.RejectHard,
			DecidedBy: messages.Decider{Kind: messages.DeciderApprover, ID: "alice"},
		}, Stop: "alice rejected " + rec.Tool + " (" + rec.ID + ")"}
		if res, err := s.Decide(ctx, id, rec.ID, v); err != nil || !res.Applied {
			t.Fatalf("hard reject: %+v %v", res, err)
		}
		all = append(all, sess{id, rec.ID})
	}
	var dir, sub string
	admin := srv.Client()
	if v, err := admin.ConfigGet(ctx, "dir").Result(); err == nil {
		dir = v["dir"]
	}
	if v, err := admin.ConfigGet(ctx, "appenddirname").Result(); err == nil {
		sub = v["appenddirname"]
	}
	_ = admin.Close()
	_ = s.Close()
	srv.Stop()
	incrs, err := filepath.Glob(filepath.Join(dir, sub, "*.incr.aof"))
	if err != nil || len(incrs) != 1 {
		t.Fatalf("the append-only file's incr part under %s/%s: %v %v", dir, sub, incrs, err)
	}
	full, err := os.ReadFile(incrs[0])
	if err != nil {
		t.Fatal(err)
	}
	multis := bytes.Count(full, []byte("MULTI\r\n"))
	if multis < n {
		t.Fatalf("the file holds %d MULTI blocks for %d hard rejects: scripts are not written as transactions", multis, n)
	}

	// Cut the file at 40 places spread over it (mid-command included),
	// as a crash would, and load each cut.
	const cuts = 40
	kept, lost, inMulti := 0, 0, 0
	for i := 1; i <= cuts; i++ {
		at := len(full) * i / (cuts + 1)
		cut := full[:at]
		if bytes.LastIndex(cut, []byte("MULTI\r\n")) > bytes.LastIndex(cut, []byte("EXEC\r\n")) {
			inMulti++ // this cut ends inside a script's transaction
		}
		if err := os.WriteFile(incrs[0], cut, 0o644); err != nil {
			t.Fatal(err)
		}
		srv.Start()
		rs := newStore(t, options(srv.URL(), time.Hour))
		for _, x := range all {
			rec, err := rs.Get(ctx, x.id, x.req)
			if errors.Is(err, session.ErrNotFound) {
				rec, err = nil, nil
			}
			if err != nil {
				t.Fatalf("cut %d: %s: %v", i, x.req, err)
			}
			l, err := rs.Lookup(ctx, session.LookupQuery{SessionID: x.id, SkipGrants: true})
			if err != nil {
				t.Fatal(err)
			}
			rejected := rec != nil && rec.HardRejection()
			var owed bool
			if rejected {
				// The outbox entry is there: a new turn finds it owed.
				_, err := rs.NewTurn(ctx, x.id, session.Turn{})
				owed = errors.Is(err, session.ErrStopOwed)
				kept++
			} else {
				lost++
			}
			switch {
			case rejected && (!l.Stopped || !owed):
				t.Errorf("cut %d at byte %d of %d: %s is rejected with stop=%v, outbox entry=%v; want both", i, at, len(full), x.req, l.Stopped, owed)
			case !rejected && l.Stopped:
				t.Errorf("cut %d at byte %d of %d: session %s is stopped without its hard reject (record %v)", i, at, len(full), x.id, rec)
			}
		}
		_ = rs.Close()
		srv.Stop()
	}
	if kept == 0 || lost == 0 || inMulti == 0 {
		t.Fatalf("the cuts left %d rejections kept, %d lost, %d cuts inside a transaction: want some of each, else the test proves nothing", kept, lost, inMulti)
	}
	t.Logf("%d cuts (%d inside a transaction): %d rejections kept with their stops, %d lost with them", cuts, inMulti, kept, lost)
}

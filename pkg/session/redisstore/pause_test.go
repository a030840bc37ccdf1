package redisstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// TestALateHardRejectKeepsItsStopThroughANewTurn replays issue 30's write
// stall on a real redis-server: writes are paused (CLIENT PAUSE WRITE); a
// reject_hard vote of a replica that froze with its call in flight waits
// in Redis, and so does a new turn the agent asks for on another replica
// (it has not heard of the rejection: nobody has). When writes resume,
// Redis runs both, in order. The new turn must not end the rejection's
// stop while its effects are owed (the frozen replica never carries them
// out; the outbox does, after the lease): else the agent learns of the
// reject_hard with no stop in force, and its next calls are allowed.
func TestALateHardRejectKeepsItsStopThroughANewTurn(t *testing.T) {
	srv := testenv.Redis(t)
	o := options(srv.URL(), time.Minute)
	o.EffectLease = 300 * time.Millisecond
	// Calls long enough to outlast the pause: the "frozen" replica's
	// connection stays open, so Redis runs its vote when writes resume.
	o.OpTimeout = 10 * time.Second
	frozen, other := newStore(t, o), newStore(t, o)
	ctx := context.Background()
	for round := range 3 {
		sess := uniq("sess")
		rec := mustCreate(t, other, request(sess, time.Minute))
		sibling := mustCreate(t, other, request(sess, time.Minute))

		admin := storeClient(t, srv.Addr())
		const pause = 600 * time.Millisecond
		if err := admin.Do(ctx, "CLIENT", "PAUSE", pause.Milliseconds(), "WRITE").Err(); err != nil {
			t.Fatal(err)
		}
		vote := session.Vote{ApproverID: "alice", Decision: messages.Decision{
			V: messages.Version, RequestID: rec.ID, SessionID: sess, Outcome: messages.OutcomeDeny,
			ReasonCode: messages.ReasonRejected, RejectMode: messages.RejectHard,
			DecidedBy: messages.Decider{Kind: messages.DeciderApprover, ID: "alice"},
		}, Stop: "alice rejected " + rec.Tool + " (" + rec.ID + ")"}
		voted := make(chan error, 1)
		go func() {
			_, err := frozen.Decide(ctx, sess, rec.ID, vote)
			voted <- err
		}()
		time.Sleep(100 * time.Millisecond) // the vote waits in Redis first
		type turn struct {
			cleared bool
			err     error
		}
		turned := make(chan turn, 1)
		go func() {
			c, err := other.NewTurn(ctx, sess, session.Turn{})
			turned <- turn{c, err}
		}()
		if err := <-voted; err != nil {
			t.Fatalf("round %d: the late vote: %v", round, err)
		}
		tr := <-turned
		var owed *session.StopOwedError
		if !errors.As(tr.err, &owed) || tr.cleared {
			t.Fatalf("round %d: NewTurn queued behind the late hard reject = %v, %v; want a StopOwedError (the agent has not heard of the reject)", round, tr.cleared, tr.err)
		}
		if len(owed.Records) != 1 || owed.Records[0].ID != rec.ID {
			t.Fatalf("round %d: owed %v, want %s", round, len(owed.Records), rec.ID)
		}

		// The frozen replica is gone: after the lease the outbox hands the
		// rejection to another, which finds the stop in force.
		var claimed []*session.Record
		deadline := time.Now().Add(5 * time.Second)
		for len(claimed) == 0 && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			recs, err := other.ClaimEffects(ctx, 100)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if r.SessionID == sess && r.ID == rec.ID {
					claimed = append(claimed, r)
				}
			}
		}
		if len(claimed) != 1 || !claimed[0].HardRejection() {
			t.Fatalf("round %d: the outbox claimed %d records of the rejection, want it once", round, len(claimed))
		}
		l, err := other.Lookup(ctx, session.LookupQuery{SessionID: sess, SkipGrants: true})
		if err != nil || !l.Stopped || l.StopReason != vote.Stop {
			t.Fatalf("round %d: when the outbox carries the rejection out: stopped=%v %q, %v; want the vote's stop", round, l.Stopped, l.StopReason, err)
		}
		if _, err := other.Stop(ctx, sess, session.StopSignal{Reason: l.StopReason}, denyAll); err != nil {
			t.Fatal(err)
		}
		if err := other.AckEffects(ctx, claimed...); err != nil {
			t.Fatal(err)
		}
		// Told of the reject now, the agent's next turn clears the stop.
		if cleared, err := other.NewTurn(ctx, sess, session.Turn{}); err != nil || !cleared {
			t.Fatalf("round %d: NewTurn after the rejection was carried out = %v, %v; want cleared", round, cleared, err)
		}
		if got, err := other.Get(ctx, sess, sibling.ID); err != nil || got.State != messages.StateRejected {
			t.Fatalf("round %d: the sibling after the stop: %v %v, want rejected", round, got, err)
		}
	}
}

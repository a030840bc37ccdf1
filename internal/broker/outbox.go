package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/reaper"
	"github.com/signoff-dev/signoff/pkg/session"
)

// The outbox (DESIGN §4 step 10, docs/STATE.md "Outbox"): every store
// transition with effects outside the store records them in the store's
// outbox in the same atomic step, leased to its caller. The caller carries
// them out at once (carryOut) and acknowledges them; if it dies or fails
// first, the outbox worker of any replica claims them once the lease has
// run out and carries them out again. Effects are therefore at least once,
// and each is idempotent: decisions and questions are keyed by request id
// (agents and devices drop repeats), audit appends carry a Nats-Msg-Id,
// grants have ids derived from their request (stored once), and the cascade and a stop's rejections are
// compare-and-set transitions with outbox entries of their own.

// carryOut performs the effects that the transitions which left recs as
// they are recorded in the outbox, and queues the acknowledgement of those
// that succeeded. A failure is logged and leaves the entry to the outbox
// worker after the lease. A hard rejection is acknowledged at once, not
// queued: until it is, a new turn of its session keeps its stop
// (session.ErrStopOwed), and the agent that got it may begin one soon.
func (b *Broker) carryOut(ctx context.Context, recs ...*session.Record) {
	for _, rec := range recs {
		if err := b.effects(ctx, rec); err != nil {
			b.log.Warn("effects of a decision failed; the outbox carries them out after its lease",
				"request_id", rec.ID, "session_id", rec.SessionID, "state", rec.State, "err", err)
			continue
		}
		if rec.HardRejection() {
			b.ack(ctx, []*session.Record{rec})
			continue
		}
		b.queueAck(ctx, rec)
	}
}

// effects performs what rec's state calls for: a pending request's question
// (just opened, or an approval counted towards its quorum); a settled
// request's grants (before its decision is published: the agent's next
// call must see them), its stop's rejections, its decision, `resolved` and
// audit record, and its cascade.
func (b *Broker) effects(ctx context.Context, rec *session.Record) error {
	switch rec.State {
	case messages.StatePending:
		b.announce(rec)
		return nil
	case messages.StateExpired:
		return b.settled(ctx, rec, timeoutDecision(rec))
	}
	if rec.Decision == nil {
		return fmt.Errorf("settled request %s has no stored decision", rec.ID)
	}
	switch {
	case rec.State == messages.StateApproved:
		var grant *session.Grant
		if rec.Decision.ReasonCode == messages.ReasonApproved {
			grant = b.approvalGrant(rec) // a cascade's approval grants nothing more
		}
		if grant != nil {
			if _, err := b.storeGrant(ctx, rec, grant); err != nil {
				return err
			}
		}
		if err := b.settled(ctx, rec, *rec.Decision); err != nil {
			return err
		}
		if grant != nil {
			return b.cascade(ctx, rec, grant)
		}
		return nil
	case rec.HardRejection():
		if err := b.stopRest(ctx, rec); err != nil {
			return err
		}
	}
	return b.settled(ctx, rec, *rec.Decision)
}

// approvalGrant returns the grant an approval records, from its stored
// decision and question (checked against the question's offers when the
// response came), or nil.
func (b *Broker) approvalGrant(rec *session.Record) *session.Grant {
	q, err := question(rec)
	if err != nil {
		b.log.Error("stored question is unreadable; the approval grants nothing", "request_id", rec.ID, "session_id", rec.SessionID, "err", err)
		return nil
	}
	q = approvedQuestion(rec, q)
	g, err := b.grantOf(rec, &q)
	if err != nil {
		b.log.Error("stored approval's scope grants nothing", "request_id", rec.ID, "session_id", rec.SessionID, "err", err)
		return nil
	}
	return g
}

// acker acknowledges carried-out effects in batches, off the path that
// replied: the deciding replica's acknowledgement costs its caller nothing.
// Before each batch it flushes the NATS connection, so that what the
// effects published reached the server first. A batch that fails is
// logged: its entries are carried out again after their lease (harmless:
// effects are idempotent).
type acker struct {
	b    *Broker
	ch   chan *session.Record
	done chan struct{}
}

// ackBatch bounds one acknowledgement round trip; ackGather is how long the
// acker waits for more after the first.
const (
	ackBatch  = 256
	ackGather = 5 * time.Millisecond
)

func (b *Broker) startAcker() {
	b.acks = &acker{b: b, ch: make(chan *session.Record, 4*ackBatch), done: make(chan struct{})}
	go b.acks.run()
}

// queueAck queues rec's acknowledgement; with the queue full (or no acker
// running), it acknowledges at once.
func (b *Broker) queueAck(ctx context.Context, rec *session.Record) {
	if b.acks != nil {
		select {
		case b.acks.ch <- rec:
			return
		default:
		}
	}
	b.ack(ctx, []*session.Record{rec})
}

// stop acknowledges what is queued and ends the acker; nothing may be added
// after it.
func (a *acker) stop() {
	close(a.ch)
	<-a.done
}

func (a *acker) run() {
	defer close(a.done)
	batch := make([]*session.Record, 0, ackBatch)
	for rec := range a.ch {
		batch = append(batch[:0], rec)
		// Gather for a moment: acknowledgements are not urgent (the lease
		// is seconds), and one flush and one round trip per batch keep
		// them off the CPU that the next requests need.
		gather := time.NewTimer(ackGather)
	more:
		for len(batch) < ackBatch {
			select {
			case r, ok := <-a.ch:
				if !ok {
					break more
				}
				batch = append(batch, r)
			case <-gather.C:
				break more
			}
		}
		gather.Stop()
		a.b.ack(context.Background(), batch)
	}
}

func (b *Broker) ack(ctx context.Context, recs []*session.Record) {
	if err := b.nc.FlushTimeout(b.cfg.StoreTimeout); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		b.log.Warn("NATS flush before acknowledging effects failed; they are carried out again after their lease", "count", len(recs), "err", err)
		return
	}
	sctx, cancel := b.storeCtx(context.WithoutCancel(ctx))
	defer cancel()
	if err := b.store.AckEffects(sctx, recs...); err != nil {
		b.storeErr("ack effects", err, "count", len(recs))
	}
}

// outboxClaims adapts the store's outbox to the reaper's loop: an outbox
// entry whose lease ran out is claimed as the reaper claims an expiry.
type outboxClaims struct{ s session.Store }

func (o outboxClaims) ClaimExpired(ctx context.Context, limit int) ([]*session.Record, error) {
	return o.s.ClaimEffects(ctx, limit)
}

// outboxBatch is how many entries one ClaimEffects call takes.
const outboxBatch = 100

// newOutboxWorker returns the loop that carries out effects whose lease ran
// out: left by a replica that died or failed before it acknowledged them.
// Every replica runs one.
func (b *Broker) newOutboxWorker() (*reaper.Reaper, error) {
	log := b.log.With("component", "outbox")
	return reaper.New(reaper.Config{
		Store:       outboxClaims{b.store},
		Interval:    b.cfg.OutboxInterval,
		Jitter:      b.cfg.OutboxInterval / 4,
		Batch:       outboxBatch,
		Concurrency: 8,
		Logger:      log,
		OnExpired: func(ctx context.Context, rec *session.Record) {
			b.m.OutboxClaims.Inc()
			log.LogAttrs(ctx, slog.LevelWarn, "carrying out the effects of a transition whose replica did not acknowledge them",
				slog.String("request_id", rec.ID), slog.String("session_id", rec.SessionID), slog.String("state", string(rec.State)))
			b.carryOut(ctx, rec)
		},
	})
}

// stopRest rejects the other pending requests of rec's session with
// hard_stop, after rec's reject_hard set the stop signal (in its vote),
// before rec's decision is published. The stop is found in force: a new
// turn cannot clear it while rec's effects are owed (session.ErrStopOwed).
// Should it be missing all the same (removed by hand, or cleared by the
// plain new turn of a broker of an earlier version during an upgrade), it
// is set again: the agent is about to hear of a reject_hard, and a
// rejection without its stop must not reach it. (A Redis that lost its
// last writes loses a rejection and its stop together: one script.)
func (b *Broker) stopRest(ctx context.Context, rec *session.Record) error {
	sctx, cancel := b.storeCtx(ctx)
	look, err := b.store.Lookup(sctx, session.LookupQuery{SessionID: rec.SessionID, SkipGrants: true})
	cancel()
	if err != nil {
		b.storeErr("lookup", err, "request_id", rec.ID, "session_id", rec.SessionID)
		return err
	}
	reason := look.StopReason
	if !look.Stopped {
		reason = stopReason(rec.Decision.DecidedBy.ID, rec)
		b.log.Warn("a hard rejection's stop signal was missing when its effects were carried out; it is set again",
			"request_id", rec.ID, "session_id", rec.SessionID)
	}
	stopped, err := b.hardStop(ctx, rec, reason)
	if err != nil {
		return err
	}
	for _, o := range stopped {
		b.log.Info("hard stop rejected pending request", "request_id", rec.ID, "session_id", rec.SessionID, "stopped_request_id", o.ID)
	}
	b.carryOut(ctx, stopped...)
	return nil
}

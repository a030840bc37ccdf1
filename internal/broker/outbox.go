package broker

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/pkg/claim"
	"github.com/signoff-dev/signoff/pkg/session"
)

// The outbox (DESIGN §4 step 11, docs/STATE.md "Outbox"): the engine
// carries out the effects a transition recorded (engine.Engine.CarryOut)
// and queues their acknowledgement here; the acker acknowledges them in
// batches, and the outbox worker of every replica carries out again what
// was not acknowledged within its lease.

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

// outboxBatch is how many entries one ClaimEffects call takes at most;
// outboxWorkers is how many are carried out at once, and so how many are
// held at once: a claimed entry never waits for a worker while its lease
// runs.
const (
	outboxBatch   = 100
	outboxWorkers = 8
)

// newOutboxWorker returns the loop that carries out effects whose lease ran
// out: left by a replica that died or failed before it acknowledged them.
// Every replica runs one.
func (b *Broker) newOutboxWorker() (*claim.Loop[*session.Record], error) {
	log := b.log.With("component", "outbox")
	return claim.New(claim.Config[*session.Record]{
		Name:        "outbox",
		Claim:       b.store.ClaimEffects,
		Interval:    b.cfg.OutboxInterval,
		Jitter:      b.cfg.OutboxInterval / 4,
		Batch:       outboxBatch,
		Concurrency: outboxWorkers,
		Hold:        outboxWorkers,
		Logger:      log,
		Handle: func(ctx context.Context, rec *session.Record) {
			b.m.OutboxClaims.Inc()
			log.LogAttrs(ctx, slog.LevelWarn, "carrying out the effects of a transition whose replica did not acknowledge them",
				slog.String("request_id", rec.ID), slog.String("session_id", rec.SessionID), slog.String("state", string(rec.State)))
			b.eng.CarryOut(ctx, rec)
		},
	})
}

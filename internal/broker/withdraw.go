package broker

import (
	"context"
	"errors"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// withdrawFor bounds how long the broker keeps trying to withdraw a request
// whose creation it gave up on.
const withdrawFor = 10 * time.Minute

// withdraw makes sure a request the broker answered with a fail-closed deny
// because its creation failed can never be decided otherwise. A create that
// timed out may still have reached Redis (the write was on the wire when
// Redis froze) and run later: the request would then sit pending, visible to
// approvers, and an approval would give the agent a second, contradicting
// decision. So the broker settles it — if it exists and is still pending —
// with the deny the agent already got, retrying in the background until the
// store answers. Only the approver devices hear of it (resolved); the agent
// has its decision.
func (b *Broker) withdraw(req messages.Request, dec messages.Decision) {
	b.followUp(withdrawFor, func(ctx context.Context) (bool, error) {
		sctx, cancel := b.storeCtx(ctx)
		res, err := b.store.Settle(sctx, req.SessionID, req.RequestID, messages.StateCancelled, dec)
		cancel()
		switch {
		case errors.Is(err, session.ErrNotFound):
			return true, nil // the create never ran
		case err != nil:
			return false, err
		}
		if res.Applied {
			b.log.Warn("withdrew a request stored after its creation had failed",
				"request_id", req.RequestID, "session_id", req.SessionID)
			b.announceSettled(res.Record, dec, false)
		}
		return true, nil
	}, func(err error) {
		b.log.Error("could not withdraw a request whose creation failed; it may stay pending until it expires",
			"request_id", req.RequestID, "session_id", req.SessionID, "err", err)
	})
}

// followUp runs try in the background until it reports done, again after
// 100 ms, doubling to 2 s, for at most limit (or until Run shuts down); then
// giveUp gets the last error try returned (nil when it only found nothing to
// do yet). Run waits for it through b.background.
func (b *Broker) followUp(limit time.Duration, try func(context.Context) (bool, error), giveUp func(error)) {
	b.background.Add(1)
	go func() {
		defer b.background.Done()
		ctx, cancel := context.WithTimeout(b.bgCtx, limit)
		defer cancel()
		backoff := 100 * time.Millisecond
		for {
			done, err := try(ctx)
			if done {
				return
			}
			select {
			case <-ctx.Done():
				giveUp(err)
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, 2*time.Second)
		}
	}()
}

package engine

import (
	"context"
	"errors"
	"time"

	"github.com/signoff-dev/signoff/pkg/backoff"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// openLater keeps trying to open a held request whose Open failed in
// openHeld, whose agent was told the request is pending. It runs until the
// request is open (then asks its teams), settled (whoever settled it told
// the agent), or can no longer be opened: a stop signal or the expiry, which
// this replica then tells the agent itself (tellAgent). It gives up a little
// after the expiry, or when the engine is closed: the request then stays
// held, the agent's status queries read it as pending until the reaper drops
// it at its expiry, and then find nothing (the SDK reports an error; the
// agent has no decision, so nothing contradicts one). Opening it from a
// status query instead would give a second decision to an agent that asks
// about a request it was denied.
func (e *Engine) openLater(held *session.Record) {
	limit := max(time.Until(held.ExpiresAt), 0) + openSlack
	e.followUp(limit, func(ctx context.Context) (bool, error) {
		sctx, cancel := e.storeCtx(ctx)
		res, err := e.cfg.Requests.Open(sctx, held.SessionID, held.ID)
		cancel()
		switch {
		case errors.Is(err, session.ErrStopped):
			req, _ := requestOf(held)
			e.tellAgent(held, e.hardStopped(&req, e.cfg.Policy.Current().Version(), ""))
		case errors.Is(err, session.ErrNotFound):
			e.tellAgent(held, timeoutDecision(held)) // dropped at its expiry
		case err != nil:
			return false, err
		case errors.Is(res.Refusal, session.ErrExpired):
			e.tellAgent(held, timeoutDecision(res.Record))
		case res.Applied:
			e.opened(ctx, res.Record)
		case res.Record.State == messages.StatePending:
			// Opened by the failed call after all, or by the agent's
			// retry: ask again (devices key questions by request id).
			e.announce(res.Record)
		}
		return true, nil
	}, func(err error) {
		e.log.Error("could not open a request whose agent was told it is pending; it is dropped at its expiry",
			"request_id", held.ID, "session_id", held.SessionID, "err", err)
	})
}

// openSlack is how long past a held request's expiry openLater keeps
// trying: the expiry is by the store's clock, the limit by this process's.
const openSlack = 5 * time.Second

// followUp runs try in the background until it reports done, again after
// 100 ms, doubling to 2 s, for at most limit (or until Close); then
// giveUp gets the last error try returned (nil when it only found nothing to
// do yet). Close waits for it.
func (e *Engine) followUp(limit time.Duration, try func(context.Context) (bool, error), giveUp func(error)) {
	e.background.Add(1)
	go func() {
		defer e.background.Done()
		ctx, cancel := context.WithTimeout(e.bgCtx, limit)
		defer cancel()
		retry := backoff.Policy{Min: 100 * time.Millisecond, Max: 2 * time.Second}
		for attempt := 1; ; attempt++ {
			done, err := try(ctx)
			if done {
				return
			}
			if backoff.Sleep(ctx, retry.Delay(attempt)) != nil {
				giveUp(err)
				return
			}
		}
	}()
}

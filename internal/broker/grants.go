package broker

import (
	"context"
	"encoding/json"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Grants (docs/POLICY.md "Grants") are the engine's (internal/engine):
// which grants allow a call, what a question offers, the grant an
// approval records. The broker appends their audit records and removes
// expired ones on a timer.

// appendGrantEvent publishes a grant's audit record asynchronously; a
// failed append is retried like a decision's.
func (a *auditLog) appendGrantEvent(ev *messages.GrantEvent) {
	data, err := json.Marshal(ev)
	if err != nil {
		a.m.AuditLost.WithLabelValues("encode").Inc()
		a.log.Error("grant audit record lost: cannot encode it", "grant_id", ev.Grant.ID, "err", err)
		return
	}
	msg := &nats.Msg{Subject: a.subj.Audit(ev.SessionID), Data: data,
		Header: nats.Header{nats.MsgIdHdr: {"grant/" + ev.Grant.ID + "/" + string(ev.Event)}}}
	if _, err := a.js.PublishMsgAsync(msg, jetstream.WithStallWait(a.ackTimeout)); err != nil {
		a.failed(nil, msg, err)
	}
}

// expireGrants removes the grants whose expiry passed, of every team of
// the policy, and records each (the store returns each to one replica).
func (b *Broker) expireGrants(ctx context.Context) {
	names := allTeams(b.cfg.Policy.Current())
	sctx, cancel := b.storeCtx(ctx)
	gs, err := b.store.ExpireGrants(sctx, names)
	cancel()
	if err != nil {
		b.storeErr("expire grants", err)
	}
	b.eng.GrantsExpired(gs)
}

// runGrantExpiry calls expireGrants every interval until ctx ends.
func (b *Broker) runGrantExpiry(ctx context.Context, interval time.Duration) {
	every(ctx, interval, func() { b.expireGrants(ctx) })
}

// every calls f every interval until ctx ends.
func every(ctx context.Context, interval time.Duration, f func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

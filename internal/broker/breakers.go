package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/signoff-dev/signoff/internal/metricdef"
	"github.com/signoff-dev/signoff/internal/pager"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// Outbreak breakers (docs/POLICY.md "Breakers", docs/OPERATIONS.md
// "Operating a fleet"). The engine hands this replica the hits (denies and
// safety overrides a breaker watches); they are sent to the store in a
// batch every breakerFlush, which trips a breaker in exactly one replica.
// That replica audits the trip, pages the breaker's team and tells every
// replica (the stops_changed broadcast); each replica also reads the trips
// every fleetRefresh, like the fleet stops, and a copy older than
// fleetStale makes the calls it would allow ask (fail closed).
const (
	breakerFlush = 250 * time.Millisecond
	// breakerMaxQueued bounds the distinct hits (breaker, rule, agent)
	// waiting for a flush; more are dropped, counted in the log.
	breakerMaxQueued = 10_000
	breakerMaxBatch  = 500
	// breakerPageTimeout bounds the pages of one trip (the pager retries
	// within it).
	breakerPageTimeout = 30 * time.Second
)

// newBreakerTrips is signoff_breaker_trips_total.
func newBreakerTrips() prometheus.Counter {
	return metricdef.Counter("signoff_breaker_trips_total",
		"Outbreak breakers this replica tripped (each trip is counted by the one replica whose hit made it).")
}

// breakerTable is this replica's copy of the tripped breakers and its hits
// not yet sent: engine.Breakers.
type breakerTable struct {
	storeCopy[messages.BreakerTrip]

	hmu     sync.Mutex
	hits    map[[3]string]session.BreakerHit // by breaker, rule, agent
	dropped int
}

// Hit queues h for the next flush.
func (t *breakerTable) Hit(h session.BreakerHit) {
	t.hmu.Lock()
	defer t.hmu.Unlock()
	k := [3]string{h.Breaker, h.Rule, h.AgentID}
	if _, ok := t.hits[k]; !ok && len(t.hits) >= breakerMaxQueued {
		t.dropped++
		return
	}
	if t.hits == nil {
		t.hits = map[[3]string]session.BreakerHit{}
	}
	t.hits[k] = h
}

// take empties the queue and returns its hits and how many were dropped.
func (t *breakerTable) take() ([]session.BreakerHit, int) {
	t.hmu.Lock()
	defer t.hmu.Unlock()
	out := make([]session.BreakerHit, 0, len(t.hits))
	for _, h := range t.hits {
		out = append(out, h)
	}
	dropped := t.dropped
	t.hits, t.dropped = nil, 0
	return out, dropped
}

// TripFor returns the first trip (by breaker name) whose selector covers
// the agent, or an error when the copy is stale.
func (t *breakerTable) TripFor(agentID, agentType string) (*messages.BreakerTrip, error) {
	trips, err := t.fresh()
	if err != nil {
		return nil, err
	}
	for i := range trips {
		if trips[i].Selector.Matches(agentID, agentType, "") {
			tr := trips[i]
			return &tr, nil
		}
	}
	return nil, nil
}

// readBreakers reads the trips before the handlers start: until they are
// read, the calls a replica would allow ask (fail closed).
func (b *Broker) readBreakers(ctx context.Context) {
	if err := b.breakers.refresh(ctx, b.cfg.StoreTimeout); err != nil {
		b.log.Error("cannot read the breaker trips; calls ask until they are read", "err", err)
	}
}

// runBreakers sends the hits every breakerFlush and reads the trips every
// fleetRefresh until ctx ends; it waits for the pages it started.
func (b *Broker) runBreakers(ctx context.Context) {
	flush := time.NewTicker(breakerFlush)
	defer flush.Stop()
	read := time.NewTicker(fleetRefresh)
	defer read.Stop()
	var pages sync.WaitGroup
	defer pages.Wait()
	failing := false
	for {
		select {
		case <-ctx.Done():
			b.flushBreakers(context.WithoutCancel(ctx), &pages)
			return
		case <-flush.C:
			b.flushBreakers(ctx, &pages)
		case <-read.C:
			err := b.breakers.refresh(ctx, b.cfg.StoreTimeout)
			if err != nil && !failing {
				b.m.StoreErrors.WithLabelValues("breaker trips").Inc()
				b.log.Error("cannot read the breaker trips; calls ask once the copy is stale", "err", err, "stale_after", fleetStale)
			}
			failing = err != nil
		}
	}
}

// flushBreakers sends the queued hits; what it could not send waits for
// the next flush. Each trip made is carried out.
func (b *Broker) flushBreakers(ctx context.Context, pages *sync.WaitGroup) {
	hits, dropped := b.breakers.take()
	if dropped > 0 {
		b.log.Warn("breaker hits dropped: too many distinct hits between two flushes", "dropped", dropped, "limit", breakerMaxQueued)
	}
	for len(hits) > 0 {
		n := min(len(hits), breakerMaxBatch)
		sctx, cancel := b.storeCtx(ctx)
		trips, err := b.store.HitBreakers(sctx, hits[:n])
		cancel()
		if err != nil {
			b.storeErr("hit breakers", err, "hits", len(hits))
			for _, h := range hits {
				b.breakers.Hit(h)
			}
			return
		}
		for i := range trips {
			b.breakerTripped(ctx, &trips[i], pages)
		}
		hits = hits[n:]
	}
}

// breakerTripped carries out a trip this replica made: every replica is
// told, the trip audited and the team paged.
func (b *Broker) breakerTripped(ctx context.Context, t *messages.BreakerTrip, pages *sync.WaitGroup) {
	b.m.BreakerTrips.Inc()
	b.log.Warn("outbreak breaker tripped: the agents it covers ask for every call until it is reset",
		"breaker", t.Breaker, "rule", t.Rule, "agents", strings.Join(t.Agents, ","), "window", t.Window(), "selector", t.Selector.Key())
	b.stopsChanged(ctx)
	b.auditBreaker(messages.BreakerTripped, t, "")
	names := b.cfg.Policy.Current().TeamPagers(t.Team)
	if t.Team == "" || len(names) == 0 {
		return
	}
	pages.Add(1)
	go func() {
		defer pages.Done()
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), breakerPageTimeout)
		defer cancel()
		for _, name := range names {
			if err := b.cfg.Pagers.Page(pctx, name, breakerPage(t)); err != nil {
				b.log.Error("cannot page about a tripped breaker", "breaker", t.Breaker, "pager", name, "err", err)
			} else {
				b.log.Info("paged about a tripped breaker", "breaker", t.Breaker, "pager", name)
			}
		}
	}()
}

// breakerPage describes a trip for a pager; its incident key is the
// trip's (breaker and time), the same on every retry.
func breakerPage(t *messages.BreakerTrip) pager.Page {
	return pager.Page{
		RequestID: "breaker-" + t.Breaker + "-" + strconv.FormatInt(t.TrippedAt.UnixMicro(), 10),
		Summary:   fmt.Sprintf("Outbreak breaker %s tripped: %d agents hit %s", t.Breaker, len(t.Agents), t.Rule),
		Description: fmt.Sprintf("%s.\nAgents: %s.\nThe agents of selector %s now ask for every call until `signoff admin breaker reset %s`.",
			t.Describe(), strings.Join(t.Agents, ", "), t.Selector.Key(), t.Breaker),
		Team:      t.Team,
		SessionID: t.SessionID,
		Severity:  pager.SeverityCritical,
		Details:   map[string]string{"breaker": t.Breaker, "rule": t.Rule, "agents": strings.Join(t.Agents, ",")},
		Time:      t.TrippedAt,
	}
}

// auditBreaker appends the audit record of a breaker event, without
// waiting; a failed append is retried like a decision's.
func (b *Broker) auditBreaker(event string, t *messages.BreakerTrip, by string) {
	if b.aud == nil {
		return
	}
	ev := messages.BreakerEvent{V: messages.Version, Type: messages.TypeBreakerEvent, Event: event, Trip: *t, By: by,
		Replica: b.cfg.Replica, Recorded: time.Now().UTC()}
	data, err := json.Marshal(ev)
	if err != nil {
		b.m.AuditLost.WithLabelValues("encode").Inc()
		b.log.Error("breaker audit record lost: cannot encode it", "breaker", t.Breaker, "err", err)
		return
	}
	a := b.aud
	msg := &nats.Msg{Subject: a.subj.Audit(t.SessionID), Data: data, Header: nats.Header{nats.MsgIdHdr: {
		"breaker/" + t.Breaker + "/" + strconv.FormatInt(t.TrippedAt.UnixMicro(), 10) + "/" + event}}}
	if _, err := a.js.PublishMsgAsync(msg, jetstream.WithStallWait(a.ackTimeout)); err != nil {
		a.failed(nil, msg, err)
	}
}

// breakerAdmin serves the admin ops of the breakers; nil for another op.
func (b *Broker) breakerAdmin(ctx context.Context, op string, req messages.AdminRequest) []byte {
	switch op {
	case messages.AdminOpListBreakers:
		trips, err := storeRead(b, ctx, b.store.BreakerTrips)
		if err != nil {
			return b.storeFailure("breaker trips", err)
		}
		return encode(messages.AdminReply{V: messages.Version, OK: true, Breakers: trips,
			Message: fmt.Sprintf("%d of the policy's %d breakers tripped", len(trips), len(b.cfg.Policy.Current().Breakers()))})
	case messages.AdminOpBreakerReset:
		return b.adminBreakerReset(ctx, req)
	}
	return nil
}

// adminBreakerReset serves breaker_reset: the trip is lifted on every
// replica and audited; the breaker counts from zero again.
func (b *Broker) adminBreakerReset(ctx context.Context, req messages.AdminRequest) []byte {
	sctx, cancel := b.storeCtx(ctx)
	t, err := b.store.ResetBreaker(sctx, req.Breaker)
	cancel()
	if errors.Is(err, session.ErrNotFound) {
		b.m.BadMessages.WithLabelValues(string(messages.CodeNotFound)).Inc()
		msg := fmt.Sprintf("breaker %s is not tripped (its counts were cleared)", req.Breaker)
		if _, ok := b.cfg.Policy.Current().Breaker(req.Breaker); !ok {
			msg = fmt.Sprintf("no breaker %s is tripped or in the policy (see `signoff admin breakers`)", req.Breaker)
		}
		return encodeError(messages.CodeNotFound, msg)
	}
	if err != nil {
		return b.storeFailure("reset breaker", err)
	}
	b.log.Warn("outbreak breaker reset", "breaker", t.Breaker, "by", req.By)
	b.stopsChanged(ctx)
	b.auditBreaker(messages.BreakerReset, &t, req.By)
	return encode(messages.AdminReply{V: messages.Version, OK: true, Breaker: &t, Message: "breaker " + t.Breaker + " reset"})
}

package broker

import (
	"context"
	"sync"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// Fleet stops on the request path (docs/OPERATIONS.md "Operating a fleet"):
// each replica keeps the stops in memory, read again from the store every
// fleetRefresh and at once when a `stops_changed` broadcast arrives; a copy
// older than fleetStale is not trusted, and requests are denied until a
// read succeeds (fail closed).
const (
	fleetRefresh = 500 * time.Millisecond
	fleetStale   = 3 * time.Second
)

// fleetTable is this replica's copy of the fleet stops: engine.FleetStops.
type fleetTable struct {
	storeCopy[messages.FleetStop]
}

func newFleetTable(store session.Fleet, timeout time.Duration) *fleetTable {
	return &fleetTable{storeCopy[messages.FleetStop]{read: store.FleetStops, timeout: timeout}}
}

// StopFor returns the first stop (by id) that covers the call, or an error
// when the copy is stale.
func (t *fleetTable) StopFor(agentID, agentType, sessionID string) (*messages.FleetStop, error) {
	stops, err := t.fresh()
	if err != nil {
		return nil, err
	}
	for i := range stops {
		if stops[i].Selector.Matches(agentID, agentType, sessionID) {
			st := stops[i]
			return &st, nil
		}
	}
	return nil, nil
}

// follow refreshes the copy every fleetRefresh until ctx ends.
func (b *Broker) followFleet(ctx context.Context) {
	failing := false
	every(ctx, fleetRefresh, func() {
		err := b.fleet.refresh(ctx, b.cfg.StoreTimeout)
		switch {
		case err != nil && !failing:
			b.m.StoreErrors.WithLabelValues("fleet stops").Inc()
			b.log.Error("cannot read the fleet stops; requests are denied once the copy is stale", "err", err, "stale_after", fleetStale)
		case err == nil && failing:
			b.log.Info("fleet stops read again")
		}
		failing = err != nil
	})
}

// seenBatch gathers the agents' last seen between two writes: one map
// update per request, written in a batch every seenFlush (the request path
// never waits for the store for it).
type seenBatch struct {
	mu sync.Mutex
	m  map[string]messages.AgentSeen
}

const (
	seenFlush    = time.Second
	seenMaxBatch = 500
)

// add counts req, sent by gate (the Signoff-Gate header).
func (s *seenBatch) add(req *messages.Request, gate string) {
	kind, version := messages.ParseGate(gate)
	now := time.Now().UTC()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]messages.AgentSeen{}
	}
	a, ok := s.m[req.AgentID]
	if !ok {
		a.FirstSeen = now
	}
	a.AgentID, a.AgentType, a.SessionID, a.RequestID, a.Tool = req.AgentID, req.AgentType, req.SessionID, req.RequestID, req.Tool
	a.Gate, a.GateVersion, a.LastSeen = kind, version, now
	a.Requests++
	s.m[req.AgentID] = a
}

// take empties the batch and returns what it held.
func (s *seenBatch) take() map[string]messages.AgentSeen {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.m
	s.m = nil
	return m
}

// putBack merges entries a failed write did not store into the batch.
func (s *seenBatch) putBack(entries []messages.AgentSeen) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m = session.MergeSeenInto(s.m, entries)
}

// flushSeen writes the batch; what it could not write waits for the next.
func (b *Broker) flushSeen(ctx context.Context) {
	m := b.seen.take()
	if len(m) == 0 {
		return
	}
	all := make([]messages.AgentSeen, 0, len(m))
	for _, a := range m {
		all = append(all, a)
	}
	for len(all) > 0 {
		n := min(len(all), seenMaxBatch)
		sctx, cancel := b.storeCtx(ctx)
		err := b.store.RecordSeen(sctx, all[:n])
		cancel()
		if err != nil {
			b.m.StoreErrors.WithLabelValues("record seen").Inc()
			b.log.Warn("cannot write the agents' last seen; kept for the next write", "agents", len(all), "err", err)
			b.seen.putBack(all)
			return
		}
		all = all[n:]
	}
}

// runSeen writes the agents' last seen every seenFlush, and once more when
// ctx ends.
func (b *Broker) runSeen(ctx context.Context) {
	tick := time.NewTicker(seenFlush)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			b.flushSeen(context.WithoutCancel(ctx))
			return
		case <-tick.C:
			b.flushSeen(ctx)
		}
	}
}

// Silence (docs/OPERATIONS.md "Agents' last seen"): an agent is flagged
// silent when it sent at least silentMinRequests requests and nothing for
// silentGaps times its mean gap between requests, and at least silentFloor.
const (
	silentMinRequests = 20
	silentGaps        = 10
	silentFloor       = 5 * time.Minute
)

// silent reports whether a went silent after steady activity, at now.
func silent(a *messages.AgentSeen, now time.Time) bool {
	if a.Requests < silentMinRequests {
		return false
	}
	gap := a.LastSeen.Sub(a.FirstSeen) / time.Duration(a.Requests-1)
	return now.Sub(a.LastSeen) > max(silentGaps*gap, silentFloor)
}

package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/engine"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// scatterOps are the admin ops every replica answers on its own
// subscription (no queue group); the queue group's handler leaves them.
var scatterOps = []string{messages.AdminOpReloadPolicy, messages.AdminOpPolicyVersion, messages.AdminOpStopsChanged}

// fleetAdmin serves the admin ops of fleet operation (issue #27) that one
// replica answers; nil for another op.
func (b *Broker) fleetAdmin(ctx context.Context, op string, req messages.AdminRequest) []byte {
	switch op {
	case messages.AdminOpListPending:
		return b.adminListPending(ctx, req)
	case messages.AdminOpStop:
		return b.adminStop(ctx, req)
	case messages.AdminOpResume:
		return b.adminResume(ctx, req)
	case messages.AdminOpListStops:
		stops, err := storeRead(b, ctx, b.store.FleetStops)
		if err != nil {
			return b.storeFailure("fleet stops", err)
		}
		return encode(messages.AdminReply{V: messages.Version, OK: true, Message: fmt.Sprintf("%d fleet stops", len(stops)), Stops: stops})
	case messages.AdminOpListAgents:
		return b.adminListAgents(ctx)
	}
	return nil
}

// adminListPending serves list_pending: the open questions of the given
// teams (default: every team of the policy), filtered by session, agent
// and agent type.
func (b *Broker) adminListPending(ctx context.Context, req messages.AdminRequest) []byte {
	teams := req.Teams
	if len(teams) == 0 {
		teams = allTeams(b.cfg.Policy.Current())
	}
	recs, err := b.pendingOf(ctx, teams)
	if err != nil {
		return b.storeFailure("list pending", err)
	}
	out := []messages.ApprovalNeeded{}
	for _, r := range recs {
		q, err := engine.Question(r.rec)
		if err != nil {
			b.log.Error("stored question is unreadable", "request_id", r.rec.ID, "session_id", r.rec.SessionID, "err", err)
			continue
		}
		if (req.SessionID != "" && req.SessionID != r.rec.SessionID) || (req.AgentID != "" && req.AgentID != r.rec.AgentID) ||
			(req.AgentType != "" && req.AgentType != q.Request.AgentType) {
			continue
		}
		q.Team, q.Answerers = r.team, b.answerers(r.team)
		out = append(out, q)
	}
	data := encode(messages.AdminReply{V: messages.Version, OK: true, Message: fmt.Sprintf("%d open questions", len(out)), Pending: out})
	if len(data) > int(b.nc.MaxPayload()) {
		return encodeError(messages.CodeTooLarge, fmt.Sprintf("%d open questions are too many for one reply (%d bytes > max payload %d): filter by team, session or agent", len(out), len(data), b.nc.MaxPayload()))
	}
	return data
}

type teamRecord struct {
	rec  *session.Record
	team string // the first of the teams asked about that it is routed to
}

// pendingOf returns the pending requests routed to teams, each once.
func (b *Broker) pendingOf(ctx context.Context, teams []string) ([]teamRecord, error) {
	seen := map[[2]string]bool{}
	var out []teamRecord
	for _, team := range teams {
		sctx, cancel := b.storeCtx(ctx)
		recs, err := b.store.ListPendingTeam(sctx, team)
		cancel()
		if err != nil {
			return nil, err
		}
		for _, rec := range recs {
			k := [2]string{rec.SessionID, rec.ID}
			if !seen[k] {
				seen[k] = true
				out = append(out, teamRecord{rec, team})
			}
		}
	}
	return out, nil
}

// adminStop serves stop: it stores the fleet stop, tells every replica,
// and denies the pending requests the stop covers — twice: now, and once
// every replica has read the stop (a replica that had not yet read it may
// have opened one meanwhile). When it replies, no request the stop covers
// is pending, and none can become pending until resume.
func (b *Broker) adminStop(ctx context.Context, req messages.AdminRequest) []byte {
	st := messages.FleetStop{ID: req.Selector.Key(), Selector: *req.Selector, Reason: req.Reason, By: req.By}
	sctx, cancel := b.storeCtx(ctx)
	stored, err := b.store.PutFleetStop(sctx, st)
	cancel()
	if err != nil {
		return b.storeFailure("put fleet stop", err)
	}
	b.log.Warn("fleet stop set", "stop", stored.ID, "by", stored.By, "reason", stored.Reason)
	b.stopsChanged(ctx)
	denied, err := b.sweepStopped(ctx, &stored)
	if err == nil {
		select {
		case <-ctx.Done():
		case <-time.After(fleetRefresh + 200*time.Millisecond):
		}
		var more []string
		more, err = b.sweepStopped(ctx, &stored)
		denied = append(denied, more...)
	}
	if err != nil {
		// The stop is stored and in force; only denying what was pending
		// failed.
		b.storeErr("fleet stop sweep", err)
		return encodeError(messages.CodeUnavailable, fmt.Sprintf("fleet stop %s is in force, but its pending requests could not all be denied (%v): run the stop again", stored.ID, err))
	}
	return encode(messages.AdminReply{V: messages.Version, OK: true, Stop: &stored, Denied: denied,
		Message: fmt.Sprintf("fleet stop %s in force; %d pending requests denied", stored.ID, len(denied))})
}

// sweepStopped denies the pending requests st covers.
func (b *Broker) sweepStopped(ctx context.Context, st *messages.FleetStop) ([]string, error) {
	var recs []*session.Record
	sel := &st.Selector
	sctx, cancel := b.storeCtx(ctx)
	var err error
	switch {
	case sel.Session != "":
		recs, err = b.store.ListPendingSession(sctx, sel.Session)
	case sel.Agent != "" && !strings.ContainsAny(sel.Agent, `*?[\`):
		recs, err = b.store.ListPendingAgent(sctx, sel.Agent)
	default:
		var trs []teamRecord
		trs, err = b.pendingOf(sctx, allTeams(b.cfg.Policy.Current()))
		for _, tr := range trs {
			recs = append(recs, tr.rec)
		}
	}
	cancel()
	if err != nil {
		return nil, err
	}
	covered := slices.DeleteFunc(recs, func(rec *session.Record) bool {
		agentType := ""
		if q, err := engine.Question(rec); err == nil {
			agentType = q.Request.AgentType
		} else if sel.AgentType != "" {
			return false // unreadable: deny it (it can never be answered)
		}
		return !sel.Matches(rec.AgentID, agentType, rec.SessionID)
	})
	return b.eng.StopPending(ctx, covered, st), nil
}

// adminResume serves resume: it lifts the stop of the same selector.
func (b *Broker) adminResume(ctx context.Context, req messages.AdminRequest) []byte {
	id := req.Selector.Key()
	sctx, cancel := b.storeCtx(ctx)
	st, err := b.store.DeleteFleetStop(sctx, id)
	cancel()
	if errors.Is(err, session.ErrNotFound) {
		b.m.BadMessages.WithLabelValues(string(messages.CodeNotFound)).Inc()
		return encodeError(messages.CodeNotFound, fmt.Sprintf("no fleet stop %s (resume names the selector of a stop: see `signoff admin stops`)", id))
	}
	if err != nil {
		return b.storeFailure("delete fleet stop", err)
	}
	b.log.Warn("fleet stop lifted", "stop", st.ID, "by", req.By)
	b.stopsChanged(ctx)
	return encode(messages.AdminReply{V: messages.Version, OK: true, Stop: &st, Message: "fleet stop " + st.ID + " lifted"})
}

// stopsChanged has every replica read the stops and the breaker trips
// again now, this one included (the periodic read covers a lost
// broadcast).
func (b *Broker) stopsChanged(ctx context.Context) {
	b.rereadStops(ctx)
	if err := b.nc.Publish(b.subj.Admin(messages.AdminOpStopsChanged), []byte(`{"v":1}`)); err != nil {
		b.m.NATSErrors.WithLabelValues("publish").Inc()
		b.log.Warn("cannot broadcast stops_changed; replicas read the stops within "+fleetRefresh.String(), "err", err)
	}
}

// handleStopsChanged reads the fleet stops and the breaker trips again
// (every replica).
func (b *Broker) handleStopsChanged(ctx context.Context, msg *nats.Msg) []byte {
	if _, errReply := b.adminRequest(messages.AdminOpStopsChanged, msg); errReply != nil {
		return errReply
	}
	b.rereadStops(ctx)
	return nil
}

// rereadStops reads the fleet stops and the breaker trips again now; a
// failed read is logged.
func (b *Broker) rereadStops(ctx context.Context) {
	if err := b.fleet.refresh(ctx, b.cfg.StoreTimeout); err != nil {
		b.log.Warn("cannot read the fleet stops", "err", err)
	}
	if err := b.breakers.refresh(ctx, b.cfg.StoreTimeout); err != nil {
		b.log.Warn("cannot read the breaker trips", "err", err)
	}
}

// handlePolicyVersion answers policy_version: every replica answers with
// the version in force on it.
func (b *Broker) handlePolicyVersion(_ context.Context, msg *nats.Msg) []byte {
	if _, errReply := b.adminRequest(messages.AdminOpPolicyVersion, msg); errReply != nil {
		return errReply
	}
	v := b.cfg.Policy.Current().Version()
	return encode(messages.AdminReply{V: messages.Version, OK: true, Message: "policy " + v + " in force on " + b.cfg.Replica,
		Policy: &messages.PolicyReplica{Replica: b.cfg.Replica, PolicyVersion: v}})
}

// adminListAgents serves list_agents: the agents' last seen (what this
// replica has not written yet included), each flagged when silent.
func (b *Broker) adminListAgents(ctx context.Context) []byte {
	b.flushSeen(ctx)
	agents, err := storeRead(b, ctx, b.store.ListSeen)
	if err != nil {
		return b.storeFailure("list agents", err)
	}
	now, err := storeRead(b, ctx, b.store.Now)
	if err != nil {
		return b.storeFailure("now", err)
	}
	n := 0
	for i := range agents {
		agents[i].Silent = silent(&agents[i], now)
		if agents[i].Silent {
			n++
		}
	}
	data := encode(messages.AdminReply{V: messages.Version, OK: true, Message: fmt.Sprintf("%d agents, %d silent", len(agents), n), Agents: agents})
	if len(data) > int(b.nc.MaxPayload()) {
		return encodeError(messages.CodeTooLarge, fmt.Sprintf("%d agents are too many for one reply (%d bytes > max payload %d)", len(agents), len(data), b.nc.MaxPayload()))
	}
	return data
}

package broker

import (
	"context"
	"fmt"
	"slices"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/natstrace"
	"github.com/signoff-dev/signoff/pkg/session"
)

// The engine's ports on NATS (engine.Publisher, engine.Audit, engine.Acker,
// engine.Modes): what the decision procedure tells others, encoded here
// and published on this replica's connections.

// natsPublisher publishes the engine's questions, decisions and
// resolutions on their subjects; a refused publish is counted.
type natsPublisher struct{ b *Broker }

func (p natsPublisher) Ask(team string, q *messages.ApprovalNeeded) error {
	q.Answerers = p.b.answerers(team)
	if q.TraceParent != "" {
		// The request's trace context, as a header too: any consumer of
		// questions can join the trace the standard way.
		msg := &nats.Msg{Subject: p.b.out.Ask(team), Data: encode(q), Header: nats.Header{natstrace.TraceParent: {q.TraceParent}}}
		if err := p.b.nc.PublishMsg(msg); err != nil {
			p.b.m.NATSErrors.WithLabelValues("publish").Inc()
			return fmt.Errorf("publish %s: %w", msg.Subject, err)
		}
		return nil
	}
	return p.b.publishErr(p.b.out.Ask(team), encode(q))
}

// Decision publishes dec with the request span's trace context, when the
// question kept one, as a traceparent header: the agent's trace goes on
// from the broker's span of its request.
func (p natsPublisher) Decision(dec *messages.Decision, traceparent string) error {
	subject := p.b.out.Decision(dec.SessionID, dec.RequestID)
	if traceparent == "" {
		return p.b.publishErr(subject, encode(dec))
	}
	msg := &nats.Msg{Subject: subject, Data: encode(dec), Header: nats.Header{natstrace.TraceParent: {traceparent}}}
	if err := p.b.nc.PublishMsg(msg); err != nil {
		p.b.m.NATSErrors.WithLabelValues("publish").Inc()
		return fmt.Errorf("publish %s: %w", subject, err)
	}
	return nil
}

func (p natsPublisher) Resolved(r *messages.Resolved) error {
	return p.b.publishErr(p.b.out.Resolved(r.Team), encode(r))
}

// answerers are who may answer team's questions under the policy in force
// (messages.Answerers): the bots show a copy only to them. A team the
// policy does not have admits no one, as the brokers' own check; a team
// without members admits anyone only where the brokers accept that (dev
// mode, OpenTeams).
func (b *Broker) answerers(team string) *messages.Answerers {
	t, ok := b.cfg.Policy.Current().Team(team)
	switch {
	case !ok:
		return &messages.Answerers{}
	case t.Open():
		return &messages.Answerers{Open: b.cfg.OpenTeams}
	}
	return &messages.Answerers{Members: slices.Clone(t.Members), Groups: slices.Clone(t.Groups)}
}

// publishErr publishes data on subject; a failure is counted and returned.
func (b *Broker) publishErr(subject string, data []byte) error {
	if err := b.nc.Publish(subject, data); err != nil {
		b.m.NATSErrors.WithLabelValues("publish").Inc()
		return fmt.Errorf("publish %s: %w", subject, err)
	}
	return nil
}

// auditSink is the engine's audit: the broker's audit log once Run has set
// it up, nothing with the audit stream disabled.
type auditSink struct{ b *Broker }

// Enqueue records dec in the audit stream without waiting for the
// acknowledgement: the decision path does not pay for a JetStream round
// trip. A failed append is retried from memory (auditLog).
func (s auditSink) Enqueue(req messages.Request, dec messages.Decision, risk messages.Risk) {
	if s.b.aud == nil {
		return
	}
	rec := s.b.aud.record(&req, &dec, &risk)
	rec.Mode = string(s.b.modes.modeFor(req.SessionID, req.AgentType))
	rec.Canary = s.b.canaryMark(&req)
	s.b.shadowJudge(&rec)
	s.b.aud.enqueue(&rec)
}

// Append records dec in the audit stream and returns once the stream
// acknowledged it, or with the error that kept it out (the caller retries:
// the record's Nats-Msg-Id makes a repeated append a no-op within the
// stream's duplicate window; not on engine.ErrUnencodable).
func (s auditSink) Append(ctx context.Context, req messages.Request, dec messages.Decision, risk messages.Risk, esc []messages.EscalationRun) error {
	if s.b.aud == nil {
		return nil
	}
	rec := s.b.aud.record(&req, &dec, &risk)
	rec.Escalation = esc
	rec.Mode = string(s.b.modes.modeFor(req.SessionID, req.AgentType))
	rec.Canary = s.b.canaryMark(&req)
	s.b.shadowJudge(&rec)
	return s.b.aud.Append(ctx, &rec)
}

// Strict reports whether allows wait for their audit records.
func (s auditSink) Strict() bool { return s.b.cfg.AuditMode == AuditStrict && s.b.aud != nil }

// Grant appends a grant event asynchronously.
func (s auditSink) Grant(ev *messages.GrantEvent) {
	if s.b.aud != nil {
		s.b.aud.appendGrantEvent(ev)
	}
}

// outboxAcker acknowledges carried-out effects through the acker.
type outboxAcker struct{ b *Broker }

// A hard rejection is acknowledged at once rather than queued: until it
// is, a new turn of its session keeps its stop (session.ErrStopOwed).
func (a outboxAcker) Ack(ctx context.Context, rec *session.Record) {
	if rec.HardRejection() {
		a.b.ack(ctx, []*session.Record{rec})
		return
	}
	a.b.queueAck(ctx, rec)
}

// onExpired is the reaper's callback: the store has moved rec to expired
// exactly once across replicas and recorded its timeout in the outbox;
// carry it out.
func (b *Broker) onExpired(ctx context.Context, rec *session.Record) {
	b.m.ReaperExpiries.Inc()
	b.eng.CarryOut(ctx, rec)
}

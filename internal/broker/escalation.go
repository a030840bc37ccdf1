package broker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/signoff-dev/signoff/internal/escalator"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
)

// Escalation (docs/POLICY.md "Escalation"): the ladder of a question is
// decided when it is stored (createPending: the rule's or its team's,
// without the steps the request's TTL cuts off), kept in the question,
// and scheduled by Prepare with the request; the escalator of every
// replica runs the steps (internal/escalator) through escalationPort.

// ladderOf returns the escalation ladder of a question d asks, routed to
// team, that lives ttl: the policy's, cut to the steps before ttl (an
// agent may shorten a question's life), with when each is due.
func ladderOf(pol *policy.Policy, d *policy.Decision, team string, ttl time.Duration) ([]messages.EscalationStep, []time.Duration) {
	steps := pol.Escalation(d, team)
	var due []time.Duration
	for i, s := range steps {
		at := time.Duration(s.AfterMS) * time.Millisecond
		if at >= ttl {
			steps = steps[:i]
			break
		}
		due = append(due, at)
	}
	if len(steps) == 0 {
		return nil, nil
	}
	return slices.Clone(steps), due
}

// escalationPort is what the escalator needs from the broker.
type escalationPort struct{ b *Broker }

func (p escalationPort) Question(rec *session.Record) (messages.ApprovalNeeded, error) {
	return question(rec)
}

func (p escalationPort) Ask(team string, q messages.ApprovalNeeded) error {
	q.Team = team
	if err := p.b.nc.Publish(p.b.subj.Ask(team), encode(q)); err != nil {
		p.b.m.NATSErrors.WithLabelValues("publish").Inc()
		return fmt.Errorf("publish ask to %s: %w", team, err)
	}
	return nil
}

// newEscalator returns this replica's escalator.
func (b *Broker) newEscalator() (*escalator.Escalator, error) {
	return escalator.New(escalator.Config{
		Store:    b.store,
		Asker:    escalationPort{b},
		Pagers:   b.cfg.Pagers,
		WebURL:   b.cfg.WebURL,
		Interval: b.cfg.EscalationInterval,
		Watch:    b.cfg.EscalationWatch,
		Metrics:  b.m.Escalation,
		Logger:   b.log,
	})
}

// runEscalator runs the escalator until ctx ends.
func (b *Broker) runEscalator(ctx context.Context, e *escalator.Escalator) {
	if err := e.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		b.log.Error("escalator stopped", "err", err)
	}
}

// escalationRan lists the steps of rec's ladder that ran before it
// settled, for its audit record (the store keeps them until the request's
// expiry). A question without a ladder costs nothing; an error leaves the
// settle effect to the outbox's retry.
func (b *Broker) escalationRan(ctx context.Context, rec *session.Record) ([]messages.EscalationRun, error) {
	ladder := rec.Question.Escalation
	if len(ladder) == 0 {
		return nil, nil
	}
	sctx, cancel := b.storeCtx(ctx)
	done, err := b.store.StepsDone(sctx, rec.SessionID, rec.ID)
	cancel()
	if err != nil {
		b.storeErr("steps done", err, "request_id", rec.ID, "session_id", rec.SessionID)
		return nil, err
	}
	out := make([]messages.EscalationRun, 0, len(done))
	for _, d := range done {
		if d.Index < len(ladder) {
			out = append(out, messages.RunOf(d.Index+1, ladder[d.Index], d.At.UTC()))
		}
	}
	return out, nil
}

// firstAnswer observes the time from a question to its first human answer,
// by the team the answer came for, when the applied vote that left after
// as it is was the request's first (decided atomically by the store: an
// approval that is the only one counted, or a deny before any approval).
func (b *Broker) firstAnswer(pol *policy.Policy, after *session.Record, approve bool, approver string) {
	n := len(after.Approvals)
	if (approve && n != 1) || (!approve && n != 0) || len(after.Teams) == 0 {
		return
	}
	team := after.Teams[0]
	for _, name := range after.Teams {
		if t, ok := pol.Team(name); ok && !t.Open() && t.IsMember(approver) {
			team = name
			break
		}
	}
	b.m.FirstAnswer.WithLabelValues(team).Observe(max(time.Since(after.CreatedAt), 0).Seconds())
}

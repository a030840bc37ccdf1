package broker

import (
	"fmt"

	"github.com/signoff-dev/signoff/internal/engine"
	"github.com/signoff-dev/signoff/internal/escalator"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// Escalation (docs/POLICY.md "Escalation"): the engine decides a
// question's ladder when it stores it; the escalator of every replica runs
// the steps (internal/escalator) through escalationPort.

// escalationPort is what the escalator needs from the broker.
type escalationPort struct{ b *Broker }

func (p escalationPort) Question(rec *session.Record) (messages.ApprovalNeeded, error) {
	return engine.Question(rec)
}

func (p escalationPort) Ask(team string, q messages.ApprovalNeeded) error {
	q.Team = team
	q.Answerers = p.b.answerers(team)
	if err := p.b.nc.Publish(p.b.out.Ask(team), encode(q)); err != nil {
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

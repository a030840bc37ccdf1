package escalator

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/signoff-dev/signoff/internal/metricdef"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Metrics are the escalation metrics.
type Metrics struct {
	// Steps counts escalation steps by kind (remind, add_team, page) and
	// outcome: done, dropped (the request settled first, or the step
	// cannot run: an unknown pager, an unreadable question), error (retried
	// after the lease).
	Steps *prometheus.CounterVec
	// Pages counts pager calls by pager, action (trigger, resolve) and
	// outcome (ok, error: retried, rejected: given up).
	Pages *prometheus.CounterVec
}

var (
	stepKinds    = []string{messages.StepRemind, messages.StepAddTeam, messages.StepPage}
	stepOutcomes = []string{"done", "dropped", "error"}
)

// NewMetrics registers the escalation metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Steps: metricdef.CounterVec("signoff_escalation_steps_total",
			"Escalation steps run by this replica, by kind (remind, add_team, page) and outcome (done, dropped, error).", "kind", "outcome"),
		Pages: metricdef.CounterVec("signoff_pages_total",
			"Pager calls by pager, action (trigger: a page sent, resolve: a page resolved) and outcome (ok, error: retried, rejected: given up).", "pager", "action", "outcome"),
	}
	reg.MustRegister(m.Steps, m.Pages)
	for _, k := range stepKinds {
		for _, o := range stepOutcomes {
			m.Steps.WithLabelValues(k, o)
		}
	}
	return m
}

// initPager creates a pager's series at zero.
func (m *Metrics) initPager(name string) {
	for _, a := range []string{"trigger", "resolve"} {
		for _, o := range []string{"ok", "error", "rejected"} {
			m.Pages.WithLabelValues(name, a, o)
		}
	}
}

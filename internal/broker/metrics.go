package broker

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the broker's Prometheus metrics (DESIGN §8).
type Metrics struct {
	Registry *prometheus.Registry

	Decisions       *prometheus.CounterVec
	DecisionLatency *prometheus.HistogramVec
	Pending         prometheus.Gauge
	ReaperExpiries  prometheus.Counter
	OutboxClaims    prometheus.Counter
	StoreErrors     *prometheus.CounterVec
	NATSErrors      *prometheus.CounterVec
	BadMessages     *prometheus.CounterVec
	PolicyReloads   *prometheus.CounterVec
}

// NewMetrics registers the broker's metrics on reg (a new registry with the
// Go and process collectors when reg is nil).
func NewMetrics(reg *prometheus.Registry) *Metrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m := &Metrics{
		Registry: reg,
		Decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signoff_decisions_total",
			Help: "Final decisions by outcome and reason code.",
		}, []string{"outcome", "reason"}),
		DecisionLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "signoff_decision_seconds",
			Help:    "Time to handle an agent request on this replica, by result (allow, deny, pending, error).",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
		}, []string{"result"}),
		Pending: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "signoff_pending_requests",
			Help: "Requests this replica made pending minus those it settled: sum over replicas for the plane's pending count.",
		}),
		ReaperExpiries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "signoff_reaper_expiries_total",
			Help: "Pending requests this replica's reaper expired.",
		}),
		OutboxClaims: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "signoff_outbox_claims_total",
			Help: "Outbox entries this replica claimed after their lease ran out: effects of decisions whose replica died or failed before it acknowledged them.",
		}),
		StoreErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signoff_store_errors_total",
			Help: "State store (Redis) calls that failed, by operation.",
		}, []string{"op"}),
		NATSErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signoff_nats_errors_total",
			Help: "NATS publish, reply and audit failures, by kind.",
		}, []string{"kind"}),
		BadMessages: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signoff_bad_messages_total",
			Help: "Incoming messages answered with an error reply, by code.",
		}, []string{"code"}),
		PolicyReloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "signoff_policy_reloads_total",
			Help: "Policy reloads by result (ok, error).",
		}, []string{"result"}),
	}
	reg.MustRegister(m.Decisions, m.DecisionLatency, m.Pending, m.ReaperExpiries, m.OutboxClaims,
		m.StoreErrors, m.NATSErrors, m.BadMessages, m.PolicyReloads)
	return m
}

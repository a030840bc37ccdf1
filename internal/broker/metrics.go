package broker

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/signoff-dev/signoff/internal/engine"
	"github.com/signoff-dev/signoff/internal/escalator"
	"github.com/signoff-dev/signoff/internal/metricdef"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// Metrics are the broker's Prometheus metrics (DESIGN §8).
type Metrics struct {
	Registry *prometheus.Registry

	// ShadowDifferences is signoff_shadow_differences_total (shadow.go).
	ShadowDifferences *prometheus.CounterVec
	// BreakerTrips is signoff_breaker_trips_total (breakers.go).
	BreakerTrips prometheus.Counter

	Decisions       *prometheus.CounterVec
	DecisionLatency *prometheus.HistogramVec
	Pending         prometheus.Gauge
	ReaperExpiries  prometheus.Counter
	OutboxClaims    prometheus.Counter
	StoreErrors     *prometheus.CounterVec
	NATSErrors      *prometheus.CounterVec
	BadMessages     *prometheus.CounterVec
	PolicyReloads   *prometheus.CounterVec
	// PolicyInfo is 1 for the version of the policy in force (one series).
	PolicyInfo *prometheus.GaugeVec
	// PolicyFileRejected is 1 while the policy file on disk is rejected
	// and an older policy stays in force.
	PolicyFileRejected prometheus.Gauge

	AuditFailures     *prometheus.CounterVec
	AuditRetried      prometheus.Counter
	AuditLost         *prometheus.CounterVec
	AuditRetryPending prometheus.Gauge
	AuditInflight     prometheus.Gauge

	// Grants counts grant events by event: created, used (a call allowed
	// by a grant, once per grant it needed), revoked, expired.
	Grants     *prometheus.CounterVec
	grantsUsed prometheus.Counter
	// FirstAnswer is the time from a question to its first answer by a
	// human (a vote or a decision), by the team the answer came for.
	FirstAnswer *prometheus.HistogramVec
	// Escalation are the escalator's metrics.
	Escalation *escalator.Metrics
}

// grantUsed is the Grants label of a call a grant allowed.
const grantUsed = "used"

var grantEvents = []string{string(messages.GrantCreated), grantUsed, string(messages.GrantRevoked), string(messages.GrantExpired)}

// The label values every labelled counter starts with, at 0: an alert on
// rate(signoff_store_errors_total[5m]) needs the series before the first
// error. A value used in code must be listed here (TestEveryLabelValueInCodeIsInitialised).
var (
	storeOps = []string{"lookup", "create", "open", "get", "decide", "grant", "list pending",
		"settle", "stop", "revoke", "status", "cancel", "new turn", "ack effects", "steps done",
		"list grants", "revoke grant", "expire grants",
		// fleet operation (fleet.go, admin_fleet.go)
		"fleet stops", "put fleet stop", "delete fleet stop", "fleet stop sweep", "list agents", "now", "record seen",
		// outbreak breakers (breakers.go)
		"hit breakers", "breaker trips", "reset breaker"}
	natsErrorKinds  = []string{"reply", "publish", "audit", "kv"}
	badMessageCodes = []string{"reply_subject",
		string(messages.CodeInvalidRequest), string(messages.CodeTooLarge), string(messages.CodeUnsupportedVersion),
		string(messages.CodeNotFound), string(messages.CodeForbidden), string(messages.CodeUnavailable), string(messages.CodeInternal)}
	policyReloadResults = []string{"ok", "error"}
	auditFailureKinds   = []string{"timeout", "no_stream", "stalled", "disconnected", "rejected", "other"}
	auditLostReasons    = []string{"overflow", "shutdown", "encode"}
	decisionLabels      = decisionLabelsOf(messages.ReasonCodes())
)

// decisionLabelsOf groups codes by their outcome: the (outcome, reason_code)
// pairs a decision can carry, so only those series are created at zero.
func decisionLabelsOf(codes []messages.ReasonCode) map[messages.Outcome][]messages.ReasonCode {
	m := make(map[messages.Outcome][]messages.ReasonCode)
	for _, c := range codes {
		if o, ok := c.Outcome(); ok {
			m[o] = append(m[o], c)
		}
	}
	return m
}

// NewMetrics registers the broker's metrics on reg (a new registry with the
// Go and process collectors when reg is nil).
func NewMetrics(reg *prometheus.Registry) *Metrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m := newMetrics()
	m.Registry = reg
	m.Escalation = escalator.NewMetrics(reg)
	m.ShadowDifferences = newShadowDifferences()
	reg.MustRegister(m.ShadowDifferences)
	m.BreakerTrips = newBreakerTrips()
	reg.MustRegister(m.BreakerTrips)
	reg.MustRegister(m.FirstAnswer)
	reg.MustRegister(m.Decisions, m.DecisionLatency, m.Pending, m.ReaperExpiries, m.OutboxClaims,
		m.StoreErrors, m.NATSErrors, m.BadMessages, m.PolicyReloads, m.PolicyInfo, m.PolicyFileRejected,
		m.AuditFailures, m.AuditRetried, m.AuditLost, m.AuditRetryPending, m.AuditInflight, m.Grants)
	m.initSeries()
	return m
}

// newMetrics creates the broker's collectors, not registered yet.
func newMetrics() *Metrics {
	m := &Metrics{
		Decisions: metricdef.CounterVec("signoff_decisions_total",
			"Final decisions by outcome and reason code.", "outcome", "reason"),
		DecisionLatency: metricdef.HistogramVec("signoff_decision_seconds",
			"Time to handle an agent request on this replica, by result (allow, deny, pending, error).",
			[]float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1}, "result"),
		Pending: metricdef.Gauge("signoff_pending_requests",
			"Requests this replica made pending minus those it settled: sum over replicas for the plane's pending count."),
		ReaperExpiries: metricdef.Counter("signoff_reaper_expiries_total",
			"Pending requests this replica's reaper expired."),
		OutboxClaims: metricdef.Counter("signoff_outbox_claims_total",
			"Outbox entries this replica claimed after their lease ran out: effects of decisions whose replica died or failed before it acknowledged them."),
		StoreErrors: metricdef.CounterVec("signoff_store_errors_total",
			"State store (Redis) calls that failed, by operation.", "op"),
		NATSErrors: metricdef.CounterVec("signoff_nats_errors_total",
			"NATS publish, reply and audit failures, by kind.", "kind"),
		BadMessages: metricdef.CounterVec("signoff_bad_messages_total",
			"Incoming messages answered with an error reply, by code.", "code"),
		PolicyReloads: metricdef.CounterVec("signoff_policy_reloads_total",
			"Policy reloads by result (ok, error): new or restored policy files, rejected files (once per distinct error), admin reloads.", "result"),
		PolicyInfo: metricdef.GaugeVec("signoff_policy_info",
			"1 for the version (content hash) of the policy in force on this replica.", "version"),
		PolicyFileRejected: metricdef.Gauge("signoff_policy_file_rejected",
			"1 while the policy file on disk is rejected (unreadable or invalid) and an older policy stays in force."),
		AuditFailures: metricdef.CounterVec("signoff_audit_failures_total",
			"Audit records whose append failed (each is retried), by kind: timeout, no_stream, stalled, disconnected, rejected, other.", "kind"),
		AuditRetried: metricdef.Counter("signoff_audit_retried_total",
			"Audit records stored by a retry after their first append failed."),
		AuditLost: metricdef.CounterVec("signoff_audit_lost_total",
			"Audit records given up, by reason: overflow (retry queue full), shutdown (not stored by the end of the flush), encode.", "reason"),
		AuditRetryPending: metricdef.Gauge("signoff_audit_retry_pending",
			"Audit records whose append failed, held in this replica's memory until the stream takes them."),
		AuditInflight: metricdef.Gauge("signoff_audit_inflight",
			"Audit records not yet acknowledged on their first append: batched or in flight (sampled every second)."),
		Grants: metricdef.CounterVec("signoff_grants_total",
			"Grant events by event: created, used (calls a grant allowed, per grant), revoked, expired.", "event"),
	}
	m.grantsUsed = m.Grants.WithLabelValues(grantUsed)
	m.FirstAnswer = metricdef.HistogramVec("signoff_first_answer_seconds",
		"Time from a question to its first answer by a human (a vote or a decision), by the team the answer came for.",
		[]float64{5, 15, 30, 60, 120, 300, 600, 900, 1800, 3600}, "team")
	return m
}

// initSeries creates every labelled series the code counts, at 0.
func (m *Metrics) initSeries() {
	metricdef.Zero(m.Grants, grantEvents...)
	metricdef.Zero(m.StoreErrors, storeOps...)
	metricdef.Zero(m.NATSErrors, natsErrorKinds...)
	metricdef.Zero(m.BadMessages, badMessageCodes...)
	metricdef.Zero(m.AuditFailures, auditFailureKinds...)
	metricdef.Zero(m.AuditLost, auditLostReasons...)
	metricdef.Zero(m.PolicyReloads, policyReloadResults...)
	for outcome, reasons := range decisionLabels {
		for _, r := range reasons {
			m.Decisions.WithLabelValues(string(outcome), string(r))
		}
	}
}

// engine is the series the decision procedure counts.
func (m *Metrics) engine() engine.Metrics {
	return engine.Metrics{Decisions: m.Decisions, Pending: m.Pending, StoreErrors: m.StoreErrors,
		Grants: m.Grants, GrantsUsed: m.grantsUsed, FirstAnswer: m.FirstAnswer}
}

// setPolicyVersion makes version the one series of signoff_policy_info.
func (m *Metrics) setPolicyVersion(version string) {
	m.PolicyInfo.Reset()
	m.PolicyInfo.WithLabelValues(version).Set(1)
}

// policyReloaded counts one reload outcome.
func (m *Metrics) policyReloaded(ev policy.ReloadEvent) {
	if ev.Err != nil {
		m.PolicyReloads.WithLabelValues("error").Inc()
		m.PolicyFileRejected.Set(1)
	} else {
		m.PolicyReloads.WithLabelValues("ok").Inc()
		m.PolicyFileRejected.Set(0)
	}
	m.setPolicyVersion(ev.Version)
}

package approverbot

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/signoff-dev/signoff/internal/metricdef"
)

// The results an answer is counted under (signoff_bot_answers_total).
const (
	ResultApplied    = "applied"     // the brokers applied it (a decision, or a counted quorum vote)
	ResultNotApplied = "not_applied" // the brokers refused it (settled already, not a team member…)
	ResultRefused    = "refused"     // the bot refused it: unknown approver or question, a choice not offered
	ResultFailed     = "failed"      // no broker answered, or the reply was an error
)

var answerResults = []string{ResultApplied, ResultNotApplied, ResultRefused, ResultFailed}

// The kinds of NATS errors (signoff_bot_nats_errors_total).
const (
	NATSPermission = "permission" // the server refused a subscription or a publish
	NATSReplay     = "replay"     // the pending replay of a team failed
	NATSRespond    = "respond"    // an answer's request to the brokers failed
	NATSAsync      = "async"      // another asynchronous error (slow consumer…)
	NATSAdmin      = "admin"      // a grants request (list, revoke) to the brokers failed
)

var natsErrorKinds = []string{NATSPermission, NATSReplay, NATSRespond, NATSAsync, NATSAdmin}

// Metrics are the approver bot's Prometheus metrics. Every labelled series
// exists from the start (at zero), so an alert on a rate sees a series
// before the first error.
type Metrics struct {
	Registry *prometheus.Registry

	QuestionsShown   *prometheus.CounterVec
	DeliveryFailures *prometheus.CounterVec
	Answers          *prometheus.CounterVec
	ChannelUp        *prometheus.GaugeVec
	NATSErrors       *prometheus.CounterVec
	Ready            prometheus.Gauge
	// ChangedQuestions counts copies of open questions refused because
	// they change what the question shows (an attack; see board.upsert).
	ChangedQuestions prometheus.Counter
}

// NewMetrics registers the bot's metrics on reg (a new registry with the
// Go and process collectors when reg is nil).
func NewMetrics(reg *prometheus.Registry) *Metrics {
	if reg == nil {
		reg = prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	m := &Metrics{
		Registry: reg,
		QuestionsShown: metricdef.CounterVec("signoff_bot_questions_shown_total",
			"Questions (and their updates) delivered to a channel.", "channel"),
		DeliveryFailures: metricdef.CounterVec("signoff_bot_delivery_failures_total",
			"Questions or resolutions a channel failed to show after its retries.", "channel"),
		Answers: metricdef.CounterVec("signoff_bot_answers_total",
			"Answers from a channel, by result: applied, not_applied (by the brokers), refused (by the bot), failed (no broker answered).", "channel", "result"),
		ChannelUp: metricdef.GaugeVec("signoff_bot_channel_up",
			"1 when the channel's latest health check passed (it reaches its service), else 0.", "channel"),
		NATSErrors: metricdef.CounterVec("signoff_bot_nats_errors_total",
			"NATS errors by kind: permission (a refused subscription or publish), replay, respond, async.", "kind"),
		Ready: metricdef.Gauge("signoff_bot_nats_ready",
			"1 when every subscription of the bot is accepted and every team's latest pending replay succeeded."),
		ChangedQuestions: metricdef.Counter("signoff_bot_changed_questions_total",
			"Copies of an open question refused because they change what it shows (someone other than the brokers published them)."),
	}
	reg.MustRegister(m.QuestionsShown, m.DeliveryFailures, m.Answers, m.ChannelUp, m.NATSErrors, m.Ready, m.ChangedQuestions)
	metricdef.Zero(m.NATSErrors, natsErrorKinds...)
	return m
}

// initChannel creates a channel's series at zero.
func (m *Metrics) initChannel(name string) {
	m.QuestionsShown.WithLabelValues(name)
	m.DeliveryFailures.WithLabelValues(name)
	m.ChannelUp.WithLabelValues(name)
	for _, r := range answerResults {
		m.Answers.WithLabelValues(name, r)
	}
}

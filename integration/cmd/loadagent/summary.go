package main

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// maxSamples bounds the error samples and anomalies a summary lists.
const maxSamples = 20

// Summary is loadagent's output (see the package doc for an example).
type Summary struct {
	Agents           int    `json:"agents"`
	RequestsPerAgent int    `json:"requests_per_agent"`
	Requests         int    `json:"requests"` // sent
	Unsent           int    `json:"unsent"`   // not sent before -timeout
	SessionPrefix    string `json:"session_prefix"`

	Sent      map[kind]int                `json:"sent"`
	Decisions map[messages.Outcome]int    `json:"decisions"`
	Reasons   map[messages.ReasonCode]int `json:"reasons"`

	Unexpected      int `json:"unexpected"`
	WithoutDecision int `json:"without_decision"`
	ExtraDecisions  int `json:"extra_decisions"`

	Errors       int      `json:"errors"`
	ErrorSamples []string `json:"error_samples"`
	Anomalies    []string `json:"anomalies"`

	Approver *ApproverSummary `json:"approver,omitempty"`

	Latency       Latency          `json:"latency_ms"`
	LatencyByKind map[kind]Latency `json:"latency_ms_by_kind"`
	DurationMS    float64          `json:"duration_ms"`
	Throughput    float64          `json:"throughput_per_s"`

	// OK: every request sent got exactly one decision, the one its kind
	// expects, nothing failed and every planned request was sent.
	OK bool `json:"ok"`
}

// ApproverSummary is what the -approver did.
type ApproverSummary struct {
	ID        string `json:"id"`
	Questions int    `json:"questions"` // distinct questions of this run's sessions seen
	Applied   int    `json:"applied"`   // answers the broker applied
	Refused   int    `json:"refused"`   // answers refused (settled already, or not allowed)
	Errors    int    `json:"errors"`
}

// Latency summarizes request latencies in milliseconds (nearest-rank
// percentiles).
type Latency struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// latencyOf summarizes ds; it sorts ds in place.
func latencyOf(ds []time.Duration) Latency {
	if len(ds) == 0 {
		return Latency{}
	}
	slices.Sort(ds)
	return Latency{
		Count: len(ds),
		P50:   ms(percentile(ds, 50)),
		P90:   ms(percentile(ds, 90)),
		P99:   ms(percentile(ds, 99)),
		Max:   ms(ds[len(ds)-1]),
	}
}

// percentile returns the nearest-rank p-th percentile of sorted ds.
func percentile(sorted []time.Duration, p float64) time.Duration {
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// ms is d in milliseconds, rounded to microseconds.
func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// summarize builds the summary of a run from its ledger (held locked).
func summarize(cfg *config, l *ledger, elapsed time.Duration) *Summary {
	s := &Summary{
		Agents:           cfg.agents,
		RequestsPerAgent: cfg.requests,
		Requests:         len(l.order),
		Unsent:           cfg.agents*cfg.requests - len(l.order),
		SessionPrefix:    cfg.sessionPrefix,
		Sent:             map[kind]int{},
		Decisions:        map[messages.Outcome]int{},
		Reasons:          map[messages.ReasonCode]int{},
		ErrorSamples:     []string{},
		Anomalies:        []string{},
		LatencyByKind:    map[kind]Latency{},
		DurationMS:       ms(elapsed),
	}
	var all []time.Duration
	byKind := map[kind][]time.Duration{}
	for _, id := range l.order {
		e := l.entries[id]
		s.Sent[e.kind]++
		switch {
		case e.err != nil || e.decision == nil:
			s.WithoutDecision++
			err := e.err
			if err == nil {
				err = fmt.Errorf("no decision and no error")
			}
			s.addErrors(fmt.Sprintf("%s (%s): %v", id, e.kind, err))
			s.anomaly(id, "no decision")
			continue
		case e.decision.RequestID != id:
			s.ExtraDecisions++
			s.anomaly(id, "got the decision of request "+e.decision.RequestID)
			continue
		}
		d := e.decision
		s.Decisions[d.Outcome]++
		s.Reasons[d.ReasonCode]++
		all = append(all, e.latency)
		byKind[e.kind] = append(byKind[e.kind], e.latency)
		if want, judged := expected(e.kind, cfg.approver != ""); judged && d.Outcome != want {
			s.Unexpected++
			s.anomaly(id, fmt.Sprintf("%s call got %s (%s: %s)", e.kind, d.Outcome, d.ReasonCode, d.Reason))
		}
		switch {
		case len(e.published) > 1:
			s.ExtraDecisions++
			s.anomaly(id, fmt.Sprintf("%d decision messages", len(e.published)))
		case len(e.published) == 1 && (e.published[0].Outcome != d.Outcome || e.published[0].ReasonCode != d.ReasonCode):
			s.ExtraDecisions++
			s.anomaly(id, fmt.Sprintf("decision message says %s (%s), the agent got %s (%s)",
				e.published[0].Outcome, e.published[0].ReasonCode, d.Outcome, d.ReasonCode))
		}
	}
	for _, id := range l.stray {
		s.ExtraDecisions++
		s.anomaly(id, "decision message for a request this run never sent")
	}
	s.Latency = latencyOf(all)
	for k, ds := range byKind {
		s.LatencyByKind[k] = latencyOf(ds)
	}
	if elapsed > 0 {
		s.Throughput = math.Round(float64(len(all))/elapsed.Seconds()*10) / 10
	}
	if s.Unsent > 0 {
		s.addErrors(fmt.Sprintf("%d of %d requests not sent before the -timeout", s.Unsent, cfg.agents*cfg.requests))
	}
	s.finish()
	return s
}

func (s *Summary) addErrors(msgs ...string) {
	for _, m := range msgs {
		s.Errors++
		if len(s.ErrorSamples) < maxSamples {
			s.ErrorSamples = append(s.ErrorSamples, m)
		}
	}
}

func (s *Summary) anomaly(id, what string) {
	if len(s.Anomalies) < maxSamples {
		s.Anomalies = append(s.Anomalies, id+": "+what)
	}
}

// finish sets OK from the counts.
func (s *Summary) finish() {
	s.OK = s.Errors == 0 && s.WithoutDecision == 0 && s.ExtraDecisions == 0 && s.Unexpected == 0 && s.Unsent == 0
}

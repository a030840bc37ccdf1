package main

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// runLoad runs loadagent with args against a plane and decodes its summary.
func runLoad(t *testing.T, args ...string) (int, Summary, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	code := run(ctx, args, &out, &errOut)
	var s Summary
	if code != exitUsage {
		if err := json.Unmarshal(out.Bytes(), &s); err != nil {
			t.Fatalf("summary is not JSON (%v):\n%s\nstderr: %s", err, out.String(), errOut.String())
		}
	}
	return code, s, errOut.String()
}

func TestRunGivesEveryRequestOneDecisionAcrossReplicas(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Replicas: 2})
	code, s, stderr := runLoad(t, "-nats", p.URL(), "-agents", "4", "-requests", "6",
		"-mix", "allow=1,deny=1,ask=1", "-approver", "alice", "-session-prefix", "lt")
	if code != exitOK || !s.OK {
		t.Fatalf("exit %d, ok=%v, stderr %q, summary %+v", code, s.OK, stderr, s)
	}
	if s.Requests != 24 || s.Sent[kindAllow] != 8 || s.Sent[kindDeny] != 8 || s.Sent[kindAsk] != 8 {
		t.Errorf("sent %d requests %v, want 24 split 8/8/8", s.Requests, s.Sent)
	}
	if s.Decisions[messages.OutcomeAllow] != 16 || s.Decisions[messages.OutcomeDeny] != 8 {
		t.Errorf("decisions %v, want allow 16, deny 8", s.Decisions)
	}
	if s.Reasons[messages.ReasonApproved] != 8 {
		t.Errorf("reasons %v, want 8 approved", s.Reasons)
	}
	if s.Approver == nil || s.Approver.Questions != 8 || s.Approver.Applied != 8 {
		t.Errorf("approver %+v, want 8 questions, 8 applied", s.Approver)
	}
	if s.Latency.Count != 24 || s.Latency.P50 <= 0 || s.Latency.P99 < s.Latency.P50 || s.Latency.Max < s.Latency.P99 {
		t.Errorf("latency %+v is not a summary of 24 requests", s.Latency)
	}
	if s.Throughput <= 0 {
		t.Errorf("throughput %v, want > 0", s.Throughput)
	}
}

func TestRunWithoutApproverLetsAskedCallsExpire(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	code, s, stderr := runLoad(t, "-nats", p.URL(), "-agents", "2", "-requests", "2",
		"-mix", "ask=1", "-ask-ttl", "300ms", "-settle", "0", "-inbox-prefix", "_INBOX.agent")
	if code != exitOK || !s.OK {
		t.Fatalf("exit %d, stderr %q, summary %+v", code, stderr, s)
	}
	if s.Reasons[messages.ReasonTimeout] != 4 || s.Decisions[messages.OutcomeDeny] != 4 {
		t.Errorf("reasons %v decisions %v, want 4 timeouts (deny)", s.Reasons, s.Decisions)
	}
	if s.Approver != nil {
		t.Errorf("approver %+v reported without -approver", s.Approver)
	}
	if !strings.HasPrefix(s.SessionPrefix, "load-") {
		t.Errorf("default session prefix %q, want load-…", s.SessionPrefix)
	}
}

func TestRunFailsWhenACallDoesNotGetTheExpectedOutcome(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	code, s, _ := runLoad(t, "-nats", p.URL(), "-agents", "1", "-requests", "3", "-mix", "allow=1",
		"-allow-call", `{"tool":"bash","arguments":{"command":"rm -rf /srv"}}`)
	if code != exitFailed || s.OK {
		t.Fatalf("exit %d ok=%v, want exit %d and ok=false", code, s.OK, exitFailed)
	}
	if s.Unexpected != 3 || len(s.Anomalies) != 3 || !strings.Contains(s.Anomalies[0], "allow call got deny") {
		t.Errorf("unexpected %d anomalies %q, want 3 naming the denied allow calls", s.Unexpected, s.Anomalies)
	}
}

func TestRunRefusesBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a mix with an unknown kind", []string{"-mix", "allow=1,maybe=2"}, `unknown kind "maybe"`},
		{"a mix with no positive weight", []string{"-mix", "allow=0"}, "no kind has a positive weight"},
		{"a kind given twice", []string{"-mix", "allow=1,allow=2"}, "given twice"},
		{"a call that is not JSON", []string{"-ask-call", "bash make"}, "-ask-call: want JSON"},
		{"a call without a tool", []string{"-deny-call", `{"arguments":{}}`}, "tool is required"},
		{"a session prefix that is not a token", []string{"-session-prefix", "a.b"}, "-session-prefix"},
		{"no agents", []string{"-agents", "0"}, "-agents 0"},
		{"an approver who requested the calls", []string{"-approver", "bob", "-requested-by", "bob"}, "self-approval"},
		{"a stray argument", []string{"extra"}, `unexpected argument "extra"`},
		{"an inbox prefix with a wildcard", []string{"-inbox-prefix", "_INBOX.*"}, "-inbox-prefix"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := runLoad(t, tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitUsage, tt.want)
			}
		})
	}
}

func TestMixCycleInterleavesKindsByWeight(t *testing.T) {
	tests := []struct {
		name string
		mix  string
		want []kind
	}{
		{"equal weights take turns", "allow=1,deny=1,ask=1", []kind{kindAllow, kindDeny, kindAsk}},
		{"a heavy kind is spread out", "allow=2,ask=1", []kind{kindAllow, kindAsk, kindAllow}},
		{"a zero weight never appears", "allow=1,deny=0,ask=1", []kind{kindAllow, kindAsk}},
		{"one kind alone repeats", "deny=3", []kind{kindDeny, kindDeny, kindDeny}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := parseMix(tt.mix)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.cycle(); !slices.Equal(got, tt.want) {
				t.Errorf("cycle %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMixScheduleKeepsExactCountsWhateverTheOffset(t *testing.T) {
	m, err := parseMix("allow=8,deny=1,ask=1")
	if err != nil {
		t.Fatal(err)
	}
	for a := range 12 {
		count := map[kind]int{}
		for _, k := range m.schedule(a, 20) {
			count[k]++
		}
		if count[kindAllow] != 16 || count[kindDeny] != 2 || count[kindAsk] != 2 {
			t.Errorf("agent %d: %v, want 16/2/2", a, count)
		}
	}
	if slices.Equal(m.schedule(0, 10), m.schedule(1, 10)) {
		t.Error("agents 0 and 1 send the same sequence; offsets should differ")
	}
}

func TestPercentileUsesNearestRank(t *testing.T) {
	ds := make([]time.Duration, 100)
	for i := range ds {
		ds[i] = time.Duration(100-i) * time.Millisecond // unsorted on purpose
	}
	l := latencyOf(ds)
	if l.Count != 100 || l.P50 != 50 || l.P90 != 90 || l.P99 != 99 || l.Max != 100 {
		t.Errorf("latency %+v, want p50 50, p90 90, p99 99, max 100", l)
	}
	if one := latencyOf([]time.Duration{3 * time.Millisecond}); one.P50 != 3 || one.P99 != 3 {
		t.Errorf("single sample %+v, want every percentile 3", one)
	}
}

func TestSummarizeCountsRequestsWithoutExactlyOneDecision(t *testing.T) {
	dec := func(id string, o messages.Outcome, rc messages.ReasonCode) *messages.Decision {
		return &messages.Decision{RequestID: id, Outcome: o, ReasonCode: rc}
	}
	tests := []struct {
		name      string
		entry     entry
		id        string
		wantExtra int
		wantNone  int
	}{
		{"a decision in the receipt alone is one decision", entry{kind: kindAllow,
			decision: dec("r", messages.OutcomeAllow, messages.ReasonPolicyAllow)}, "r", 0, 0},
		{"a pending decision seen once is one decision", entry{kind: kindAsk,
			decision:  dec("r", messages.OutcomeAllow, messages.ReasonApproved),
			published: []messages.Decision{*dec("r", messages.OutcomeAllow, messages.ReasonApproved)}}, "r", 0, 0},
		{"two decision messages are an extra decision", entry{kind: kindAsk,
			decision: dec("r", messages.OutcomeAllow, messages.ReasonApproved),
			published: []messages.Decision{*dec("r", messages.OutcomeAllow, messages.ReasonApproved),
				*dec("r", messages.OutcomeDeny, messages.ReasonTimeout)}}, "r", 1, 0},
		{"a decision message that disagrees is an extra decision", entry{kind: kindAsk,
			decision:  dec("r", messages.OutcomeAllow, messages.ReasonApproved),
			published: []messages.Decision{*dec("r", messages.OutcomeDeny, messages.ReasonTimeout)}}, "r", 1, 0},
		{"another request's decision is an extra decision", entry{kind: kindAllow,
			decision: dec("other", messages.OutcomeAllow, messages.ReasonPolicyAllow)}, "r", 1, 0},
		{"an error is a request without decision", entry{kind: kindAsk, err: context.DeadlineExceeded}, "r", 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLedger()
			l.add(tt.id, tt.entry.kind)
			*l.entries[tt.id] = tt.entry
			s := summarize(&config{agents: 1, requests: 1, sessionPrefix: "s"}, l, time.Second)
			if s.ExtraDecisions != tt.wantExtra || s.WithoutDecision != tt.wantNone {
				t.Errorf("extra %d without %d, want %d and %d (anomalies %q)",
					s.ExtraDecisions, s.WithoutDecision, tt.wantExtra, tt.wantNone, s.Anomalies)
			}
			if wantOK := tt.wantExtra == 0 && tt.wantNone == 0; s.OK != wantOK {
				t.Errorf("ok %v, want %v", s.OK, wantOK)
			}
		})
	}
}

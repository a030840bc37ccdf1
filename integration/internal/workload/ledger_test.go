package workload

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// decision builds a decision for request id of session s.
func decision(id string, o messages.Outcome, rc messages.ReasonCode, by string) *messages.Decision {
	kind := messages.DeciderPolicy
	if rc == messages.ReasonApproved || rc == messages.ReasonRejected {
		kind = messages.DeciderApprover
	}
	return &messages.Decision{V: 1, RequestID: id, SessionID: "s", Outcome: o, ReasonCode: rc, DecidedBy: messages.Decider{Kind: kind, ID: by}}
}

func reply(applied bool, d *messages.Decision) *messages.RespondReply {
	return &messages.RespondReply{V: 1, Applied: applied, State: messages.StateApproved, Decision: d}
}

func TestLedgerCheck(t *testing.T) {
	approved := decision("r", messages.OutcomeAllow, messages.ReasonApproved, "alice")
	rejected := decision("r", messages.OutcomeDeny, messages.ReasonRejected, "bob")
	unavailable := decision("r", messages.OutcomeDeny, ReasonUnavailable, "broker-2")
	tests := []struct {
		name string
		kind Kind
		// play records what happened to request "r" of session "s".
		play func(l *Ledger)
		tol  Tolerance
		want string // a fragment of the one violation; "" for none
	}{
		{
			name: "a policy allow that got policy_allow is fine",
			kind: KindAllow,
			play: func(l *Ledger) {
				l.Finish("r", decision("r", messages.OutcomeAllow, messages.ReasonPolicyAllow, "broker-1"), nil)
			},
		},
		{
			name: "a request without a decision is lost",
			kind: KindAllow,
			play: func(l *Ledger) { l.Finish("r", nil, errors.New("context deadline exceeded")) },
			want: "no decision",
		},
		{
			name: "a request that never returned is lost",
			kind: KindAllow,
			play: func(*Ledger) {},
			want: "0 decisions returned",
		},
		{
			name: "a decision for another request is wrong",
			kind: KindAllow,
			play: func(l *Ledger) {
				l.Finish("r", decision("x", messages.OutcomeAllow, messages.ReasonPolicyAllow, "broker-1"), nil)
			},
			want: "decision is for request x",
		},
		{
			name: "a policy deny that was allowed is a violation",
			kind: KindDeny,
			play: func(l *Ledger) {
				l.Finish("r", decision("r", messages.OutcomeAllow, messages.ReasonPolicyAllow, "broker-1"), nil)
			},
			want: "a policy deny got allow",
		},
		{
			name: "a policy allow asked to fail closed and rejected is fine where tolerated",
			kind: KindAllow,
			play: func(l *Ledger) {
				l.Question("r")
				l.Answered("r", Answer{Approver: "bob", Approved: false, Reply: reply(true, rejected)})
				l.Finish("r", rejected, nil)
				l.Published(*rejected)
			},
			tol: Tolerance{Asked: func(*Entry) bool { return true }},
		},
		{
			name: "a policy allow asked is a violation where not tolerated",
			kind: KindAllow,
			play: func(l *Ledger) {
				l.Question("r")
				l.Answered("r", Answer{Approver: "bob", Approved: false, Reply: reply(true, rejected)})
				l.Finish("r", rejected, nil)
				l.Published(*rejected)
			},
			want: "a policy allow got deny/rejected",
		},
		{
			name: "a tolerated asked allow still needs the answer that decided it",
			kind: KindAllow,
			play: func(l *Ledger) {
				l.Question("r")
				l.Finish("r", approved, nil)
				l.Published(*approved)
			},
			tol:  Tolerance{Asked: func(*Entry) bool { return true }},
			want: "no such approval was sent",
		},
		{
			name: "a question approved with an approval sent is fine",
			kind: KindAsk,
			play: func(l *Ledger) {
				l.Question("r")
				l.Answered("r", Answer{Approver: "alice", Approved: true, Reply: reply(true, approved)})
				l.Finish("r", approved, nil)
				l.Published(*approved)
			},
		},
		{
			name: "a question allowed without any approval is a violation",
			kind: KindAsk,
			play: func(l *Ledger) {
				l.Question("r")
				l.Finish("r", approved, nil)
			},
			want: "no such approval was sent",
		},
		{
			name: "an approval by someone else does not count",
			kind: KindAsk,
			play: func(l *Ledger) {
				l.Question("r")
				l.Answered("r", Answer{Approver: "bob", Approved: true})
				l.Finish("r", approved, nil)
			},
			want: "no such approval was sent",
		},
		{
			name: "a rejection needs a rejection sent",
			kind: KindAsk,
			play: func(l *Ledger) {
				l.Question("r")
				l.Answered("r", Answer{Approver: "bob", Approved: true})
				l.Finish("r", rejected, nil)
			},
			want: "no such rejection was sent",
		},
		{
			name: "a question decided by an approver must have been seen",
			kind: KindAsk,
			play: func(l *Ledger) {
				l.Answered("r", Answer{Approver: "alice", Approved: true})
				l.Finish("r", approved, nil)
			},
			want: "no approver device saw the question",
		},
		{
			name: "two applied answers are a violation",
			kind: KindAsk,
			play: func(l *Ledger) {
				l.Question("r")
				l.Answered("r", Answer{Approver: "alice", Approved: true, Reply: reply(true, approved)})
				l.Answered("r", Answer{Approver: "bob", Approved: false, Reply: reply(true, rejected)})
				l.Finish("r", approved, nil)
			},
			want: "2 answers applied",
		},
		{
			name: "the agent must get the applied answer",
			kind: KindAsk,
			play: func(l *Ledger) {
				l.Question("r")
				l.Answered("r", Answer{Approver: "alice", Approved: true})
				l.Answered("r", Answer{Approver: "bob", Approved: false, Reply: reply(true, rejected)})
				l.Finish("r", approved, nil)
			},
			want: "the broker applied reject by bob",
		},
		{
			name: "a refused answer must be told the decision the agent got",
			kind: KindAsk,
			play: func(l *Ledger) {
				l.Question("r")
				l.Answered("r", Answer{Approver: "alice", Approved: true, Reply: reply(true, approved)})
				l.Answered("r", Answer{Approver: "bob", Approved: false, Reply: reply(false, rejected)})
				l.Finish("r", approved, nil)
			},
			want: "standing decision is deny/rejected",
		},
		{
			name: "the same decision published twice is one decision delivered at least once",
			kind: KindAsk,
			play: func(l *Ledger) {
				l.Question("r")
				l.Answered("r", Answer{Approver: "alice", Approved: true, Reply: reply(true, approved)})
				l.Finish("r", approved, nil)
				l.Published(*approved)
				l.Published(*approved)
			},
		},
		{
			name: "two different decisions published are doubled",
			kind: KindAsk,
			play: func(l *Ledger) {
				l.Question("r")
				l.Answered("r", Answer{Approver: "alice", Approved: true, Reply: reply(true, approved)})
				l.Finish("r", approved, nil)
				l.Published(*approved)
				again := *approved
				again.DecidedAt = again.DecidedAt.Add(time.Millisecond)
				l.Published(again)
			},
			want: "2 different decisions published",
		},
		{
			name: "a published decision other than the agent's is a second decision",
			kind: KindAsk,
			play: func(l *Ledger) {
				l.Question("r")
				l.Answered("r", Answer{Approver: "alice", Approved: true, Reply: reply(true, approved)})
				l.Finish("r", unavailable, nil)
				l.Published(*approved)
			},
			tol:  Tolerance{FailClosed: func(*Entry, *messages.Decision) bool { return true }},
			want: "two decisions for one request",
		},
		{
			name: "a fail-closed deny without a fault is a violation",
			kind: KindAllow,
			play: func(l *Ledger) { l.Finish("r", unavailable, nil) },
			want: "unexpected fail-closed deny",
		},
		{
			name: "a fail-closed deny the fault excuses is fine",
			kind: KindAllow,
			play: func(l *Ledger) { l.Finish("r", unavailable, nil) },
			tol: Tolerance{FailClosed: func(_ *Entry, d *messages.Decision) bool {
				return d.DecidedBy.ID == "broker-2"
			}},
		},
		{
			name: "a timeout is a violation unless excused",
			kind: KindAsk,
			play: func(l *Ledger) {
				l.Finish("r", decision("r", messages.OutcomeDeny, messages.ReasonTimeout, "broker-1"), nil)
			},
			want: "the question timed out",
		},
		{
			name: "an excused timeout is fine",
			kind: KindAsk,
			play: func(l *Ledger) {
				l.Finish("r", decision("r", messages.OutcomeDeny, messages.ReasonTimeout, "broker-1"), nil)
			},
			tol: Tolerance{Timeouts: true},
		},
		{
			name: "a decision published for a request nobody asked is reported",
			kind: KindAllow,
			play: func(l *Ledger) {
				l.Finish("r", decision("r", messages.OutcomeAllow, messages.ReasonPolicyAllow, "broker-1"), nil)
				l.Published(*decision("ghost", messages.OutcomeAllow, messages.ReasonApproved, "alice"))
			},
			want: "ghost: 1 decisions published for a request no agent",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLedger()
			l.Begin("r", "s", "pod", tt.kind)
			tt.play(l)
			got := l.Check(tt.tol)
			switch {
			case tt.want == "" && len(got) != 0:
				t.Fatalf("violations %q, want none", got)
			case tt.want != "" && len(got) != 1:
				t.Fatalf("violations %q, want one containing %q", got, tt.want)
			case tt.want != "" && !strings.Contains(got[0], tt.want):
				t.Fatalf("violation %q, want it to contain %q", got[0], tt.want)
			}
		})
	}
}

func TestMeasureTakesNearestRankPercentiles(t *testing.T) {
	base := time.Unix(1000, 0)
	var entries []Entry
	for i := 1; i <= 100; i++ {
		sent := base.Add(time.Duration(i) * time.Millisecond)
		entries = append(entries, Entry{Kind: KindAllow, Sent: sent, Done: sent.Add(time.Duration(i) * time.Millisecond)})
	}
	entries = append(entries, Entry{Kind: KindAsk, Sent: base}) // no decision: left out
	s := Measure(entries, nil)
	if s.Count != 100 || s.P50 != 50*time.Millisecond || s.P99 != 99*time.Millisecond || s.Max != 100*time.Millisecond {
		t.Fatalf("stats %+v, want 100 requests, p50 50ms, p99 99ms, max 100ms", s)
	}
	// From the first send (1 ms) to the last decision (200 ms).
	if s.Elapsed != 199*time.Millisecond {
		t.Fatalf("elapsed %s, want 199ms", s.Elapsed)
	}
	if none := Measure(entries, func(e *Entry) bool { return e.Kind == KindAsk }); none.Count != 0 {
		t.Fatalf("stats of entries without decisions: %+v", none)
	}
}

func TestSplitKeepsHalfTheAgentsAwayFromHumans(t *testing.T) {
	mix := Split(2)
	asks := map[int]int{}
	for agent := range 4 {
		for n := range 30 {
			if mix(agent, n) == KindAsk {
				asks[agent]++
			}
		}
	}
	if asks[0] == 0 || asks[1] == 0 || asks[2] != 0 || asks[3] != 0 {
		t.Fatalf("questions per agent %v: want some for agents 0 and 1, none for 2 and 3", asks)
	}
}

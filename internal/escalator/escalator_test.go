package escalator_test

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/signoff-dev/signoff/internal/escalator"
	"github.com/signoff-dev/signoff/internal/pager/pagertest"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
)

// asker records what the escalator asks.
type asker struct {
	mu   sync.Mutex
	asks []messages.ApprovalNeeded
}

func (a *asker) Question(rec *session.Record) (messages.ApprovalNeeded, error) {
	return rec.Question, rec.QuestionErr
}

func (a *asker) Ask(team string, q messages.ApprovalNeeded) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	q.Team = team
	a.asks = append(a.asks, q)
	return nil
}

func (a *asker) got() []messages.ApprovalNeeded {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]messages.ApprovalNeeded(nil), a.asks...)
}

const lease = 200 * time.Millisecond

type rig struct {
	store *memstore.Store
	ask   *asker
	esc   *escalator.Escalator
	m     *escalator.Metrics
	pd    *pagertest.PagerDuty
}

func newRig(t *testing.T) *rig {
	t.Helper()
	r := &rig{store: memstore.New(memstore.Options{EffectLease: lease}), ask: &asker{}, pd: pagertest.NewPagerDuty(t, pdKey)}
	r.m = escalator.NewMetrics(prometheus.NewRegistry())
	var err error
	r.esc, err = escalator.New(escalator.Config{Store: r.store, Asker: r.ask, Pagers: testPagers(t, "pd", r.pd.URL),
		WebURL: "https://signoff.example.com", Metrics: r.m, Watch: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// open stores an open request of team ops with ladder steps at 50 ms each.
func (r *rig) open(t *testing.T, id string, steps ...messages.EscalationStep) *session.Record {
	t.Helper()
	q := messages.ApprovalNeeded{V: messages.Version, Type: messages.TypeApprovalNeeded, Team: "ops",
		Request:    messages.Request{RequestID: id, SessionID: "s1", AgentID: "a1", Tool: "bash", Arguments: json.RawMessage(`{"command":"deploy prod"}`)},
		Risk:       messages.Risk{Shell: true},
		Escalation: steps}
	var due []time.Duration
	for _, s := range steps {
		due = append(due, time.Duration(s.AfterMS)*time.Millisecond)
	}
	req := session.Request{ID: id, SessionID: "s1", AgentID: "a1", Tool: "bash", Teams: []string{"ops"}, ApprovalsRequired: 1,
		TTL: time.Minute, Question: q, Escalation: due}
	if _, _, err := r.store.Prepare(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	res, err := r.store.Open(t.Context(), "s1", id)
	if err != nil || !res.Applied {
		t.Fatalf("Open: %+v, %v", res, err)
	}
	return res.Record
}

func (r *rig) sweep(t *testing.T) int {
	t.Helper()
	n, err := r.esc.SweepOnce(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestAStepClaimedByAReplicaThatDiedRunsAfterItsLease(t *testing.T) {
	r := newRig(t)
	r.open(t, "r1", messages.EscalationStep{AfterMS: 50, Remind: true})
	time.Sleep(60 * time.Millisecond)
	// Another replica claims the step and dies.
	if got, err := r.store.ClaimSteps(t.Context(), 10); err != nil || len(got) != 1 {
		t.Fatalf("the dying replica's claim: %v, %v", got, err)
	}
	if n := r.sweep(t); n != 0 || len(r.ask.got()) != 0 {
		t.Fatalf("a leased step ran: %d steps, asks %v", n, r.ask.got())
	}
	time.Sleep(lease + 20*time.Millisecond)
	if n := r.sweep(t); n != 1 {
		t.Fatalf("after the lease the sweep ran %d steps, want the reminder", n)
	}
	asks := r.ask.got()
	if len(asks) != 1 || asks[0].Reminder != 1 || asks[0].EscalationStep != 1 || asks[0].Team != "ops" {
		t.Fatalf("asks after the lease: %+v", asks)
	}
	time.Sleep(lease + 20*time.Millisecond)
	if n := r.sweep(t); n != 0 {
		t.Fatalf("a finished step ran again (%d)", n)
	}
}

func TestStepsOfASettledRequestNeverRun(t *testing.T) {
	r := newRig(t)
	rec := r.open(t, "r1", messages.EscalationStep{AfterMS: 50, Remind: true}, messages.EscalationStep{AfterMS: 60, Page: "pd"})
	res, err := r.store.Decide(t.Context(), "s1", "r1", session.Vote{ApproverID: "alice", Approve: true,
		Decision: messages.Decision{V: 1, RequestID: rec.ID, SessionID: "s1", Outcome: messages.OutcomeAllow, ReasonCode: messages.ReasonApproved}})
	if err != nil || !res.Applied {
		t.Fatalf("approve: %+v, %v", res, err)
	}
	time.Sleep(70 * time.Millisecond)
	if n := r.sweep(t); n != 0 || len(r.ask.got()) != 0 || len(r.pd.Events()) != 0 {
		t.Fatalf("steps of an approved request ran: %d, asks %v, pages %v", n, r.ask.got(), r.pd.Events())
	}
}

func TestAPageThatFailsIsRetriedAndOneTheVendorRefusesIsDropped(t *testing.T) {
	r := newRig(t)
	r.open(t, "r1", messages.EscalationStep{AfterMS: 50, Page: "pd"})
	r.open(t, "r2", messages.EscalationStep{AfterMS: 50, Page: "nobody"})
	time.Sleep(60 * time.Millisecond)
	// Every attempt of the first try fails (3 attempts): retried after the lease.
	r.pd.Inject(pagertest.Fault{Status: http.StatusServiceUnavailable}, pagertest.Fault{Status: http.StatusServiceUnavailable}, pagertest.Fault{Status: http.StatusServiceUnavailable})
	r.sweep(t)
	if got := testutil.ToFloat64(r.m.Pages.WithLabelValues("pd", "trigger", "error")); got != 1 {
		t.Fatalf("failed triggers counted %v, want 1", got)
	}
	if got := testutil.ToFloat64(r.m.Steps.WithLabelValues(messages.StepPage, "dropped")); got != 1 {
		t.Fatalf("page steps dropped %v, want 1 (the unknown pager)", got)
	}
	time.Sleep(lease + 20*time.Millisecond)
	if n := r.sweep(t); n != 1 {
		t.Fatalf("retry ran %d steps, want the failed page", n)
	}
	if ev := r.pd.Events(); len(ev) != 1 || ev[0].EventAction != "trigger" || ev[0].ClientURL != "https://signoff.example.com/#q-r1" {
		t.Fatalf("pager events: %+v", ev)
	}
	// The page is watched: the approval resolves it.
	if _, err := r.store.Settle(t.Context(), "s1", "r1", messages.StateCancelled, messages.Decision{V: 1, RequestID: "r1", SessionID: "s1",
		Outcome: messages.OutcomeDeny, ReasonCode: messages.ReasonCancelled}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(60 * time.Millisecond)
	r.sweep(t)
	if in := r.pd.Incidents(); len(in) != 1 || !in[0].Resolved {
		t.Fatalf("incidents after the cancel: %+v, want the page resolved", in)
	}

	// A page the vendor refuses (400) is not retried.
	r.open(t, "r3", messages.EscalationStep{AfterMS: 50, Page: "pd"})
	time.Sleep(60 * time.Millisecond)
	r.pd.Inject(pagertest.Fault{Status: http.StatusBadRequest})
	r.sweep(t)
	time.Sleep(lease + 20*time.Millisecond)
	if n := r.sweep(t); n != 0 {
		t.Fatalf("a refused page ran again (%d steps)", n)
	}
	if got := testutil.ToFloat64(r.m.Pages.WithLabelValues("pd", "trigger", "rejected")); got != 1 {
		t.Fatalf("refused triggers counted %v, want 1", got)
	}
}

func TestAddTeamAsksTheTeamAndKeepsTheQuorum(t *testing.T) {
	r := newRig(t)
	r.open(t, "r1", messages.EscalationStep{AfterMS: 50, AddTeam: "secondary"})
	time.Sleep(60 * time.Millisecond)
	if n := r.sweep(t); n != 1 {
		t.Fatalf("ran %d steps", n)
	}
	asks := r.ask.got()
	if len(asks) != 1 || asks[0].Team != "secondary" || asks[0].EscalationStep != 1 {
		t.Fatalf("asks: %+v", asks)
	}
	rec, err := r.store.Get(t.Context(), "s1", "r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Teams) != 2 || rec.Teams[1] != "secondary" || rec.ApprovalsRequired != 1 {
		t.Fatalf("record after add_team: teams %v, approvals required %d", rec.Teams, rec.ApprovalsRequired)
	}
	listed, err := r.store.ListPendingTeam(t.Context(), "secondary")
	if err != nil || len(listed) != 1 {
		t.Fatalf("pending for the added team: %v, %v", listed, err)
	}
}

func denyVote(id string) session.Vote {
	return session.Vote{ApproverID: "alice", Approve: false,
		Decision: messages.Decision{V: 1, RequestID: id, SessionID: "s1", Outcome: messages.OutcomeDeny, ReasonCode: messages.ReasonRejected}}
}

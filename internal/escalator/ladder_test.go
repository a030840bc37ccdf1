package escalator_test

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/escalator"
	"github.com/signoff-dev/signoff/internal/pager"
	"github.com/signoff-dev/signoff/internal/pager/pagertest"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
)

const pdKey = "0123456789abcdef0123456789abcdef"

// ladderPolicy routes deploys to ops, whose ladder reminds at 1 s, adds
// the secondary team at 2 s and pages at 3 s.
const ladderPolicy = `
mode: auto-edit
ttl: 1m
pagers:
  oncall-pd:
    kind: pagerduty
    routing_key_env: SIGNOFF_TEST_PD_KEY
teams:
  ops:
    members: [alice]
    escalation:
      - {after: 1s, remind: true}
      - {after: 2s, add_team: secondary}
      - {after: 3s, page: oncall-pd}
  secondary: {members: [sam]}
rules:
  - {rule: "bash(deploy *)", action: ask, route: ops}
`

// testPagers builds the policy's pager against a fake (plain http, which
// only Go may allow).
func testPagers(t *testing.T, name, url string) *escalator.Pagers {
	t.Helper()
	t.Setenv("SIGNOFF_TEST_PD_KEY", pdKey)
	p, err := escalator.NewPagers(map[string]policy.PagerSpec{name: {
		Kind: pager.KindPagerDuty, RoutingKeyEnv: "SIGNOFF_TEST_PD_KEY", BaseURL: url, AllowHTTP: true,
		MaxAttempts: 3, MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, Timeout: 2 * time.Second,
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// device records what one approver device receives for a request.
type device struct {
	mu   sync.Mutex
	asks []messages.ApprovalNeeded
}

func watch(t *testing.T, a *brokertest.Approver, id string) *device {
	d := &device{}
	go func() {
		for q := range a.Asks {
			if q.Request.RequestID == id {
				d.mu.Lock()
				d.asks = append(d.asks, q)
				d.mu.Unlock()
			}
		}
	}()
	return d
}

func (d *device) got() []messages.ApprovalNeeded {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.asks)
}

func (d *device) waitFor(t *testing.T, n int, what string) []messages.ApprovalNeeded {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if got := d.got(); len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: got %d asks, want %d", what, len(d.got()), n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestLadderRunsEachStepOnceAcrossReplicas runs a ladder on three brokers
// sharing a real Redis while two of them are stopped mid-ladder: each step
// takes effect once (the reminder on both devices of the team, the ask to
// the added team, one page), the added team's member may answer, and the
// answer resolves the page.
func TestLadderRunsEachStepOnceAcrossReplicas(t *testing.T) {
	fake := pagertest.NewPagerDuty(t, pdKey)
	p := brokertest.Start(t, brokertest.Options{
		Policy: ladderPolicy, Replicas: 3, Redis: true,
		EffectLease: time.Second, OutboxInterval: 100 * time.Millisecond,
		Pagers: testPagers(t, "oncall-pd", fake.URL), WebURL: "https://signoff.example.com/",
		EscalationInterval: 100 * time.Millisecond, EscalationWatch: 200 * time.Millisecond,
	})
	const id = "req-ladder-1"
	phone, laptop, secondary := p.Approver("ops"), p.Approver("ops"), p.Approver("secondary")
	onPhone, onLaptop, onSecondary := watch(t, phone, id), watch(t, laptop, id), watch(t, secondary, id)

	agent := p.Agent("sess-ladder", "agent-1")
	pending := brokertest.Ask(t.Context(), agent, id, "bash", brokertest.Bash("deploy prod"))
	first := onPhone.waitFor(t, 1, "first ask")[0]
	if len(first.Escalation) != 3 || first.Reminder != 0 || first.EscalationStep != 0 {
		t.Fatalf("first ask: escalation %+v, reminder %d, step %d", first.Escalation, first.Reminder, first.EscalationStep)
	}
	// A replica crashes right after the question opened.
	p.Replicas[0].Kill()

	asks := onLaptop.waitFor(t, 2, "reminder on the second device")
	if r := asks[1]; r.Reminder != 1 || r.EscalationStep != 1 || r.Team != "ops" {
		t.Fatalf("reminder: reminder %d, step %d, team %s", r.Reminder, r.EscalationStep, r.Team)
	}
	// Another replica is stopped between the reminder and the next step.
	p.Replicas[1].Stop(t)

	added := onSecondary.waitFor(t, 1, "ask to the added team")[0]
	if added.Team != "secondary" || added.EscalationStep != 2 || added.Reminder != 0 || added.ApprovalsRequired != 1 {
		t.Fatalf("ask to the added team: team %s, step %d, reminder %d, approvals required %d", added.Team, added.EscalationStep, added.Reminder, added.ApprovalsRequired)
	}
	var trigger pagertest.PDEvent
	select {
	case trigger = <-fake.Received:
	case <-time.After(10 * time.Second):
		t.Fatal("no page")
	}
	if trigger.EventAction != "trigger" || trigger.DedupKey != pager.DedupKey("", "sess-ladder", id) {
		t.Fatalf("first pager event: %+v", trigger)
	}
	if want := "https://signoff.example.com/#q-" + id; trigger.ClientURL != want || len(trigger.Links) != 1 || trigger.Links[0].Href != want {
		t.Errorf("page links to %q / %+v, want %s", trigger.ClientURL, trigger.Links, want)
	}
	if !strings.Contains(trigger.Payload.Summary, "deploy prod") {
		t.Errorf("page summary %q does not say what waits", trigger.Payload.Summary)
	}

	// The added team's member answers once the page is recorded; the quorum
	// stays one approval.
	p.WaitStepsDone("sess-ladder", id, 3)
	rep := secondary.Approve(added, "sam", messages.ScopeOnce)
	if !rep.Applied || rep.State != messages.StateApproved {
		t.Fatalf("sam's approval: %+v", rep)
	}
	brokertest.WantDecision(t, pending.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	var resolve pagertest.PDEvent
	select {
	case resolve = <-fake.Received:
	case <-time.After(10 * time.Second):
		t.Fatal("the page was not resolved")
	}
	if resolve.EventAction != "resolve" || resolve.DedupKey != trigger.DedupKey {
		t.Fatalf("second pager event: %+v", resolve)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r1, ok1 := phone.ResolvedFor(id)
		r2, ok2 := secondary.ResolvedFor(id)
		if ok1 && ok2 && r1.State == messages.StateApproved && r2.State == messages.StateApproved {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("resolved reached ops: %v, secondary: %v", ok1, ok2)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// Past two leases and many sweeps, nothing ran twice.
	time.Sleep(2500 * time.Millisecond)
	for name, d := range map[string]*device{"phone": onPhone, "laptop": onLaptop} {
		if got := d.got(); len(got) != 2 {
			t.Errorf("%s saw %d asks, want the question and one reminder", name, len(got))
		}
	}
	if got := onSecondary.got(); len(got) != 1 {
		t.Errorf("the added team saw %d asks, want 1", len(got))
	}
	if ev := fake.Events(); len(ev) != 2 {
		t.Errorf("the pager received %d events, want one trigger and one resolve: %+v", len(ev), ev)
	}
	if in := fake.Incidents(); len(in) != 1 || !in[0].Resolved || in[0].Triggers != 1 {
		t.Errorf("incidents: %+v, want one, triggered once, resolved", in)
	}
	for _, kind := range []string{messages.StepRemind, messages.StepAddTeam, messages.StepPage} {
		var done float64
		for _, r := range p.Replicas {
			done += testutil.ToFloat64(r.Metrics.Escalation.Steps.WithLabelValues(kind, "done"))
		}
		if done != 1 {
			t.Errorf("%s steps done across the replicas: %v, want 1", kind, done)
		}
	}
	var sent, resolved float64
	for _, r := range p.Replicas {
		sent += testutil.ToFloat64(r.Metrics.Escalation.Pages.WithLabelValues("oncall-pd", "trigger", "ok"))
		resolved += testutil.ToFloat64(r.Metrics.Escalation.Pages.WithLabelValues("oncall-pd", "resolve", "ok"))
	}
	if sent != 1 || resolved != 1 {
		t.Errorf("pages sent %v, resolved %v; want 1 and 1", sent, resolved)
	}
	// The decision's audit record lists the three steps, each once.
	audit := p.LastAudit("sess-ladder")
	if len(audit.Escalation) != 3 || audit.Escalation[0].Step != 1 || !audit.Escalation[0].Remind ||
		audit.Escalation[1].AddTeam != "secondary" || audit.Escalation[2].Page != "oncall-pd" {
		t.Errorf("audit record escalation: %+v, want the reminder, the added team and the page", audit.Escalation)
	}
	var answered uint64
	for _, r := range p.Replicas {
		answered += firstAnswers(t, r.Metrics.Registry, "secondary")
	}
	if answered != 1 {
		t.Errorf("first answers observed for team secondary: %d, want 1 (sam's)", answered)
	}
}

// firstAnswers is the sample count of signoff_first_answer_seconds for team.
func firstAnswers(t *testing.T, reg *prometheus.Registry, team string) uint64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "signoff_first_answer_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "team" && l.GetValue() == team {
					return m.GetHistogram().GetSampleCount()
				}
			}
		}
	}
	return 0
}

package broker_test

import (
	"context"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

const escalationPolicy = `
mode: auto-edit
ttl: 1m
teams:
  ops:
    members: [alice]
    escalation:
      - {after: 300ms, remind: true}
      - {after: 2s, add_team: secondary}
      - {after: 50s, remind: true}
  secondary: {members: [sam]}
rules:
  - {rule: "bash(deploy *)", action: ask, route: ops}
  - {rule: "bash(hotfix *)", action: ask, route: ops, escalation: []}
`

func TestAQuestionCarriesItsLadderCutToTheAgentsTTL(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: escalationPolicy})
	ops := p.Approver("ops")
	c := p.Agent("s-ladder", "pod-1")
	ctx := context.Background()
	for _, tc := range []struct {
		id, cmd string
		ttl     time.Duration
		want    int
	}{
		{"full", "deploy a", 0, 3},
		{"short", "deploy b", 10 * time.Second, 2}, // the 50 s step is past the request's TTL
		{"none", "hotfix c", 0, 0},                 // the rule's empty ladder replaces the team's
	} {
		go func() {
			_, _ = c.Request(ctx, client.Call{RequestID: tc.id, Tool: "bash", Arguments: brokertest.Bash(tc.cmd), TTL: tc.ttl})
		}()
		q := ops.NextAsk(tc.id)
		if len(q.Escalation) != tc.want {
			t.Errorf("%s: the question carries %d steps %+v, want %d", tc.id, len(q.Escalation), q.Escalation, tc.want)
		}
		if _, err := c.Cancel(ctx, tc.id); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTheAuditRecordListsTheStepsThatRanBeforeTheDecision(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: escalationPolicy, EscalationInterval: 50 * time.Millisecond})
	ops := p.Approver("ops")
	c := p.Agent("s-audit-ladder", "pod-1")
	pending := brokertest.Ask(context.Background(), c, "r1", "bash", brokertest.Bash("deploy prod"))
	first := ops.NextAsk("r1")
	reminder := ops.NextAsk("r1")
	if reminder.Reminder != 1 || reminder.EscalationStep != 1 {
		t.Fatalf("second ask: reminder %d, step %d; want the first reminder", reminder.Reminder, reminder.EscalationStep)
	}
	// The reminder reaches the approver just before the escalator records
	// the step as done; a decision in between would not list it (docs/STATE.md
	// "Escalation"). Approve once the store holds it, as a person would.
	p.WaitStepsDone("s-audit-ladder", "r1", 1)
	if rep := ops.Approve(first, "alice", messages.ScopeOnce); !rep.Applied {
		t.Fatalf("approval: %+v", rep)
	}
	brokertest.WantDecision(t, pending.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)

	rec := p.LastAudit("s-audit-ladder")
	if len(rec.Escalation) != 1 || rec.Escalation[0] != messages.RunOf(1, messages.EscalationStep{AfterMS: 300, Remind: true}, rec.Escalation[0].At) {
		t.Fatalf("audit record escalation %+v, want step 1 (remind after 300 ms) alone: the step that ran before the approval", rec.Escalation)
	}
	if at := rec.Escalation[0].At; at.IsZero() || at.After(rec.Decision.DecidedAt.Add(time.Second)) {
		t.Errorf("the reminder ran at %v, decision at %v", at, rec.Decision.DecidedAt)
	}
}

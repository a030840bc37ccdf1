package broker_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

const answerPolicy = `
mode: auto-edit
tools:
  answer: [ask_human]
rules:
  - { rule: AskUserQuestion, action: ask, grantable: true } # even so, no standing answer
  - { rule: ask_human, action: ask }
teams:
  default: { members: [alice, bob] }
`

var dbQuestion = map[string]any{"questions": []any{map[string]any{"question": "Which database?", "header": "DB",
	"options": []any{map[string]any{"label": "Postgres"}, map[string]any{"label": "Mongo"}}, "multiSelect": false}}}

func TestAskUserAnswersReachTheAgent(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: answerPolicy, Redis: true})
	a := p.Approver("default")
	c := p.Agent("s-answer", "pod-1")
	answer := func(q messages.ApprovalNeeded, raw string) messages.RespondReply {
		return a.Respond(messages.Response{RequestID: q.Request.RequestID, SessionID: q.Request.SessionID,
			Approver: messages.Approver{ID: "alice", Channel: "test"}, Approved: true, Answer: json.RawMessage(raw), Digest: q.Digest})
	}

	pend := brokertest.Ask(t.Context(), c, "ans-1", "AskUserQuestion", dbQuestion)
	q := a.NextAsk("ans-1")
	if q.AskUser == nil || len(q.AskUser.Questions) != 1 || len(q.AskUser.Questions[0].Options) != 2 {
		t.Fatalf("the question does not carry the tool's questions: %+v", q.AskUser)
	}
	// Each question needs its own answer: no standing answer is offered,
	// and one sent anyway is refused.
	for _, o := range q.Offers {
		if o.Offered || o.WhyNot == "" {
			t.Errorf("an ask-user question offers %s: %+v", o.Scope, o)
		}
	}
	if len(q.Offers) == 0 || q.Always != nil {
		t.Errorf("offers %+v, always %+v: want every standing answer listed as not offered", q.Offers, q.Always)
	}
	if rep := a.Respond(messages.Response{RequestID: q.Request.RequestID, SessionID: q.Request.SessionID,
		Approver: messages.Approver{ID: "alice", Channel: "test"}, Approved: true, Scope: messages.ScopeSession,
		Answer: json.RawMessage(`{"Which database?":"Postgres"}`), Digest: q.Digest}); rep.Applied {
		t.Fatalf("a session grant for an ask-user question was applied: %+v", rep)
	}
	// An answer to a question the tool did not ask is refused, and
	// changes nothing.
	if rep := answer(q, `{"Which OS?":"Linux"}`); rep.Applied || !strings.Contains(rep.Reason, "not one of the questions") {
		t.Fatalf("a wrong answer: %+v", rep)
	}
	if rep := answer(q, `{"Which database?":"Postgres"}`); !rep.Applied {
		t.Fatalf("the answer was not applied: %+v", rep)
	}
	d := pend.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if string(d.Answer) != `{"Which database?":"Postgres"}` {
		t.Errorf("decision answer %s", d.Answer)
	}

	// A tool declared under tools.answer takes free text.
	pend = brokertest.Ask(t.Context(), c, "ans-2", "ask_human", map[string]any{"prompt": "which region?"})
	q = a.NextAsk("ans-2")
	if q.AskUser == nil || len(q.AskUser.Questions) != 0 {
		t.Fatalf("a tools.answer tool: ask_user %+v, want free text", q.AskUser)
	}
	if rep := answer(q, `{"a":"b"}`); rep.Applied {
		t.Fatalf("an object answer to a free-text question was applied: %+v", rep)
	}
	if rep := answer(q, `"eu-west-1"`); !rep.Applied {
		t.Fatalf("not applied: %+v", rep)
	}
	if d := pend.Wait(t); string(d.Answer) != `"eu-west-1"` {
		t.Errorf("decision answer %s", d.Answer)
	}
}

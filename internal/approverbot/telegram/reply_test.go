package telegram_test

import (
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/approverbot/channeltest"
	"github.com/signoff-dev/signoff/internal/approverbot/telegram/telegramtest"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// botReply waits for the bot's reply to message id.
func (e *env) botReply(t *testing.T, id int64) telegramtest.Message {
	t.Helper()
	return channeltest.NextFor(t, e.tg.Sent, "the bot's reply", func(m telegramtest.Message) bool { return m.ReplyTo == id })
}

func TestTelegramFeedbackIsTheRepliersOwnAndGoesWithTheirDeny(t *testing.T) {
	e := start(t)
	pend, _ := e.Ask(t, "r1", "make clean")
	m := channeltest.Next(t, e.tg.Sent, "the question")
	if !strings.Contains(m.Text, "request r1") {
		t.Fatalf("first message %q", m.Text)
	}
	// Someone who is not an approver is told so; nothing is kept.
	if r := e.botReply(t, e.tg.Reply(m, "ship it", nobody)); !strings.Contains(r.Text, "not a configured approver") {
		t.Errorf("a stranger's reply got %q", r.Text)
	}
	// Bob's feedback is Bob's: Alice's Deny does not carry it.
	if r := e.botReply(t, e.tg.Reply(m, "use make distclean", bob)); !strings.Contains(r.Text, "Feedback noted") {
		t.Fatalf("bob's reply got %q", r.Text)
	}
	if r := e.botReply(t, e.tg.Reply(m, strings.Repeat("x", messages.MaxFeedbackBytes+1), alice)); !strings.Contains(r.Text, "too long") {
		t.Errorf("a long reply got %q", r.Text)
	}
	e.answerTo(t, e.tap(t, m, "❌ Deny", alice))
	d := pend.Wait(t)
	if d.DecidedBy.ID != "alice" || d.Feedback != "" {
		t.Errorf("alice's deny: by %s with feedback %q, want none", d.DecidedBy.ID, d.Feedback)
	}
	// A reply to a settled question is refused.
	u := channeltest.NextFor(t, e.tg.Edited, "the settled message", func(u telegramtest.Message) bool { return len(u.Buttons()) == 0 })
	if r := e.botReply(t, e.tg.Reply(u, "too late", bob)); !strings.Contains(r.Text, "already settled") {
		t.Errorf("a reply to a settled question got %q", r.Text)
	}
}

func TestTelegramOptionButtonsAnswerAndCannotBeForged(t *testing.T) {
	e := startOn(t, brokertest.Options{Policy: channeltest.Policy})
	pend := brokertest.Ask(t.Context(), e.Agent, "r-ask", "AskUserQuestion", map[string]any{"questions": []any{
		map[string]any{"question": "Which database?", "options": []any{map[string]any{"label": "Postgres"}, map[string]any{"label": "Mongo"}}}}})
	e.Device.NextAsk("r-ask")
	e.Ask(t, "r0", "make lint") // starts the bot
	m := channeltest.NextFor(t, e.tg.Sent, "the ask-user question", func(m telegramtest.Message) bool { return strings.Contains(m.Text, "request r-ask") })
	if got := strings.Join(labels(m)[:2], "|"); got != "1. Postgres|2. Mongo" {
		t.Fatalf("option buttons %v", labels(m))
	}
	b, _ := m.Button("2. Mongo")
	forged := b.CallbackData[:strings.LastIndex(b.CallbackData, ":")+1] + "7"
	if a := e.answerTo(t, e.tg.InjectTap(m.ChatID, m.MessageID, forged, alice)); !a.ShowAlert || !strings.Contains(a.Text, "option 8 does not exist") {
		t.Errorf("a forged option tap got %+v", a)
	}
	if d, _ := pend.Peek(); d != nil {
		t.Fatalf("a forged tap decided the call: %+v", d)
	}
	e.answerTo(t, e.tap(t, m, "2. Mongo", alice))
	if d := pend.Wait(t); string(d.Answer) != `{"Which database?":"Mongo"}` || d.DecidedBy.ID != "alice" {
		t.Errorf("decision answer %s by %s", d.Answer, d.DecidedBy.ID)
	}
}

func TestTelegramReplyAnswersSeveralQuestions(t *testing.T) {
	e := startOn(t, brokertest.Options{Policy: channeltest.Policy})
	pend := brokertest.Ask(t.Context(), e.Agent, "r-ask", "AskUserQuestion", map[string]any{"questions": []any{
		map[string]any{"question": "Which database?", "options": []any{map[string]any{"label": "Postgres"}, map[string]any{"label": "Mongo"}}},
		map[string]any{"question": "Which features?", "multiSelect": true,
			"options": []any{map[string]any{"label": "Auth"}, map[string]any{"label": "Logs"}}},
	}})
	e.Device.NextAsk("r-ask")
	e.Ask(t, "r0", "make lint") // starts the bot
	m := channeltest.NextFor(t, e.tg.Sent, "the ask-user question", func(m telegramtest.Message) bool { return strings.Contains(m.Text, "request r-ask") })
	for _, b := range m.Buttons() {
		if strings.HasPrefix(b.CallbackData, "o:") {
			t.Fatalf("option buttons on a two-question ask: %v", labels(m))
		}
	}
	if !strings.Contains(m.Text, "separated by ;") || !strings.Contains(m.Text, "Question 2 (pick any): Which features?") {
		t.Errorf("the message does not say how to answer:\n%s", m.Text)
	}
	if r := e.botReply(t, e.tg.Reply(m, "3; 1", alice)); !strings.Contains(r.Text, "option 3 does not exist") {
		t.Errorf("a wrong option got %q", r.Text)
	}
	if d, _ := pend.Peek(); d != nil {
		t.Fatalf("a wrong answer decided the call: %+v", d)
	}
	if r := e.botReply(t, e.tg.Reply(m, "2; 1,2", alice)); !strings.Contains(r.Text, "answered by Alice via telegram") {
		t.Errorf("the answer got %q", r.Text)
	}
	if d := pend.Wait(t); string(d.Answer) != `{"Which database?":"Mongo","Which features?":"Auth, Logs"}` {
		t.Errorf("the agent got %s", d.Answer)
	}
}

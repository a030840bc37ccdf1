package telegram_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/approverbot/channeltest"
	"github.com/signoff-dev/signoff/internal/approverbot/telegram"
	"github.com/signoff-dev/signoff/internal/approverbot/telegram/telegramtest"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// The button labels.
const (
	approve  = "✅ Approve"
	session  = "🕒 Session"
	always   = "♾ Always"
	deny     = "❌ Deny"
	denyStop = "⛔ Deny & stop"
)

func TestTelegramQuestionIsSentAndATapOnApproveReachesTheAgent(t *testing.T) {
	e := start(t)
	pend, q := e.Ask(t, "r1", "make deploy")

	m := channeltest.Next(t, e.tg.Sent, "question in Telegram")
	if m.ChatID != defaultChat || m.ParseMode != "HTML" {
		t.Errorf("sent to chat %d in %q, want the default team's chat in HTML", m.ChatID, m.ParseMode)
	}
	for _, want := range []string{"Approval needed: bash", "make deploy", "team default", "session s1", "agent a1", "request r1", "Expires"} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("question does not show %q:\n%s", want, m.Text)
		}
	}
	want := []string{approve, session, deny, denyStop}
	if q.Always != nil {
		want = []string{approve, session, always, deny, denyStop}
	}
	if got := labels(m); !slices.Equal(got, want) {
		t.Errorf("buttons %v, want %v", got, want)
	}
	handles := map[string]bool{}
	for _, b := range m.Buttons() {
		if len(b.CallbackData) > 64 {
			t.Errorf("callback data %q is longer than 64 bytes", b.CallbackData)
		}
		_, h, _ := strings.Cut(b.CallbackData, ":")
		handles[h] = true
	}
	if len(handles) != 1 {
		t.Errorf("buttons carry handles %v, want one per question", handles)
	}

	id := e.tap(t, m, approve, alice)
	d := pend.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if d.Scope != messages.ScopeOnce || d.DecidedBy.ID != "alice" || d.DecidedBy.Channel != "telegram" {
		t.Errorf("decision %s by %+v, want once by alice via telegram", d.Scope, d.DecidedBy)
	}
	a := e.answerTo(t, id)
	if a.Text != "Done: ✓ approved (once) by Alice via telegram." || a.ShowAlert {
		t.Errorf("tap answered %q (alert %v)", a.Text, a.ShowAlert)
	}
	u := channeltest.NextFor(t, e.tg.Edited, "settled message", func(u telegramtest.Message) bool { return len(u.Keyboard) == 0 })
	if u.MessageID != m.MessageID || u.ChatID != m.ChatID {
		t.Errorf("edited %d/%d, want the question's message %d/%d", u.ChatID, u.MessageID, m.ChatID, m.MessageID)
	}
	if !strings.Contains(u.Text, "make deploy") || !strings.Contains(u.Text, "✓ approved (once) by Alice via telegram") {
		t.Errorf("settled message:\n%s", u.Text)
	}
	eventually(t, "the bot confirms the update it handled", func() bool { return e.tg.Pending() == 0 })
}

func TestTelegramReminderRepliesToTheQuestion(t *testing.T) {
	e := start(t)
	_, q := e.Ask(t, "r1", "make deploy")
	m := channeltest.Next(t, e.tg.Sent, "question in Telegram")
	// An escalation's reminder, as the broker publishes it.
	q.Reminder, q.EscalationStep = 1, 1
	data, _ := json.Marshal(q)
	if err := e.Device.NC.Publish(e.plane.Subjects.Ask(q.Team), data); err != nil {
		t.Fatal(err)
	}
	r := channeltest.Next(t, e.tg.Sent, "reminder in Telegram")
	if r.ReplyTo != m.MessageID || r.ChatID != m.ChatID || !strings.Contains(r.Text, "Reminder: this question for team default is still waiting") {
		t.Errorf("reminder replies to %d in chat %d: %q; want a reply to the question %d", r.ReplyTo, r.ChatID, r.Text, m.MessageID)
	}
}

func TestTelegramAlwaysGrantHoldsForTheNextCall(t *testing.T) {
	e := start(t)
	pend, _ := e.Ask(t, "r1", "git push origin main")
	m := channeltest.Next(t, e.tg.Sent, "question")
	e.tap(t, m, always, alice) // says what Always grants
	e.tap(t, m, always, alice) // confirms it
	brokertest.WantDecision(t, pend.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	d, err := e.Agent.Request(t.Context(), client.Call{RequestID: "r2", Tool: "bash", Arguments: brokertest.Bash("git push origin main")})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonScopeGrant)
}

func TestTelegramUnknownUserIsToldAndNothingIsSent(t *testing.T) {
	e := start(t)
	pend, _ := e.Ask(t, "r1", "make deploy")
	m := channeltest.Next(t, e.tg.Sent, "question in Telegram")

	a := e.answerTo(t, e.tap(t, m, approve, nobody))
	if !a.ShowAlert || !strings.Contains(a.Text, "not a configured approver") || !strings.Contains(a.Text, "9999") {
		t.Errorf("unknown user is told %q (alert %v)", a.Text, a.ShowAlert)
	}
	e.tap(t, m, deny, alice)
	d := pend.Wait(t)
	if d.Outcome != messages.OutcomeDeny || d.DecidedBy.ID != "alice" {
		t.Errorf("decision %s by %s, want alice's deny (the unknown user's approval must not count)", d.Outcome, d.DecidedBy.ID)
	}
}

func TestTelegramTapOnAQuestionSettledElsewhereSaysWhoDecided(t *testing.T) {
	e := start(t)
	pend, q := e.Ask(t, "r1", "make deploy")
	m := channeltest.Next(t, e.tg.Sent, "question in Telegram")

	if rep := e.Device.Approve(q, "carol", messages.ScopeSession); !rep.Applied {
		t.Fatalf("carol's approval not applied: %+v", rep)
	}
	brokertest.WantDecision(t, pend.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	u := channeltest.NextFor(t, e.tg.Edited, "message settled by the resolution", func(u telegramtest.Message) bool { return len(u.Keyboard) == 0 })
	if !strings.Contains(u.Text, "✓ approved (session) by carol via test") {
		t.Errorf("settled message:\n%s", u.Text)
	}

	// Alice's client still shows the old keyboard.
	a := e.answerTo(t, e.tap(t, m, denyStop, alice))
	if a.Text != "Not applied: already decided by carol via test (approved (session))." || !a.ShowAlert {
		t.Errorf("late tap answered %q (alert %v)", a.Text, a.ShowAlert)
	}
	cur, _ := e.tg.Message(m.ChatID, m.MessageID)
	if len(cur.Keyboard) != 0 || !strings.Contains(cur.Text, "by carol via test") {
		t.Errorf("message after the late tap has buttons %v:\n%s", labels(cur), cur.Text)
	}
	if r, ok := e.Device.WaitResolved("r1"); !ok || r.Decision.DecidedBy.ID != "carol" {
		t.Errorf("resolution %+v, want carol's approval to stand", r)
	}
}

func TestTelegramGarbledCallbackDataGetsAClearAnswer(t *testing.T) {
	e := start(t)
	pend, _ := e.Ask(t, "r1", "make deploy")
	m := channeltest.Next(t, e.tg.Sent, "question in Telegram")
	b, _ := m.Button(approve)
	_, handle, _ := strings.Cut(b.CallbackData, ":")

	cases := []struct{ name, data, want string }{
		{"data of another bot", "vote_42", "not understood"},
		{"an unknown action", "z:" + handle, "not understood"},
		{"no handle", "a:", "not understood"},
		{"empty data", "", "not understood"},
		{"a handle of an earlier run", "a:0000001", "no longer knows"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := e.answerTo(t, e.tg.InjectTap(m.ChatID, m.MessageID, c.data, alice))
			if !a.ShowAlert || !strings.Contains(a.Text, c.want) || !strings.Contains(a.Text, "nothing was sent") {
				t.Errorf("answered %q (alert %v), want an alert saying %q", a.Text, a.ShowAlert, c.want)
			}
		})
	}
	t.Run("a button shown in another chat", func(t *testing.T) {
		a := e.answerTo(t, e.tg.InjectTap(oncallChat, m.MessageID, b.CallbackData, carol))
		if !strings.Contains(a.Text, "does not belong to this chat") {
			t.Errorf("answered %q", a.Text)
		}
	})
	// An update of another kind is confirmed and skipped.
	e.tg.Inject(map[string]any{"message": map[string]any{"message_id": 1, "text": "hello bot"}})

	e.tap(t, m, approve, alice)
	d := pend.Wait(t)
	if d.DecidedBy.ID != "alice" || d.Outcome != messages.OutcomeAllow {
		t.Errorf("decision %s by %s, want alice's approval (a garbled tap decided the question)", d.Outcome, d.DecidedBy.ID)
	}
	eventually(t, "every update is confirmed", func() bool { return e.tg.Pending() == 0 })
}

func TestTelegramQuorumCountsEachApprovalInTheSameMessage(t *testing.T) {
	e := start(t)
	pend, _ := e.Ask(t, "k1", "kubectl rollout restart deploy/api")
	m := channeltest.Next(t, e.tg.Sent, "question in Telegram")
	if m.ChatID != oncallChat || !strings.Contains(m.Text, "Approvals: 0 of 2") {
		t.Fatalf("question in chat %d:\n%s", m.ChatID, m.Text)
	}
	if a := e.answerTo(t, e.tap(t, m, approve, bob)); a.Text != `Not applied: approver "bob" is not a member of team oncall.` {
		t.Errorf("bob is told %q", a.Text)
	}
	if a := e.answerTo(t, e.tap(t, m, approve, carol)); !strings.Contains(a.Text, "approval 1 of 2 counted") || a.ShowAlert {
		t.Errorf("carol is told %q (alert %v)", a.Text, a.ShowAlert)
	}
	u := channeltest.Next(t, e.tg.Edited, "message with the count")
	if u.MessageID != m.MessageID || !strings.Contains(u.Text, "Approvals: 1 of 2 so far: carol") || len(u.Keyboard) == 0 {
		t.Errorf("message after one approval (buttons %v):\n%s", labels(u), u.Text)
	}
	e.tap(t, u, approve, dave)
	d := pend.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if d.DecidedBy.ID != "dave" {
		t.Errorf("settled by %s, want dave", d.DecidedBy.ID)
	}
	channeltest.NextFor(t, e.tg.Edited, "settled message", func(u telegramtest.Message) bool { return len(u.Keyboard) == 0 && u.MessageID == m.MessageID })
}

func TestTelegramPollingSurvivesErrorsAndRateLimits(t *testing.T) {
	e := start(t, func(s *telegramtest.Server) {
		s.Fail("getUpdates", 502)
		s.Fail("getUpdates", 500)
		s.RateLimit("getUpdates", 1)
		s.RateLimit("sendMessage", 1)
	})
	pend, _ := e.Ask(t, "r1", "make deploy")
	m := channeltest.Next(t, e.tg.Sent, "question in Telegram (after a rate limit)")
	e.tap(t, m, approve, alice)
	brokertest.WantDecision(t, pend.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	if n := e.tg.Calls("getUpdates"); n < 4 {
		t.Errorf("getUpdates called %d times, want at least 4 (three failures, then polls)", n)
	}
	if n := e.tg.Calls("sendMessage"); n != 2 {
		t.Errorf("sendMessage called %d times, want 2 (one rate-limited, one retried)", n)
	}
	if !strings.Contains(e.logs.String(), "getUpdates failed") {
		t.Error("poll failures are not logged")
	}
}

func TestTelegramCheckHealthCallsGetMe(t *testing.T) {
	fake := telegramtest.New(telegramtest.Options{Token: testToken, Chats: []int64{defaultChat, oncallChat}})
	defer fake.Close()
	ch, err := telegram.New(testConfig(t, fake.URL()), telegram.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.CheckHealth(context.Background()); err != nil || fake.Calls("getMe") != 1 {
		t.Errorf("CheckHealth = %v after %d getMe calls, want nil after 1", err, fake.Calls("getMe"))
	}
	cfg := testConfig(t, fake.URL())
	cfg.Channels[telegram.Name].(*telegram.Config).Token = "1:revoked-token"
	bad, err := telegram.New(cfg, telegram.Options{})
	if err != nil {
		t.Fatal(err)
	}
	err = bad.CheckHealth(context.Background())
	var ae *telegram.APIError
	if !errors.As(err, &ae) || ae.Code != 401 || strings.Contains(err.Error(), "revoked-token") {
		t.Errorf("CheckHealth with a bad token: %v, want a 401 APIError without the token", err)
	}

	down := httptest.NewServer(nil)
	downURL := down.URL
	down.Close()
	gone, err := telegram.New(testConfig(t, downURL), telegram.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := gone.CheckHealth(context.Background()); err == nil || strings.Contains(err.Error(), testToken) || strings.Contains(err.Error(), "secret-bot-token") {
		t.Errorf("CheckHealth against a server that is down: %v, want an error without the token", err)
	}
}

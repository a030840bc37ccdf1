package telegram_test

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot/channeltest"
	"github.com/signoff-dev/signoff/internal/approverbot/telegram"
	"github.com/signoff-dev/signoff/internal/approverbot/telegram/telegramtest"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// A tap that approves, coming right after the chat's messages moved (a
// question was sent, someone wrote in the chat), may have been aimed at
// another question's button: it is refused with an alert; a rejection is
// taken at once.
func TestTelegramAnApprovalRightAfterTheChatChangedIsHeldBack(t *testing.T) {
	var skew atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	e := startWith(t, brokertest.Options{}, telegram.Options{TapGuard: 2 * time.Second, Now: now})

	pend, _ := e.Ask(t, "r1", "make deploy")
	m := channeltest.Next(t, e.tg.Sent, "question in Telegram")
	a := e.answerTo(t, e.tap(t, m, session, alice))
	if !a.ShowAlert || !strings.Contains(a.Text, "nothing was sent") || !strings.Contains(a.Text, "tap again") {
		t.Errorf("tap answered %q (alert %v), want an alert that nothing was sent", a.Text, a.ShowAlert)
	}
	if d, _ := pend.Peek(); d != nil {
		t.Fatalf("a tap right after the question arrived decided %s (%s)", d.Outcome, d.Scope)
	}
	// Past the window the tap is taken. (The bot's own call that sent the
	// question may return after the clock moved, which counts as a change
	// then: move the clock again until a tap is past every change.)
	for i := 0; ; i++ {
		skew.Add(int64(3 * time.Second))
		a = e.answerTo(t, e.tap(t, m, approve, alice))
		if !strings.Contains(a.Text, "nothing was sent") {
			break
		}
		if i == 5 {
			t.Fatalf("taps are still held back 18 s after the last change: %q", a.Text)
		}
	}
	d := pend.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if d.Scope != messages.ScopeOnce {
		t.Errorf("decision scope %s, want once: the held-back Session tap must not count", d.Scope)
	}

	// A second question; long after it arrived, someone writes in the
	// chat: the messages move again.
	pend2, _ := e.Ask(t, "r2", "make clean")
	m2 := channeltest.NextFor(t, e.tg.Sent, "second question", func(s telegramtest.Message) bool { return strings.Contains(s.Text, "make clean") })
	skew.Add(int64(3 * time.Second))
	e.tg.Inject(map[string]any{"message": map[string]any{
		"message_id": 9001, "from": carol, "date": time.Now().Unix(), "text": "looking",
		"chat": map[string]any{"id": defaultChat, "type": "group", "title": "approvals"},
	}})
	a = e.answerTo(t, e.tap(t, m2, approve, bob))
	if !a.ShowAlert || !strings.Contains(a.Text, "nothing was sent") {
		t.Errorf("tap after a message in the chat answered %q (alert %v), want it held back", a.Text, a.ShowAlert)
	}
	e.tap(t, m2, deny, bob)
	d2 := pend2.Wait(t)
	if d2.Outcome != messages.OutcomeDeny || d2.DecidedBy.ID != "bob" {
		t.Errorf("decision %s by %s, want bob's deny, taken at once", d2.Outcome, d2.DecidedBy.ID)
	}
}

// TestTelegramAlwaysTakesTwoTaps (red team AL F7): Always is a standing
// grant. The first tap on it says what it grants and sends nothing; a
// second tap at once (a double tap) is held back; one after the tap
// guard's window grants it.
func TestTelegramAlwaysTakesTwoTaps(t *testing.T) {
	var skew atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	e := startWith(t, brokertest.Options{}, telegram.Options{TapGuard: 2 * time.Second, Now: now})
	pend, _ := e.Ask(t, "r1", "git push origin main")
	m := channeltest.Next(t, e.tg.Sent, "question in Telegram")
	var a telegramtest.Answer
	for i := 0; ; i++ { // past every change the bot made to the chat (a call may wait out a rate limit)
		skew.Add(int64(3 * time.Second))
		if a = e.answerTo(t, e.tap(t, m, always, alice)); !strings.Contains(a.Text, "nothing was sent") || i == 50 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !a.ShowAlert || !strings.Contains(a.Text, "Nothing sent yet: tap ♾ Always again") || !strings.Contains(a.Text, "git push origin main") {
		t.Errorf("the first tap on Always answered %q (alert %v)", a.Text, a.ShowAlert)
	}
	a = e.answerTo(t, e.tap(t, m, always, alice))
	if !strings.Contains(a.Text, "too soon") {
		t.Errorf("a double tap on Always answered %q", a.Text)
	}
	// Another person's tap does not confirm alice's.
	a = e.answerTo(t, e.tap(t, m, always, bob))
	if !strings.Contains(a.Text, "Nothing sent yet") {
		t.Errorf("bob's first tap answered %q", a.Text)
	}
	if d, _ := pend.Peek(); d != nil {
		t.Fatalf("Always was granted without its confirmation: %+v", d)
	}
	skew.Add(int64(3 * time.Second))
	e.tap(t, m, always, alice)
	d := pend.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if d.Scope != messages.ScopeAlwaysPrefix && d.Scope != messages.ScopeAlways {
		t.Errorf("decision scope %s, want an Always grant", d.Scope)
	}
}

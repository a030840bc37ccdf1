package telegram_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/channeltest"
	"github.com/signoff-dev/signoff/internal/approverbot/telegram"
	"github.com/signoff-dev/signoff/internal/approverbot/telegram/telegramtest"
)

func TestTelegramPassesTheChannelSuite(t *testing.T) {
	channeltest.Run(t, func(t *testing.T, s channeltest.Setup) channeltest.Harness {
		fake := telegramtest.New(telegramtest.Options{Token: testToken, Chats: []int64{defaultChat}})
		t.Cleanup(fake.Close)
		h := &harness{s: s, fake: fake, board: &channeltest.Board[telegramtest.Message]{
			Sources: []<-chan telegramtest.Message{fake.Sent, fake.Edited}, ID: requestOf,
			Same: func(a, b telegramtest.Message) bool { return a.ChatID == b.ChatID && a.MessageID == b.MessageID },
		}}
		h.as = map[string]telegramtest.User{"alice": alice, "dave": dave}[s.As]
		return h
	})
}

// harness drives the Telegram channel through the fake Bot API; messages
// are matched to questions by the request id they show.
type harness struct {
	s    channeltest.Setup
	fake *telegramtest.Server
	as   telegramtest.User

	board *channeltest.Board[telegramtest.Message]
}

func (h *harness) Config() string {
	return `
teams: [default]
approvers:
  alice: {display: Alice, telegram: 1001}
  bob:   {telegram: 1002}
  dave:  {display: Dave, telegram: 1004}
telegram:
  token: "` + testToken + `"
  api_url: ` + h.fake.URL() + `
  chats: {default: -1001}
  poll_timeout: 1s
`
}

func (h *harness) Channel(t *testing.T, cfg *approverbot.Config) approverbot.Channel {
	ch, err := telegram.New(cfg, telegram.Options{Logger: h.s.Logger, MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, TapGuard: -1})
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// requestOf is the request id a message shows ("request <id>"); the bot's
// replies to a person's message are keyed "reply:<message id>".
func requestOf(m telegramtest.Message) string {
	if m.ReplyTo != 0 {
		return "reply:" + strconv.FormatInt(m.ReplyTo, 10)
	}
	i := strings.Index(m.Text, "request ")
	if i < 0 {
		return ""
	}
	id, _, _ := strings.Cut(m.Text[i+len("request "):], "\n")
	return strings.TrimSpace(id)
}

// choiceOfTap maps a button's callback data action to its choice.
var choiceOfTap = map[byte]approverbot.Choice{'a': approverbot.ChoiceOnce, 's': approverbot.ChoiceSession,
	'w': approverbot.ChoiceAlways, 'd': approverbot.ChoiceReject, 'x': approverbot.ChoiceRejectStop}

func (h *harness) Shown(t *testing.T, id string) (string, []approverbot.Choice) {
	m := h.board.Await(t, id, func(m telegramtest.Message) bool { return len(m.Buttons()) > 0 })
	var cs []approverbot.Choice
	for _, b := range m.Buttons() {
		if b.CallbackData == "" {
			continue // a link (Open on the web page)
		}
		if c, ok := choiceOfTap[b.CallbackData[0]]; ok {
			cs = append(cs, c)
		}
	}
	return m.Text, cs
}

// reply replies to m with text and waits for the bot's reply.
func (h *harness) reply(t *testing.T, m telegramtest.Message, text string) string {
	id := h.fake.Reply(m, text, h.as)
	return h.board.Await(t, "reply:"+strconv.FormatInt(id, 10), func(telegramtest.Message) bool { return true }).Text
}

func (h *harness) Choose(t *testing.T, id string, c approverbot.Choice, feedback string) string {
	m := h.board.Await(t, id, func(m telegramtest.Message) bool { return len(m.Buttons()) > 0 })
	if !c.Approves() && feedback != "" {
		if got := h.reply(t, m, feedback); !strings.Contains(got, "Feedback noted") {
			t.Fatalf("the feedback reply got %q", got)
		}
	}
	for _, b := range m.Buttons() {
		if b.CallbackData == "" || choiceOfTap[b.CallbackData[0]] != c {
			continue
		}
		if c == approverbot.ChoiceAlways {
			// The first tap says what Always grants; the second grants it.
			if _, err := h.fake.Tap(m, b.CallbackData, h.as); err != nil {
				t.Fatal(err)
			}
			if a := channeltest.Next(t, h.fake.Answers, "the answer to the first tap").Text; !strings.Contains(a, "tap ♾ Always again") {
				t.Fatalf("the first tap on Always answered %q", a)
			}
		}
		if _, err := h.fake.Tap(m, b.CallbackData, h.as); err != nil {
			t.Fatal(err)
		}
		return channeltest.Next(t, h.fake.Answers, "the answer to the tap").Text
	}
	t.Fatalf("no button for %s", c)
	return ""
}

func (h *harness) Settled(t *testing.T, id string) string {
	return h.board.Await(t, id, func(m telegramtest.Message) bool { return len(m.Buttons()) == 0 }).Text
}

func (h *harness) Feedback() bool { return true }

// Asked reads the option buttons (one per option of a single question).
func (h *harness) Asked(t *testing.T, id string) (string, [][]string) {
	m := h.board.Await(t, id, func(m telegramtest.Message) bool { return len(m.Buttons()) > 0 })
	var labels []string
	for _, b := range m.Buttons() {
		if strings.HasPrefix(b.CallbackData, "o:") {
			_, label, _ := strings.Cut(b.Text, ". ")
			labels = append(labels, label)
		}
	}
	if labels == nil {
		return m.Text, nil
	}
	return m.Text, [][]string{labels}
}

// Answer taps an option button, or replies with the words.
func (h *harness) Answer(t *testing.T, id string, picks []approverbot.Pick) string {
	m := h.board.Await(t, id, func(m telegramtest.Message) bool { return len(m.Buttons()) > 0 })
	if p := picks[0]; len(picks) == 1 && len(p.Options) == 1 && p.Text == "" {
		for _, b := range m.Buttons() {
			if b.CallbackData == "o:"+strings.Split(b.CallbackData, ":")[1]+":"+strconv.Itoa(p.Options[0]) {
				if _, err := h.fake.Tap(m, b.CallbackData, h.as); err != nil {
					t.Fatal(err)
				}
				return channeltest.Next(t, h.fake.Answers, "the answer to the tap").Text
			}
		}
		t.Fatalf("no option button %d", p.Options[0])
	}
	var parts []string
	for _, p := range picks {
		s := p.Text
		if s == "" {
			var nums []string
			for _, o := range p.Options {
				nums = append(nums, strconv.Itoa(o+1))
			}
			s = strings.Join(nums, ",")
		}
		parts = append(parts, s)
	}
	return h.reply(t, m, strings.Join(parts, "; "))
}
func (h *harness) Break() bool       { h.fake.SetDown(true); return true }
func (h *harness) Heal() bool        { h.fake.SetDown(false); return true }
func (h *harness) Secrets() []string { return []string{testToken, "secret-bot-token"} }

// TryEdit sends /edit in the question's chat, as a user who wants to change
// the call would, and returns the bot's answer.
func (h *harness) TryEdit(t *testing.T, id string) string {
	m := h.board.Await(t, id, func(m telegramtest.Message) bool { return len(m.Buttons()) > 0 })
	h.fake.Inject(map[string]any{"message": map[string]any{
		"message_id": 9000, "from": h.as, "date": time.Now().Unix(),
		"chat":     map[string]any{"id": m.ChatID, "type": "group", "title": "approvals"},
		"text":     "/edit@signoff_bot git push origin staging",
		"entities": []any{map[string]any{"type": "bot_command", "offset": 0, "length": 18}},
	}})
	for {
		s := channeltest.Next(t, h.fake.Sent, "the answer to /edit")
		if s.ChatID == m.ChatID && len(s.Buttons()) == 0 {
			return s.Text
		}
	}
}

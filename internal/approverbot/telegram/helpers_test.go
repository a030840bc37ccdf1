package telegram_test

import (
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/channeltest"
	"github.com/signoff-dev/signoff/internal/approverbot/telegram"
	"github.com/signoff-dev/signoff/internal/approverbot/telegram/telegramtest"
	"github.com/signoff-dev/signoff/internal/brokertest"
)

const testToken = "7777777:AAH-secret-bot-token"

// The chats of the teams.
const (
	defaultChat int64 = -1001
	oncallChat  int64 = -1002
)

// Telegram users of the test config; nobody is not mapped to an approver.
var (
	alice  = telegramtest.User{ID: 1001, FirstName: "Alice", Username: "alice"}
	bob    = telegramtest.User{ID: 1002, FirstName: "Bob"}
	carol  = telegramtest.User{ID: 1003, FirstName: "Carol"}
	dave   = telegramtest.User{ID: 1004, FirstName: "Dave"}
	nobody = telegramtest.User{ID: 9999, FirstName: "Mallory"}
)

func testConfig(t testing.TB, apiURL string) *approverbot.Config {
	t.Helper()
	yaml := `
teams: [default, oncall]
approvers:
  alice: {display: Alice, telegram: 1001}
  bob:   {display: Bob, telegram: 1002}
  carol: {display: Carol, telegram: 1003}
  dave:  {display: Dave, telegram: 1004}
telegram:
  token: "` + testToken + `"
  api_url: ` + apiURL + `
  chats: {default: -1001, oncall: -1002}
  poll_timeout: 10s
`
	cfg, err := approverbot.ParseConfig([]byte(yaml), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// env is a whole plane with a bot that has only the Telegram channel, wired
// to a fake Bot API.
type env struct {
	plane *brokertest.Plane
	tg    *telegramtest.Server
	ch    *telegram.Channel
	logs  *brokertest.LogBuffer

	*channeltest.Bot
}

// start starts the plane and the bot; before runs first (to arm failures
// of the fake).
func start(t *testing.T, before ...func(*telegramtest.Server)) *env {
	t.Helper()
	return startOn(t, brokertest.Options{}, before...)
}

// startOn is start on a plane started with po.
func startOn(t *testing.T, po brokertest.Options, before ...func(*telegramtest.Server)) *env {
	t.Helper()
	return startWith(t, po, telegram.Options{}, before...)
}

// startWith is startOn with the channel's options o (its logger and
// backoff are the test's; the tap guard is off unless o sets it: the
// tests tap as soon as a question shows).
func startWith(t *testing.T, po brokertest.Options, o telegram.Options, before ...func(*telegramtest.Server)) *env {
	t.Helper()
	p := brokertest.Start(t, po)
	fake := telegramtest.New(telegramtest.Options{Token: testToken, Chats: []int64{defaultChat, oncallChat}})
	t.Cleanup(fake.Close)
	for _, f := range before {
		f(fake)
	}
	cfg := testConfig(t, fake.URL())
	log, logs := channeltest.Logger()
	o.Logger, o.MinBackoff, o.MaxBackoff = log, 10*time.Millisecond, 50*time.Millisecond
	if o.TapGuard == 0 {
		o.TapGuard = -1
	}
	ch, err := telegram.New(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{plane: p, tg: fake, ch: ch, logs: logs, Bot: channeltest.NewBot(t, p, cfg, ch, log, logs, testToken, "secret-bot-token")}
	return e
}

// tap has u tap the button labelled label on m.
func (e *env) tap(t *testing.T, m telegramtest.Message, label string, u telegramtest.User) string {
	t.Helper()
	b, ok := m.Button(label)
	if !ok {
		t.Fatalf("message %d has no button %q (buttons %v)", m.MessageID, label, labels(m))
	}
	id, err := e.tg.Tap(m, b.CallbackData, u)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// answerTo waits for the answer to callback query id.
func (e *env) answerTo(t *testing.T, id string) telegramtest.Answer {
	t.Helper()
	return channeltest.NextFor(t, e.tg.Answers, "answer to "+id, func(a telegramtest.Answer) bool { return a.CallbackQueryID == id })
}

func labels(m telegramtest.Message) []string {
	var out []string
	for _, b := range m.Buttons() {
		out = append(out, b.Text)
	}
	return out
}

// eventually waits until cond holds.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10 s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

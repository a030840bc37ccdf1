package slack_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/channeltest"
	"github.com/signoff-dev/signoff/internal/approverbot/slack"
	"github.com/signoff-dev/signoff/internal/approverbot/slack/slacktest"
)

func TestSlackPassesTheChannelSuite(t *testing.T) {
	channeltest.Run(t, func(t *testing.T, s channeltest.Setup) channeltest.Harness {
		fake := slacktest.New(slacktest.Options{Token: testToken, Channels: []string{"CDEFAULT"}})
		t.Cleanup(fake.Close)
		h := &harness{s: s, fake: fake, board: &channeltest.Board[slacktest.Message]{
			Sources: []<-chan slacktest.Message{fake.Posted, fake.Updated}, ID: requestOf,
			Same: func(a, b slacktest.Message) bool { return a.TS == b.TS },
		}}
		h.as = map[string]slacktest.User{"alice": alice, "dave": dave}[s.As]
		return h
	})
}

// harness drives the Slack channel through the fake Slack; the board keeps
// each question's latest message.
type harness struct {
	s    channeltest.Setup
	fake *slacktest.Server
	as   slacktest.User
	bot  *httptest.Server

	board *channeltest.Board[slacktest.Message]
}

func (h *harness) Config() string {
	return `
teams: [default]
approvers:
  alice: {display: Alice, slack: UALICE}
  bob:   {slack: UBOB}
  dave:  {display: Dave, slack: UDAVE}
slack:
  bot_token: ` + testToken + `
  signing_secret: ` + testSecret + `
  api_url: ` + h.fake.APIURL() + `
  channels: {default: CDEFAULT}
`
}

func (h *harness) Channel(t *testing.T, cfg *approverbot.Config) approverbot.Channel {
	ch, err := slack.New(cfg, slack.Options{Logger: h.s.Logger})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	ch.Register(mux)
	h.bot = httptest.NewServer(mux)
	t.Cleanup(h.bot.Close)
	return ch
}

// requestOf is the request id a message's buttons carry ("" without).
func requestOf(m slacktest.Message) string {
	for _, b := range m.Buttons() {
		return b.Value
	}
	return ""
}

var choiceOfAction = map[string]approverbot.Choice{approve: approverbot.ChoiceOnce, session: approverbot.ChoiceSession,
	always: approverbot.ChoiceAlways, deny: approverbot.ChoiceReject, denyStop: approverbot.ChoiceRejectStop}

func (h *harness) Shown(t *testing.T, id string) (string, []approverbot.Choice) {
	m := h.board.Await(t, id, func(m slacktest.Message) bool { return len(m.Buttons()) > 0 })
	var cs []approverbot.Choice
	for _, b := range m.Buttons() {
		cs = append(cs, choiceOfAction[b.ActionID])
	}
	return m.VisibleText(), cs
}

func (h *harness) Choose(t *testing.T, id string, c approverbot.Choice, _ string) string {
	m := h.board.Await(t, id, func(m slacktest.Message) bool { return len(m.Buttons()) > 0 })
	action := ""
	for a, ch := range choiceOfAction {
		if ch == c {
			action = a
		}
	}
	body, err := h.fake.Click(m, action, h.as)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, h.bot.URL+slack.InteractionsPath, strings.NewReader(string(body)))
	for k, v := range slacktest.Sign(testSecret, time.Now(), body) {
		req.Header[k] = v
	}
	for deadline := time.Now().Add(channeltest.Wait); ; time.Sleep(20 * time.Millisecond) {
		res, err := http.DefaultClient.Do(req.Clone(t.Context()))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			if res.StatusCode != http.StatusOK {
				t.Fatalf("interaction: %d", res.StatusCode)
			}
			break
		}
		req.Body, _ = req.GetBody()
	}
	return channeltest.Next(t, h.fake.Responses, "the reply to the click").Text
}

func (h *harness) Settled(t *testing.T, id string) string {
	return h.board.Await(t, id, func(m slacktest.Message) bool { return len(m.Buttons()) == 0 }).VisibleText()
}

func (h *harness) Feedback() bool    { return false }
func (h *harness) Break() bool       { h.fake.SetDown(true); return true }
func (h *harness) Heal() bool        { h.fake.SetDown(false); return true }
func (h *harness) Secrets() []string { return []string{testToken, testSecret} }

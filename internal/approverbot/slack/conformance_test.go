package slack_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
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
		}, forms: map[string]slacktest.View{}}
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
	forms map[string]slacktest.View // answer forms opened, by request id
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
	ch, err := slack.New(cfg, slack.Options{Logger: h.s.Logger, TapGuard: -1})
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
		// Answer… and Edit & approve… open forms (Asked, Edit).
		if c, ok := choiceOfAction[b.ActionID]; ok {
			cs = append(cs, c)
		}
	}
	return m.VisibleText(), cs
}

func (h *harness) Choose(t *testing.T, id string, c approverbot.Choice, feedback string) string {
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
	h.post(t, body)
	if !c.Approves() {
		// A Deny opens the feedback form.
		v := channeltest.Next(t, h.fake.Opened, "the feedback form")
		if v.CallbackID != "signoff_reject" {
			t.Fatalf("a Deny opened %q", v.CallbackID)
		}
		body, err := h.fake.Submit(v, h.as, map[string]map[string]any{"feedback": {"text": map[string]any{"type": "plain_text_input", "value": feedback}}})
		if err != nil {
			t.Fatal(err)
		}
		h.post(t, body)
	}
	return channeltest.Next(t, h.fake.Responses, "the reply to the click").Text
}

// post sends a signed interaction; the bot may still be starting.
func (h *harness) post(t *testing.T, body []byte) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.bot.URL+slack.InteractionsPath, strings.NewReader(string(body)))
	for k, v := range slacktest.Sign(testSecret, time.Now(), body) {
		req.Header[k] = v
	}
	for deadline := time.Now().Add(channeltest.Wait); ; time.Sleep(20 * time.Millisecond) {
		res, err := http.DefaultClient.Do(req.Clone(t.Context()))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			if res.StatusCode != http.StatusOK {
				t.Fatalf("interaction: %d %s", res.StatusCode, out)
			}
			return string(out)
		}
		req.Body, _ = req.GetBody()
	}
}

// Edit clicks Edit & approve…, puts text in the modal that opens and
// submits it; it returns what the modal then says: the input's error, or
// the outcome the modal turned into.
func (h *harness) Edit(t *testing.T, id, text string) string {
	m := h.board.Await(t, id, func(m slacktest.Message) bool { return len(m.Buttons()) > 0 })
	body, err := h.fake.Click(m, edit, h.as)
	if err != nil {
		t.Fatal(err)
	}
	h.post(t, body)
	v := channeltest.Next(t, h.fake.Opened, "the editor modal")
	ins := v.Inputs()
	if v.CallbackID != "signoff_edit" || len(ins) != 1 || ins[0].InitialValue != "git push origin main" {
		t.Fatalf("the modal %q's inputs %+v, want one holding the command", v.CallbackID, ins)
	}
	body, err = h.fake.Submit(v, h.as, map[string]map[string]any{ins[0].BlockID: {ins[0].ActionID: map[string]any{"type": "plain_text_input", "value": text}}})
	if err != nil {
		t.Fatal(err)
	}
	var reply struct {
		ResponseAction string            `json:"response_action"`
		Errors         map[string]string `json:"errors"`
		View           struct {
			Blocks []struct {
				Text struct {
					Text string `json:"text"`
				} `json:"text"`
			} `json:"blocks"`
		} `json:"view"`
	}
	raw := h.post(t, body)
	if err := json.Unmarshal([]byte(raw), &reply); err != nil {
		t.Fatalf("the submission's reply %q: %v", raw, err)
	}
	switch reply.ResponseAction {
	case "errors":
		return reply.Errors[ins[0].BlockID]
	case "update":
		var b strings.Builder
		for _, bl := range reply.View.Blocks {
			b.WriteString(bl.Text.Text)
		}
		return b.String()
	}
	t.Fatalf("the submission's reply %s", raw)
	return ""
}

// Asked clicks Answer and reads the form it opens: an input per question
// with its options.
func (h *harness) Asked(t *testing.T, id string) (string, [][]string) {
	m := h.board.Await(t, id, func(m slacktest.Message) bool { return len(m.Buttons()) > 0 })
	body, err := h.fake.Click(m, "signoff_answer", h.as)
	if err != nil {
		t.Fatal(err)
	}
	h.post(t, body)
	v := channeltest.Next(t, h.fake.Opened, "the answer form")
	if v.CallbackID != "signoff_answer" {
		t.Fatalf("Answer opened %q", v.CallbackID)
	}
	h.forms[id] = v
	var options [][]string
	for _, in := range v.Inputs() {
		if in.ActionID != "pick" {
			continue
		}
		var labels []string
		for _, o := range in.Options {
			_, label, _ := strings.Cut(o.Text, ". ") // numbered as the message numbers them
			labels = append(labels, label)
		}
		options = append(options, labels)
	}
	return m.VisibleText(), options
}

// Answer submits the answer form with the picks.
func (h *harness) Answer(t *testing.T, id string, picks []approverbot.Pick) string {
	v, ok := h.forms[id]
	if !ok {
		h.Asked(t, id)
		v = h.forms[id]
	}
	values := map[string]map[string]any{}
	for _, p := range picks {
		n := strconv.Itoa(p.Question)
		if len(p.Options) > 0 {
			var sel []any
			for _, o := range p.Options {
				sel = append(sel, map[string]any{"value": strconv.Itoa(o), "text": map[string]any{"type": "plain_text", "text": "x"}})
			}
			values["q"+n] = map[string]any{"pick": map[string]any{"type": "radio_buttons", "selected_option": sel[0]}}
		}
		if p.Text != "" {
			values["t"+n] = map[string]any{"text": map[string]any{"type": "plain_text_input", "value": p.Text}}
		}
	}
	body, err := h.fake.Submit(v, h.as, values)
	if err != nil {
		t.Fatal(err)
	}
	if out := h.post(t, body); out != "" {
		t.Fatalf("the form refused the answer: %s", out)
	}
	return channeltest.Next(t, h.fake.Responses, "the reply to the answer").Text
}

func (h *harness) Settled(t *testing.T, id string) string {
	return h.board.Await(t, id, func(m slacktest.Message) bool { return len(m.Buttons()) == 0 }).VisibleText()
}

func (h *harness) Feedback() bool    { return true }
func (h *harness) Break() bool       { h.fake.SetDown(true); return true }
func (h *harness) Heal() bool        { h.fake.SetDown(false); return true }
func (h *harness) Secrets() []string { return []string{testToken, testSecret} }

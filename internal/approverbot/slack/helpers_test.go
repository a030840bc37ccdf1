package slack_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/channeltest"
	"github.com/signoff-dev/signoff/internal/approverbot/slack"
	"github.com/signoff-dev/signoff/internal/approverbot/slack/slacktest"
	"github.com/signoff-dev/signoff/internal/brokertest"
)

const (
	testToken  = "xoxb-1234-secret-bot-token"
	testSecret = "8f742231b10e8888abcd99yyyzzz85a5"
)

// Slack users of the test config; nobody is not mapped to an approver.
var (
	alice  = slacktest.User{ID: "UALICE", Username: "alice", Name: "alice"}
	bob    = slacktest.User{ID: "UBOB", Username: "bob", Name: "bob"}
	carol  = slacktest.User{ID: "UCAROL", Username: "carol", Name: "carol"}
	dave   = slacktest.User{ID: "UDAVE", Username: "dave", Name: "dave"}
	nobody = slacktest.User{ID: "UNOBODY", Username: "mallory", Name: "mallory"}
)

func testConfig(t testing.TB, apiURL string) *approverbot.Config {
	t.Helper()
	yaml := `
teams: [default, oncall]
approvers:
  alice: {display: Alice, slack: UALICE}
  bob:   {display: Bob, slack: UBOB}
  carol: {display: Carol, slack: UCAROL}
  dave:  {display: Dave, slack: UDAVE}
slack:
  bot_token: ` + testToken + `
  signing_secret: ` + testSecret + `
  api_url: ` + apiURL + `
  channels: {default: CDEFAULT, oncall: CONCALL}
`
	cfg, err := approverbot.ParseConfig([]byte(yaml), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// env is a whole plane with a bot that has only the Slack channel, wired to
// a fake Slack.
type env struct {
	plane *brokertest.Plane
	slack *slacktest.Server
	ch    *slack.Channel
	// bot serves the bot's HTTP routes (the interactions endpoint).
	bot  *httptest.Server
	logs *brokertest.LogBuffer

	*channeltest.Bot
}

func start(t *testing.T) *env {
	t.Helper()
	return startOn(t, brokertest.Options{})
}

// startOn is start on a plane started with po.
func startOn(t *testing.T, po brokertest.Options) *env {
	t.Helper()
	return startWith(t, po, slack.Options{})
}

// startWith is startOn with the channel's options o (its logger is the
// test's; the tap guard is off unless o sets it: the tests click as soon
// as a question shows).
func startWith(t *testing.T, po brokertest.Options, o slack.Options) *env {
	t.Helper()
	p := brokertest.Start(t, po)
	fake := slacktest.New(slacktest.Options{Token: testToken, Channels: []string{"CDEFAULT", "CONCALL"}})
	t.Cleanup(fake.Close)
	cfg := testConfig(t, fake.APIURL())
	log, logs := channeltest.Logger()
	o.Logger = log
	if o.TapGuard == 0 {
		o.TapGuard = -1
	}
	ch, err := slack.New(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	ch.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e := &env{plane: p, slack: fake, ch: ch, bot: srv, logs: logs, Bot: channeltest.NewBot(t, p, cfg, ch, log, logs, testToken, testSecret)}
	return e
}

// post sends body to the interactions endpoint with header and returns the
// status and body of the answer. The bot may still be starting its
// channels when the first question shows: 503 is retried.
func (e *env) post(t *testing.T, body []byte, header http.Header) (int, string) {
	t.Helper()
	for range 100 {
		req, err := http.NewRequest(http.MethodPost, e.bot.URL+slack.InteractionsPath, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			return resp.StatusCode, string(data)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the interactions endpoint stayed unavailable")
	return 0, ""
}

// click has u click actionID on m, as Slack would post it (signed now).
func (e *env) click(t *testing.T, m slacktest.Message, actionID string, u slacktest.User) (int, string) {
	t.Helper()
	body, err := e.slack.Click(m, actionID, u)
	if err != nil {
		t.Fatal(err)
	}
	return e.post(t, body, slacktest.Sign(testSecret, time.Now(), body))
}

func actionIDs(m slacktest.Message) []string {
	var ids []string
	for _, b := range m.Buttons() {
		ids = append(ids, b.ActionID)
	}
	return ids
}

// submitFeedback submits the feedback form a Deny opened, as u.
func (e *env) submitFeedback(t *testing.T, u slacktest.User, feedback string) {
	t.Helper()
	v := channeltest.Next(t, e.slack.Opened, "the feedback form")
	body, err := e.slack.Submit(v, u, map[string]map[string]any{"feedback": {"text": map[string]any{"type": "plain_text_input", "value": feedback}}})
	if err != nil {
		t.Fatal(err)
	}
	if status, out := e.post(t, body, slacktest.Sign(testSecret, time.Now(), body)); status != http.StatusOK || out != "" {
		t.Fatalf("submit the feedback form: %d %s", status, out)
	}
}

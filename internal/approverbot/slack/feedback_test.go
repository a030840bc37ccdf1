package slack_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot/channeltest"
	"github.com/signoff-dev/signoff/internal/approverbot/slack/slacktest"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

func TestSlackAnswerFormTakesSeveralQuestionsAndShowsMistakesInTheForm(t *testing.T) {
	e := startOn(t, brokertest.Options{Policy: channeltest.Policy})
	pend := brokertest.Ask(t.Context(), e.Agent, "r-ask", "AskUserQuestion", map[string]any{"questions": []any{
		map[string]any{"question": "Which database?", "header": "DB",
			"options": []any{map[string]any{"label": "Postgres", "description": "relational"}, map[string]any{"label": "Mongo"}}},
		map[string]any{"question": "Which features?", "multiSelect": true,
			"options": []any{map[string]any{"label": "Auth"}, map[string]any{"label": "Logs"}, map[string]any{"label": "Metrics"}}},
	}})
	e.Device.NextAsk("r-ask")
	e.Ask(t, "r-other", "make lint") // starts the bot
	m := channeltest.NextFor(t, e.slack.Posted, "the question in Slack", func(m slacktest.Message) bool {
		return strings.Contains(m.VisibleText(), "Which database?")
	})
	if text := m.VisibleText(); !strings.Contains(text, "1. Postgres — relational") || !strings.Contains(text, "Question 2 (pick any): Which features?") {
		t.Errorf("the message does not list the questions:\n%s", text)
	}
	if status, body := e.click(t, m, "signoff_answer", alice); status != http.StatusOK {
		t.Fatalf("click: %d %s", status, body)
	}
	v := channeltest.Next(t, e.slack.Opened, "the answer form")
	var kinds []string
	for _, in := range v.Inputs() {
		kinds = append(kinds, in.BlockID+":"+in.Element)
	}
	if got := strings.Join(kinds, " "); got != "q0:radio_buttons t0:plain_text_input q1:checkboxes t1:plain_text_input" {
		t.Fatalf("the form's inputs: %s", got)
	}
	submit := func(values map[string]map[string]any) (int, string) {
		body, err := e.slack.Submit(v, alice, values)
		if err != nil {
			t.Fatal(err)
		}
		return e.post(t, body, slacktest.Sign(testSecret, time.Now(), body))
	}
	// Nothing picked: the form says so under the first question, and
	// nothing is sent.
	status, out := submit(nil)
	var fe struct {
		ResponseAction string            `json:"response_action"`
		Errors         map[string]string `json:"errors"`
	}
	if err := json.Unmarshal([]byte(out), &fe); status != http.StatusOK || err != nil || fe.ResponseAction != "errors" || !strings.Contains(fe.Errors["q0"], "answers none") {
		t.Fatalf("an empty form: %d %s", status, out)
	}
	if d, _ := pend.Peek(); d != nil {
		t.Fatalf("an empty answer decided the call: %+v", d)
	}
	opt := func(v string) map[string]any { return map[string]any{"value": v} }
	status, out = submit(map[string]map[string]any{
		"q0": {"pick": map[string]any{"type": "radio_buttons", "selected_option": opt("0")}},
		"q1": {"pick": map[string]any{"type": "checkboxes", "selected_options": []any{opt("0"), opt("2")}}},
		"t1": {"text": map[string]any{"type": "plain_text_input", "value": "tracing"}},
	})
	if status != http.StatusOK || out != "" {
		t.Fatalf("the answer: %d %s", status, out)
	}
	d := pend.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	var got map[string]string
	_ = json.Unmarshal(d.Answer, &got)
	if got["Which database?"] != "Postgres" || got["Which features?"] != "Auth, Metrics, tracing" || d.DecidedBy.ID != "alice" {
		t.Errorf("the agent got %s from %s", d.Answer, d.DecidedBy.ID)
	}
	if r := channeltest.Next(t, e.slack.Responses, "the reply to the answer"); !strings.Contains(r.Text, "answered by Alice via slack") {
		t.Errorf("alice is told %q", r.Text)
	}
}

func TestSlackDenyFallsBackWithoutFeedbackWhenTheFormCannotOpen(t *testing.T) {
	e := start(t)
	pend, _ := e.Ask(t, "r1", "make clean")
	m := channeltest.Next(t, e.slack.Posted, "question in Slack")
	e.slack.RateLimit("views.open", 3600) // Slack will not open the form in time
	if status, body := e.click(t, m, deny, bob); status != http.StatusOK {
		t.Fatalf("click: %d %s", status, body)
	}
	d := pend.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeDeny, messages.ReasonRejected)
	if d.RejectMode != messages.RejectSoft || d.DecidedBy.ID != "bob" || d.Feedback != "" {
		t.Errorf("decision %+v, want bob's soft reject without feedback", d)
	}
}

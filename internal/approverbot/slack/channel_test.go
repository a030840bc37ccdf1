package slack_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/channeltest"
	"github.com/signoff-dev/signoff/internal/approverbot/slack"
	"github.com/signoff-dev/signoff/internal/approverbot/slack/slacktest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

func newChannel(t *testing.T, apiURL, token string) *slack.Channel {
	t.Helper()
	cfg := testConfig(t, apiURL)
	cfg.Channels[slack.Name].(*slack.Config).BotToken = token
	ch, err := slack.New(cfg, slack.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), MaxRetryAfter: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func question(id string, args any) approverbot.Question {
	raw, _ := json.Marshal(args)
	return approverbot.Question{ApprovalNeeded: messages.ApprovalNeeded{
		V: 1, Type: "approval_needed", Team: "default",
		Request:   messages.Request{RequestID: id, SessionID: "s1", AgentID: "a1", Tool: "bash", Arguments: raw},
		Risk:      messages.Risk{Tier: "exec"},
		ExpiresAt: time.Now().Add(5 * time.Minute),
	}}
}

func TestNewRefusesAnIncompleteConfig(t *testing.T) {
	cases := []struct {
		name   string
		change func(*approverbot.Config)
		want   string
	}{
		{"no slack section", func(c *approverbot.Config) { delete(c.Channels, slack.Name) }, "not configured"},
		{"no signing secret", func(c *approverbot.Config) { c.Channels[slack.Name].(*slack.Config).SigningSecret = "" }, "signing_secret"},
		{"a team without a channel", func(c *approverbot.Config) { delete(c.Channels[slack.Name].(*slack.Config).Channels, "oncall") }, `team "oncall"`},
		{"an API URL that is not http", func(c *approverbot.Config) { c.Channels[slack.Name].(*slack.Config).APIURL = "ftp://slack" }, "api_url"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t, "https://slack.com/api")
			c.change(cfg)
			_, err := slack.New(cfg, slack.Options{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("New = %v, want an error about %s", err, c.want)
			}
		})
	}
}

func TestAskStaysWithinBlockKitLimitsWhateverTheAgentSends(t *testing.T) {
	fake := slacktest.New(slacktest.Options{Token: testToken, Channels: []string{"CDEFAULT", "CONCALL"}})
	defer fake.Close()
	ch := newChannel(t, fake.APIURL(), testToken)

	q := question("huge", map[string]string{"command": strings.Repeat("echo <!channel> && ", 5000)})
	q.Request.Description = strings.Repeat("<https://evil.example|click> ", 500)
	q.Risk.Reason = strings.Repeat("why ", 2000)
	q.ApprovalsRequired = 3
	for i := range 500 {
		q.Risk.Subcommands = append(q.Risk.Subcommands, messages.Verdict{Command: fmt.Sprintf("echo %d %s", i, strings.Repeat("x", 500)), Action: "ask"})
	}
	for range 300 {
		q.BatchRemaining = append(q.BatchRemaining, messages.BatchItem{Tool: "write", Arguments: json.RawMessage(`{"path":"` + strings.Repeat("p", 5000) + `"}`)})
	}
	patterns := make([]string, 100)
	for i := range patterns {
		patterns[i] = fmt.Sprintf("cmd%d %s *", i, strings.Repeat("y", 300))
	}
	q.Always = &messages.AlwaysGrant{Scope: messages.ScopeAlwaysPrefix, Tool: "bash", Patterns: patterns}

	if err := ch.Ask(context.Background(), q); err != nil {
		t.Fatalf("Ask: %v (the fake applies Slack's documented limits)", err)
	}
	m := channeltest.Next(t, fake.Posted, "question")
	text := m.VisibleText()
	for _, want := range []string{"more characters not shown", "and 485 more sub-commands", "and 290 more calls", "90 Always patterns", "too long for Slack"} {
		if !strings.Contains(text, want) {
			t.Errorf("a cut is not marked %q", want)
		}
	}
	if strings.Contains(m.Text, "<!channel>") {
		t.Errorf("fallback text can ping: %.200s", m.Text)
	}
	resolved := messages.Resolved{RequestID: "huge", State: messages.StateRejected, Decision: messages.Decision{
		Outcome: messages.OutcomeDeny, ReasonCode: messages.ReasonRejected, Feedback: strings.Repeat("no ", 3000),
		DecidedBy: messages.Decider{Kind: messages.DeciderApprover, ID: "bob"}}}
	if err := ch.Resolve(context.Background(), resolved); err != nil {
		t.Fatalf("Resolve: %v", err)
	}
	if u := channeltest.Next(t, fake.Updated, "settled question"); u.TS != m.TS || len(u.Buttons()) != 0 {
		t.Errorf("settled %s with buttons %v, want %s without", u.TS, actionIDs(u), m.TS)
	}
}

func TestAskAgainUpdatesTheSameMessageAndResolveForgetsIt(t *testing.T) {
	fake := slacktest.New(slacktest.Options{Token: testToken, Channels: []string{"CDEFAULT", "CONCALL"}})
	defer fake.Close()
	ch := newChannel(t, fake.APIURL(), testToken)
	ctx := context.Background()

	q := question("r1", map[string]string{"command": "kubectl delete pod x"})
	q.ApprovalsRequired = 2
	if err := ch.Ask(ctx, q); err != nil {
		t.Fatal(err)
	}
	m := channeltest.Next(t, fake.Posted, "question")
	q.ApprovalsSoFar = []string{"carol"}
	if err := ch.Ask(ctx, q); err != nil {
		t.Fatal(err)
	}
	u := channeltest.Next(t, fake.Updated, "updated question")
	if u.TS != m.TS || !strings.Contains(u.VisibleText(), "Approvals: 1 of 2 so far: carol") {
		t.Errorf("update %s:\n%s", u.TS, u.VisibleText())
	}
	if err := ch.Resolve(ctx, messages.Resolved{RequestID: "r1", State: messages.StateExpired, Decision: messages.Decision{Outcome: messages.OutcomeDeny, ReasonCode: messages.ReasonTimeout}}); err != nil {
		t.Fatal(err)
	}
	if u := channeltest.Next(t, fake.Updated, "settled question"); !strings.Contains(u.VisibleText(), "timed out") {
		t.Errorf("settled:\n%s", u.VisibleText())
	}
	// A resolution for a question without a message changes nothing.
	before := fake.Calls("chat.update")
	if err := ch.Resolve(ctx, messages.Resolved{RequestID: "r1"}); err != nil {
		t.Fatal(err)
	}
	if err := ch.Resolve(ctx, messages.Resolved{RequestID: "never-posted"}); err != nil {
		t.Fatal(err)
	}
	if fake.Calls("chat.update") != before {
		t.Error("Resolve updated a message it had already settled or never posted")
	}
}

func TestAReminderIsRepliedInTheQuestionsThread(t *testing.T) {
	fake := slacktest.New(slacktest.Options{Token: testToken, Channels: []string{"CDEFAULT", "CONCALL"}})
	defer fake.Close()
	ch := newChannel(t, fake.APIURL(), testToken)
	ctx := context.Background()
	q := question("r1", map[string]string{"command": "deploy prod"})
	if err := ch.Ask(ctx, q); err != nil {
		t.Fatal(err)
	}
	m := channeltest.Next(t, fake.Posted, "question")
	q.Reminder, q.EscalationStep = 1, 1
	if err := ch.Ask(ctx, q); err != nil {
		t.Fatal(err)
	}
	if u := channeltest.Next(t, fake.Updated, "question updated"); u.TS != m.TS {
		t.Errorf("the reminder updated %s, want the question %s", u.TS, m.TS)
	}
	r := channeltest.Next(t, fake.Posted, "reminder")
	if r.ThreadTS != m.TS || !r.Broadcast || !strings.Contains(r.Text, "Reminder: this question for team default is still waiting") {
		t.Errorf("reminder: thread %q broadcast %v text %q", r.ThreadTS, r.Broadcast, r.Text)
	}
	// The same reminder again (a replayed copy) posts nothing more.
	if err := ch.Ask(ctx, q); err != nil {
		t.Fatal(err)
	}
	channeltest.Next(t, fake.Updated, "question updated again")
	if n := fake.Calls("chat.postMessage"); n != 2 {
		t.Errorf("chat.postMessage called %d times, want the question and one reminder", n)
	}
}

func TestAskWaitsOutARateLimit(t *testing.T) {
	fake := slacktest.New(slacktest.Options{Token: testToken, Channels: []string{"CDEFAULT", "CONCALL"}})
	defer fake.Close()
	ch := newChannel(t, fake.APIURL(), testToken)
	fake.RateLimit("chat.postMessage", 1)
	start := time.Now()
	if err := ch.Ask(context.Background(), question("r1", map[string]string{"command": "make"})); err != nil {
		t.Fatalf("Ask: %v", err)
	}
	if waited := time.Since(start); waited < time.Second {
		t.Errorf("retried after %v, before Retry-After (1 s)", waited)
	}
	if n := fake.Calls("chat.postMessage"); n != 2 {
		t.Errorf("chat.postMessage called %d times, want 2 (one limited, one retried)", n)
	}
	channeltest.Next(t, fake.Posted, "question")
}

func TestAskFailsOnARateLimitLongerThanItWaits(t *testing.T) {
	fake := slacktest.New(slacktest.Options{Token: testToken, Channels: []string{"CDEFAULT", "CONCALL"}})
	defer fake.Close()
	ch := newChannel(t, fake.APIURL(), testToken)
	fake.RateLimit("chat.postMessage", 120)
	err := ch.Ask(context.Background(), question("r1", map[string]string{"command": "make"}))
	var ae *slack.APIError
	if !errors.As(err, &ae) || ae.Code != "ratelimited" || ae.RetryAfter != 120*time.Second {
		t.Fatalf("Ask = %v, want a ratelimited APIError with Retry-After 120 s", err)
	}
	if n := fake.Calls("chat.postMessage"); n != 1 {
		t.Errorf("chat.postMessage called %d times, want 1", n)
	}
}

func TestErrorsNeverCarryTheToken(t *testing.T) {
	down := httptest.NewServer(nil)
	url := down.URL
	down.Close()
	ch := newChannel(t, url+"/api", testToken)
	err := ch.Ask(context.Background(), question("r1", map[string]string{"command": "make"}))
	if err == nil || strings.Contains(err.Error(), testToken) {
		t.Errorf("Ask against a server that is down: %v", err)
	}
	fake := slacktest.New(slacktest.Options{Token: testToken, Channels: []string{"CDEFAULT"}})
	defer fake.Close()
	ch = newChannel(t, fake.APIURL(), testToken)
	q := question("r1", map[string]string{"command": "make"})
	q.Team = "oncall" // configured to CONCALL, which this workspace lacks
	err = ch.Ask(context.Background(), q)
	var ae *slack.APIError
	if !errors.As(err, &ae) || ae.Code != "channel_not_found" || strings.Contains(err.Error(), testToken) {
		t.Errorf("Ask to a missing channel: %v", err)
	}
}

// TestShortcodesAreShownAsWritten (display red team, D6): Slack shows
// :name: as an emoji in mrkdwn and in plain_text unless "emoji": false,
// so a command holding ":white_check_mark:" or a session id holding
// ":lock:" would not read as what runs: the question and the outcome show
// them as written.
func TestShortcodesAreShownAsWritten(t *testing.T) {
	fake := slacktest.New(slacktest.Options{Token: testToken, Channels: []string{"CDEFAULT", "CONCALL"}})
	defer fake.Close()
	ch := newChannel(t, fake.APIURL(), testToken)

	cmd := "echo :white_check_mark: tests passed :x: && rm -rf :fire:"
	q := question("emoji", map[string]string{"command": cmd})
	q.Request.Description = "check :lock: status"
	// The plain_text parts: the context line, the offers' lines.
	q.Request.AgentID = "pod:white_check_mark:"
	q.Request.SessionID = "s:x:"
	if err := ch.Ask(context.Background(), q); err != nil {
		t.Fatal(err)
	}
	m := channeltest.Next(t, fake.Posted, "question")
	text := m.VisibleText()
	for _, emoji := range []string{"✅", "❌", "🔥", "🔒"} {
		if strings.Contains(text, emoji) {
			t.Errorf("the question shows %s for a shortcode the agent wrote:\n%s", emoji, text)
		}
	}
	for _, want := range []string{":white_check_mark: tests passed :x:", "agent pod:white_check_mark:", "session s:x:"} {
		if !strings.Contains(strings.ReplaceAll(text, "\u2060", ""), want) {
			t.Errorf("%q is not shown as written:\n%s", want, text)
		}
	}
}

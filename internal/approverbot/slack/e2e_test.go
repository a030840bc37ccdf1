package slack_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot/channeltest"
	"github.com/signoff-dev/signoff/internal/approverbot/slack/slacktest"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// The action ids of the question's buttons.
const (
	approve  = "signoff_approve"
	session  = "signoff_session"
	always   = "signoff_always"
	deny     = "signoff_deny"
	denyStop = "signoff_deny_stop"
	edit     = "signoff_edit"
)

func TestSlackQuestionIsPostedAndAnApprovalForTheSessionReachesTheAgent(t *testing.T) {
	e := start(t)
	pend, q := e.Ask(t, "r1", "make deploy")

	m := channeltest.Next(t, e.slack.Posted, "question in Slack")
	if m.Channel != "CDEFAULT" {
		t.Errorf("posted to %s, want the default team's channel CDEFAULT", m.Channel)
	}
	text := m.VisibleText()
	for _, want := range []string{"Approval needed: bash", "make deploy", "team default", "session s1", "agent a1", "request r1", "Expires"} {
		if !strings.Contains(text, want) {
			t.Errorf("question does not show %q:\n%s", want, text)
		}
	}
	want := []string{approve, session, deny, denyStop, edit}
	if q.Always != nil {
		want = []string{approve, session, always, deny, denyStop, edit}
		b, _ := m.Button(always)
		for _, p := range q.Always.Patterns {
			if !strings.Contains(b.Confirm, p) || !strings.Contains(text, p) {
				t.Errorf("Always does not say it grants %q (confirm %q)", p, b.Confirm)
			}
		}
	}
	if got := actionIDs(m); !slices.Equal(got, want) {
		t.Errorf("buttons %v, want %v", got, want)
	}
	for _, b := range m.Buttons() {
		if b.Value != "r1" {
			t.Errorf("button %s carries %q, want the request id", b.ActionID, b.Value)
		}
	}

	if status, body := e.click(t, m, session, alice); status != http.StatusOK {
		t.Fatalf("click: %d %s", status, body)
	}
	d := pend.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if d.Scope != messages.ScopeSession || d.DecidedBy.ID != "alice" || d.DecidedBy.Channel != "slack" || d.DecidedBy.Display != "Alice" {
		t.Errorf("decision scope %s by %+v, want session by alice (Alice) via slack", d.Scope, d.DecidedBy)
	}

	r := channeltest.Next(t, e.slack.Responses, "answer to the clicking user")
	if r.ResponseType != "ephemeral" || r.ReplaceOriginal {
		t.Errorf("answer is %q (replace_original %v), want an ephemeral message beside the question", r.ResponseType, r.ReplaceOriginal)
	}
	if !strings.Contains(r.Text, "approved (session) by Alice via slack") {
		t.Errorf("the clicking user is told %q", r.Text)
	}
	u := channeltest.NextFor(t, e.slack.Updated, "settled message", func(u slacktest.Message) bool { return len(u.Buttons()) == 0 })
	if u.TS != m.TS || u.Channel != m.Channel {
		t.Errorf("updated %s/%s, want the question's message %s/%s", u.Channel, u.TS, m.Channel, m.TS)
	}
	if got := u.VisibleText(); !strings.Contains(got, "✓ approved (session) by Alice via slack") || !strings.Contains(got, "make deploy") {
		t.Errorf("settled message does not show the question and its outcome:\n%s", got)
	}
}

func TestSlackDenyAndStopRejectsHardAndEndsTheTurn(t *testing.T) {
	e := start(t)
	pend, _ := e.Ask(t, "r1", "make clean")
	m := channeltest.Next(t, e.slack.Posted, "question in Slack")
	if status, body := e.click(t, m, denyStop, bob); status != http.StatusOK {
		t.Fatalf("click: %d %s", status, body)
	}
	e.submitFeedback(t, bob, "use make distclean")
	d := pend.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeDeny, messages.ReasonRejected)
	if d.RejectMode != messages.RejectHard || d.DecidedBy.ID != "bob" || d.Feedback != "use make distclean" {
		t.Errorf("decision %s by %s with feedback %q, want reject_hard by bob with his feedback", d.RejectMode, d.DecidedBy.ID, d.Feedback)
	}
	u := channeltest.NextFor(t, e.slack.Updated, "settled message", func(u slacktest.Message) bool { return len(u.Buttons()) == 0 })
	if got := u.VisibleText(); !strings.Contains(got, "denied and stopped by Bob via slack") {
		t.Errorf("settled message:\n%s", got)
	}
}

func TestSlackRefusesForgedStaleAndUnsignedRequestsAndDecidesNothing(t *testing.T) {
	e := start(t)
	pend, _ := e.Ask(t, "r1", "make deploy")
	m := channeltest.Next(t, e.slack.Posted, "question in Slack")

	// Every refused request would have rejected the call hard as alice.
	body, err := e.slack.Click(m, denyStop, alice)
	if err != nil {
		t.Fatal(err)
	}
	unsigned := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	tampered := slacktest.Sign(testSecret, time.Now(), body)
	sig := tampered.Get("X-Slack-Signature")
	last := "0"
	if strings.HasSuffix(sig, "0") {
		last = "1"
	}
	tampered.Set("X-Slack-Signature", sig[:len(sig)-1]+last)
	retimed := slacktest.Sign(testSecret, time.Now().Add(-10*time.Minute), body)
	retimed.Set("X-Slack-Request-Timestamp", slacktest.Sign(testSecret, time.Now(), body).Get("X-Slack-Request-Timestamp"))
	cases := []struct {
		name   string
		header http.Header
	}{
		{"a signature made with another secret", slacktest.Sign("not-the-signing-secret", time.Now(), body)},
		{"a tampered signature", tampered},
		{"a timestamp six minutes old", slacktest.Sign(testSecret, time.Now().Add(-6*time.Minute), body)},
		{"a timestamp six minutes ahead", slacktest.Sign(testSecret, time.Now().Add(6*time.Minute), body)},
		{"a fresh timestamp on an old signature", retimed},
		{"no signature headers", unsigned},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if status, answer := e.post(t, body, c.header); status != http.StatusUnauthorized {
				t.Errorf("status %d (%s), want 401", status, answer)
			}
		})
	}
	// A signed body with one byte changed is forged too.
	changed := []byte(strings.Replace(string(body), "deny_stop", "approve__", 1))
	if status, _ := e.post(t, changed, slacktest.Sign(testSecret, time.Now(), body)); status != http.StatusUnauthorized {
		t.Errorf("a changed body: status %d, want 401", status)
	}

	// Nothing was decided: the question is still open, and bob's genuine
	// click decides it.
	if status, answer := e.click(t, m, approve, bob); status != http.StatusOK {
		t.Fatalf("genuine click: %d %s", status, answer)
	}
	d := pend.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if d.DecidedBy.ID != "bob" {
		t.Errorf("decided by %s, want bob (a refused request decided the question)", d.DecidedBy.ID)
	}
	if !strings.Contains(e.logs.String(), "refused an unauthenticated interaction") {
		t.Error("refusals are not logged")
	}
}

func TestSlackUnknownUserIsToldAndNothingIsSent(t *testing.T) {
	e := start(t)
	pend, _ := e.Ask(t, "r1", "make deploy")
	m := channeltest.Next(t, e.slack.Posted, "question in Slack")

	if status, body := e.click(t, m, approve, nobody); status != http.StatusOK {
		t.Fatalf("click: %d %s", status, body)
	}
	r := channeltest.Next(t, e.slack.Responses, "answer to the unknown user")
	if r.ResponseType != "ephemeral" || !strings.Contains(r.Text, "not a configured approver") || !strings.Contains(r.Text, "UNOBODY") {
		t.Errorf("unknown user is told %q (%s)", r.Text, r.ResponseType)
	}
	if status, body := e.click(t, m, deny, alice); status != http.StatusOK {
		t.Fatalf("click: %d %s", status, body)
	}
	e.submitFeedback(t, alice, "")
	d := pend.Wait(t)
	if d.DecidedBy.ID != "alice" || d.Outcome != messages.OutcomeDeny {
		t.Errorf("decision %s by %s, want alice's deny (the unknown user's approval must not count)", d.Outcome, d.DecidedBy.ID)
	}
}

func TestSlackClickOnAQuestionSettledElsewhereSaysWhoDecidedAndUpdatesTheMessage(t *testing.T) {
	e := start(t)
	pend, q := e.Ask(t, "r1", "make deploy")
	m := channeltest.Next(t, e.slack.Posted, "question in Slack")

	// Carol answers on another device first.
	if rep := e.Device.Approve(q, "carol", messages.ScopeOnce); !rep.Applied {
		t.Fatalf("carol's approval not applied: %+v", rep)
	}
	brokertest.WantDecision(t, pend.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	u := channeltest.NextFor(t, e.slack.Updated, "message settled by the resolution", func(u slacktest.Message) bool { return len(u.Buttons()) == 0 })
	if got := u.VisibleText(); !strings.Contains(got, "approved (once) by carol via test") {
		t.Errorf("settled message:\n%s", got)
	}

	// Alice still sees the buttons (her client had not refreshed) and clicks.
	if status, body := e.click(t, m, deny, alice); status != http.StatusOK {
		t.Fatalf("click: %d %s", status, body)
	}
	r := channeltest.Next(t, e.slack.Responses, "answer to the late click")
	if !strings.Contains(r.Text, "Not applied: already decided by carol via test") {
		t.Errorf("late click is told %q", r.Text)
	}
	u = channeltest.NextFor(t, e.slack.Updated, "message updated after the late click", func(u slacktest.Message) bool { return u.TS == m.TS })
	if len(u.Buttons()) != 0 || !strings.Contains(u.VisibleText(), "approved (once) by carol") {
		t.Errorf("message after the late click has buttons %v:\n%s", actionIDs(u), u.VisibleText())
	}
	if rec, ok := e.Device.WaitResolved("r1"); !ok || rec.Decision.DecidedBy.ID != "carol" || rec.Decision.Outcome != messages.OutcomeAllow {
		t.Errorf("resolution %+v, want carol's approval to stand", rec)
	}
}

func TestSlackQuorumCountsEachApprovalInTheSameMessage(t *testing.T) {
	e := start(t)
	pend, _ := e.Ask(t, "k1", "kubectl rollout restart deploy/api")
	m := channeltest.Next(t, e.slack.Posted, "question in Slack")
	if m.Channel != "CONCALL" {
		t.Fatalf("posted to %s, want the oncall team's channel", m.Channel)
	}
	if !strings.Contains(m.VisibleText(), "Approvals: 0 of 2") {
		t.Errorf("quorum question does not show the count:\n%s", m.VisibleText())
	}

	// Bob is not on call: refused, with the broker's reason.
	if status, body := e.click(t, m, approve, bob); status != http.StatusOK {
		t.Fatalf("click: %d %s", status, body)
	}
	if r := channeltest.Next(t, e.slack.Responses, "answer to bob"); !strings.Contains(r.Text, `Not applied: approver "bob" is not a member of team oncall`) {
		t.Errorf("bob is told %q", r.Text)
	}

	if status, body := e.click(t, m, approve, carol); status != http.StatusOK {
		t.Fatalf("click: %d %s", status, body)
	}
	if r := channeltest.Next(t, e.slack.Responses, "answer to carol"); !strings.Contains(r.Text, "approval 1 of 2 counted") {
		t.Errorf("carol is told %q", r.Text)
	}
	u := channeltest.Next(t, e.slack.Updated, "message with the count")
	if u.TS != m.TS || !strings.Contains(u.VisibleText(), "Approvals: 1 of 2 so far: carol") || len(u.Buttons()) == 0 {
		t.Errorf("message after one approval (buttons %v):\n%s", actionIDs(u), u.VisibleText())
	}

	if status, body := e.click(t, u, approve, dave); status != http.StatusOK {
		t.Fatalf("click: %d %s", status, body)
	}
	d := pend.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if d.DecidedBy.ID != "dave" {
		t.Errorf("settled by %s, want dave's approval to complete the quorum", d.DecidedBy.ID)
	}
	u = channeltest.NextFor(t, e.slack.Updated, "settled message", func(u slacktest.Message) bool { return len(u.Buttons()) == 0 })
	if u.TS != m.TS {
		t.Errorf("settled a different message %s, want %s", u.TS, m.TS)
	}
}

func TestSlackGarbledInteractionsGetAClear400(t *testing.T) {
	e := start(t)
	pend, _ := e.Ask(t, "r1", "make deploy")
	m := channeltest.Next(t, e.slack.Posted, "question in Slack")

	valid, err := e.slack.Click(m, approve, alice)
	if err != nil {
		t.Fatal(err)
	}
	payload := func(p map[string]any) []byte {
		b, err := slacktest.EncodePayload(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	button := func(actionID, value string) []any {
		return []any{map[string]any{"type": "button", "action_id": actionID, "value": value}}
	}
	cases := []struct {
		name string
		body []byte
		want string
	}{
		{"a body that is not form-encoded", []byte("%zz;payload"), "not application/x-www-form-urlencoded"},
		{"a form without payload", []byte("token=x&team_id=T1"), "no payload field"},
		{"a payload that is not JSON", []byte("payload=%7Bnot+json"), "payload is not valid JSON"},
		{"a view submission of another app", payload(map[string]any{"type": "view_submission", "user": alice, "view": map[string]any{"callback_id": "x", "private_metadata": "not ours"}}), "private_metadata is not the channel's"},
		{"a view submission with a forged request id", payload(map[string]any{"type": "view_submission", "user": alice, "view": map[string]any{"callback_id": "signoff_reject", "private_metadata": `{"r":"r1.>","a":"signoff_deny"}`}}), "request id"},
		{"a view submission of an unknown form", payload(map[string]any{"type": "view_submission", "user": alice, "view": map[string]any{"callback_id": "signoff_other", "private_metadata": `{"r":"r1","a":"signoff_deny"}`}}), "unknown view callback_id"},
		{"a message action", payload(map[string]any{"type": "message_action", "user": alice}), `unsupported interaction type "message_action"`},
		{"an editor submission that names another action", payload(map[string]any{"type": "view_submission", "user": alice, "view": map[string]any{"callback_id": "signoff_edit", "private_metadata": `{"r":"r1","a":"signoff_deny"}`}}), "unknown view callback_id"},
		{"block actions without an action", payload(map[string]any{"type": "block_actions", "user": alice, "actions": []any{}}), "has no action"},
		{"a button of another app", payload(map[string]any{"type": "block_actions", "user": alice, "actions": button("other_app_button", "r1")}), `unknown action_id "other_app_button"`},
		{"a button without a request id", payload(map[string]any{"type": "block_actions", "user": alice, "actions": button(approve, "")}), "request id"},
		{"a request id that is not a token", payload(map[string]any{"type": "block_actions", "user": alice, "actions": button(approve, "r1.>")}), "request id"},
		{"a click without a user", payload(map[string]any{"type": "block_actions", "actions": button(approve, "r1")}), "user.id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, answer := e.post(t, c.body, slacktest.Sign(testSecret, time.Now(), c.body))
			if status != http.StatusBadRequest || !strings.Contains(answer, c.want) {
				t.Errorf("status %d %q, want 400 saying %q", status, answer, c.want)
			}
		})
	}
	// The question is still open.
	if status, answer := e.post(t, valid, slacktest.Sign(testSecret, time.Now(), valid)); status != http.StatusOK {
		t.Fatalf("valid click: %d %s", status, answer)
	}
	brokertest.WantDecision(t, pend.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
}

func TestSlackCheckHealthCallsAuthTest(t *testing.T) {
	fake := slacktest.New(slacktest.Options{Token: testToken, Channels: []string{"CDEFAULT", "CONCALL"}})
	defer fake.Close()
	ch := newChannel(t, fake.APIURL(), testToken)
	if err := ch.CheckHealth(context.Background()); err != nil {
		t.Fatalf("CheckHealth: %v", err)
	}
	if fake.Calls("auth.test") != 1 {
		t.Errorf("auth.test called %d times, want 1", fake.Calls("auth.test"))
	}
	bad := newChannel(t, fake.APIURL(), "xoxb-revoked")
	err := bad.CheckHealth(context.Background())
	if err == nil || !strings.Contains(err.Error(), "invalid_auth") || strings.Contains(err.Error(), "xoxb-revoked") {
		t.Errorf("CheckHealth with a bad token: %v, want invalid_auth without the token", err)
	}
}

func TestSlackAlwaysGrantsWhatTheButtonSaid(t *testing.T) {
	e := start(t)
	pend, q := e.Ask(t, "r1", "git push origin main")
	if q.Always == nil || !slices.Equal(q.Always.Patterns, []string{"git push origin main"}) {
		t.Fatalf("test setup: the broker offers Always %+v, want git push origin main", q.Always)
	}
	m := channeltest.Next(t, e.slack.Posted, "question in Slack")
	b, ok := m.Button(always)
	if !ok || !strings.Contains(b.Confirm, "git push origin main") || !strings.Contains(m.VisibleText(), `Always approves 1 bash pattern for agent a1, `) || !strings.Contains(m.VisibleText(), `: "bash(git push origin main)"`) {
		t.Fatalf("Always button %+v does not say what it grants:\n%s", b, m.VisibleText())
	}
	if status, body := e.click(t, m, always, alice); status != http.StatusOK {
		t.Fatalf("click: %d %s", status, body)
	}
	d := pend.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if d.Scope != messages.ScopeAlwaysPrefix || !slices.Equal(d.GrantedPattern, []string{"git push origin main"}) {
		t.Errorf("decision scope %s grants %v, want always_prefix git push origin main", d.Scope, d.GrantedPattern)
	}
	u := channeltest.NextFor(t, e.slack.Updated, "settled message", func(u slacktest.Message) bool { return len(u.Buttons()) == 0 })
	if !strings.Contains(u.VisibleText(), "approved (always) by Alice via slack; grants git push origin main") {
		t.Errorf("settled message:\n%s", u.VisibleText())
	}
	// The grant holds: the same push of the same agent is not asked again
	// (git push changes things, so Always grants it exactly: issue 25 item 4).
	d, err := e.Agent.Request(t.Context(), client.Call{RequestID: "r2", Tool: "bash", Arguments: brokertest.Bash("git push origin main")})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonScopeGrant)
}

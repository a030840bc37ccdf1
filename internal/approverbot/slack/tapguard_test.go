package slack_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot/channeltest"
	"github.com/signoff-dev/signoff/internal/approverbot/slack"
	"github.com/signoff-dev/signoff/internal/approverbot/slack/slacktest"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// A click that approves, coming right after a question was posted to the
// channel (its messages moved), may have been aimed at another question's
// button: it is refused and the approver told to look again; a rejection
// is taken at once.
func TestSlackAnApprovalRightAfterTheChannelChangedIsHeldBack(t *testing.T) {
	var skew atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	e := startWith(t, brokertest.Options{}, slack.Options{TapGuard: 2 * time.Second, Now: now})

	pend, _ := e.Ask(t, "r1", "make deploy")
	m := channeltest.Next(t, e.slack.Posted, "question in Slack")
	if status, body := e.click(t, m, session, alice); status != http.StatusOK {
		t.Fatalf("click: %d %s", status, body)
	}
	r := channeltest.Next(t, e.slack.Responses, "answer to the click held back")
	if !strings.Contains(r.Text, "nothing was sent") || !strings.Contains(r.Text, "tap again") {
		t.Errorf("the approver is told %q, want that nothing was sent and to look again", r.Text)
	}
	if d, _ := pend.Peek(); d != nil {
		t.Fatalf("a click right after the question arrived decided %s (%s)", d.Outcome, d.Scope)
	}

	// Past the window the click is taken. (The bot's own calls — the
	// question's post, the ephemeral answer — may return after the clock
	// moved, which counts as a change then: move the clock again until a
	// click is past every change.)
	for i := 0; ; i++ {
		skew.Add(int64(3 * time.Second))
		if status, body := e.click(t, m, approve, alice); status != http.StatusOK {
			t.Fatalf("click: %d %s", status, body)
		}
		r = channeltest.Next(t, e.slack.Responses, "answer to the approval")
		if !strings.Contains(r.Text, "nothing was sent") {
			break
		}
		if i == 5 {
			t.Fatalf("clicks are still held back 18 s after the last change: %q", r.Text)
		}
	}
	d := pend.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if d.Scope != messages.ScopeOnce {
		t.Errorf("decision scope %s, want once: the held-back Session click must not count", d.Scope)
	}

	// Another question arrives; a Deny at once is taken.
	pend2, _ := e.Ask(t, "r2", "make clean")
	m2 := channeltest.NextFor(t, e.slack.Posted, "second question", func(p slacktest.Message) bool { return strings.Contains(p.VisibleText(), "make clean") })
	if status, body := e.click(t, m2, deny, bob); status != http.StatusOK {
		t.Fatalf("click: %d %s", status, body)
	}
	e.submitFeedback(t, bob, "")
	d2 := pend2.Wait(t)
	if d2.Outcome != messages.OutcomeDeny || d2.DecidedBy.ID != "bob" {
		t.Errorf("decision %s by %s, want bob's deny", d2.Outcome, d2.DecidedBy.ID)
	}
}

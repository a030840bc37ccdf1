package channeltest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// SteppingUp is implemented by the harness of a channel that can take a
// WebAuthn assertion (the web page): it offers Approve on a step-up
// question, and an approval without the assertion is still refused.
type SteppingUp interface {
	// StepsUp reports whether the channel asks for a passkey or security
	// key when a step-up question is approved.
	StepsUp() bool
}

// testStepUp: on a question whose approval needs step-up, a channel that
// cannot ask for a passkey (Slack, Telegram, the terminal, the webhook)
// offers no approving control — only the rejections — and says to approve
// on the web page (the core refuses an approval built anyway: see
// approverbot's TestAnApprovalOfAStepUpQuestionNeedsTheAssertion); a
// channel that can ask for one offers Approve but approves nothing without
// the assertion; a rejection needs no second factor.
func testStepUp(t *testing.T, newHarness Factory) {
	w := start(t, newHarness, "alice")
	pend, q := w.ask(t, "helm upgrade web ./chart")
	if q.StepUp == nil {
		t.Fatalf("test setup: the question of a step_up rule carries no step_up")
	}
	id := q.Request.RequestID
	text, choices := w.h.Shown(t, id)
	steps := false
	if s, ok := w.h.(SteppingUp); ok {
		steps = s.StepsUp()
	}
	approving := slices.ContainsFunc(choices, approverbot.Choice.Approves)
	switch {
	case !steps && approving:
		t.Errorf("a channel that cannot ask for a passkey offers an approval of a step-up question: choices %v", choices)
	case steps && !slices.Contains(choices, approverbot.ChoiceOnce):
		t.Errorf("a channel that asks for a passkey offers no Approve on a step-up question: choices %v", choices)
	}
	if !slices.Contains(choices, approverbot.ChoiceReject) || !slices.Contains(choices, approverbot.ChoiceRejectStop) {
		t.Errorf("a step-up question offers no rejections: choices %v", choices)
	}
	if flat := strings.Join(strings.Fields(text), " "); !steps && !strings.Contains(flat, "web page") {
		t.Errorf("the question does not send the approver to the web page:\n%s", text)
	}

	if steps {
		// The channel offers Approve: without the assertion it still
		// approves nothing — the channel says why, and nothing reaches
		// the agent (a decision the brokers made would, within the pause).
		told := w.h.Choose(t, id, approverbot.ChoiceOnce, "")
		time.Sleep(300 * time.Millisecond)
		if d, err := pend.Peek(); d != nil || err != nil {
			t.Fatalf("an approval without step-up settled the request: %+v, %v", d, err)
		}
		if low := strings.ToLower(told); !strings.Contains(low, "step-up") && !strings.Contains(low, "passkey") {
			t.Errorf("the channel's answer to an approval without step-up does not say why: %q", told)
		}
	}

	// A rejection needs no second factor.
	w.h.Choose(t, id, approverbot.ChoiceReject, "use the pipeline")
	if d := pend.Wait(t); d.Outcome != messages.OutcomeDeny || d.ReasonCode != messages.ReasonRejected {
		t.Fatalf("the rejection of a step-up question: %s %s, want deny rejected", d.Outcome, d.ReasonCode)
	}
	w.h.Settled(t, id)
}

package approverbot

import (
	"errors"
	"fmt"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Step-up (docs/POLICY.md "Step-up"): approving a question that carries
// step_up needs a fresh WebAuthn assertion, which only the web page can
// take. Every other channel offers such a question's rejections and a link
// to the web page; the core refuses an approval of it that carries no
// assertion, whichever channel built it, and the brokers refuse it again.

// ErrStepUp: approving the question needs a second factor the answer does
// not carry. It wraps [ErrChoice].
var ErrStepUp = fmt.Errorf("%w: step-up required", ErrChoice)

// WhyStepUp is what a channel says instead of offering Approve on a
// step-up question.
const WhyStepUp = "Approving this call needs your passkey or security key (step-up): approve it on the approver web page; you may reject it here."

// stepUpSkew is how far ahead of this bot's clock an assertion may be dated.
const stepUpSkew = 5 * time.Second

// NeedsStepUp reports whether approving q needs a second factor.
func (q Question) NeedsStepUp() bool { return q.StepUp != nil }

// checkStepUp says why the answer a (approved or not) of q lacks the second
// factor q needs, wrapping [ErrStepUp]; nil when it needs none or has it.
func checkStepUp(q Question, approved bool, ev *messages.StepUp, now time.Time) error {
	if !approved {
		return nil
	}
	if q.StepUp == nil {
		if ev != nil {
			return errors.New("step-up evidence on a question that needs none: nothing was sent")
		}
		return nil
	}
	switch {
	case ev == nil:
		return fmt.Errorf("%w (%s): %s", ErrStepUp, q.StepUp.Why, WhyStepUp)
	case ev.AssertedAt.After(now.Add(stepUpSkew)), now.Sub(ev.AssertedAt) > q.StepUp.MaxAge():
		return fmt.Errorf("%w: the assertion was made %s ago, and this question needs one from the last %s; confirm again",
			ErrStepUp, now.Sub(ev.AssertedAt).Round(time.Second), q.StepUp.MaxAge())
	}
	return nil
}

// ChooseSteppedUp is [Choose] for a channel that verified a second factor
// for the answer (the web page's WebAuthn assertion): ev is the evidence
// the response carries. It approves only a question that needs step-up.
func ChooseSteppedUp(q Question, c Choice, approver, channel, device, feedback string, ev *messages.StepUp) (Answer, error) {
	a, err := choose(q, c, approver, channel, device, feedback, ev != nil)
	if err != nil {
		return Answer{}, err
	}
	if err := checkStepUp(q, a.Approved, ev, time.Now()); err != nil {
		return Answer{}, err
	}
	if a.Approved {
		a.StepUp = ev
	}
	return a, nil
}

package approverbot

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot/card"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Choice is what a human picked on a question: a button, a key, an action
// of an API. Every channel offers the same five; [Choose] turns one into
// the [Answer] the brokers get, so the scope and reject rules live here
// once.
type Choice string

// The choices, in the order channels offer them. The values are the web
// API's action names.
const (
	ChoiceOnce       Choice = "approve"     // approve this call
	ChoiceSession    Choice = "session"     // approve, and grant the session what the question offers
	ChoiceAlways     Choice = "always"      // approve, and grant the agent the Always patterns
	ChoiceReject     Choice = "reject_soft" // reject; the agent goes on
	ChoiceRejectStop Choice = "reject_hard" // reject and end the agent's turn
)

// Choices lists every choice, in the order channels offer them.
var Choices = []Choice{ChoiceOnce, ChoiceSession, ChoiceAlways, ChoiceReject, ChoiceRejectStop}

// Approves reports whether the choice approves.
func (c Choice) Approves() bool {
	return c == ChoiceOnce || c == ChoiceSession || c == ChoiceAlways
}

// ParseChoice reads a choice's name; the error lists the valid ones.
func ParseChoice(s string) (Choice, error) {
	for _, c := range Choices {
		if string(c) == s {
			return c, nil
		}
	}
	names := make([]string, len(Choices))
	for i, c := range Choices {
		names[i] = string(c)
	}
	return "", fmt.Errorf("%w: unknown choice %q (want %s)", ErrChoice, card.Clip(s, 40), strings.Join(names, ", "))
}

// ErrChoice: the choice is not offered on this question; nothing was sent.
var ErrChoice = errors.New("choice not offered")

// ChoiceFromScope is the choice a scope-and-mode answer stands for (the
// webhook's body): an approval's scope (empty: once), or a rejection's mode
// (empty: reject_hard, as DESIGN §3 says).
func ChoiceFromScope(approved bool, scope messages.Scope, mode messages.RejectMode) Choice {
	switch {
	case approved && scope == messages.ScopeSession:
		return ChoiceSession
	case approved && (scope == messages.ScopeAlways || scope == messages.ScopeAlwaysPrefix):
		return ChoiceAlways
	case approved:
		return ChoiceOnce
	case mode == messages.RejectSoft:
		return ChoiceReject
	}
	return ChoiceRejectStop
}

// Offered reports whether q offers c to approver, and if not, why. The
// human the agent works for is offered the rejections only, and so is
// everyone on a question no channel shows whole. An approval of
// a question that needs step-up is refused with [ErrStepUp]: only a
// channel that takes a WebAuthn assertion (the web page) offers it, with
// the assertion.
func Offered(q Question, c Choice, approver string) error {
	return offered(q, nil, c, approver, false)
}

// OfferedIn is [Offered] for q already presented with [DefaultLimits] (v,
// from [Present]): a caller that asks of every choice presents q once.
func OfferedIn(q Question, v View, c Choice, approver string) error {
	return offered(q, &v, c, approver, false)
}

// offered is Offered; v is q presented with DefaultLimits, or nil to
// present it when an approval needs it.
func offered(q Question, v *View, c Choice, approver string, steppedUp bool) error {
	if approver != "" && q.Request.RequestedBy == approver && c.Approves() {
		// One's own request may be rejected, never approved.
		return fmt.Errorf("%w: %s", ErrChoice, WhyNotMine)
	}
	if !c.Approves() {
		return nil
	}
	if v == nil {
		p := Present(q, DefaultLimits)
		v = &p
	}
	// What no channel shows whole nobody approves, whatever channel the
	// answer comes from (the web page and the webhook show DefaultLimits'
	// view).
	if !v.Whole() {
		return fmt.Errorf("%w: %s", ErrChoice, v.WhyNotWhole("any channel"))
	}
	if q.NeedsStepUp() && !steppedUp {
		return fmt.Errorf("%w (%s): %s", ErrStepUp, q.StepUp.Why, WhyStepUp)
	}
	if o, name := v.Session, "Session"; c == ChoiceSession && !o.Offered {
		return fmt.Errorf("%w: %s is %s", ErrChoice, name, o.WhyNot)
	}
	if o, name := v.Always, "Always"; c == ChoiceAlways && !o.Offered {
		return fmt.Errorf("%w: %s is %s", ErrChoice, name, o.WhyNot)
	}
	return nil
}

// Choose turns a choice on q into the answer of approver (an approver id),
// given where it was made. Session and Always send the scope the question
// offers (for Always: always, or always_prefix for a shell command's
// prefixes). It refuses a choice q does not offer: Session or Always where
// the brokers do not offer it (or, on an older broker's question, Always
// where no standing grant may cover the call), any answer to one's own
// request (the brokers refuse those too).
func Choose(q Question, c Choice, approver, channel, device, feedback string) (Answer, error) {
	return choose(q, c, approver, channel, device, feedback, false)
}

// ErrHeldBack: an approving answer came too soon after a question that
// follows a withdrawn one was shown ([Question.Follows]).
var ErrHeldBack = errors.New("held back")

// heldBack refuses an approving choice c on q within FollowHold of the bot
// first seeing q, when q follows a withdrawn question: the answer may have
// been meant for that one.
func heldBack(q Question, c Choice, now time.Time) error {
	if q.Follows == nil || !c.Approves() || !now.Before(q.Seen.Add(FollowHold)) {
		return nil
	}
	return fmt.Errorf("%w: this question came as the agent withdrew another just before it; it may not be the one you read: read this one, then answer again", ErrHeldBack)
}

// choose is [Choose]; steppedUp says the channel verified a second factor
// for the answer (the web page's WebAuthn assertion).
func choose(q Question, c Choice, approver, channel, device, feedback string, steppedUp bool) (Answer, error) {
	if _, err := ParseChoice(string(c)); err != nil {
		return Answer{}, err
	}
	if q.Open() && q.Request.Tool != "" {
		// A settled question's answer goes to the brokers all the same:
		// their reply says who decided it; one the bot does not know is
		// refused as unknown by Respond.
		if err := offered(q, nil, c, approver, steppedUp); err != nil {
			return Answer{}, err
		}
		if err := heldBack(q, c, time.Now()); err != nil {
			return Answer{}, err
		}
	}
	a := Answer{RequestID: q.Request.RequestID, Approver: approver, Channel: channel, Device: device, Choice: c,
		Feedback: strings.TrimSpace(feedback)}
	switch c {
	case ChoiceOnce:
		a.Approved, a.Scope = true, messages.ScopeOnce
	case ChoiceSession:
		a.Approved, a.Scope = true, messages.ScopeSession
	case ChoiceAlways:
		a.Approved, a.Scope = true, messages.ScopeAlways
		if _, o := offers(q, DefaultLimits); o.Scope == messages.ScopeAlways || o.Scope == messages.ScopeAlwaysPrefix {
			a.Scope = o.Scope
		}
	case ChoiceReject:
		a.RejectMode = messages.RejectSoft
	case ChoiceRejectStop:
		a.RejectMode = messages.RejectHard
	}
	return a, nil
}

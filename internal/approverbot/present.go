package approverbot

import (
	"strconv"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot/card"
)

// What a question shows is built by package card, once for every channel;
// these names keep the channels' spelling of it.
type (
	Limits         = card.Limits
	View           = card.View
	SubcommandView = card.SubcommandView
	Offer          = card.Offer
)

// DefaultLimits are [card.DefaultLimits].
var DefaultLimits = card.DefaultLimits

// Present builds the view of q within l ([card.Present]); a question that
// follows a withdrawn one says so first ([Question.Follows]).
func Present(q Question, l Limits) View {
	v := card.Present(q.ApprovalNeeded, l)
	if q.Follows != nil {
		v.FirstWarning(followWarning(q.Follows, l), l)
	}
	return v
}

// followWarning is the warning on a question that follows a withdrawn one:
// the core's words, the withdrawn call's summary in quotes.
func followWarning(w *Withdrawn, l Limits) string {
	what := "a question this bot had not shown"
	if w.Call.Request.Tool != "" {
		s := card.Present(w.Call, l)
		what = "its question " + strconv.Quote(card.ClipWidth(s.Tool+" "+s.Summary(), followCallChars, l.Width))
	}
	return "⚠ The agent withdrew " + what + " " + ago(w.Before) + " before asking this one: this is another question, whatever it looks like; read it whole before you answer."
}

// followCallChars bounds the withdrawn call in the warning: enough to
// recognise it, short enough to leave the card's other warnings room.
const followCallChars = 80

// ago says a short duration in words: "just", "12 s", "1 min".
func ago(d time.Duration) string {
	switch {
	case d < time.Second:
		return "less than a second"
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + " s"
	}
	return strconv.Itoa(int(d/time.Minute)) + " min"
}

// offers says what q's Session and Always answers grant ([card.Offers]).
func offers(q Question, l Limits) (session, always Offer) { return card.Offers(q.ApprovalNeeded, l) }

// WhyNotMine is why no approval is offered on one's own request.
const WhyNotMine = card.WhyNotMine

// WhyNoAlways is why a question of an older broker offers no Always answer.
const WhyNoAlways = card.WhyNoAlways

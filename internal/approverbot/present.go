package approverbot

import "github.com/signoff-dev/signoff/internal/approverbot/card"

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

// Present builds the view of q within l ([card.Present]).
func Present(q Question, l Limits) View { return card.Present(q.ApprovalNeeded, l) }

// offers says what q's Session and Always answers grant ([card.Offers]).
func offers(q Question, l Limits) (session, always Offer) { return card.Offers(q.ApprovalNeeded, l) }

// WhyNotMine is why no approval is offered on one's own request.
const WhyNotMine = card.WhyNotMine

// WhyNoAlways is why a question of an older broker offers no Always answer.
const WhyNoAlways = card.WhyNoAlways

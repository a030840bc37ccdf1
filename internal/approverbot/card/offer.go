package card

import (
	"strings"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// What the standing answers (Session, Always) of a question grant is the
// brokers' to say: they alone know whether a grant made by this answer could
// settle the same question again (the ask's teams, its quorum, a safety
// override, an explicit ask rule; DESIGN §4 step 5). A question carries it
// in ApprovalNeeded.Offers, and the core shows exactly that and refuses a
// choice it does not offer. A question of an older broker has no offers:
// Always is offered as its `always` field says, and Session as that broker
// grants it, the whole tool for the session.

// WhyNoAlways is why a question of an older broker offers no Always answer.
const WhyNoAlways = "not offered: this call holds something no standing grant may cover (sudo, a shell wrapper such as bash -c or eval, or a safety override); approve once or for the session"

// WhyNoAgent is why Always is not offered on a request without an agent.
const WhyNoAgent = "not offered: the request names no agent to grant it to; approve once or for the session"

// WhyNotListed is why an answer the brokers' offers leave out is not
// offered: a question with offers offers only what they list.
const WhyNotListed = "not offered: the brokers did not offer it for this question"

// WhyNoReason stands in for a refusal the brokers gave no reason for.
const WhyNoReason = "not offered by the brokers (they gave no reason)"

// Offers says what q's Session and Always answers grant, or why they are
// not offered.
func Offers(q messages.ApprovalNeeded, l Limits) (session, always Offer) {
	if len(q.Offers) == 0 {
		return legacySessionOffer(q), legacyAlwaysOffer(q, l)
	}
	var so, ao *messages.GrantOffer
	for i := range q.Offers {
		o := &q.Offers[i]
		switch {
		case o.Scope == messages.ScopeSession && so == nil:
			so = o
		case (o.Scope == messages.ScopeAlways || o.Scope == messages.ScopeAlwaysPrefix) && ao == nil:
			ao = o
		}
	}
	return brokerOffer(q, l, so), brokerOffer(q, l, ao)
}

// brokerOffer is the Offer of the brokers' o (nil: not listed).
func brokerOffer(q messages.ApprovalNeeded, l Limits, o *messages.GrantOffer) Offer {
	switch {
	case o == nil:
		return Offer{WhyNot: WhyNotListed}
	case !o.Offered:
		return Offer{Scope: o.Scope, WhyNot: notOffered(o.WhyNot, l)}
	}
	out := Offer{Offered: true, Scope: o.Scope, Tool: ClipWidth(OneLine(o.Tool), l.Command, l.Width)}
	if o.Tool == "" {
		out.Tool = ClipWidth(OneLine(q.Request.Tool), l.Command, l.Width)
	}
	out.Patterns, out.MorePatterns = ClipPatterns(o.Patterns, l)
	if o.Scope == messages.ScopeSession {
		out.Session = q.Request.SessionID
		out.Grants = out.Short() + " for session " + out.Session + noteOf(o, l)
		return out
	}
	if q.Request.AgentID == "" {
		return Offer{Scope: o.Scope, WhyNot: WhyNoAgent}
	}
	out.Agent = q.Request.AgentID
	out.Grants = out.Short() + " for agent " + out.Agent + ", until revoked or it expires" + noteOf(o, l)
	return out
}

// noteOf is the brokers' condition on an offered scope as the channels show
// it ("; granted only if all 2 approvers choose Session…"), or "".
func noteOf(o *messages.GrantOffer, l Limits) string {
	if o.Note == "" {
		return ""
	}
	return "; " + ClipWidth(OneLine(o.Note), l.Prose, l.Width)
}

// notOffered is the brokers' reason as the channels show it: "not offered:
// …".
func notOffered(why string, l Limits) string {
	why = ClipWidth(OneLine(why), l.Prose, l.Width)
	switch {
	case why == "":
		return WhyNoReason
	case strings.HasPrefix(strings.ToLower(why), "not offered"):
		return why
	}
	return "not offered: " + why
}

// ClipPatterns is ps as the channels show them: at most l.Patterns, each
// on one line within l.Pattern; more is how many were left out.
func ClipPatterns(ps []string, l Limits) (out []string, more int) {
	for _, p := range ps[:min(len(ps), l.Patterns)] {
		out = append(out, ClipWidth(OneLine(p), l.Pattern, l.Width))
	}
	return out, len(ps) - len(out)
}

// legacySessionOffer is Session on a question of an older broker: it grants
// the whole tool for the session.
func legacySessionOffer(q messages.ApprovalNeeded) Offer {
	o := Offer{Offered: true, Scope: messages.ScopeSession, Tool: q.Request.Tool, Session: q.Request.SessionID}
	o.Grants = o.Short() + " of session " + o.Session
	return o
}

// legacyAlwaysOffer is Always on a question of an older broker, from its
// `always` field.
func legacyAlwaysOffer(q messages.ApprovalNeeded, l Limits) Offer {
	switch {
	case q.Always == nil:
		return Offer{WhyNot: WhyNoAlways}
	case q.Request.AgentID == "":
		return Offer{WhyNot: WhyNoAgent}
	}
	o := Offer{Offered: true, Scope: messages.ScopeAlways, Tool: q.Always.Tool, Agent: q.Request.AgentID}
	if q.Always.Scope.Valid() {
		o.Scope = q.Always.Scope
	}
	if o.Tool == "" {
		o.Tool = q.Request.Tool
	}
	o.Patterns, o.MorePatterns = ClipPatterns(q.Always.Patterns, l)
	o.Grants = o.Short() + " for agent " + o.Agent + ", until revoked"
	return o
}

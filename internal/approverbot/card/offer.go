package card

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
		return legacySessionOffer(q, l), legacyAlwaysOffer(q, l)
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
	out.Where = whereOf(q, l)
	out.Note = strings.TrimPrefix(noteOf(o, l), "; ")
	if o.Scope == messages.ScopeSession {
		// A session grant holds for the agent that asked in that session
		// (the engine's grantedTo): another agent sharing the session id
		// asks again. The words say so.
		out.Session, out.Agent = q.Request.SessionID, q.Request.AgentID
		out.Until = untilOf(o.Expires, "until the session ends")
		return out
	}
	if q.Request.AgentID == "" {
		return Offer{Scope: o.Scope, WhyNot: WhyNoAgent}
	}
	out.Agent = q.Request.AgentID
	out.Until = untilOf(o.Expires, "until revoked")
	out.Warning = hostWarning(out.Agent)
	return out
}

// whereOf says where a grant holds: in any working directory — grants
// are not bound to one — and the one this call runs in, which relative
// paths of an exact pattern (rm -rf build) are relative to.
func whereOf(q messages.ApprovalNeeded, l Limits) string {
	if q.Request.Cwd == "" {
		return "in any working directory (this call names none)"
	}
	return "in any working directory (this call's: " + ClipWidth(PathLine(q.Request.Cwd), l.Command, l.Width) + ")"
}

// untilOf says until when a grant lasts, from GrantOffer.Expires: "never"
// is until it is revoked (or the session ends, for a session grant); a
// duration is "for 30 days" and that; "" (a broker that does not say) is
// "until revoked or it expires".
func untilOf(expires, end string) string {
	switch expires {
	case "":
		return end + " or it expires"
	case messages.ExpiresNever:
		return end
	}
	d, err := time.ParseDuration(expires)
	if err != nil || d <= 0 {
		return end + " or it expires"
	}
	return "for " + humanDuration(d) + " or " + end
}

// humanDuration is d in whole days or hours when it is one ("30 days",
// "8 hours"), else as Go writes it ("90m0s").
func humanDuration(d time.Duration) string {
	plural := func(n int64, unit string) string {
		if n == 1 {
			return "1 " + unit
		}
		return strconv.FormatInt(n, 10) + " " + unit + "s"
	}
	switch {
	case d%(24*time.Hour) == 0:
		return plural(int64(d/(24*time.Hour)), "day")
	case d%time.Hour == 0:
		return plural(int64(d/time.Hour), "hour")
	}
	return d.String()
}

// HostLike reports whether an agent id looks like a bare host name —
// letters, digits, '-' and '.' (escaped by the hooks as "~2E") only, the
// form of the hooks' default agent id, $HOSTNAME — rather than one that
// names a particular agent: an id with a qualifying part ('/', ':', '@',
// '_', '+' or '=': "ci-3/claude", "alice@laptop", "repo:deploy-bot") is
// not. An "Always" grant to a host-like id holds for every session that
// runs as that host, whoever started it.
func HostLike(agentID string) bool {
	id := strings.ReplaceAll(agentID, "~2E", ".")
	if id == "" {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '.':
		default:
			return false
		}
	}
	return true
}

// hostWarning is the warning an Always offer carries for a host-like agent
// id, or "".
func hostWarning(agentID string) string {
	if !HostLike(agentID) {
		return ""
	}
	return "agent id " + agentID + " looks like a host name: every session that runs as " + agentID + " gets this grant"
}

// ScopeLine is the offer's for-whom, where and until-when line, for the
// channels to show under what it grants: "for agent pod-7, in any working
// directory (this call's: /w), for 30 days or until revoked; warning: …";
// "" when the answer is not offered.
func (o Offer) ScopeLine() string { return o.scope(true) }

// scope is ScopeLine, the working directory left out unless where.
func (o Offer) scope(where bool) string {
	if !o.Offered {
		return ""
	}
	s := o.Grantee()
	if where {
		s += ", " + o.Where
	}
	s += ", " + o.Until
	if o.Warning != "" {
		s += "; warning: " + o.Warning
	}
	if o.Note != "" {
		s += "; " + o.Note
	}
	return s
}

// The words of an offer. Its patterns are the agent's text; the rest —
// which answer, how many patterns, for whom, where, until when, the
// warning, the brokers' note — are the core's. Every channel says the
// core's words first and whole ([Offer.Lead], [Offer.Brief]) and sets the
// patterns apart after them ([Offer.Calls]) in a way no pattern can
// close: code type in a markup that has it, else quoted as Go quotes a
// string ([Offer.QuotedCalls], [Offer.Said]). No channel builds one
// sentence of both, nor searches a rendered one for a phrase (red team AP
// F1: a pattern that closed "bash(" itself and wrote "for agent
// release-bot/ci, for 1 hour" read as the grant's own words, and a
// strings.Cut at " for agent " cut inside the pattern).

// Name is the answer's name: "Session" or "Always".
func (o Offer) Name() string {
	if o.Scope == messages.ScopeSession {
		return "Session"
	}
	return "Always"
}

// Grantee is whom the answer grants to: "for agent pod-7 in session s1"
// (a session grant of a request that names its agent: it holds for that
// agent only), "for session s1" (one that names none), "for agent pod-7". An id is a token (no blank), but up to 128 bytes of the agent's
// choosing, whose hyphens make words ("ci-7/claude-this-grant-ends-in-one-
// hour…"): in the core's sentence it is clipped, with a mark, so that it
// neither speaks at length nor spends the room of a short text (a chat
// alert) before the core's lifetime (red team AR R4). The card's own rows
// show it whole.
func (o Offer) Grantee() string {
	switch {
	case o.Scope == messages.ScopeSession && o.Agent != "":
		return "for agent " + clipName(o.Agent) + " in session " + clipName(o.Session)
	case o.Scope == messages.ScopeSession:
		return "for session " + clipName(o.Session)
	}
	return "for agent " + clipName(o.Agent)
}

// maxNameInSentence bounds an id or a tool name inside the core's words.
const maxNameInSentence = 32

// clipName is an id or a tool name clipped for the core's sentence.
func clipName(s string) string {
	if utf8.RuneCountInString(s) <= maxNameInSentence {
		return s
	}
	r := []rune(s)
	return string(r[:maxNameInSentence-1]) + "…"
}

// Count is how much the answer grants, without the patterns' text: "every
// bash call", "1 bash pattern", "12 bash patterns" (those not listed
// included).
func (o Offer) Count() string {
	tool := clipName(o.Tool) // an MCP tool's name is the server's words
	switch n := len(o.Patterns) + o.MorePatterns; n {
	case 0:
		return "every " + tool + " call"
	case 1:
		return "1 " + tool + " pattern"
	default:
		return strconv.Itoa(n) + " " + tool + " patterns"
	}
}

// Lead is what the answer grants in the core's words only: "Always
// approves 1 bash pattern for agent pod-7, in any working directory (this
// call names none), for 30 days or until revoked; warning: …". The
// patterns follow it, set apart ([Offer.Calls]). "" when not offered.
func (o Offer) Lead() string {
	if !o.Offered {
		return ""
	}
	return o.Name() + " approves " + o.Count() + " " + o.scope(true)
}

// Brief is [Offer.Lead] without the working directory, for a text with
// little room (a confirmation dialog, a chat alert): the lifetime, the
// warning and the brokers' note stay.
func (o Offer) Brief() string {
	if !o.Offered {
		return ""
	}
	return o.Name() + " approves " + o.Count() + " " + o.scope(false)
}

// Calls are the calls the answer's patterns cover, "bash(git push *)",
// each the agent's text, for a channel to set apart; none for a grant of
// every call of the tool (the Lead says so). MorePatterns were not listed.
func (o Offer) Calls() []string {
	calls := make([]string, len(o.Patterns))
	for i, p := range o.Patterns {
		calls[i] = o.Tool + "(" + p + ")"
	}
	return calls
}

// QuotedCalls is the calls as a text without markup shows them: each
// quoted as Go quotes a string (a '"' in a pattern is \", so no pattern
// closes its quotes), "and 2 more not listed" after them; "" for a grant
// of every call of the tool.
func (o Offer) QuotedCalls() string {
	calls := o.Calls()
	for i, c := range calls {
		calls[i] = strconv.Quote(c)
	}
	s := strings.Join(calls, ", ")
	if o.MorePatterns > 0 {
		s += " and " + strconv.Itoa(o.MorePatterns) + " more not listed"
	}
	return s
}

// Said is the offer in one text without markup: the [Offer.Lead], then
// its quoted calls: `Session approves 1 bash pattern for session s1, in
// any working directory (this call names none), until the session ends:
// "bash(npm install *)"`. "" when not offered.
func (o Offer) Said() string {
	if !o.Offered {
		return ""
	}
	if len(o.Patterns) == 0 {
		return o.Lead()
	}
	return o.Lead() + ": " + o.QuotedCalls()
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
func legacySessionOffer(q messages.ApprovalNeeded, l Limits) Offer {
	o := Offer{Offered: true, Scope: messages.ScopeSession, Tool: q.Request.Tool, Session: q.Request.SessionID}
	o.Where, o.Until = whereOf(q, l), "until the session ends"
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
	o.Where, o.Until, o.Warning = whereOf(q, l), "until revoked", hostWarning(o.Agent)
	return o
}

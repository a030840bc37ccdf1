package approverbot

import (
	"errors"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff/internal/approverbot/card"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// The words every channel uses for outcomes and replies, so a question
// settled on Slack reads the same on Telegram, the terminal and the web.

// DecidedBy names who settled a question and where: "Alice via web",
// "the reaper", "another device".
func DecidedBy(d messages.Decision) string {
	who := d.DecidedBy.Display
	if who == "" {
		who = d.DecidedBy.ID
	}
	switch {
	case who == "" && d.DecidedBy.Kind == messages.DeciderReaper:
		who = "the reaper"
	case who == "" && d.DecidedBy.Kind == messages.DeciderAgent:
		who = "the agent"
	case who == "" && d.DecidedBy.Kind != "":
		who = string(d.DecidedBy.Kind)
	case who == "":
		who = "another device"
	}
	if d.DecidedBy.Channel != "" {
		who += " via " + d.DecidedBy.Channel
	}
	return who
}

// OutcomeLine says how a question was settled, in one line of plain text:
// "✓ approved (session) by Alice via web". The reason code decides; the
// state speaks for decisions that carry none (a resolution this bot missed).
func OutcomeLine(r messages.Resolved) string {
	d := r.Decision
	code := d.ReasonCode
	if code == "" {
		switch r.State {
		case messages.StateApproved:
			code = messages.ReasonApproved
		case messages.StateRejected:
			code = messages.ReasonRejected
		case messages.StateExpired:
			code = messages.ReasonTimeout
		case messages.StateCancelled:
			code = messages.ReasonCancelled
		}
	}
	switch code {
	case messages.ReasonApproved:
		if len(d.Answer) > 0 {
			return "✓ answered by " + DecidedBy(d) + ": " + AnswerSummary(d.Answer)
		}
		s := "✓ approved"
		if d.Edited() {
			s += " with changes"
		}
		if d.Scope != "" {
			s += " (" + ScopeText(d.Scope) + ")"
		}
		s += " by " + DecidedBy(d)
		if len(d.GrantedPattern) > 0 {
			s += "; grants " + strings.Join(d.GrantedPattern, ", ")
		}
		if d.Edited() {
			s += "; runs " + card.CompactArgs(d.UpdatedArguments, editLineLimit, nil)
		}
		return s
	case messages.ReasonRejected:
		if d.EffectiveRejectMode() == messages.RejectSoft {
			return "✗ denied by " + DecidedBy(d) + " (the agent may continue)"
		}
		return "✗ denied and stopped by " + DecidedBy(d) + " (the agent's turn ended)"
	case messages.ReasonTimeout:
		return "⌛ timed out: denied, nobody answered in time"
	case messages.ReasonCancelled:
		// The reason is the agent's text (its cancel's), quoted as its
		// words: in the outcome line's own voice it wrote "✓ … approved
		// by Alice" (red team AR R9).
		if d.Reason == "" || d.Reason == "cancelled by the agent" {
			return "⊘ cancelled by the agent"
		}
		return "⊘ cancelled by the agent, which says " + strconv.Quote(card.OneLine(d.Reason))
	case messages.ReasonCascade, messages.ReasonScopeGrant:
		return "✓ allowed: " + ReasonText(d)
	case messages.ReasonHardStop:
		return "✗ denied: " + ReasonText(d)
	}
	switch d.Outcome {
	case messages.OutcomeAllow:
		return withReason("✓ allowed", d.Reason)
	case messages.OutcomeDeny:
		return withReason("✗ denied", d.Reason)
	}
	return withReason("settled elsewhere", d.Reason)
}

func withReason(s, reason string) string {
	if reason == "" {
		return s
	}
	return s + ": " + card.OneLine(reason)
}

// ShortVerdict names an outcome in a few words ("approved (session)").
func ShortVerdict(r messages.Resolved) string {
	s := OutcomeLine(r)
	if i := strings.Index(s, " by "); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ": "); i >= 0 {
		s = s[:i]
	}
	return strings.TrimLeft(s, "✓✗⌛⊘ ")
}

// ReplyText tells a user what the brokers did with their answer.
func ReplyText(rep messages.RespondReply) string {
	switch {
	case rep.Applied && !rep.State.Final():
		s := "Counted"
		if rep.Reason != "" {
			s += ": " + rep.Reason
		}
		return s + ". Waiting for the other approvers."
	case rep.Applied && rep.Decision != nil:
		return "Done: " + OutcomeLine(messages.Resolved{State: rep.State, Decision: *rep.Decision}) + "."
	case rep.Applied:
		return "Done: " + string(rep.State) + "."
	case rep.Decision != nil && rep.State.Final():
		return "Not applied: already decided by " + DecidedBy(*rep.Decision) + " (" +
			ShortVerdict(messages.Resolved{State: rep.State, Decision: *rep.Decision}) + ")."
	case rep.Reason != "":
		return "Not applied: " + rep.Reason + "."
	}
	return "Not applied."
}

// NotSentText tells a user why their answer did not reach the brokers.
func NotSentText(err error) string {
	switch {
	case errors.Is(err, ErrUnknownQuestion):
		return "Not sent: this question is unknown to the bot (settled long ago, or sent by an earlier run). Nothing was decided."
	case errors.Is(err, ErrUnknownApprover):
		return "You are not a configured approver: nothing was sent."
	case errors.Is(err, ErrChoice):
		return "Not sent: " + strings.TrimPrefix(err.Error(), ErrChoice.Error()+": ") + ". Nothing was decided."
	case errors.Is(err, ErrHeldBack):
		return "Not sent: " + strings.TrimPrefix(err.Error(), ErrHeldBack.Error()+": ") + ". Nothing was decided."
	case errors.Is(err, ErrEdit):
		return "Not sent: " + strings.TrimPrefix(err.Error(), ErrEdit.Error()+": ") + ". Nothing was decided; fix the edit and try again."
	case IsUnconfirmed(err):
		// The answer went out; only its reply is missing (a refused reply
		// inbox does that): it may well have been applied.
		return "Not confirmed: " + err.Error() + ". The answer may have been applied; the question shows its outcome once it is settled."
	}
	return "Not sent: " + err.Error() + ". Nothing was decided; try again."
}

// ScopeText names an approval's scope for people: once, session, always
// (the wire's always_prefix is an Always on a shell command's prefixes).
func ScopeText(s messages.Scope) string {
	switch s {
	case messages.ScopeSession:
		return "session"
	case messages.ScopeAlways, messages.ScopeAlwaysPrefix:
		return "always"
	case "":
		return ""
	}
	return "once"
}

// ReasonText says why a question was settled without anyone answering it,
// in plain words; the brokers' reason text (which names policy internals)
// is kept for the policy's own verdicts only.
func ReasonText(d messages.Decision) string {
	switch d.ReasonCode {
	case messages.ReasonScopeGrant:
		return "an earlier Session or Always approval covers it"
	case messages.ReasonCascade:
		if who := d.DecidedBy.Display + d.DecidedBy.ID; who != "" {
			return "covered by the grant " + DecidedBy(d) + " gave on another question"
		}
		return "covered by a grant given on another question"
	case messages.ReasonHardStop:
		if d.Reason != "" {
			return card.OneLine(d.Reason) // "the session was stopped by a hard reject; a new user turn clears it (bob rejected bash (id))"
		}
		return "an earlier reject & stop ended the agent's turn"
	case messages.ReasonTimeout:
		return "nobody answered in time"
	case messages.ReasonCancelled:
		return "the agent withdrew it"
	}
	return card.OneLine(d.Reason)
}

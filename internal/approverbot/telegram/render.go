package telegram

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/card"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Bounds of a message, in characters. Telegram takes 4096 characters
// after entity parsing; a question leaves room for the outcome that is
// appended when it is settled.
const (
	maxMessageChars  = 4096
	questionBudget   = 3400
	maxArgsChars     = 1500
	maxProseChars    = 300
	maxCommandChars  = 200
	maxSubcommands   = 10
	maxBatchItems    = 5
	maxBatchArgChars = 120
	maxPatterns      = 5
	maxFeedbackChars = 300
	maxAnswerChars   = 200 // answerCallbackQuery text
)

// escapeHTML escapes what the Bot API's HTML parse mode reads as markup:
// every '<', '>' and '&' that is not a tag or an entity must be escaped.
func escapeHTML(s string) string { return escapeHTMLr.Replace(s) }

var escapeHTMLr = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// length counts s as the Bot API does, in UTF-16 code units.
func length(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// limits bound a question's parts; Telegram counts UTF-16 code units.
var limits = approverbot.Limits{Args: maxArgsChars, Prose: maxProseChars, Command: maxCommandChars,
	Subcommands: maxSubcommands, Batch: maxBatchItems, BatchArgs: maxBatchArgChars, Patterns: maxPatterns,
	Pattern: maxCommandChars, Width: utf16.RuneLen}

// clip shortens s to at most n UTF-16 code units, marking the cut.
func clip(s string, n int) string { return card.ClipWidth(s, n, utf16.RuneLen) }

// htmlWriter builds an HTML message within a budget of visible
// characters. Markup is written whole or not at all, so a cut never leaves
// a tag open.
type htmlWriter struct {
	b      strings.Builder
	n      int // visible characters written
	budget int
	cut    bool
}

// text writes s escaped, inside open/close markup ("" for none), cutting
// it to what is left of the budget.
func (w *htmlWriter) text(open, s, close string) {
	if w.cut || s == "" {
		return
	}
	avail := w.budget - w.n
	if avail < 2 {
		w.cut = true
		return
	}
	if length(s) > avail {
		s = clip(s, avail)
		w.cut = true
	}
	w.b.WriteString(open)
	w.b.WriteString(escapeHTML(s))
	w.b.WriteString(close)
	w.n += length(s)
}

func (w *htmlWriter) plain(s string) { w.text("", s, "") }
func (w *htmlWriter) bold(s string)  { w.text("<b>", s, "</b>") }
func (w *htmlWriter) code(s string)  { w.text("<code>", s, "</code>") }
func (w *htmlWriter) pre(s string)   { w.text("<pre>", s, "</pre>") }

func (w *htmlWriter) String() string {
	if w.cut {
		return w.b.String() + "\n… (shortened)"
	}
	return w.b.String()
}

// renderQuestion renders q as an HTML message, the verdict first so that
// it takes the budget first: what the card found, each sub-command with
// its action (and how many are not listed), the safety override, why it
// asks, the working directory, who asks; then the agent's own words, the
// command, the argument keys and arguments, the batch, time left,
// approvals so far and what Session and Always would grant. whole reports
// whether all of it fits: when it does not, the message says so and the
// channel offers no approval (see keyboard).
func renderQuestion(q approverbot.Question, now time.Time) (html string, whole bool) {
	v := approverbot.Present(q, limits)
	// The budget keeps room for the line that says the question is not
	// whole.
	w := &htmlWriter{budget: questionBudget - maxProseChars - 10}
	w.bold("❓ Approval needed: " + v.Tool)
	for _, warn := range v.Warnings {
		w.plain("\n")
		w.bold(warn)
	}
	writeVerdict(w, v)
	writeWho(w, v)
	writeCall(w, v)
	writeBatch(w, v)
	renderAsk(w, q, v)
	w.plain("\n")
	if !v.ExpiresAt.IsZero() {
		w.plain("\n⏳ Expires " + v.ExpiresAt.UTC().Format("2006-01-02 15:04:05 UTC") + " (" + v.TimeLeft(now) + " when sent)")
	}
	if v.Required > 1 {
		w.plain("\n👥 Approvals: " + v.Approvals())
	}
	offerLine(w, "🕒", v.Session)
	offerLine(w, "♾", v.Always)
	whole = v.ApproveHere() && !w.cut
	html = w.String()
	if !whole {
		// In the room the budget kept: this line stands where the
		// approval buttons would.
		html += "\n\n<b>" + escapeHTML(clip(notWholeText(v), maxProseChars)) + "</b>"
	}
	return html, whole
}

// writeVerdict writes each sub-command with its action (and how many are
// not listed), the safety override, why it asks, the rule and the working
// directory.
func writeVerdict(w *htmlWriter, v approverbot.View) {
	if len(v.Subcommands) > 0 {
		w.plain("\n\n")
		w.bold("Sub-commands")
		for _, s := range v.Subcommands {
			w.plain("\n• ")
			w.code(s.Command)
			w.plain(" — ")
			w.bold(s.Mark)
			if why := s.Explain(); why != "" {
				w.plain(" (" + clip(why, maxCommandChars) + ")")
			}
		}
		if v.MoreSubcommands > 0 {
			w.text("\n<b>", fmt.Sprintf("⚠ and %d more sub-commands not shown", v.MoreSubcommands), "</b>")
		}
	}
	prose := func(label, s string) {
		if s == "" {
			return
		}
		w.plain("\n")
		w.bold(label)
		w.plain(" " + s)
	}
	w.plain("\n")
	prose("⚠️ Safety override:", v.SafetyOverride)
	prose("Why it asks:", v.Why)
	labelled := func(label, s string) {
		if s == "" {
			return
		}
		w.plain("\n")
		w.bold(label)
		w.plain(" ")
		w.code(s)
	}
	labelled("Rule:", v.Rule)
	labelled("Directory:", v.Cwd)
}

// writeWho writes the team, tier, session, agent and how it is known, the
// requester and the request id.
func writeWho(w *htmlWriter, v approverbot.View) {
	w.plain("\nteam ")
	w.code(v.Team)
	if v.Tier != "" {
		w.plain(" · tier " + v.Tier)
	}
	w.plain(" · session ")
	w.code(v.SessionID)
	w.plain(" · agent ")
	w.code(v.AgentID)
	if v.AgentType != "" {
		w.plain(" (" + v.AgentType + ")")
	}
	w.plain(" · identity " + v.Identity)
	if v.Requester != "" {
		w.plain(" · for " + v.Requester + " (as the agent says)")
	}
	w.plain(" · request ")
	w.code(v.RequestID)
}

// writeCall writes the agent's own words, the command, the argument keys
// and the arguments.
func writeCall(w *htmlWriter, v approverbot.View) {
	if v.Description != "" {
		w.plain("\n\n")
		w.bold("The agent's words (not checked):")
		w.plain(" ")
		w.plain(v.Description)
	}
	if v.Command != "" {
		w.plain("\n\n")
		w.bold("Command")
		w.plain("\n")
		w.pre(v.Command)
	}
	if len(v.ArgKeys) > 0 {
		w.plain("\n")
		w.bold("Argument keys:")
		for i, k := range v.ArgKeys {
			if i > 0 {
				w.plain(",")
			}
			w.plain(" ")
			w.code(k)
		}
	}
	if v.Args != "" {
		w.plain("\n\n")
		w.bold("Arguments")
		w.plain("\n")
		w.pre(v.Args)
	}
}

// writeBatch writes the rest of the batch, and how many calls are not
// listed.
func writeBatch(w *htmlWriter, v approverbot.View) {
	if len(v.Batch) == 0 {
		return
	}
	w.plain("\n\n")
	w.bold("The agent says its batch continues with")
	w.plain(" (not checked: each call is asked or granted on its own)")
	for i, it := range v.Batch {
		w.plain(fmt.Sprintf("\n%d. ", i+1))
		w.code(it.Tool)
		if it.Args != "" {
			w.plain(" ")
			w.code(it.Args)
		}
	}
	if v.MoreBatch > 0 {
		w.text("\n<i>", fmt.Sprintf("and %d more calls", v.MoreBatch), "</i>")
	}
}

// offerLine says what a standing answer grants, or why it is not offered:
// the core's words first and whole (how many patterns, for whom, where,
// until when, the warning), then each pattern on a line of its own in
// code type, which HTML escaping keeps the agent from closing. Nothing is
// cut out of a rendered sentence (red team AP F1: strings.Cut at the
// first " for agent " cut inside a pattern, and the agent's words after
// the code span read as the grant's).
func offerLine(w *htmlWriter, mark string, o approverbot.Offer) {
	if !o.Offered {
		w.plain("\n" + mark + " " + o.Name() + " " + o.WhyNot)
		return
	}
	w.plain("\n" + mark + " " + o.Lead())
	if len(o.Patterns) > 0 {
		w.plain(":")
	}
	for _, c := range o.Calls() {
		w.plain("\n   • ")
		w.code(c)
	}
	if o.MorePatterns > 0 {
		w.plain(fmt.Sprintf("\n   and %d more not listed", o.MorePatterns))
	}
}

// renderSettled appends the outcome to a question's message (body is the
// question's HTML; empty when this run never rendered it).
func renderSettled(body string, r messages.Resolved) string {
	w := &htmlWriter{budget: maxMessageChars - questionBudget - 100}
	if body != "" {
		w.plain("\n\n")
	}
	w.bold(approverbot.OutcomeLine(r))
	if fb := r.Decision.Feedback; fb != "" {
		w.plain("\n💬 Feedback: " + clip(card.OneLine(fb), maxFeedbackChars))
	}
	return body + w.String()
}

// notWholeText says why a question offers no approval on Telegram.
func notWholeText(v approverbot.View) string {
	if why := v.WhyNotHere("Telegram"); why != "" {
		return why
	}
	return "This question is too long for Telegram: its end is not shown. Approve it on the approver web page or the terminal, where all of it shows; you may reject it here."
}

package slack

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/card"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// The action ids of the question's buttons; each button's value is the
// request id.
const (
	actionApprove  = "signoff_approve"
	actionSession  = "signoff_session"
	actionAlways   = "signoff_always"
	actionDeny     = "signoff_deny"
	actionDenyStop = "signoff_deny_stop"
	// actionOpenWeb is the link button to the web page; Slack sends its
	// click too, which the channel ignores.
	actionOpenWeb = "signoff_open_web"
)

// buttons are the question's buttons, in order: the choice each stands for.
var buttons = []struct {
	choice       approverbot.Choice
	action, text string
}{
	{approverbot.ChoiceOnce, actionApprove, "Approve"},
	{approverbot.ChoiceSession, actionSession, "Approve for session"},
	{approverbot.ChoiceAlways, actionAlways, "Always approve"},
	{approverbot.ChoiceReject, actionDeny, "Deny"},
	{approverbot.ChoiceRejectStop, actionDenyStop, "Deny & stop"},
}

// choiceOf maps a button's action id to the choice it stands for.
var choiceOf = func() map[string]approverbot.Choice {
	m := map[string]approverbot.Choice{}
	for _, b := range buttons {
		m[b.action] = b.choice
	}
	return m
}()

// Bounds of the dynamic parts of a message, in characters: a question fits
// Slack's limits whatever the agent sends.
const (
	maxArgsChars     = 2500
	maxProseChars    = 600
	maxCommandChars  = 300
	maxSubcommands   = 15
	maxBatchItems    = 10
	maxBatchArgChars = 200
	maxPatterns      = 10
	maxPatternChars  = 150
)

// escapeMrkdwn escapes the three characters Slack's mrkdwn parser treats as
// control sequences (links, mentions, dates): without it an agent could
// make a question ping @channel or show a link whose text lies. A colon
// that may open an emoji shortcode (":x:", a name character after it) is
// followed by a word joiner (U+2060, invisible), so that Slack shows it
// as written: mrkdwn has no escape for it.
func escapeMrkdwn(s string) string {
	s = escapeMrkdwnr.Replace(s)
	if !strings.Contains(s, ":") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteByte(s[i])
		if s[i] == ':' && i+1 < len(s) && shortcodeChar(s[i+1]) {
			b.WriteString("\u2060")
		}
	}
	return b.String()
}

// shortcodeChar reports a character of an emoji shortcode's name.
func shortcodeChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '+' || c == '-' || c == '\''
}

var escapeMrkdwnr = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// limits bound a question's parts to fit Slack's block limits.
// A pattern is clipped (a cut, so no approval here) at maxPatternChars, so
// that an offer's line — its patterns, for whom, where and until when, and
// a warning — fits the section's 3000 characters whole (red team V8).
var limits = approverbot.Limits{Args: maxArgsChars, Prose: maxProseChars, Command: maxCommandChars,
	Subcommands: maxSubcommands, Batch: maxBatchItems, BatchArgs: maxBatchArgChars, Patterns: maxPatterns,
	Pattern: maxPatternChars, Warnings: maxSectionText, Ask: maxSectionText - len(askHead)}

// askHead heads the section of an ask-user question's lines.
const askHead = "The agent asks you:\n"

// clip shortens s to at most n characters, marking the cut.
func clip(s string, n int) string { return card.Clip(s, n) }

// wholeOr is s when it fits n characters, else fixed: a control's text
// (a button, a confirmation dialog) that names a grant is shown whole or
// not at all, never clipped, since it is what the approver reads as they
// approve (red team AG F4: the Always dialog listed six make patterns and
// stopped before the git push --force it granted). fixed carries no text
// of the agent's beyond a count, and points to the message, which lists
// the grant whole (or counts it as a cut, and offers no Session or
// Always).
func wholeOr(s string, n int, fixed string) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return clip(fixed, n)
}

// sessionButton is what the Session button says it grants: the quoted
// patterns, or every call of the tool.
func sessionButton(o approverbot.Offer) string {
	if len(o.Patterns) == 0 {
		return o.Count()
	}
	return o.QuotedCalls()
}

// patternCount is how many patterns an offer grants, in words: "8
// patterns", "every call of its tool".
func patternCount(o approverbot.Offer) string {
	switch n := len(o.Patterns) + o.MorePatterns; n {
	case 0:
		return "every call of its tool"
	case 1:
		return "1 pattern"
	default:
		return strconv.Itoa(n) + " patterns"
	}
}

// offerText says what an offered answer would grant, in plain text: the
// core's words first and whole — how many patterns, for whom, where,
// until when, the warning — then the patterns, each quoted so that none
// can close its quotes and write the core's words (red team AP F1:
// "Always approves bash(rm -rf 'x) for agent release-bot/ci, for 1 hour
// …" was a sentence the agent wrote). "" when it is not offered.
func offerText(o approverbot.Offer) string { return o.Said() }

// confirmText is an offered answer's confirmation dialog: the core's words
// whole (the lifetime and the warning included: red team AP F9), then the
// quoted patterns when all of it fits the dialog, else their count and
// where the message lists them. The dialog is what the approver reads as
// they confirm: it is never clipped in the patterns.
func confirmText(o approverbot.Offer) string {
	if len(o.Patterns) == 0 {
		return clip(o.Brief()+".", maxConfirmText)
	}
	whole := o.Brief() + ": " + o.QuotedCalls() + "."
	return wholeOr(whole, maxConfirmText, o.Brief()+". The message lists them under "+o.Name()+": read them there before you confirm.")
}

// offerLines say what Session and Always would grant, or why they are not
// offered: every reader sees it, not only the one who opens a dialog.
func offerLines(v approverbot.View) []*textObject {
	var out []*textObject
	for _, o := range []struct {
		mark  string
		offer approverbot.Offer
	}{{"🕒", v.Session}, {"♾", v.Always}} {
		text := offerText(o.offer)
		if !o.offer.Offered {
			text = o.offer.Name() + " " + o.offer.WhyNot
		}
		out = append(out, plain(clip(o.mark+" "+text, maxSectionText)))
	}
	return out
}

// slackDate renders t with Slack's date formatting, shown in each reader's
// time zone; fallback for clients that cannot.
func slackDate(t time.Time) string {
	return "<!date^" + strconv.FormatInt(t.Unix(), 10) + "^{date_short_pretty} at {time_secs}|" +
		t.UTC().Format("2006-01-02 15:04:05 UTC") + ">"
}

// questionBlocks renders an open question with its buttons; webURL is
// the web page a question too long for Slack sends approvers to.
func questionBlocks(q approverbot.Question, now time.Time, webURL string) []any {
	v := approverbot.Present(q, limits)
	blocks := detailBlocks(v)
	ctx := []*textObject{}
	if !v.ExpiresAt.IsZero() {
		ctx = append(ctx, mrkdwn("⏳ Expires "+slackDate(v.ExpiresAt)+" ("+v.TimeLeft(now)+" when posted)"))
	}
	if v.Required > 1 {
		ctx = append(ctx, plain(clip("👥 Approvals: "+v.Approvals(), maxSectionText)))
	}
	if len(ctx) > 0 {
		blocks = append(blocks, contextBlock{Type: "context", Elements: ctx})
	}
	blocks = append(blocks, contextBlock{Type: "context", Elements: offerLines(v)})
	id := v.RequestID
	if !v.ApproveHere() {
		// Slack cannot show all of it, or cannot take the step-up it
		// needs: no approval here, the web page instead (when its
		// address is configured), and the rejections.
		blocks = append(blocks, sectionBlock{Type: "section", Text: plain(clip(v.WhyNotHere("Slack"), maxSectionText))})
		var row []button
		if link := approverbot.WebLink(webURL, id); link != "" {
			label := "Open on the web page"
			if v.StepUp != "" {
				label = "Approve on the web page"
			}
			row = append(row, button{Type: "button", Text: plain(label), ActionID: actionOpenWeb, Value: id, URL: link})
		}
		for _, bt := range buttons {
			if !bt.choice.Approves() {
				b := button{Type: "button", Text: plain(bt.text), ActionID: bt.action, Value: id}
				if bt.choice == approverbot.ChoiceRejectStop {
					b.Style = "danger"
				}
				row = append(row, b)
			}
		}
		return append(blocks, actionsBlock{Type: "actions", BlockID: "signoff-" + strconv.Itoa(len(q.ApprovalsSoFar)), Elements: row})
	}
	var row []button
	if lines := v.AskLines(); lines != nil {
		blocks = append(blocks, sectionBlock{Type: "section", Text: plain(clip(askHead+strings.Join(lines, "\n"), maxSectionText))})
		row = append(row, button{Type: "button", Text: plain("Answer…"), ActionID: actionAnswer, Value: id, Style: "primary"})
	}
	for _, bt := range buttons {
		b := button{Type: "button", Text: plain(bt.text), ActionID: bt.action, Value: id}
		switch bt.choice {
		case approverbot.ChoiceOnce:
			if v.Ask == nil {
				b.Style = "primary"
			}
		case approverbot.ChoiceSession:
			if !v.Session.Offered {
				continue
			}
			b.Text = plain(wholeOr("Session: "+sessionButton(v.Session), maxButtonText, "Session: "+patternCount(v.Session)+", listed above"))
			b.Confirm = &confirmDialog{Title: plain("Approve for the session?"), Text: plain(confirmText(v.Session)),
				Confirm: plain("Approve for session"), Deny: plain("Cancel")}
		case approverbot.ChoiceAlways:
			if !v.Always.Offered {
				continue
			}
			b.Confirm = &confirmDialog{Title: plain("Always approve?"), Text: plain(confirmText(v.Always)),
				Confirm: plain("Always approve"), Deny: plain("Cancel")}
		case approverbot.ChoiceRejectStop:
			b.Style = "danger"
		}
		row = append(row, b)
	}
	if e := editButton(q); e != nil {
		row = append(row, *e)
	}
	// A new block_id per rendering: Slack asks for a fresh one whenever a
	// message is updated.
	blocks = append(blocks, actionsBlock{Type: "actions", BlockID: "signoff-" + strconv.Itoa(len(q.ApprovalsSoFar)), Elements: row})
	return blocks
}

// settledBlocks renders a settled question: its details and the outcome,
// no buttons. q may hold only the request id (a click on a message this
// bot run never posted).
func settledBlocks(q approverbot.Question, r messages.Resolved) []any {
	var blocks []any
	if q.Request.Tool != "" {
		blocks = detailBlocks(approverbot.Present(q, limits))
	}
	blocks = append(blocks, sectionBlock{Type: "section", Text: mrkdwn("*" + escapeMrkdwn(clip(approverbot.OutcomeLine(r), maxSectionText-2)) + "*")})
	var ctx []*textObject
	if fb := r.Decision.Feedback; fb != "" {
		ctx = append(ctx, mrkdwn("💬 Feedback: "+escapeMrkdwn(clip(card.OneLine(fb), maxProseChars))))
	}
	if !r.Decision.DecidedAt.IsZero() {
		ctx = append(ctx, mrkdwn("Decided "+slackDate(r.Decision.DecidedAt)))
	}
	if len(ctx) > 0 {
		blocks = append(blocks, contextBlock{Type: "context", Elements: ctx})
	}
	return blocks
}

// detailBlocks renders what a question is about, the verdict first: what
// the card found, the parsed sub-commands with their verdicts (and how
// many are not listed), the safety override, why it asks, the working
// directory and who asks; then the agent's own words, labelled, the
// command, every argument key, the arguments and what the batch does next.
// Everything the agent controls is in rich text or plain text, which Slack
// never parses for mrkdwn: an agent's *bold* stays asterisks.
func detailBlocks(v approverbot.View) []any {
	blocks := []any{
		headerBlock{Type: "header", Text: plain(clip("Approval needed: "+v.Tool, maxHeaderText))},
	}
	if len(v.Warnings) > 0 {
		blocks = append(blocks, sectionBlock{Type: "section", Text: plain(strings.Join(v.Warnings, "\n"))})
	}
	if verdict := verdictElements(v); len(verdict) > 0 {
		blocks = append(blocks, richTextBlock{Type: "rich_text", Elements: verdict})
	}
	blocks = append(blocks, contextBlock{Type: "context", Elements: []*textObject{plain(clip(metaLine(v), maxSectionText))}})
	if rich := agentElements(v); len(rich) > 0 {
		blocks = append(blocks, richTextBlock{Type: "rich_text", Elements: rich})
	}
	if len(v.Batch) > 0 {
		blocks = append(blocks, batchBlock(v))
	}
	return blocks
}

// verdictElements renders what the policy found: the parsed sub-commands
// with their verdicts (and how many are not listed), the safety override,
// why it asks, the rule and the working directory. It returns nil when
// the view has none of them.
func verdictElements(v approverbot.View) []any {
	var verdict []any
	if len(v.Subcommands) > 0 {
		items := make([]richContainer, 0, len(v.Subcommands))
		for _, s := range v.Subcommands {
			items = append(items, subcommandItem(s))
		}
		verdict = append(verdict, rsection(rbold("Sub-commands")), rlist("bullet", items...))
		if v.MoreSubcommands > 0 {
			verdict = append(verdict, rsection(rbold(fmt.Sprintf("⚠ and %d more sub-commands not shown", v.MoreSubcommands))))
		}
	}
	line := func(label string, value any) {
		verdict = append(verdict, rsection(rbold(label+" "), value))
	}
	if v.SafetyOverride != "" {
		line("⚠️ Safety override:", rtext(v.SafetyOverride))
	}
	if v.Why != "" {
		line("Why it asks:", rtext(v.Why))
	}
	if v.Rule != "" {
		line("Rule:", rcode(v.Rule))
	}
	if v.Cwd != "" {
		line("Directory:", rcode(v.Cwd))
	}
	return verdict
}

// metaLine says who asks: the team and tier, the session, the agent, its
// identity, whom it says it acts for, and the request id.
func metaLine(v approverbot.View) string {
	meta := "team " + v.Team
	if v.Tier != "" {
		meta += " · tier " + v.Tier
	}
	meta += " · session " + v.SessionID + " · agent " + v.AgentID
	if v.AgentType != "" {
		meta += " (" + v.AgentType + ")"
	}
	meta += " · identity " + v.Identity
	if v.Requester != "" {
		meta += " · for " + v.Requester + " (as the agent says)"
	}
	return meta + " · request " + v.RequestID
}

// agentElements renders what the agent sent: its own words, labelled as
// unchecked, the command, every argument key and the arguments. It returns
// nil when the view has none of them.
func agentElements(v approverbot.View) []any {
	var rich []any
	if v.Description != "" {
		rich = append(rich, rsection(rbold("The agent's words (not checked): "), rtext(v.Description)))
	}
	if v.Command != "" {
		rich = append(rich, rsection(rbold("Command")), rpre(v.Command))
	}
	if len(v.ArgKeys) > 0 {
		el := []any{rbold("Argument keys: ")}
		for i, k := range v.ArgKeys {
			if i > 0 {
				el = append(el, rtext(", "))
			}
			el = append(el, rcode(k))
		}
		rich = append(rich, rsection(el...))
	}
	if v.Args != "" {
		rich = append(rich, rsection(rbold("Arguments")), rpre(v.Args))
	}
	return rich
}

// batchBlock renders the calls the agent says its batch continues with,
// in order, and how many more there are; each is still asked or granted
// on its own.
func batchBlock(v approverbot.View) richTextBlock {
	items := make([]richContainer, 0, len(v.Batch))
	for _, it := range v.Batch {
		el := []any{rcode(it.Tool)}
		if it.Args != "" {
			el = append(el, rtext(" "), rcode(it.Args))
		}
		items = append(items, rsection(el...))
	}
	rich := []any{rsection(rbold("The agent says its batch continues with"), rtext(" (not checked: each call is asked or granted on its own)")), rlist("ordered", items...)}
	if v.MoreBatch > 0 {
		rich = append(rich, rsection(ritalic(fmt.Sprintf("and %d more calls", v.MoreBatch))))
	}
	return richTextBlock{Type: "rich_text", Elements: rich}
}

func subcommandItem(s approverbot.SubcommandView) richContainer {
	el := []any{rcode(s.Command), rtext(" — "), rbold(s.Mark)}
	if why := s.Explain(); why != "" {
		el = append(el, rtext(" ("+clip(why, maxCommandChars)+")"))
	}
	return rsection(el...)
}

// fallbackText is the message's top-level text: shown in notifications and
// by clients that cannot render blocks. It is the card's (sanitised) tool
// and summary (a shell call's command, any other call's arguments all
// alike: red team AG F1), in a message posted with mrkdwn off
// (postMessageReq): an agent's *bold* stays asterisks there too.
func fallbackText(q approverbot.Question) string {
	v := approverbot.Present(q, limits)
	s := "Approval needed: " + v.Tool
	if a := card.Clip(v.Summary(), 200); a != "" {
		s += " " + a
	}
	s += " (team " + v.Team + ")"
	return escapeMrkdwn(clip(s, maxFallbackText))
}

// settledText is the top-level text of a settled question.
func settledText(q approverbot.Question, r messages.Resolved) string {
	s := approverbot.OutcomeLine(r)
	if q.Request.Tool != "" {
		s = q.Request.Tool + ": " + s
	}
	return escapeMrkdwn(clip(s, maxFallbackText))
}

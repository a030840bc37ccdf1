package slack

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/internal/approverbot"
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
)

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
	maxPatternChars  = 200
)

// escapeMrkdwn escapes the three characters Slack's mrkdwn parser treats as
// control sequences (links, mentions, dates): without it an agent could
// make a question ping @channel or show a link whose text lies.
func escapeMrkdwn(s string) string { return escapeMrkdwnr.Replace(s) }

var escapeMrkdwnr = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// clip shortens s to at most n characters, marking the cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i, count := 0, 0
	for i = range s {
		if count == n-1 {
			break
		}
		count++
	}
	return s[:i] + "…"
}

// clipNote shortens s to n characters and says how much was left out.
func clipNote(s string, n int) string {
	total := utf8.RuneCountInString(s)
	if total <= n {
		return s
	}
	return clip(s, n) + "\n(" + strconv.Itoa(total-n+1) + " more characters not shown)"
}

// splitArgs renders a call's arguments for people. A shell tool's
// "command" string comes out as it is (newlines included), the rest as
// indented JSON. Arguments are decoded first, as the policy decoded them:
// with duplicate keys the last one wins in what is shown too, and
// '<', '>' and '&' are not hidden behind \u escapes.
func splitArgs(raw json.RawMessage, limit int) (command, rest string) {
	if len(raw) == 0 {
		return "", ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return "", clipNote(string(raw), limit)
	}
	if c, ok := m["command"].(string); ok {
		command = clipNote(c, limit)
		delete(m, "command")
	}
	if len(m) == 0 {
		return command, ""
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(m); err != nil {
		return command, clipNote(string(raw), limit)
	}
	return command, clipNote(strings.TrimSuffix(buf.String(), "\n"), limit)
}

// compactArgs renders a JSON object on one line, bounded.
func compactArgs(raw json.RawMessage, limit int) string {
	if len(raw) == 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return clip(approverbot.OneLine(string(raw)), limit)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return clip(approverbot.OneLine(string(raw)), limit)
	}
	return clip(strings.TrimSuffix(buf.String(), "\n"), limit)
}

// verdictMark is the symbol shown before a sub-command's verdict.
func verdictMark(action string) string {
	switch action {
	case "allow":
		return "✓ allow"
	case "deny":
		return "✗ deny"
	case "ask":
		return "? ask"
	}
	return action
}

// alwaysGrants says in words what an Always answer would grant.
func alwaysGrants(q approverbot.Question) string {
	a := q.Always
	if a == nil {
		return ""
	}
	who := "agent " + q.Request.AgentID
	if len(a.Patterns) == 0 {
		tool := a.Tool
		if tool == "" {
			tool = q.Request.Tool
		}
		return "Always approves every " + tool + " call of " + who + ", now and later"
	}
	ps := a.Patterns
	more := ""
	if len(ps) > maxPatterns {
		more = fmt.Sprintf(" and %d more", len(ps)-maxPatterns)
		ps = ps[:maxPatterns]
	}
	clipped := make([]string, len(ps))
	for i, p := range ps {
		clipped[i] = clip(approverbot.OneLine(p), maxPatternChars)
	}
	return "Always approves, for " + who + " now and later: " + strings.Join(clipped, ", ") + more
}

// slackDate renders t with Slack's date formatting, shown in each reader's
// time zone; fallback for clients that cannot.
func slackDate(t time.Time) string {
	return "<!date^" + strconv.FormatInt(t.Unix(), 10) + "^{date_short_pretty} at {time_secs}|" +
		t.UTC().Format("2006-01-02 15:04:05 UTC") + ">"
}

// roundLeft renders a duration for people ("4m30s", "12s").
func roundLeft(d time.Duration) string {
	if d <= 0 {
		return "expired"
	}
	return d.Round(time.Second).String()
}

// questionBlocks renders an open question with its buttons.
func questionBlocks(q approverbot.Question, now time.Time) []any {
	blocks := detailBlocks(q)
	ctx := []*textObject{}
	if !q.ExpiresAt.IsZero() {
		ctx = append(ctx, mrkdwn("⏳ Expires "+slackDate(q.ExpiresAt)+" ("+roundLeft(q.ExpiresAt.Sub(now))+" left when posted)"))
	}
	if need := q.Approvals(); need > 1 {
		s := fmt.Sprintf("👥 Approvals: %d of %d", len(q.ApprovalsSoFar), need)
		if len(q.ApprovalsSoFar) > 0 {
			s += " (" + strings.Join(q.ApprovalsSoFar, ", ") + ")"
		}
		ctx = append(ctx, plain(s))
	}
	if len(ctx) > 0 {
		blocks = append(blocks, contextBlock{Type: "context", Elements: ctx})
	}
	if grants := alwaysGrants(q); grants != "" {
		blocks = append(blocks, contextBlock{Type: "context", Elements: []*textObject{plain(clip("♾ "+grants, maxSectionText))}})
	}
	id := q.Request.RequestID
	buttons := []button{
		{Type: "button", Text: plain("Approve"), ActionID: actionApprove, Value: id, Style: "primary"},
		{Type: "button", Text: plain("Approve for session"), ActionID: actionSession, Value: id},
	}
	if q.Always != nil {
		buttons = append(buttons, button{Type: "button", Text: plain("Always approve"), ActionID: actionAlways, Value: id,
			Confirm: &confirmDialog{
				Title:   plain("Always approve?"),
				Text:    plain(clip(alwaysGrants(q)+".", maxConfirmText)),
				Confirm: plain("Always approve"),
				Deny:    plain("Cancel"),
			}})
	}
	buttons = append(buttons,
		button{Type: "button", Text: plain("Deny"), ActionID: actionDeny, Value: id},
		button{Type: "button", Text: plain("Deny & stop"), ActionID: actionDenyStop, Value: id, Style: "danger"},
	)
	// A new block_id per rendering: Slack asks for a fresh one whenever a
	// message is updated.
	blocks = append(blocks, actionsBlock{Type: "actions", BlockID: "signoff-" + strconv.Itoa(len(q.ApprovalsSoFar)), Elements: buttons})
	return blocks
}

// settledBlocks renders a settled question: its details and the outcome,
// no buttons. q may hold only the request id (a click on a message this
// bot run never posted).
func settledBlocks(q approverbot.Question, r messages.Resolved) []any {
	var blocks []any
	if q.Request.Tool != "" {
		blocks = detailBlocks(q)
	}
	blocks = append(blocks, sectionBlock{Type: "section", Text: mrkdwn("*" + escapeMrkdwn(clip(approverbot.OutcomeLine(r), maxSectionText-2)) + "*")})
	var ctx []*textObject
	if fb := r.Decision.Feedback; fb != "" {
		ctx = append(ctx, mrkdwn("💬 Feedback: "+escapeMrkdwn(clip(approverbot.OneLine(fb), maxProseChars))))
	}
	if !r.Decision.DecidedAt.IsZero() {
		ctx = append(ctx, mrkdwn("Decided "+slackDate(r.Decision.DecidedAt)))
	}
	if len(ctx) > 0 {
		blocks = append(blocks, contextBlock{Type: "context", Elements: ctx})
	}
	return blocks
}

// detailBlocks renders what a question is about: tool, arguments, the
// parsed sub-commands with their verdicts, why it asks and what the batch
// does next. Everything the agent controls is in rich text or plain text.
func detailBlocks(q approverbot.Question) []any {
	req := q.Request
	blocks := []any{
		headerBlock{Type: "header", Text: plain(clip("Approval needed: "+req.Tool, maxHeaderText))},
	}
	meta := "team " + q.Team
	if q.Risk.Tier != "" {
		meta += " · tier " + q.Risk.Tier
	}
	meta += " · session " + req.SessionID + " · agent " + req.AgentID
	if req.AgentType != "" {
		meta += " (" + req.AgentType + ")"
	}
	if req.RequestedBy != "" {
		meta += " · for " + req.RequestedBy
	}
	meta += " · request " + req.RequestID
	blocks = append(blocks, contextBlock{Type: "context", Elements: []*textObject{plain(clip(meta, maxSectionText))}})

	var rich []any
	command, args := splitArgs(req.Arguments, maxArgsChars)
	if command != "" {
		rich = append(rich, rsection(rbold("Command")), rpre(command))
	}
	if args != "" {
		rich = append(rich, rsection(rbold("Arguments")), rpre(args))
	}
	if subs := q.Risk.Subcommands; len(subs) > 0 {
		shown := subs[:min(len(subs), maxSubcommands)]
		items := make([]richContainer, 0, len(shown))
		for _, v := range shown {
			items = append(items, subcommandItem(v))
		}
		rich = append(rich, rsection(rbold("Sub-commands")), rlist("bullet", items...))
		if len(subs) > len(shown) {
			rich = append(rich, rsection(ritalic(fmt.Sprintf("and %d more sub-commands", len(subs)-len(shown)))))
		}
	}
	if len(rich) > 0 {
		blocks = append(blocks, richTextBlock{Type: "rich_text", Elements: rich})
	}

	var why []string
	if d := req.Description; d != "" {
		why = append(why, "*Agent's description:* "+escapeMrkdwn(clip(approverbot.OneLine(d), maxProseChars)))
	}
	if r := q.Risk.Reason; r != "" {
		why = append(why, "*Why it asks:* "+escapeMrkdwn(clip(approverbot.OneLine(r), maxProseChars)))
	}
	if s := q.Risk.SafetyOverride; s != "" {
		why = append(why, "⚠️ *Safety override:* "+escapeMrkdwn(clip(approverbot.OneLine(s), maxProseChars)))
	}
	if r := q.Risk.Rule; r != "" {
		why = append(why, "*Rule:* "+escapeMrkdwn(clip(approverbot.OneLine(r), maxCommandChars)))
	}
	if len(why) > 0 {
		blocks = append(blocks, sectionBlock{Type: "section", Text: mrkdwn(clip(strings.Join(why, "\n"), maxSectionText))})
	}

	batch := q.BatchRemaining
	if len(batch) == 0 {
		batch = req.BatchRemaining
	}
	if len(batch) > 0 {
		shown := batch[:min(len(batch), maxBatchItems)]
		items := make([]richContainer, 0, len(shown))
		for _, it := range shown {
			el := []any{rcode(clip(it.Tool, maxCommandChars))}
			if a := compactArgs(it.Arguments, maxBatchArgChars); a != "" {
				el = append(el, rtext(" "), rcode(a))
			}
			items = append(items, rsection(el...))
		}
		rich := []any{rsection(rbold("Then the batch runs")), rlist("ordered", items...)}
		if len(batch) > len(shown) {
			rich = append(rich, rsection(ritalic(fmt.Sprintf("and %d more calls", len(batch)-len(shown)))))
		}
		blocks = append(blocks, richTextBlock{Type: "rich_text", Elements: rich})
	}
	return blocks
}

func subcommandItem(v messages.Verdict) richContainer {
	cmd := v.Command
	if cmd == "" {
		cmd = strings.Join(v.Words, " ")
	}
	if v.Kind == "redirect" {
		cmd = "write to " + cmd
	}
	el := []any{rcode(clip(approverbot.OneLine(cmd), maxCommandChars)), rtext(" — "), rbold(verdictMark(v.Action))}
	var why []string
	if v.Rule != "" {
		why = append(why, "rule "+v.Rule)
	}
	if v.Reason != "" {
		why = append(why, v.Reason)
	}
	if len(why) > 0 {
		el = append(el, rtext(" ("+clip(approverbot.OneLine(strings.Join(why, ": ")), maxCommandChars)+")"))
	}
	return rsection(el...)
}

// fallbackText is the message's top-level text: shown in notifications and
// by clients that cannot render blocks.
func fallbackText(q approverbot.Question) string {
	s := "Approval needed: " + q.Request.Tool
	if a := compactArgs(q.Request.Arguments, 200); a != "" {
		s += " " + a
	}
	s += " (team " + q.Team + ")"
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

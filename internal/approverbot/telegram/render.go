package telegram

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/internal/approverbot"
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

// clip shortens s to at most n UTF-16 code units, marking the cut.
func clip(s string, n int) string {
	if length(s) <= n {
		return s
	}
	used := 1 // the ellipsis
	for i, r := range s {
		if used+utf16.RuneLen(r) > n {
			return s[:i] + "…"
		}
		used += utf16.RuneLen(r)
	}
	return s
}

// clipNote shortens s to n characters and says how much was left out.
func clipNote(s string, n int) string {
	total := utf8.RuneCountInString(s)
	if length(s) <= n {
		return s
	}
	c := clip(s, n)
	return c + "\n(" + fmt.Sprint(total-utf8.RuneCountInString(c)+1) + " more characters not shown)"
}

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
	s, err := encodeJSON(m, true)
	if err != nil {
		return command, clipNote(string(raw), limit)
	}
	return command, clipNote(s, limit)
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
	s, err := encodeJSON(v, false)
	if err != nil {
		return clip(approverbot.OneLine(string(raw)), limit)
	}
	return clip(s, limit)
}

func encodeJSON(v any, indent bool) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

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
func alwaysGrants(q approverbot.Question) (lead string, patterns []string, more int) {
	a := q.Always
	if a == nil {
		return "", nil, 0
	}
	who := "agent " + q.Request.AgentID
	if len(a.Patterns) == 0 {
		tool := a.Tool
		if tool == "" {
			tool = q.Request.Tool
		}
		return "Always approves every " + tool + " call of " + who + ", now and later", nil, 0
	}
	ps := a.Patterns
	if len(ps) > maxPatterns {
		more = len(ps) - maxPatterns
		ps = ps[:maxPatterns]
	}
	for _, p := range ps {
		patterns = append(patterns, clip(approverbot.OneLine(p), maxCommandChars))
	}
	return "Always approves, for " + who + " now and later:", patterns, more
}

// renderQuestion renders q as an HTML message: what the call is, why it
// asks, what follows in the batch, time left, approvals so far and what
// Always would grant.
func renderQuestion(q approverbot.Question, now time.Time) string {
	w := &htmlWriter{budget: questionBudget}
	req := q.Request
	w.bold("❓ Approval needed: " + req.Tool)
	w.plain("\nteam ")
	w.code(q.Team)
	if q.Risk.Tier != "" {
		w.plain(" · tier " + q.Risk.Tier)
	}
	w.plain(" · session ")
	w.code(req.SessionID)
	w.plain(" · agent ")
	w.code(req.AgentID)
	if req.AgentType != "" {
		w.plain(" (" + req.AgentType + ")")
	}
	if req.RequestedBy != "" {
		w.plain(" · for " + req.RequestedBy)
	}
	w.plain(" · request ")
	w.code(req.RequestID)

	command, args := splitArgs(req.Arguments, maxArgsChars)
	if command != "" {
		w.plain("\n\n")
		w.bold("Command")
		w.plain("\n")
		w.pre(command)
	}
	if args != "" {
		w.plain("\n\n")
		w.bold("Arguments")
		w.plain("\n")
		w.pre(args)
	}
	if subs := q.Risk.Subcommands; len(subs) > 0 {
		w.plain("\n\n")
		w.bold("Sub-commands")
		for _, v := range subs[:min(len(subs), maxSubcommands)] {
			cmd := v.Command
			if cmd == "" {
				cmd = strings.Join(v.Words, " ")
			}
			if v.Kind == "redirect" {
				cmd = "write to " + cmd
			}
			w.plain("\n• ")
			w.code(clip(approverbot.OneLine(cmd), maxCommandChars))
			w.plain(" — ")
			w.bold(verdictMark(v.Action))
			var why []string
			if v.Rule != "" {
				why = append(why, "rule "+v.Rule)
			}
			if v.Reason != "" {
				why = append(why, v.Reason)
			}
			if len(why) > 0 {
				w.plain(" (" + clip(approverbot.OneLine(strings.Join(why, ": ")), maxCommandChars) + ")")
			}
		}
		if len(subs) > maxSubcommands {
			w.text("\n<i>", fmt.Sprintf("and %d more sub-commands", len(subs)-maxSubcommands), "</i>")
		}
	}
	prose := func(label, s string) {
		if s == "" {
			return
		}
		w.plain("\n")
		w.bold(label)
		w.plain(" " + clip(approverbot.OneLine(s), maxProseChars))
	}
	if req.Description != "" || q.Risk.Reason != "" || q.Risk.SafetyOverride != "" || q.Risk.Rule != "" {
		w.plain("\n")
	}
	prose("Agent's description:", req.Description)
	prose("Why it asks:", q.Risk.Reason)
	prose("⚠️ Safety override:", q.Risk.SafetyOverride)
	if q.Risk.Rule != "" {
		w.plain("\n")
		w.bold("Rule:")
		w.plain(" ")
		w.code(clip(approverbot.OneLine(q.Risk.Rule), maxCommandChars))
	}

	batch := q.BatchRemaining
	if len(batch) == 0 {
		batch = req.BatchRemaining
	}
	if len(batch) > 0 {
		w.plain("\n\n")
		w.bold("Then the batch runs")
		for i, it := range batch[:min(len(batch), maxBatchItems)] {
			w.plain(fmt.Sprintf("\n%d. ", i+1))
			w.code(clip(it.Tool, maxCommandChars))
			if a := compactArgs(it.Arguments, maxBatchArgChars); a != "" {
				w.plain(" ")
				w.code(a)
			}
		}
		if len(batch) > maxBatchItems {
			w.text("\n<i>", fmt.Sprintf("and %d more calls", len(batch)-maxBatchItems), "</i>")
		}
	}

	w.plain("\n")
	if !q.ExpiresAt.IsZero() {
		left := q.ExpiresAt.Sub(now).Round(time.Second)
		l := "expired"
		if left > 0 {
			l = left.String() + " left when sent"
		}
		w.plain("\n⏳ Expires " + q.ExpiresAt.UTC().Format("2006-01-02 15:04:05 UTC") + " (" + l + ")")
	}
	if need := q.Approvals(); need > 1 {
		s := fmt.Sprintf("\n👥 Approvals: %d of %d", len(q.ApprovalsSoFar), need)
		if len(q.ApprovalsSoFar) > 0 {
			s += " (" + strings.Join(q.ApprovalsSoFar, ", ") + ")"
		}
		w.plain(s)
	}
	if lead, patterns, more := alwaysGrants(q); lead != "" {
		w.plain("\n♾ " + lead)
		for i, p := range patterns {
			if i > 0 {
				w.plain(",")
			}
			w.plain(" ")
			w.code(p)
		}
		if more > 0 {
			w.plain(fmt.Sprintf(" and %d more", more))
		}
	}
	return w.String()
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
		w.plain("\n💬 Feedback: " + clip(approverbot.OneLine(fb), maxFeedbackChars))
	}
	return body + w.String()
}

package terminal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/width"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/card"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Limits that keep one question on a screen. No argument value is cut:
// the tail of a here-document or a file's content is what runs, and a key
// to approve what was not shown would approve it unread.
const (
	maxBatchShown = 5  // batch_remaining items listed
	maxSummary    = 80 // runes of a one-line argument summary
)

// style colours text when enabled.
type style struct{ on bool }

func (s style) wrap(code, text string) string {
	if !s.on || text == "" {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (s style) bold(t string) string   { return s.wrap("1", t) }
func (s style) dim(t string) string    { return s.wrap("2", t) }
func (s style) red(t string) string    { return s.wrap("31", t) }
func (s style) green(t string) string  { return s.wrap("32", t) }
func (s style) yellow(t string) string { return s.wrap("33", t) }
func (s style) cyan(t string) string   { return s.wrap("36", t) }

// clean makes text from the wire safe to print: control characters (other
// than newline and tab when multiline) are shown escaped (\x1b), C1
// controls, bidi controls and invisible characters as the card shows them
// (<U+2067>), invalid UTF-8 as \xNN. A hostile request
// cannot emit escape sequences or reorder what the operator reads.
func clean(s string, multiline bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case multiline && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r) || card.Hidden(r):
			// Bidi controls, invisible and C1 characters, as every
			// channel shows them.
			b.WriteString(card.Escape(r))
		default:
			b.WriteRune(r)
		}
		i += size
	}
	// Combining marks that draw over others need the run they are in:
	// the card's sanitiser follows it (red team V9: --force struck
	// through in the arguments row).
	return card.Sanitize(b.String(), multiline)
}

// line is clean for single-line text.
func line(s string) string { return clean(s, false) }

// toolOf names a question's tool for log lines.
func toolOf(q approverbot.Question, r *messages.Resolved) string {
	switch {
	case q.Request.Tool != "":
		return line(q.Request.Tool)
	case r != nil && r.Decision.Tool != "":
		return line(r.Decision.Tool)
	case q.Request.RequestID != "":
		return "request " + line(q.Request.RequestID)
	}
	return "question"
}

// nameOf names a question's call for log lines: its tool and summary
// (summary), or toolOf when the question is not known.
func nameOf(q approverbot.Question, r *messages.Resolved) string {
	if q.Request.Tool == "" || q.AskUser != nil {
		// An answer's log line says the questions it answers.
		return toolOf(q, r)
	}
	return summary(q)
}

// field is one argument of a tool call, in the order the agent sent them.
type field struct {
	key   string
	value json.RawMessage
	// keyed: the field is an object's member (its key may be empty).
	keyed bool
}

// fields decodes a JSON object keeping its key order; anything else is one
// field with an empty key.
func fields(raw json.RawMessage) []field {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return []field{{value: raw}}
	}
	var out []field
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return []field{{value: raw}}
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return []field{{value: raw}}
		}
		out = append(out, field{key: key, value: v, keyed: true})
	}
	return out
}

// valueText renders one argument value as compact JSON: a string in its
// quotes (with only its quotes and backslashes escaped: line escapes the
// rest), so that "false" is not false, "123" not 123, and a blank at its
// end shows (red team AG F9). isString reports a string, whose text is s
// unquoted.
func valueText(v json.RawMessage) (text, s string, isString bool) {
	if err := json.Unmarshal(v, &s); err == nil {
		return quoteString(s), s, true
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return string(v), "", false
	}
	return buf.String(), "", false
}

// keyText shows an argument's key: bare when it is a plain name (ASCII
// letters, digits, _ - . and not empty), else in quotes as a string value
// is, so that a key cannot pass for the end of a value and more
// arguments (red team AL F1: the key `dry_run: true, "confirm"` with the
// value false read as dry_run true).
func keyText(k string) string {
	if k != "" && strings.TrimLeft(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") == "" {
		return k
	}
	return line(quoteString(k))
}

// quoteString is s in double quotes, its quotes and backslashes escaped.
func quoteString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// summary renders a question on one line (a new question's notice, a
// prompt's name of its question): the tool and the core's summary — a
// shell call's command, any other call's arguments all alike (none
// promoted: red team AG F1).
func summary(q approverbot.Question) string {
	text := card.Clip(line(view(q).Summary()), maxSummary)
	if text == "" {
		return line(q.Request.Tool)
	}
	return line(q.Request.Tool) + " " + text
}

// view is the core's view of q, as the terminal shows it: nothing cut
// but multi-line values (argumentsText bounds those).
func view(q approverbot.Question) approverbot.View {
	return approverbot.Present(q, approverbot.DefaultLimits)
}

// grantText says exactly what an Always answer would grant.
func grantText(q approverbot.Question) string { return line(view(q).Always.Said()) }

// grantLogText is what an answer granted, for its log line: the core's
// words first, the patterns quoted after them (red team AP F1): `1 bash
// pattern for session s1: "bash(npm install *)"`.
func grantLogText(o approverbot.Offer) string {
	s := o.Count() + " " + o.Grantee()
	if q := o.QuotedCalls(); q != "" {
		s += ": " + q
	}
	return line(s)
}

// timeLeft renders the time until expiry, to the second.
func timeLeft(q approverbot.Question, now time.Time) string { return view(q).TimeLeft(now) }

// approvalsText renders the quorum state ("" for single-approval questions
// nobody has approved yet).
func approvalsText(q approverbot.Question) string { return line(view(q).Approvals()) }

// verdictGlyph marks a sub-command's verdict.
func verdictGlyph(st style, action string) string {
	switch action {
	case "allow":
		return st.green("✓")
	case "deny":
		return st.red("✗")
	}
	return st.yellow("?")
}

// renderQuestion is renderQuestionAt on an 80×24 terminal.
func renderQuestion(st style, q approverbot.Question, now time.Time, waiting int) string {
	return renderQuestionAt(st, q, now, waiting, 80, 24)
}

// renderQuestionAt writes the full view of a question: everything an
// operator needs to judge it, on a terminal cols wide and rows high.
// waiting is how many other questions are queued.
func renderQuestionAt(st style, q approverbot.Question, now time.Time, waiting, cols, rows int) string {
	var b strings.Builder
	head := "▶ " + st.bold(line(q.Request.Tool)) + "  team " + line(q.Team)
	if waiting > 0 {
		head += st.dim(fmt.Sprintf("  (%d more waiting)", waiting))
	}
	b.WriteString(head + "\n")
	// Rows of the agent's own text (its arguments, its words, its
	// questions, the batch's calls) are laid out by the card: wrapped at
	// the terminal's width with a mark, tabs as blanks (wrapCells).
	agentRows := map[string]bool{"arguments": true, "agent says": true, "asks you": true, "next": true}
	row := func(label, text string) {
		if text == "" {
			return
		}
		pad := strings.Repeat(" ", 12-utf8.RuneCountInString(label))
		for i, l := range strings.Split(text, "\n") {
			lead := strings.Repeat(" ", 14)
			if i == 0 {
				lead = "  " + st.dim(label) + pad
			}
			parts := []string{l}
			if agentRows[label] {
				parts = wrapCells(l, cols-15, st.dim("↪ "))
			}
			for j, part := range parts {
				if j > 0 {
					lead = strings.Repeat(" ", 14)
				}
				b.WriteString(lead + part + "\n")
			}
		}
	}

	// The verdict first: what the card found, each sub-command with its
	// action, the safety override, why it asks, where and for whom.
	v := view(q)
	for _, w := range v.Warnings {
		row("warning", st.yellow(line(w)))
	}
	row("commands", subcommandsText(st, v))
	if v.SafetyOverride != "" {
		row("safety", st.yellow("⚠ "+line(v.SafetyOverride)))
	}
	row("why", whyText(st, v))
	row("directory", line(v.Cwd))
	row("request", line(v.RequestID)+"  "+st.dim(fromText(v)))
	if v.Description != "" {
		row("agent says", st.dim("(the agent's words) ")+line(v.Description))
	}
	row("arguments", argumentsText(q.Request.Arguments))
	if lines := v.AskLines(); lines != nil {
		for i := range lines {
			lines[i] = line(lines[i])
		}
		row("asks you", strings.Join(lines, "\n")+"\n"+st.dim("press r to answer"))
	}
	row("next", batchText(v))
	if !v.ExpiresAt.IsZero() {
		left := "expired: the reaper rejects it shortly"
		if d := v.Left(now); d > 0 {
			left = d.String()
		}
		row("time left", left)
	}
	row("approvals", line(v.Approvals()))
	for _, o := range []struct {
		label string
		offer approverbot.Offer
	}{{"session", v.Session}, {"always", v.Always}} {
		if o.offer.Offered {
			// What, then for whom, where and until when (issue 25 item 4).
			row(o.label, "would grant "+line(o.offer.Short()))
			row("", line(o.offer.ScopeLine()))
		} else {
			row(o.label, st.dim(line(o.offer.WhyNot)))
		}
	}
	if rowsOf(b.String(), cols) > rows-promptRows {
		// A terminal is read from the prompt up: on a card taller than a
		// screen the verdict above has scrolled away, so what is not
		// allowed is said again next to the keys (red team V4: a long
		// here-document pushed a force-push 130 rows up). Its height is
		// counted in rows at the terminal's width, since a long line
		// wraps (red team AG F8: one 7,550-character echo was 600 rows),
		// and each of its lines is clipped to one row.
		row("again", clipRows(recapText(st, v, q), cols-15))
	}
	return b.String()
}

// promptRows is the rows the prompt takes below a card: the line naming
// the question, the keys, the time left and a spare row.
const promptRows = 4

// rowsOf is how many rows of a terminal cols wide text takes: each line
// wraps at the right edge (colours take none).
func rowsOf(text string, cols int) int {
	cols = max(cols, 1)
	n := 0
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		w := cellsOf(ansiEscape.ReplaceAllString(l, ""))
		n += max(1, (w+cols-1)/cols)
	}
	return n
}

// wrapCells lays one line of a card row out in rows of at most width
// cells, the renderer's own: a tab becomes blanks to the next multiple of
// eight, and a line wider than width goes on in rows that start with its
// own indentation and then mark (↪), never at a column the text chose. A
// terminal wraps a long line to its first column and keeps a run of tabs
// at its last, so an agent's text could otherwise start a row where the
// card's own rows start and pass for one (red team AL F4: forty tabs then
// "dry_run: true" read as an argument of its own). Colour sequences take
// no cells.
func wrapCells(l string, width int, mark string) []string {
	width = max(width, 20)
	indent := ""
	plain := ansiEscape.ReplaceAllString(l, "")
	for _, r := range plain {
		if r != ' ' {
			break
		}
		indent += " "
	}
	indent = indent[:min(len(indent), width/2)]
	markCells := cellsOf(ansiEscape.ReplaceAllString(mark, ""))
	var out []string
	var cur strings.Builder
	col := 0
	newRow := func() {
		out = append(out, cur.String())
		cur.Reset()
		cur.WriteString(indent + mark)
		col = len(indent) + markCells
	}
	for i := 0; i < len(l); {
		if l[i] == '\x1b' {
			// A colour sequence (looked for only where one may start:
			// the line may be thousands of characters).
			if m := ansiEscape.FindStringIndex(l[i:]); m != nil && m[0] == 0 {
				cur.WriteString(l[i : i+m[1]])
				i += m[1]
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(l[i:])
		i += size
		if r == '\t' {
			n := 8 - col%8
			if col+n > width {
				newRow()
				n = 8 - col%8
			}
			cur.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		w := cellWidth(r)
		if col+w > width {
			newRow()
		}
		cur.WriteRune(r)
		col += w
	}
	return append(out, cur.String())
}

// ansiEscape matches the colour sequences style writes.
var ansiEscape = regexp.MustCompile("\x1b\\[[0-9;]*m")

// clipRows clips each line of text to n cells (colours kept whole when
// the line fits), saying how many characters were left out.
func clipRows(text string, n int) string {
	n = max(n, 20)
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		plain := ansiEscape.ReplaceAllString(l, "")
		if cellsOf(plain) <= n {
			continue
		}
		for k := 0; ; k++ {
			c := clipCells(plain, n-k)
			note := fmt.Sprintf(" (%d more characters)", utf8.RuneCountInString(plain)-utf8.RuneCountInString(c)+1)
			if cellsOf(c+note) <= n || n-k <= 10 {
				lines[i] = c + note
				break
			}
		}
	}
	return strings.Join(lines, "\n")
}

// recapText is the verdict again: the warnings, the safety override and
// every sub-command that is not allowed — or, for a call without
// sub-commands (an MCP tool, a file tool), why it asks and what it acts on
// (red team Y4: "every sub-command above is allowed" under a curl | sh).
func recapText(st style, v approverbot.View, q approverbot.Question) string {
	var out []string
	if len(v.Subcommands) == 0 {
		if v.Why != "" {
			out = append(out, "asks because "+line(v.Why))
		}
		if v.Command != "" {
			out = append(out, line(q.Request.Tool)+" of "+line(card.Clip(card.OneLine(v.Command), 300)))
		} else {
			// Which argument the tool acts on is its own schema's
			// business: none is named here (red team AG F1).
			out = append(out, line(q.Request.Tool)+": read every argument above")
		}
	}
	for _, w := range v.Warnings {
		out = append(out, st.yellow(line(w)))
	}
	if v.SafetyOverride != "" {
		out = append(out, st.yellow("⚠ "+line(v.SafetyOverride)))
	}
	for _, sc := range v.Subcommands {
		if sc.Action != "allow" {
			out = append(out, verdictGlyph(st, sc.Action)+" "+line(sc.Command)+"  "+st.dim(line(sc.Action)))
		}
	}
	if v.MoreSubcommands > 0 {
		out = append(out, st.yellow(fmt.Sprintf("… and %d more sub-commands not shown", v.MoreSubcommands)))
	}
	if len(out) == 0 {
		return st.dim("every sub-command above is allowed; read the arguments above")
	}
	return strings.Join(out, "\n")
}

// subcommandsText is each sub-command with its action, reason and rule,
// and how many are not shown ("" when the call has none).
func subcommandsText(st style, v approverbot.View) string {
	if len(v.Subcommands) == 0 {
		return ""
	}
	var sb strings.Builder
	for i, sc := range v.Subcommands {
		if i > 0 {
			sb.WriteString("\n")
		}
		sb.WriteString(verdictGlyph(st, sc.Action) + " " + line(sc.Command) + "  " + st.dim(line(sc.Action)))
		if sc.Reason != "" {
			sb.WriteString(st.dim(": " + line(sc.Reason)))
		}
		if sc.Rule != "" {
			sb.WriteString(st.dim(" [" + line(sc.Rule) + "]"))
		}
	}
	if v.MoreSubcommands > 0 {
		sb.WriteString("\n" + st.yellow(fmt.Sprintf("… and %d more sub-commands not shown: read the command below", v.MoreSubcommands)))
	}
	return sb.String()
}

// whyText is why the call asks, with its rule and tier.
func whyText(st style, v approverbot.View) string {
	why := line(v.Why)
	if v.Rule != "" {
		why += st.dim(" [rule " + line(v.Rule) + "]")
	}
	if v.Tier != "" {
		why += st.dim(" (tier " + line(v.Tier) + ")")
	}
	return strings.TrimSpace(why)
}

// fromText is who asks: the session, the agent and its type, how the
// broker knows them, and for whom.
func fromText(v approverbot.View) string {
	from := "session " + line(v.SessionID)
	if v.AgentID != "" {
		from += ", agent " + line(v.AgentID)
	}
	if v.AgentType != "" {
		from += " (" + line(v.AgentType) + ")"
	}
	from += ", identity " + v.Identity
	if v.Requester != "" {
		from += ", for " + line(v.Requester) + " (as the agent says)"
	}
	return from
}

// batchText lists the calls of the batch after this one ("" when none).
func batchText(v approverbot.View) string {
	n := len(v.Batch) + v.MoreBatch
	if n == 0 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d more call(s) in its batch, as the agent says (not checked):", n)
	for i, it := range v.Batch {
		if i == maxBatchShown {
			fmt.Fprintf(&sb, "\n… and %d more", n-maxBatchShown)
			break
		}
		text := it.Args
		sb.WriteString("\n" + strconv.Itoa(i+1) + ". " + line(it.Tool))
		if text != "" {
			sb.WriteString(" " + line(card.Clip(text, maxSummary)))
		}
	}
	return sb.String()
}

// argumentsText renders a call's arguments one per line, each value with
// its JSON type (strings quoted), multi-line strings indented below their
// key.
func argumentsText(raw json.RawMessage) string {
	fs := fields(raw)
	if len(fs) == 0 {
		return ""
	}
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteString("\n")
		}
		v, str, isString := valueText(f.value)
		if f.keyed {
			b.WriteString(keyText(f.key) + ": ")
		}
		if !isString || !strings.Contains(str, "\n") {
			b.WriteString(line(v))
			continue
		}
		// A multi-line string, line by line below its key: a blank at a
		// line's end is said, since nothing else shows it.
		lines := strings.Split(strings.TrimRight(str, "\n"), "\n")
		fmt.Fprintf(&b, "(a string of %d lines)", len(lines))
		for _, l := range lines {
			b.WriteString("\n  " + clean(l, true))
			if t := strings.TrimRight(l, " \t"); t != l {
				fmt.Fprintf(&b, "  ⟵ %d blank(s) at its end", len(l)-len(t))
			}
		}
	}
	return b.String()
}

// promptText is the one-key prompt for q: the line naming the question
// the keys answer (promptName), the keys on a line of their own, then the
// time left and "› " on the line the cursor waits on, which the prompt
// loop rewrites every second on a terminal. cols is the terminal's width.
func promptText(st style, q approverbot.Question, now time.Time, cols int) string {
	return promptName(st, q, cols) + "\n" + promptKeys(st, q) + "\n" + promptTail(st, q, now)
}

// promptName names the question the keys below it answer, on one row of
// a terminal cols wide: its tool and summary (a shell call's command, any
// other call's arguments), clipped. A terminal is read from the prompt
// up, and output about other questions can land between a card and its
// keys (red team AG F2): the keys line alone is the same for every
// question.
func promptName(st style, q approverbot.Question, cols int) string {
	name := "answering: " + summary(q)
	return st.bold(clipCells(name, max(cols-1, 20)))
}

// recapBlock is the current question said again after output about other
// questions was printed under its card (a new question's notice, another
// one settled elsewhere): its verdict (recapText), so that what is right
// above the keys is the question they answer (red team AG F2).
func recapBlock(st style, q approverbot.Question, cols int) string {
	var b strings.Builder
	b.WriteString(st.dim(clipCells("↑ still answering: "+summary(q), max(cols-1, 20))) + "\n")
	for _, l := range strings.Split(clipRows(recapText(st, view(q), q), cols-5), "\n") {
		b.WriteString("    " + l + "\n")
	}
	return b.String()
}

// cellWidth is how many cells of a terminal r takes: 2 for wide and
// full-width characters, 0 for combining marks, else 1.
func cellWidth(r rune) int {
	switch {
	case unicode.In(r, unicode.Mn, unicode.Me):
		return 0
	case r >= 0x1F300 && r <= 0x1FAFF:
		return 2
	}
	switch width.LookupRune(r).Kind() {
	case width.EastAsianWide, width.EastAsianFullwidth:
		return 2
	}
	return 1
}

// clipCells shortens s (one line, no colours) to at most n cells, marking
// the cut with "…".
func clipCells(s string, n int) string { return card.ClipWidth(s, n, cellWidth) }

// cellsOf is the width of s in cells.
func cellsOf(s string) int {
	n := 0
	for _, r := range s {
		n += cellWidth(r)
	}
	return n
}

// promptKeys is the line of keys q offers. It may be wider than the
// terminal and wrap: it is written once per prompt, never rewritten.
func promptKeys(st style, q approverbot.Question) string {
	v := view(q)
	if q.NeedsStepUp() {
		// The terminal cannot ask for a passkey: the rejections only.
		return st.yellow("🔐 "+v.WhyNotHere("the terminal")) + "\n" +
			strings.Join([]string{st.bold("[n]") + " reject", st.bold("[x]") + " reject+stop", st.bold("[k]") + " skip", st.bold("[?]") + " help"}, "  ")
	}
	keys := []string{st.bold("[y]") + " once"}
	if q.AskUser != nil {
		keys = append([]string{st.bold("[r]") + " answer"}, keys...)
	}
	// What Session and Always grant is on the card's session and always
	// rows right above; the keys line names it by count, so that it stays
	// short (red team AG F8: a pattern quoting a long command made the
	// keys line 15,000 characters, hundreds of rows).
	if v.Session.Offered {
		keys = append(keys, st.bold("[s]")+" session: "+offerCount(v.Session))
	}
	if v.Always.Offered {
		keys = append(keys, st.bold("[a]")+" always: "+offerCount(v.Always))
	}
	keys = append(keys, st.bold("[n]")+" reject", st.bold("[x]")+" reject+stop")
	if approverbot.EditOffered(q, "") == nil {
		keys = append(keys, st.bold("[e]")+" edit")
	}
	keys = append(keys, st.bold("[k]")+" skip", st.bold("[?]")+" help")
	return strings.Join(keys, "  ")
}

// offerCount says what an offered answer grants by count, for the keys
// line: "every bash call", "2 bash patterns (above)".
func offerCount(o approverbot.Offer) string {
	tool := clipCells(line(o.Tool), 24)
	n := len(o.Patterns) + o.MorePatterns
	switch n {
	case 0:
		return "every " + tool + " call"
	case 1:
		return "1 " + tool + " pattern (above)"
	}
	return strconv.Itoa(n) + " " + tool + " patterns (above)"
}

// promptTail is the line the cursor waits on: the time left and "› ".
// The countdown rewrites it in place ("\r", erase line), which works only
// while it fits on one terminal row: it is at most 24 columns, less than
// any terminal is narrow.
func promptTail(st style, q approverbot.Question, now time.Time) string {
	v := view(q)
	if v.ExpiresAt.IsZero() {
		return "› "
	}
	t := "expired"
	if d := v.Left(now); d > 0 {
		t = d.String() + " left"
	}
	return st.yellow("⏳ "+t) + " › "
}

// helpText explains the keys for q.
func helpText(q approverbot.Question) string {
	v := view(q)
	var b strings.Builder
	if q.AskUser != nil {
		b.WriteString("  r  answer the agent's question: your answer is the tool's result (" + answerHint(q) + ")\n")
	}
	b.WriteString("  y  approve this call once\n")
	if v.Session.Offered {
		fmt.Fprintf(&b, "  s  approve for the session: %s\n", line(v.Session.Said()))
	} else {
		fmt.Fprintf(&b, "  s  (%s)\n", line(v.Session.WhyNot))
	}
	if v.Always.Offered {
		fmt.Fprintf(&b, "  a  approve always (then A, or a after an A, to confirm): %s\n", line(v.Always.Said()))
	} else {
		fmt.Fprintf(&b, "  a  (%s)\n", line(v.Always.WhyNot))
	}
	b.WriteString("  n  reject (soft): the agent skips this call and goes on; you may give feedback\n")
	b.WriteString("  x  reject and stop (hard): the agent skips the rest of its turn; you may give feedback\n")
	if err := approverbot.EditOffered(q, ""); err == nil {
		b.WriteString("  e  approve with changes: edit the command (or the arguments as JSON) and approve the changed call once; the policy judges it again\n")
	} else {
		fmt.Fprintf(&b, "  e  (%s)\n", strings.TrimPrefix(err.Error(), approverbot.ErrChoice.Error()+": "))
	}
	b.WriteString("  k  skip: leave it for now; it comes back after the other questions\n")
	b.WriteString("  g  list the grants of your teams (Session and Always answers), with their ids\n")
	b.WriteString("  v  revoke a grant: v, then its id or its number in the latest list (line mode: v <id>)\n")
	b.WriteString("  ?  this help\n")
	b.WriteString("  Feedback is one line: Enter sends it (empty is fine), Esc goes back to the keys.\n")
	return b.String()
}

// idleHelpText explains the keys that work while no question is waiting.
const idleHelpText = "  No question is waiting. Keys:\n" +
	"  g  list the grants of your teams (Session and Always answers), with their ids\n" +
	"  v  revoke a grant: v, then its id or its number in the latest list (line mode: v <id>)\n" +
	"  ?  this help\n"

// answeredLine is the log line of an answer this terminal sent and the
// brokers applied.
func answeredLine(st style, tool string, a approverbot.Answer, grant string) string {
	if a.Approved && len(a.Answer) > 0 {
		return st.green("✓") + " " + tool + " answered: " + line(approverbot.AnswerSummary(a.Answer))
	}
	if a.Approved {
		scope := approverbot.ScopeText(a.Scope)
		if grant != "" && a.Scope != messages.ScopeOnce {
			scope += ": " + grant
		}
		if a.UpdatedArguments != "" {
			return st.green("✓") + " " + tool + " approved with changes (" + scope + "): runs " +
				line(card.CompactArgs([]byte(a.UpdatedArguments), editShown, nil))
		}
		return st.green("✓") + " " + tool + " approved (" + scope + ")"
	}
	s := st.red("✗") + " " + tool + " rejected"
	if a.RejectMode == messages.RejectHard {
		s += " (stop)"
	}
	if a.Feedback != "" {
		s += ": " + line(a.Feedback)
	}
	return s
}

// settledText says how a question was settled: "alice via web (approved)".
func settledText(state messages.State, d messages.Decision) string {
	s := line(approverbot.DecidedBy(d))
	what := string(state)
	if what == "" {
		switch d.Outcome {
		case messages.OutcomeAllow:
			what = "approved"
		case messages.OutcomeDeny:
			what = "rejected"
		default:
			what = "settled"
		}
	}
	detail := d.Feedback
	switch {
	case d.ReasonCode == messages.ReasonCascade:
		what = "approved"
		detail = approverbot.ReasonText(d)
	case d.DecidedBy.Kind != messages.DeciderApprover:
		// The brokers' reason names policy internals; the core says it
		// in plain words.
		detail = approverbot.ReasonText(d)
	}
	if detail != "" {
		what += ": " + line(detail)
	}
	return s + " (" + what + ")"
}

// settledLine is the log line of a question settled elsewhere. The
// resolution the bot makes up for a question settled while it was
// disconnected has no decider; it is said plainly.
func settledLine(st style, tool string, r messages.Resolved) string {
	return st.cyan("⏭") + " " + tool + " " + settledWhy(r)
}

// settledWhy says how a question was settled elsewhere: "decided by
// alice via web (approved)", "settled elsewhere (expired)".
func settledWhy(r messages.Resolved) string {
	if r.State == "" && r.Decision.DecidedBy.Kind == "" {
		s := "settled elsewhere"
		if r.Decision.Reason != "" {
			s += " (" + line(r.Decision.Reason) + ")"
		}
		return s
	}
	return "decided by " + settledText(r.State, r.Decision)
}

// replacedNote is the line over the keys of a question that took the
// place of one that left the prompt under the operator (why: "was decided
// by …", "is no longer routed to you"): the keys line and the question's
// name may read the same as the one that left (red team AP F11: the
// agent withdrew a staging card and asked its prod twin), so it says so,
// and what differs.
func replacedNote(old approverbot.Question, why string, cur approverbot.Question) string {
	var diff []string
	field := func(name, a, b string) {
		if a != b {
			if a == "" {
				a = "(none)"
			}
			if b == "" {
				b = "(none)"
			}
			diff = append(diff, name+" "+a+" → "+b)
		}
	}
	ov, cv := view(old), view(cur)
	field("call", summary(old), summary(cur))
	field("directory", ov.Cwd, cv.Cwd)
	field("agent", line(ov.AgentID), line(cv.AgentID))
	field("session", line(ov.SessionID), line(cv.SessionID))
	field("team", line(ov.Team), line(cv.Team))
	what := "it differs in: " + strings.Join(diff, "; ")
	if len(diff) == 0 {
		what = "it reads like that one, but it is another question: read all of it"
	}
	return "⚠ A new question took the place of the one you were reading (" + summary(old) + ", which " + why + "); " +
		what + ". Keys wait a moment: read it first."
}

// notAppliedLine is the log line of an answer the brokers did not apply.
func notAppliedLine(st style, tool string, rep messages.RespondReply) string {
	s := st.yellow("!") + " " + tool + ": your answer was not applied: "
	switch {
	case rep.Decision != nil && rep.State.Final():
		s += "already decided by " + settledText(rep.State, *rep.Decision)
	case rep.Reason != "":
		s += line(rep.Reason)
	default:
		s += "the brokers refused it (state " + line(string(rep.State)) + ")"
	}
	return s
}

// answerHint says how to type an answer to q.
func answerHint(q approverbot.Question) string {
	switch n := len(q.AskUser.Questions); {
	case n == 0:
		return "type your answer"
	case n == 1:
		return "type option numbers (1,3 for several where allowed) or your own words"
	default:
		return "per question, in order, option numbers or your own words, separated by ;"
	}
}

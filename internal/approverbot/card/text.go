package card

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Width measures one character against a channel's limits: [RuneWidth]
// counts characters (Slack, the terminal, the web), a channel whose API
// counts otherwise passes its own (Telegram counts UTF-16 code units).
type Width func(r rune) int

// RuneWidth counts every character as one.
func RuneWidth(rune) int { return 1 }

// measure is the length of s under w.
func measure(s string, w Width) int {
	if w == nil {
		return utf8.RuneCountInString(s)
	}
	n := 0
	for _, r := range s {
		n += w(r)
	}
	return n
}

// Clip shortens s to at most n characters, marking the cut with "…".
func Clip(s string, n int) string { return ClipWidth(s, n, nil) }

// ClipWidth is [Clip] with characters measured by w (nil: [RuneWidth]).
func ClipWidth(s string, n int, w Width) string {
	if w == nil {
		w = RuneWidth
	}
	if measure(s, w) <= n {
		return s
	}
	used := 1 // the ellipsis
	for i, r := range s {
		if used+w(r) > n {
			return s[:i] + "…"
		}
		used += w(r)
	}
	return s
}

// ClipNote shortens s to n characters (measured by w) and says on a line
// of its own how many characters were left out.
func ClipNote(s string, n int, w Width) string {
	if measure(s, w) <= n {
		return s
	}
	c := ClipWidth(s, n, w)
	left := utf8.RuneCountInString(s) - utf8.RuneCountInString(c) + 1
	return c + "\n(" + strconv.Itoa(left) + " more characters not shown)"
}

// OneLine folds every run of white space, newlines included, into one space.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// PathLine shows a path on one line as it is: a path holding white space
// is quoted, its blanks kept and its newlines and tabs escaped, since a
// blank is part of the name ("/home/u/proj " is not "/home/u/proj", and
// OneLine would fold one into the other).
func PathLine(s string) string {
	if !strings.ContainsFunc(s, unicode.IsSpace) {
		return s
	}
	return strconv.Quote(s)
}

// SplitArgs renders a shell call's arguments for people: its "command"
// string comes out as it is (newlines included), the rest as indented
// JSON; each is sanitised (see sanitize.go) and clipped to limit
// characters with a note. Arguments are decoded first, as the policy
// decoded them: with duplicate keys the last one wins in what is shown too,
// and '<', '>' and '&' are not hidden behind \u escapes.
func SplitArgs(raw json.RawMessage, limit int, w Width) (command, rest string) {
	command, rest, _ = splitArgs(raw, true, limit, w, &sanitizer{})
	return command, rest
}

// splitArgs is [SplitArgs] with the sanitiser z; cut reports whether
// either part was clipped. Unless shell is set (the brokers judged the
// call as a shell call) no argument is split off: command is "" and rest
// holds every argument.
func splitArgs(raw json.RawMessage, shell bool, limit int, w Width, z *sanitizer) (command, rest string, cut bool) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return "", "", false
	}
	show := func(s string) string {
		s = z.text(s, true)
		if measure(s, w) > limit {
			cut = true
		}
		return ClipNote(s, limit, w)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return "", show(string(raw)), cut
	}
	// Every value a host runs as shell text, in any spelling of its key
	// (command, cmd, script; Codex's argv ["bash", "-lc", SCRIPT]): red
	// team Y3.
	for k, v := range m {
		// Every argument may be code in some language — SQL, a query, a
		// config a write tool writes, shell text under a key of its own
		// (cmdline) — whose syntax is ASCII: a '‐‐' (U+2010) is no SQL
		// comment, a '＃' no shell one (red team AR R7: SELECT … ‐‐ ;
		// DELETE FROM orders read as a count and deleted every row). So
		// every string in it is checked as a path's is: its punctuation,
		// symbols and spaces outside ASCII are named.
		eachArgString(v, z.namePunctuation)
		switch messages.NormalizeKey(k) {
		case "command", "cmd", "script":
			switch v := v.(type) {
			case string:
				z.shellPunctuation(v)
			case []any:
				for _, e := range v {
					if s, ok := e.(string); ok {
						z.shellPunctuation(s)
					}
				}
			}
		}
	}
	drop := ""
	if c, ok := m["command"].(string); ok && shell {
		command = show(c)
		delete(m, "command")
		drop = "command"
	}
	if len(m) == 0 {
		return command, "", cut
	}
	s, err := orderedJSON(raw, drop)
	if err != nil {
		return command, show(string(raw)), cut
	}
	rest = show(s)
	return command, rest, cut
}

// orderedJSON renders the JSON object raw as indented JSON with its keys
// in the order the agent sent them, drop left out: no argument is moved
// ahead of the others (red team AG F1). A repeated key is shown once, at
// its first place, with its last value (what the policy read; the card
// counts a repeated key as a cut).
func orderedJSON(raw json.RawMessage, drop string) (string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return "", errors.New("not an object")
	}
	var keys []string
	vals := map[string]string{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", err
		}
		k, _ := tok.(string)
		var v strings.Builder
		if err := writeJSON(dec, &v, "  ", true); err != nil {
			return "", err
		}
		if _, seen := vals[k]; !seen && k != drop {
			keys = append(keys, k)
		}
		vals[k] = v.String()
	}
	var b strings.Builder
	b.WriteString("{")
	for i, k := range keys {
		kj, err := encodeJSON(k, false)
		if err != nil {
			return "", err
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  " + kj + ": " + vals[k])
	}
	b.WriteString("\n}")
	return b.String(), nil
}

// CompactArgs renders a call's arguments on one line, sanitised and
// clipped to limit characters. Arguments sent as a JSON string holding
// JSON (some agents send batch_remaining that way) are unwrapped first.
func CompactArgs(raw json.RawMessage, limit int, w Width) string {
	return compactArgs(raw, limit, w, &sanitizer{})
}

func compactArgs(raw json.RawMessage, limit int, w Width, z *sanitizer) string {
	raw = unwrapJSONString(raw)
	if len(raw) == 0 {
		return ""
	}
	show := func(s string) string { return ClipWidth(z.line(s), limit, w) }
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var b strings.Builder
	if err := writeJSON(dec, &b, "", false); err != nil {
		return show(string(raw))
	}
	return show(b.String())
}

// writeJSON re-encodes the next JSON value dec reads into b, keeping
// every object's keys in the order they came, at every depth, repeats
// included (red team AL F3: a nested object decoded into a map was shown
// with its keys sorted, backup before drop, while the tool ran them in
// the agent's order); strings and numbers are written as encodeJSON
// writes them. pretty indents the value's inner lines by ind and two
// blanks per level, as encodeJSON with indent does. dec must use numbers.
func writeJSON(dec *json.Decoder, b *strings.Builder, ind string, pretty bool) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		s, err := encodeJSON(tok, false)
		b.WriteString(s)
		return err
	}
	b.WriteRune(rune(d))
	n := 0
	for ; dec.More(); n++ {
		if n > 0 {
			b.WriteByte(',')
		}
		if pretty {
			b.WriteString("\n" + ind + "  ")
		}
		if d == '{' {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			ks, _ := k.(string)
			kj, err := encodeJSON(ks, false)
			if err != nil {
				return err
			}
			b.WriteString(kj + ":")
			if pretty {
				b.WriteByte(' ')
			}
		}
		if err := writeJSON(dec, b, ind+"  ", pretty); err != nil {
			return err
		}
	}
	end, err := dec.Token()
	if err != nil {
		return err
	}
	if n > 0 && pretty {
		b.WriteString("\n" + ind)
	}
	b.WriteRune(rune(end.(json.Delim)))
	return nil
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

// unwrapJSONString returns the JSON inside a JSON string, or raw itself.
func unwrapJSONString(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		return raw
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return raw
	}
	if inner := bytes.TrimSpace([]byte(s)); len(inner) > 0 && (inner[0] == '{' || inner[0] == '[') && json.Valid(inner) {
		return inner
	}
	return raw
}

// VerdictMark is a sub-command's verdict with its symbol: "✓ allow",
// "? ask", "✗ deny".
func VerdictMark(action string) string {
	switch action {
	case "allow":
		return "✓ allow"
	case "deny":
		return "✗ deny"
	case "ask":
		return "? ask"
	}
	return "? " + action
}

// eachArgString calls fn with every string in a decoded argument value,
// in nested arrays and objects too (their keys included).
func eachArgString(v any, fn func(string)) {
	switch v := v.(type) {
	case string:
		fn(v)
	case []any:
		for _, e := range v {
			eachArgString(e, fn)
		}
	case map[string]any:
		for k, e := range v {
			fn(k)
			eachArgString(e, fn)
		}
	}
}

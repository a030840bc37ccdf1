package card

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
	ubidi "golang.org/x/text/unicode/bidi"
	"golang.org/x/text/unicode/norm"
	"mvdan.cc/sh/v3/syntax"
)

// The sanitiser: every text an agent controls passes through it once, in
// [Present], before any channel sees it. What a person cannot see, or sees
// as something else, is made visible:
//
//   - bidi controls (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F,
//     U+061C), which reorder what follows (Trojan Source);
//   - every other invisible character: the format characters (Unicode Cf:
//     U+200B, U+2060, U+FEFF, the tag characters…), the default ignorable
//     code points, variation selectors, and spaces other than U+0020, which
//     a shell reads as part of a word;
//   - control characters (Unicode Cc; tab and newline stay in a command);
//   - combining marks that draw over other characters or stand for none:
//     an enclosing mark (U+20E3), an overlay (canonical combining class 1:
//     U+0336 strikes a letter through, U+0338 slashes it), a mark on a base
//     that is not a letter (a dash, a slash, a space: "-" + U+0335 reads as
//     another sign), and the third and later marks on one base (stacks
//     that spill over the lines around: "Zalgo"); a letter's one or two
//     marks (é written as e + U+0301, Vietnamese, Indic vowel signs) stay;
//   - every character with no standard look: private use (a Nerd Font
//     draws U+E0BB as "/"), unassigned code points and noncharacters. The
//     list is closed (see hidden): only letters, marks, numbers,
//     punctuation, symbols and U+0020 are shown as themselves;
//
// each shown as "<U+2067>". Words that mix scripts ("gіthub" with a
// Cyrillic і) and host names with any character outside ASCII are flagged
// with their punycode. When anything was found the view's first warning
// says what, so a channel shows it at the top of the card.

// sanitizer escapes the texts of one question and remembers what it found.
type sanitizer struct {
	bidi, invisible, control []rune   // each character escaped, once
	marks                    []rune   // combining marks escaped (overlaid)
	unknown                  []rune   // characters with no standard look (private use, unassigned)
	punct                    []rune   // punctuation outside ASCII in a command
	rtl                      []rune   // right-to-left letters, which reorder the text around them
	userinfo                 []string // URLs with a user before their host
	mixed                    []string // words that mix scripts
	hosts                    []string // host names outside ASCII, with their punycode
	seen                     map[string]bool
}

// rightToLeft notes the strong right-to-left letters of s (Hebrew,
// Arabic, Syriac, Thaana, N'Ko…): with no bidi control at all, the
// Unicode bidi algorithm every browser, chat client and bidi terminal
// applies draws the spaces, quotes and digits between two of them right
// to left, so cp -f "דוח 2024" "דוח 2025" is drawn with its arguments
// swapped (red team AR R1). The card cannot tell every client how to
// draw; it says so.
func (z *sanitizer) rightToLeft(s string) {
	if isASCII(s) {
		return
	}
	for _, r := range s {
		if r < 0x0590 {
			continue
		}
		if p, _ := ubidi.LookupRune(r); p.Class() == ubidi.R || p.Class() == ubidi.AL {
			z.rtl = addRune(z.rtl, r)
		}
	}
}

// maxFlagged bounds the words and hosts a warning names.
const maxFlagged = 5

// Sanitize is s with every character a person cannot see escaped as the
// card escapes it (bidi controls, invisible characters, combining marks
// that draw over others, characters with no standard look); keep keeps
// tabs and newlines. For a channel's
// own texts from the wire, so that every text it prints is sanitised
// alike.
func Sanitize(s string, keep bool) string { return (&sanitizer{}).text(s, keep) }

// line is s sanitised and folded onto one line.
func (z *sanitizer) line(s string) string { return OneLine(z.text(s, false)) }

// text is s with every character a person cannot see escaped; keep keeps
// tabs and newlines (a command, indented JSON). Words and host names are
// checked for lookalikes.
func (z *sanitizer) text(s string, keep bool) string {
	z.rightToLeft(s)
	if Escaped(s, keep) < 0 {
		z.lookalikes(s)
		return s
	}
	var b strings.Builder
	eachRune(s, keep, func(i int, r rune, kind hiddenKind) {
		switch kind {
		case visible:
			b.WriteRune(r)
			return
		case invalid:
			// Invalid UTF-8: its byte, escaped.
			fmt.Fprintf(&b, "<0x%02X>", s[i])
			z.control = addRune(z.control, utf8.RuneError)
			return
		case bidi:
			z.bidi = addRune(z.bidi, r)
		case invisible:
			z.invisible = addRune(z.invisible, r)
		case control:
			z.control = addRune(z.control, r)
		case overlaid:
			z.marks = addRune(z.marks, r)
		case unknown:
			z.unknown = addRune(z.unknown, r)
		}
		b.WriteString(Escape(r))
	})
	out := b.String()
	z.lookalikes(out)
	return out
}

// eachRune classifies every character of s as the card does, in order,
// with its byte offset: the one classification both the card's escaping
// and [Escaped] (the editors' gate) read, so that no kind the card
// escapes can be missing from the other list (red team AP F3).
func eachRune(s string, keep bool, f func(i int, r rune, kind hiddenKind)) {
	var m markRun
	for i, r := range s {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(s[i:]); size == 1 {
				f(i, r, invalid)
				continue
			}
		}
		f(i, r, m.hidden(r, keep))
	}
}

// Escaped is the byte offset of the first character of s the card shows
// escaped ("<U+0336>") rather than as itself, or -1 when it shows all of
// s as it is; keep keeps tabs and newlines. Every kind counts: bidi,
// invisible and control characters, combining marks drawn over others
// (which depend on the characters before them, so s is read whole), and
// characters with no standard look. An editor, which can only show text
// raw, gates on it: what the card escapes, no editor shows.
func Escaped(s string, keep bool) int {
	at := -1
	eachRune(s, keep, func(i int, _ rune, kind hiddenKind) {
		if at < 0 && kind != visible {
			at = i
		}
	})
	return at
}

// addRune adds r to set, once.
func addRune(set []rune, r rune) []rune {
	if slices.Contains(set, r) {
		return set
	}
	return append(set, r)
}

// Escape is how the card shows a character a person could not see:
// "<U+2067>".
func Escape(r rune) string { return fmt.Sprintf("<U+%04X>", r) }

type hiddenKind int

const (
	visible hiddenKind = iota
	bidi
	invisible
	control
	overlaid // a combining mark that draws over others (markRun)
	unknown  // no standard look: private use, unassigned, a noncharacter
	invalid  // a byte that is not UTF-8
)

// markRun follows the combining marks of a text, rune by rune: the base
// they sit on and how many came since.
type markRun struct {
	base rune // the last rune that is not a mark; 0 at the start
	n    int  // marks since base
}

// hidden classifies r as hidden does, and a combining mark as overlaid
// when it encloses, overlays (canonical combining class 1), sits on a base
// that is not a letter, or is the third or later mark on its base.
func (m *markRun) hidden(r rune, keep bool) hiddenKind {
	kind := hidden(r, keep)
	if kind != visible || r < 0x300 || !unicode.In(r, unicode.Mn, unicode.Me) {
		if kind == visible {
			m.base, m.n = r, 0
		}
		return kind
	}
	m.n++
	if unicode.Is(unicode.Me, r) || m.n > 2 || !unicode.IsLetter(m.base) || norm.NFD.PropertiesString(string(r)).CCC() == 1 {
		return overlaid
	}
	return visible
}

// hidden classifies r: visible, or one of the kinds the card escapes.
// The model is closed: a character is visible only when Unicode assigns it
// to a category that draws as itself — letters, marks, numbers,
// punctuation, symbols, and U+0020 of the spaces — and it is none of the
// invisible exceptions below. Anything else is escaped, whatever it is:
// a private-use character (U+E000–U+F8FF, planes 15 and 16) is drawn as
// the font pleases (a Powerline font draws U+E0BB as "/": red team AP
// F8), an unassigned one (as the Go unicode tables know them) or a
// noncharacter as nothing or a box, and a kind of character nobody named
// here falls on this side too.
func hidden(r rune, keep bool) hiddenKind {
	switch {
	case r == ' ':
		return visible
	case r == '\n' || r == '\t':
		if keep {
			return visible
		}
		return control
	case r < 0x80:
		if r < 0x20 || r == 0x7f {
			return control
		}
		return visible
	case isBidi(r):
		return bidi
	case unicode.Is(unicode.Cc, r):
		return control
	case unicode.Is(unicode.Cf, r), unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r),
		unicode.Is(unicode.Variation_Selector, r), unicode.IsSpace(r), unicode.In(r, unicode.Zl, unicode.Zp, unicode.Zs),
		r == '\u115F', r == '\u1160', r == '\u3164', r == '\uFFA0', r == '\u2800':
		// Hangul fillers and the blank braille pattern draw nothing
		// either, though Unicode calls them letters or symbols.
		return invisible
	case unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S):
		return visible
	}
	// Co (private use), Cn (unassigned, noncharacters), Cs (surrogates,
	// which valid UTF-8 never holds) and anything else.
	return unknown
}

// isBidi reports the bidi controls: embeddings, overrides, isolates and
// marks.
func isBidi(r rune) bool {
	return (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069') ||
		r == '\u200E' || r == '\u200F' || r == '\u061C'
}

// idnaDots are the label separators UTS #46 maps to '.'.
var idnaDots = strings.NewReplacer("\u3002", ".", "\uFF0E", ".", "\uFF61", ".")

// urlUserinfo matches a URL's scheme and authority up to an '@': what a
// person reads as the host (https://github.com@evil.example) is a user
// name, and the host comes after it.
var urlUserinfo = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^/\s?#@]*@[^/\s?#]*`)

// shellPunctuation flags the characters of a shell command that are
// punctuation, symbols, spaces or modifier letters outside ASCII. The
// shell's syntax is ASCII, so to bash each is an inert part of a word,
// and to a person it may read as the quote, '#', '\\' or ';' it looks
// like: git commit -m ʼ…; git push -f #ʼ reads as one commit but pushes
// (red team V6). Rather than a list of lookalikes, every one is named.
func (z *sanitizer) shellPunctuation(command string) {
	if isASCII(command) {
		return
	}
	z.namePunctuation(command)
	z.unquotedEdges(command)
}

// namePunctuation flags the punctuation, symbols, spaces and modifier
// letters outside ASCII of a path or an identifier a grant is bound to
// (the working directory, a path argument, the agent and session ids): a
// path's structure is ASCII, so U+2215 (∕) is part of a name that reads
// as a '/', and /srv/prod∕..∕..∕tmp is one directory below /srv/prod, not
// /tmp (red team AG F13); an agent id ci-3∕claude is another agent than
// ci-3/claude.
func (z *sanitizer) namePunctuation(s string) {
	if isASCII(s) {
		return
	}
	for _, r := range s {
		if r >= 0x80 && (unicode.IsPunct(r) || unicode.IsSymbol(r) || unicode.Is(unicode.Zs, r) || unicode.Is(unicode.Lm, r)) {
			z.punct = addRune(z.punct, r)
		}
	}
}

// unquotedEdges flags the characters outside ASCII that stand, outside
// the shell's quotes, at the edge of a word or next to punctuation: a
// letter that looks like a quote (U+A78C saltillo, a Latin letter) opens
// or closes nothing for bash, while a person reads the text after it as
// quoted (red team Y3). Letters inside a word (héllo) are words; text in
// quotes and here-documents is data. A script the parser cannot read is
// checked whole.
func (z *sanitizer) unquotedEdges(command string) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(command), "")
	if err != nil {
		z.edges(command)
		return
	}
	var quoted [][2]uint
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			quoted = append(quoted, [2]uint{n.Pos().Offset(), n.End().Offset()})
		case *syntax.Redirect:
			if n.Hdoc != nil {
				quoted = append(quoted, [2]uint{n.Hdoc.Pos().Offset(), n.Hdoc.End().Offset()})
			}
		case *syntax.Lit:
			off := n.Pos().Offset()
			for _, q := range quoted {
				if off >= q[0] && off < q[1] {
					return true
				}
			}
			z.edges(n.Value)
		}
		return true
	})
}

// edges flags the runes of s outside ASCII that stand against ASCII (at
// either end of a run of them) and are not an ASCII letter with an accent
// (é is e and a mark): a letter that looks like a quote (U+A78C saltillo,
// a Latin letter to Unicode) reads to a person as the quote of a string,
// in -mꞌWIP as in ꞌWIP (red team Y3, Z7), while héllo, café and Привет
// are words.
func (z *sanitizer) edges(s string) {
	rs := []rune(s)
	ascii := func(j int) bool { return j >= 0 && j < len(rs) && rs[j] < 0x80 && !unicode.IsSpace(rs[j]) }
	for i, r := range rs {
		if unicode.IsMark(r) {
			// A mark on an ASCII letter that makes no accented letter of
			// it is drawn beside or over it as a mark of its own: U+0315
			// or U+0312 after a letter reads as a quote (fix̕ typo; git
			// push …), while é is one letter.
			b := i
			for b > 0 && unicode.IsMark(rs[b]) {
				b--
			}
			if rs[b] < 0x80 && !unicode.IsMark(rs[b]) && utf8.RuneCountInString(norm.NFC.String(string(rs[b:i+1]))) > 1 {
				z.punct = addRune(z.punct, r)
			}
			continue
		}
		if r < 0x80 || !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			continue // ASCII and punctuation (shellPunctuation's)
		}
		if !ascii(i-1) && !ascii(i+1) && !alone(rs, i) {
			continue
		}
		if d := norm.NFD.String(string(r)); d != "" && d[0] < 0x80 && unicode.IsLetter(rune(d[0])) &&
			!(strings.ContainsRune("dltL", rune(d[0])) && strings.HasSuffix(d, "\u030c")) {
			// An accented ASCII letter, but the caron on a tall letter
			// (ť ď ľ Ľ), which is drawn as an apostrophe after it.
			continue
		}
		z.punct = addRune(z.punct, r)
	}
}

// alone reports a letter that is a word by itself (marks on it aside):
// ꞌ, ᑊ or ⵌ between blanks reads as a quote or a #, and a word of one
// letter outside quotes is no word of a language.
func alone(rs []rune, i int) bool {
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	j := i + 1
	for j < len(rs) && unicode.IsMark(rs[j]) {
		j++
	}
	return (i == 0 || !word(rs[i-1])) && (j == len(rs) || !word(rs[j]))
}

// lookalikes flags the words of s that mix scripts, its host names
// outside ASCII and its URLs with a user before the host.
func (z *sanitizer) lookalikes(s string) {
	if strings.Contains(s, "@") && strings.Contains(s, "://") {
		for _, m := range urlUserinfo.FindAllString(s, maxFlagged) {
			z.flag(&z.userinfo, m)
		}
	}
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return
	}
	// IDNA maps the ideographic and full-width full stops to '.': gіthub。com
	// is a host name as gіthub.com is.
	s = idnaDots.Replace(s)
	for _, tok := range strings.FieldsFunc(s, func(r rune) bool { return !isWordRune(r) && r != '.' && r != '-' }) {
		tok = strings.Trim(tok, ".-")
		if tok == "" || isASCII(tok) {
			continue
		}
		if strings.Contains(tok, ".") && hostLike(tok) {
			if p, err := idna.Punycode.ToASCII(strings.ToLower(tok)); err == nil && p != tok {
				z.flag(&z.hosts, tok+" (punycode "+p+")")
				continue
			}
		}
		for _, w := range strings.FieldsFunc(tok, func(r rune) bool { return !isWordRune(r) }) {
			if mixedScripts(w) {
				z.flag(&z.mixed, w)
			}
		}
	}
}

func (z *sanitizer) flag(list *[]string, s string) {
	if z.seen == nil {
		z.seen = map[string]bool{}
	}
	if z.seen[s] {
		return
	}
	z.seen[s] = true
	*list = append(*list, s)
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// hostLike reports a dotted name whose last label is letters: a host name
// as a person reads one ("gіthub.com"), not a version number.
func hostLike(s string) bool {
	labels := strings.Split(s, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if l == "" {
			return false
		}
	}
	last := labels[len(labels)-1]
	for _, r := range last {
		if !unicode.IsLetter(r) && !unicode.IsMark(r) {
			return false
		}
	}
	return true
}

// scriptGroups are the scripts a word is checked against; the Han,
// Hiragana, Katakana, Bopomofo and Hangul scripts are one group, since
// Japanese, Chinese and Korean words mix them.
var scriptGroups = []struct {
	name   string
	tables []*unicode.RangeTable
}{
	{"Latin", []*unicode.RangeTable{unicode.Latin}},
	{"Cyrillic", []*unicode.RangeTable{unicode.Cyrillic}},
	{"Greek", []*unicode.RangeTable{unicode.Greek}},
	{"Armenian", []*unicode.RangeTable{unicode.Armenian}},
	{"Cherokee", []*unicode.RangeTable{unicode.Cherokee}},
	{"Georgian", []*unicode.RangeTable{unicode.Georgian}},
	{"Arabic", []*unicode.RangeTable{unicode.Arabic}},
	{"Hebrew", []*unicode.RangeTable{unicode.Hebrew}},
	{"CJK", []*unicode.RangeTable{unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Bopomofo, unicode.Hangul}},
}

// mixedScripts reports a word whose letters come from more than one
// script group (digits and marks belong to none).
func mixedScripts(w string) bool {
	group := -1
	for _, r := range w {
		if !unicode.IsLetter(r) {
			continue
		}
		g := len(scriptGroups) // a script of its own, outside the list
		for i, sg := range scriptGroups {
			if unicode.In(r, sg.tables...) {
				g = i
				break
			}
		}
		switch {
		case group < 0:
			group = g
		case g != group:
			return true
		}
	}
	return false
}

// warning is the line the card shows when anything was found; "" when
// nothing was.
func (z *sanitizer) warning() string {
	var parts []string
	count := func(rs []rune, one, many string) {
		if len(rs) == 0 {
			return
		}
		names := make([]string, 0, len(rs))
		for _, r := range rs[:min(len(rs), maxFlagged)] {
			names = append(names, fmt.Sprintf("U+%04X", r))
		}
		s := many + " " + strings.Join(names, ", ")
		if len(rs) == 1 {
			s = one + " " + names[0]
		}
		if n := len(rs) - len(names); n > 0 {
			s += " and " + strconv.Itoa(n) + " more"
		}
		parts = append(parts, s)
	}
	count(z.bidi, "a bidi control", "bidi controls")
	count(z.invisible, "an invisible character", "invisible characters")
	count(z.control, "a control character", "control characters")
	count(z.marks, "a combining mark drawn over other characters", "combining marks drawn over other characters")
	count(z.unknown, "a character with no standard look (private use or unassigned: a font may draw it as anything, '/' included)",
		"characters with no standard look (private use or unassigned: a font may draw them as anything, '/' included)")
	escaped := len(parts) > 0
	count(z.punct, "a character outside ASCII in the command, a path or an id that may read as punctuation (shell syntax, '/' or '.'), which it is not:",
		"characters outside ASCII in the command, a path or an id that may read as punctuation (shell syntax, '/' or '.'), which they are not:")
	count(z.rtl, "a right-to-left letter, around which a screen may draw the text in another order (arguments swapped, numbers reversed): read each argument on its own row:",
		"right-to-left letters, around which a screen may draw the text in another order (arguments swapped, numbers reversed): read each argument on its own row:")
	names := func(label string, list []string) {
		if len(list) == 0 {
			return
		}
		shown := list[:min(len(list), maxFlagged)]
		s := label + " " + strings.Join(shown, ", ")
		if n := len(list) - len(shown); n > 0 {
			s += " and " + strconv.Itoa(n) + " more"
		}
		parts = append(parts, s)
	}
	names("words mixing scripts:", z.mixed)
	names("host names outside ASCII:", z.hosts)
	names("URLs whose host comes after a user name (the host is what follows '@'):", z.userinfo)
	if len(parts) == 0 {
		return ""
	}
	s := "⚠ Disguised text: " + strings.Join(parts, "; ")
	if escaped {
		s += " (shown as <U+…>)"
	}
	return s + ". Read the call character by character before you approve."
}

// Hidden reports whether the card escapes r in text that keeps its lines,
// whatever stands around it: a bidi control, an invisible character, a
// control character other than tab and newline, or a character with no
// standard look. Channels that clean text of their own (the terminal's
// log lines) use it to escape the same characters. Combining marks are
// judged by what they sit on: see [Escaped] for a whole text.
func Hidden(r rune) bool { return hidden(r, true) != visible }

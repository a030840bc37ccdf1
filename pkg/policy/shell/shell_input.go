package shell

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Inputs where bash and the parser may read different things (issue 12,
// class 1), and the work budget of one analysis (class 5).

// shScreenInput returns why src cannot be analysed because bash and the
// parser may read it differently, or "". Tab and line feed are the only
// control characters accepted: a carriage return turns `\` CR LF into a
// line break for bash but not for the parser, NUL ends the string in
// bash, and the others (ESC, DEL, C1) and the Unicode line and paragraph
// separators are places where terminals, parsers and shells disagree.
// Invalid UTF-8 is refused for the same reason.
func shScreenInput(src string) string {
	for i := 0; i < len(src); {
		c := src[i]
		if c >= 0x20 && c < 0x7f || c == '\t' || c == '\n' {
			i++
			continue
		}
		if c < 0x80 {
			return "the command contains the control character " + shCharName(rune(c)) + " at byte " +
				strconv.Itoa(i) + ", which bash and the analysis may read differently"
		}
		r, size := utf8.DecodeRuneInString(src[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			return "the command is not valid UTF-8 (byte " + strconv.Itoa(i) + "), which bash and the analysis may read differently"
		case r >= 0x80 && r <= 0x9f, r == 0x2028, r == 0x2029, r == 0xFEFF, r == utf8.RuneError:
			// U+FFFD is what a JSON decoder makes of invalid UTF-8: the
			// bytes bash runs were something else.
			return "the command contains " + shCharName(r) + " at byte " + strconv.Itoa(i) +
				", which bash and the analysis may read differently"
		}
		i += size
	}
	return ""
}

// shSplitWord returns a reason when the line feed at src[nl] ends a line
// continuation (an odd run of backslashes before it) that does not stand
// between words: bash removes backslash-newline before it reads any token
// (outside single quotes), so $\⏎( is $( and .gi$\⏎'t' is .git, while
// the parser reads a $ and a new token, or text. A continuation after a
// blank (cmd \⏎ --flag), at the start of a line or of the script splits
// nothing.
func shSplitWord(src string, nl int) string {
	k := nl
	for k > 0 && src[k-1] == '\\' {
		k--
	}
	if (nl-k)%2 == 0 || k == 0 {
		return ""
	}
	switch src[k-1] {
	case ' ', '\t', '\n':
		return ""
	}
	from := max(k-12, 0)
	return "a line continuation splits a word at byte " + strconv.Itoa(k) + " (" + strconv.Quote(src[from:nl+1]) +
		"), which bash joins before it reads the word and the parser may not"
}

// shCharName names a control or separator character for a reason.
func shCharName(r rune) string {
	switch r {
	case '\r':
		return "CR (carriage return)"
	case 0:
		return "NUL"
	case 0x1b:
		return "ESC"
	case 0x7f:
		return "DEL"
	case 0x85:
		return "U+0085 (next line)"
	case 0x2028:
		return "U+2028 (line separator)"
	case 0x2029:
		return "U+2029 (paragraph separator)"
	case 0xFEFF:
		return "U+FEFF (byte order mark)"
	case utf8.RuneError:
		return "U+FFFD (a replaced invalid byte)"
	}
	return "U+" + strconv.FormatInt(int64(r)+0x10000, 16)[1:]
}

// shTooComplex is the reason of an analysis that spent its budget.
const shTooComplex = "too complex to analyse"

// Limits of one analysis, nested scripts included. They are far above
// what a person or an agent writes (a 64 KiB script of ordinary commands
// stays under them) and keep the worst case of any 64 KiB input to a few
// milliseconds.
const (
	// shBudgetUnits is the work one analysis may do: one unit per syntax
	// node visited and per byte parsed.
	shBudgetUnits = 1 << 20
	// shMaxNesting bounds the nesting of ( { $( ` [[ (( and quotes the
	// parser would recurse through.
	shMaxNesting = 200
)

// shBudget is the work left to one analysis. The zero value is a full
// budget.
type shBudget struct {
	used int
	// wrapped counts the words wrapper handlers have scanned: each level
	// of a chain scans what follows it.
	wrapped int
}

// shMaxWrapped bounds the words wrapper handlers scan in one analysis:
// twice the words a 64 KiB command can hold.
const shMaxWrapped = 64 << 10

// takeWrapper charges a wrapper handler's scan of n words.
func (b *shBudget) takeWrapper(n int) bool {
	b.wrapped += n
	return b.wrapped <= shMaxWrapped && b.take(n)
}

// take spends n units and reports whether the budget still holds.
func (b *shBudget) take(n int) bool {
	b.used += n
	return b.used <= shBudgetUnits
}

func (b *shBudget) spent() bool { return b.used > shBudgetUnits }

// prescreen charges the parse of src to the budget and refuses, before
// parsing, input that would make the parser build a deep tree: the parser
// is recursive descent, and its cost (stack growth, allocation) grows with
// the depth of what it builds. One linear scan bounds the three shapes
// that nest: brackets ( { [ (quoted or not), compound commands (if, while,
// until, for, case, select), and chains of | && || (each one a level).
// Operators inside (( )) and $(( )) chain the same way and are bounded
// with them.
func (b *shBudget) prescreen(src string) string {
	if !b.take(len(src)) {
		return shTooComplex
	}
	depth, kw, chain := 0, 0, 0
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '(', '{', '[':
			depth++
			if depth > shMaxNesting {
				return shTooComplex + ": nested more than " + strconv.Itoa(shMaxNesting) + " levels deep"
			}
		case ')', '}', ']':
			if depth > 0 {
				depth--
			}
		case '|', '&', '+', '-', '*', '/', '%', '<', '>', '=', '^', '!', '~', '?', ':', ',':
			// Counted once per run: "&&" and "||" are one operator, and so
			// is an option's "--".
			if i == 0 || !shIsOpChar(src[i-1]) {
				chain++
				if chain > shMaxOperators {
					return shTooComplex + ": more than " + strconv.Itoa(shMaxOperators) + " operators"
				}
			}
		default:
			if (c == 'i' || c == 'w' || c == 'u' || c == 'f' || c == 'c' || c == 's' || c == 'd' || c == 'e') &&
				(i == 0 || !shIsWordChar(src[i-1])) {
				switch shKeywordAt(src, i) {
				case 1:
					kw++
					if kw > shMaxNesting {
						return shTooComplex + ": compound commands nested more than " + strconv.Itoa(shMaxNesting) + " levels deep"
					}
				case -1:
					if kw > 0 {
						kw--
					}
				}
			}
		}
	}
	return ""
}

// shMaxOperators bounds the operator runs of one input (pipes, && and ||,
// arithmetic operators, option dashes): more than a 64 KiB script of
// ordinary commands holds, fewer than it takes to build a tree deep
// enough to be slow.
const shMaxOperators = 12000

func shIsOpChar(c byte) bool {
	return strings.IndexByte("|&+-*/%<>=^!~?:,", c) >= 0
}

func shIsWordChar(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// shKeywordAt reports a reserved word at src[i:]: 1 for one that opens a
// compound command, -1 for one that closes it, 0 otherwise.
func shKeywordAt(src string, i int) int {
	for _, k := range [...]struct {
		w string
		d int
	}{{"if", 1}, {"while", 1}, {"until", 1}, {"for", 1}, {"case", 1}, {"select", 1},
		{"fi", -1}, {"done", -1}, {"esac", -1}} {
		if strings.HasPrefix(src[i:], k.w) && (i+len(k.w) == len(src) || !shIsWordChar(src[i+len(k.w)])) {
			return k.d
		}
	}
	return 0
}

// shShellNames are the shells handled as wrappers: with -c their script
// is analysed (bash and POSIX shells) or refused (the others).
var shShellNames = []string{
	"sh", "bash", "rbash", "dash", "ash", "posh",
	"zsh", "ksh", "ksh93", "mksh", "pdksh", "oksh", "yash", "fish", "csh", "tcsh",
	"pwsh", "powershell", "nu", "elvish", "xonsh", "osh", "ysh", "oil", "rc", "es", "ion", "murex",
}

// ForeignShells are the shells whose grammar is not bash's or POSIX's:
// their scripts are not analysed (zsh's glob qualifiers run code, fish and
// pwsh have their own syntax). A call is judged as the shell command
// itself, and cannot be allowed unless a rule names the shell.
var ForeignShells = map[string]bool{
	"zsh": true, "ksh": true, "ksh93": true, "mksh": true, "pdksh": true, "oksh": true, "yash": true,
	"fish": true, "csh": true, "tcsh": true, "pwsh": true, "powershell": true, "nu": true,
	"elvish": true, "xonsh": true, "osh": true, "ysh": true, "oil": true, "rc": true, "es": true,
	"ion": true, "murex": true,
}

// shForeignReason is why a script of a foreign shell is not analysed.
func shForeignReason(name string) string {
	return "runs a " + name + " script, which the policy does not parse (only bash and POSIX sh are analysed)"
}

// shDialect is the grammar a shell's -c script is parsed with: POSIX for
// sh, dash, ash and posh (Debian's sh is dash), bash otherwise.
func shDialect(name string) syntax.LangVariant {
	switch name {
	case "sh", "dash", "ash", "posh":
		return syntax.LangPOSIX
	}
	return syntax.LangBash
}

// shMaxWrappers bounds the wrappers one command is seen through.
const shMaxWrappers = 16

// shStartupReason is why a login or interactive shell is not analysed: it
// first runs start-up files (/etc/profile, ~/.profile, ~/.bashrc) the
// policy cannot see.
func shStartupReason(name, opt string) string {
	return name + " " + opt + " runs the shell's start-up files (/etc/profile, ~/.profile, ~/.bashrc), which the policy cannot see"
}

// shScreenTree returns a reason when the parser's tree of src may not be
// bash's: a line continuation that splits a word (shSplitWord), single
// quotes inside double quotes ("${x:-'$(id)'}": not quotes for bash, which
// expands what they hold), an extended glob holding an expansion (the
// parser keeps @(…) as text), and the cases below. It also returns one
// when a here-document's end may be
// elsewhere for the shell than for the parser, "" otherwise. In a
// here-document whose delimiter is not quoted, bash and zsh join a line
// ending in a backslash with the next before they compare it with the
// delimiter (a line E\ then OF ends <<EOF) and before they expand it
// ($\ then (id) is $(id)); the parser compares and reads the lines as
// written. A delimiter in $'…' or $"…" is compared decoded by bash and as
// written by the parser. Either way the lines after the parser's end run
// unseen, or a substitution goes unseen: the script asks.
//
// It also returns a reason for a NUL in $'…' ($'\0', \x00, \c@): bash
// ends the string there and joins what follows the quotes
// ($'.npmrc\0x'y is .npmrcy), zsh keeps it and the kernel ends the
// argument there (.npmrc), the analysis would read neither.
func shScreenTree(f *syntax.File, src string) string {
	for i := 1; i < len(src); i++ {
		if src[i] == '\n' && src[i-1] == '\\' {
			if r := shSplitWord(src, i); r != "" {
				return r
			}
		}
	}
	if !shMayReadDifferently(src) {
		return ""
	}
	var reason string
	syntax.Walk(f, func(n syntax.Node) bool {
		if reason == "" {
			reason = shNodeReason(n, src)
		}
		if q, ok := n.(*syntax.SglQuoted); ok && q.Dollar {
			return false
		}
		return reason == ""
	})
	return reason
}

// shNodeReason is shScreenTree's reason for one node, or "".
func shNodeReason(n syntax.Node, src string) string {
	switch x := n.(type) {
	case *syntax.SglQuoted:
		if !x.Dollar {
			return ""
		}
		var b strings.Builder
		shDecodeANSIC(&b, x.Value)
		if strings.IndexByte(b.String(), 0) >= 0 {
			return "the string " + strconv.Quote(shNodeText(src, x)) + " holds a NUL, where bash ends it and a program's argument ends"
		}
	case *syntax.DblQuoted:
		if x.Dollar {
			return "the string " + strconv.Quote(shNodeText(src, x)) + " is translated from a message catalog (TEXTDOMAIN, TEXTDOMAINDIR) the script may name, and bash expands the translation"
		}
		if q := shQuotedQuote(x); q != nil {
			return "single quotes inside double quotes (" + strconv.Quote(shNodeText(src, q)) + ") quote nothing for bash, which expands what they hold; the parser read them as quotes"
		}
	case *syntax.ExtGlob:
		if strings.ContainsAny(x.Pattern.Value, "$`") {
			return "the extended glob " + strconv.Quote(shNodeText(src, x)) + " holds an expansion, which bash performs and the parser reads as text"
		}
	case *syntax.Redirect:
		if (x.Op == syntax.Hdoc || x.Op == syntax.DashHdoc) && x.Word != nil {
			return shHeredocReason(x, src)
		}
	}
	return ""
}

// shHeredocReason is shScreenTree's reason for a here-document, or "".
func shHeredocReason(r *syntax.Redirect, src string) string {
	quoted := false
	for _, part := range r.Word.Parts {
		switch part := part.(type) {
		case *syntax.SglQuoted:
			if part.Dollar {
				return "the here-document delimiter " + strconv.Quote(shNodeText(src, r.Word)) + " is in $'…', which bash decodes before it looks for the end"
			}
			quoted = true
		case *syntax.DblQuoted:
			if part.Dollar {
				return "the here-document delimiter " + strconv.Quote(shNodeText(src, r.Word)) + " is in $\"…\", which bash translates before it looks for the end"
			}
			quoted = true
		case *syntax.Lit:
			quoted = quoted || strings.ContainsRune(part.Value, '\\')
		}
	}
	if r.Hdoc == nil {
		return ""
	}
	delim := shNodeText(src, r.Word)
	if quoted {
		delim = shHdocDelim(r.Word)
	}
	for line := range strings.Lines(shNodeText(src, r.Hdoc)) {
		line = strings.TrimSuffix(line, "\n")
		if l := strings.TrimLeft(line, "\t"); strings.HasPrefix(l, delim) && l != delim {
			// EOF) inside $(…) ends the here-document for bash.
			return "a line of the here-document starts with its delimiter but is not it, where bash may end it: " + strconv.Quote(line)
		}
		if n := len(line) - len(strings.TrimRight(line, "\\")); !quoted && n%2 == 1 {
			return "a line of the here-document ends in a backslash, which joins it with the next before bash looks for the end and expands it: " + strconv.Quote(line)
		}
	}
	if q := shWordQuote(r.Hdoc.Parts); q != nil && !quoted {
		// bash reads an unquoted body as double-quoted text.
		return "single quotes in a here-document (" + strconv.Quote(shNodeText(src, q)) + ") quote nothing for bash, which expands what they hold; the parser read them as quotes"
	}
	return ""
}

// shMayReadDifferently reports whether src holds what shScreenTree's walk
// looks for: a here-document, $'…', single and double quotes both, or an
// extended glob's opening. Most scripts hold none, and skip the walk.
func shMayReadDifferently(src string) bool {
	if strings.Contains(src, "<<") || strings.Contains(src, "$'") || strings.Contains(src, "$\"") ||
		strings.IndexByte(src, '"') >= 0 && strings.IndexByte(src, '\'') >= 0 {
		return true
	}
	for i := 1; i < len(src); i++ {
		if src[i] == '(' && strings.IndexByte("@+?*!", src[i-1]) >= 0 {
			return true
		}
	}
	return false
}

// shHdocDelim is the delimiter a quoted here-document ends at: its word
// without the quotes.
func shHdocDelim(w *syntax.Word) string {
	var b strings.Builder
	for _, part := range w.Parts {
		switch part := part.(type) {
		case *syntax.Lit:
			b.WriteString(strings.ReplaceAll(part.Value, "\\", ""))
		case *syntax.SglQuoted:
			b.WriteString(part.Value)
		case *syntax.DblQuoted:
			for _, q := range part.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					b.WriteString(l.Value)
				}
			}
		}
	}
	return b.String()
}

// shQuotedQuote returns a single-quoted part inside the double quotes q
// ("${x:-'…'}"), outside the command substitutions in it (where quotes
// quote again), or nil.
func shQuotedQuote(q *syntax.DblQuoted) syntax.Node {
	return shWordQuote(q.Parts)
}

// shWordQuote returns a single-quoted part among parts or under them,
// not under a command or process substitution, or nil.
func shWordQuote(parts []syntax.WordPart) syntax.Node {
	var found syntax.Node
	for _, p := range parts {
		syntax.Walk(p, func(n syntax.Node) bool {
			switch n.(type) {
			case *syntax.CmdSubst, *syntax.ProcSubst:
				return false
			case *syntax.SglQuoted:
				if found == nil {
					found = n
				}
				return false
			}
			return found == nil
		})
	}
	return found
}

// shNodeText is the source text of a node.
func shNodeText(src string, n syntax.Node) string {
	from, to := int(n.Pos().Offset()), int(n.End().Offset())
	if from < 0 || to > len(src) || from > to {
		return ""
	}
	return src[from:to]
}

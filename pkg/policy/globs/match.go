package globs

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Match reports whether command (the words of one simple
// command joined by single spaces) matches pattern. `*` matches any run of
// characters, including '/' and spaces; `?` matches one character;
// `[abc]`, `[a-z]` and `[!a-z]` (or `[^a-z]`) match one character of a
// class; a backslash makes the next character literal. Everything else
// matches itself. It does not allocate.
func Match(pattern, command string) bool {
	if matchShellPattern(pattern, command) {
		return true
	}
	// "X *" also matches X alone: a rule allowing git log with any
	// arguments allows git log without any.
	n := len(pattern)
	if n < 3 || pattern[n-2:] != " *" || shEscaped(pattern, n-2) {
		return false
	}
	head := pattern[:n-2]
	if strings.IndexAny(head, "*?[\\") < 0 {
		return command == head // the common case: a literal prefix
	}
	return matchShellPattern(head, command)
}

// shEscaped reports whether pattern[i] is escaped by an odd number of
// backslashes before it.
func shEscaped(pattern string, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && pattern[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

func matchShellPattern(pattern, command string) bool {
	px, sx := 0, 0
	// The position to resume from when a match after the last '*' fails.
	starPx, starSx := -1, -1
	for px < len(pattern) || sx < len(command) {
		if px < len(pattern) {
			switch c := pattern[px]; c {
			case '*':
				starPx, starSx = px, sx
				px++
				continue
			case '?':
				if sx < len(command) {
					_, size := utf8.DecodeRuneInString(command[sx:])
					px++
					sx += size
					continue
				}
			case '[':
				if LoneBracket(pattern, px) {
					// `[ -f x ]`: the test command, not a class.
					if sx < len(command) && command[sx] == '[' {
						px++
						sx++
						continue
					}
					break
				}
				if sx < len(command) {
					r, size := utf8.DecodeRuneInString(command[sx:])
					if ok, end, valid := MatchClass(pattern, px, r); valid {
						if ok {
							px, sx = end, sx+size
							continue
						}
						break
					}
				}
				if sx < len(command) && command[sx] == '[' {
					px++
					sx++
					continue
				}
			case '\\':
				lit := byte('\\')
				if px+1 < len(pattern) {
					lit = pattern[px+1]
				}
				if sx < len(command) && command[sx] == lit {
					px += 2
					if px > len(pattern) {
						px = len(pattern)
					}
					sx++
					continue
				}
			default:
				if sx < len(command) && command[sx] == c {
					px++
					sx++
					continue
				}
			}
		}
		if starPx >= 0 && starSx < len(command) {
			starSx++
			px, sx = starPx+1, starSx
			continue
		}
		return false
	}
	return true
}

// LoneBracket reports a '[' that is a word of its own in a pattern (the
// test command `[ -f x ]`): it is matched literally, never as a class.
func LoneBracket(p string, i int) bool {
	return (i == 0 || p[i-1] == ' ') && (i+1 == len(p) || p[i+1] == ' ')
}

// MatchClass matches r against the bracket expression starting at
// pattern[start] == '['. valid is false when the expression has no closing
// bracket (the '[' is then literal); end is the index after it. A bracket
// expression holds characters, ranges (a-z), POSIX character classes
// ([:alpha:]), equivalence classes ([=e=]) and collating symbols ([.e.]),
// read as bash, zsh, fnmatch and git read them; one it cannot read
// exactly (see [BracketExact]) matches any character.
func MatchClass(pattern string, start int, r rune) (ok bool, end int, valid bool) {
	b := scanBracket(pattern, start, r, false)
	return b.ok, b.end, b.valid
}

// BracketExact reports whether the bracket expression at p[start] == '['
// is one MatchClass reads exactly: every element a character, a range, a
// class of a known name, or an equivalence class or collating symbol of
// one character, and no class or equivalence class at the end of a range.
// Shells and matchers disagree on the others ([[:alpha]], [[.ch.]],
// [a-[:digit:]], [[.].]]): on the set they match and even on where they
// end, so such a bracket is taken to match any character (and a word's
// glob, see [AppendUnquoted], anything up to its last ']').
func BracketExact(p string, start int) bool {
	return scanBracket(p, start, 0, false).exact
}

// wordUnknown, unescaped in the text AppendWord compiles, is an unquoted
// expansion whose value is not known: it may itself end a bracket
// expression or start one.
const wordUnknown = '\uFDD0'

// isWordToken reports the runes that stand for an expansion in a word's
// text (AppendWord).
func isWordToken(r rune) bool { return r == wordUnknown || r == wordQuoted }

// bracket is what scanBracket read of one bracket expression.
type bracket struct {
	ok       bool // r is in the set (or the set is not read exactly)
	end      int  // the index after the closing ']', when valid
	valid    bool // a closing ']' ends it
	exact    bool // every element was read (see BracketExact)
	reversed int  // the offset of a range whose ends are reversed, or -1
}

// scanBracket reads the bracket expression at p[start] == '['. Its set is
// matched against r: exactly for ASCII characters in the C locale's
// classes; a character outside ASCII may be in any class and in any
// equivalence class of a letter (the user's locale decides), so a class
// matches it and a negated class does too: the set may be larger than the
// shell's, never smaller. When words is true an unescaped wordUnknown is
// an expansion (the set is then unknown). It does not allocate.
func scanBracket(p string, start int, r rune, words bool) bracket {
	b := bracket{exact: true, reversed: -1}
	i := start + 1
	negate := false
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		negate = true
		i++
	}
	in := false
	first := true
	for i < len(p) {
		c := p[i]
		if c == ']' && !first {
			b.valid, b.end = true, i+1
			b.ok = !b.exact || in != negate
			return b
		}
		first = false
		elem := i
		var lo rune
		switch {
		case c == '[' && i+1 < len(p) && (p[i+1] == ':' || p[i+1] == '=' || p[i+1] == '.'):
			var whole bool
			lo, i, whole = b.namedElem(p, i, r, negate, words, &in)
			if whole {
				continue
			}
		case c == '\\' && i+1 < len(p):
			var size int
			lo, size = utf8.DecodeRuneInString(p[i+1:])
			i += 1 + size
		default:
			var size int
			lo, size = utf8.DecodeRuneInString(p[i:])
			i += size
			if words && isWordToken(lo) {
				b.exact = false
				continue
			}
		}
		hi := lo
		if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
			hi, i = b.rangeEnd(p, i+1, words)
			if hi < lo && b.reversed < 0 {
				b.reversed = elem
			}
		}
		if lo <= r && r <= hi {
			in = true
		}
	}
	return b
}

// namedElem reads a class "[:name:]", an equivalence class "[=c=]" or a
// collating symbol "[.c.]" at p[i] == '[' in a bracket expression. It
// sets *in when r is in a class, and returns the index after the element
// and whole (the element is done: a class, an equivalence class, or one
// not read exactly), or the character a collating symbol stands for, which
// may start a range.
func (b *bracket) namedElem(p string, i int, r rune, negate, words bool, in *bool) (lo rune, next int, whole bool) {
	d := p[i+1]
	name, next, ok := bracketName(p, i, words)
	if !ok {
		// "[:" with no ":]": bash takes the '[' as a character, others
		// do not.
		b.exact = false
		return '[', i + 1, false
	}
	rangeFollows := next+1 < len(p) && p[next] == '-' && p[next+1] != ']'
	if d == ':' {
		cl, known := posixClass(name)
		switch {
		case !known || rangeFollows:
			b.exact = false
		case classHas(cl, r, negate):
			*in = true
		}
		return 0, next, true
	}
	e, size := utf8.DecodeRuneInString(name)
	if name == "" || size != len(name) || e == utf8.RuneError {
		b.exact = false // a collating element of several characters
		return 0, next, true
	}
	if d == '=' {
		// bash (5.2) does not end the expression at a ']' right after an
		// equivalence class that r is not in ([![=a=]]-] is one
		// expression), and takes the '[' literally when no later ']' ends
		// it: where [[=e=]] ends depends on the character, so it is not
		// read exactly.
		b.exact = false
		if equivHas(e, r, negate) {
			*in = true
		}
		return 0, next, true
	}
	return e, next, false
}

// rangeEnd reads the end of a range in a bracket expression at p[j] (after
// the '-'): the character and the index after it. A collating symbol ends
// a range as its character; a class cannot, and makes the expression
// inexact, as does anything else not read exactly.
func (b *bracket) rangeEnd(p string, j int, words bool) (hi rune, next int) {
	switch {
	case p[j] == '[' && j+1 < len(p) && p[j+1] == '.':
		name, next, ok := bracketName(p, j, words)
		e, size := utf8.DecodeRuneInString(name)
		if !ok || name == "" || size != len(name) || e == utf8.RuneError {
			b.exact = false
			if !ok {
				next = j + 1
			}
		}
		return e, next
	case p[j] == '[' && j+1 < len(p) && (p[j+1] == ':' || p[j+1] == '='):
		b.exact = false // a class cannot end a range
		return '[', j + 1
	case p[j] == '\\' && j+1 < len(p):
		hi, size := utf8.DecodeRuneInString(p[j+1:])
		return hi, j + 1 + size
	}
	hi, size := utf8.DecodeRuneInString(p[j:])
	if words && isWordToken(hi) {
		b.exact = false
	}
	return hi, j + size
}

// bracketName reads the name of "[:name:]", "[=c=]" or "[.c.]" at
// p[i] == '[': the name and the index after its closing bracket. ok is
// false when the closing ":]" (or "=]", ".]") is missing, or when the name
// holds a bracket, a backslash or (in words) an expansion, on which
// matchers disagree ([[.].]] ends early for some).
func bracketName(p string, i int, words bool) (name string, next int, ok bool) {
	d := p[i+1]
	for k := i + 2; k+1 < len(p); k++ {
		switch c := p[k]; {
		case c == d && p[k+1] == ']':
			name = p[i+2 : k]
			if strings.ContainsAny(name, "[]\\") || words && strings.ContainsFunc(name, isWordToken) {
				return name, k + 2, false
			}
			return name, k + 2, true
		}
	}
	return "", 0, false
}

// The POSIX character classes, as bit masks over ASCII.
type charClass uint8

const (
	clAlpha charClass = iota
	clDigit
	clAlnum
	clUpper
	clLower
	clSpace
	clBlank
	clPunct
	clPrint
	clGraph
	clCntrl
	clXdigit
	clWord
)

// posixClass returns the class a [:name:] names: the twelve of POSIX and
// bash's "word" (alnum and '_').
func posixClass(name string) (charClass, bool) {
	switch name {
	case "alpha":
		return clAlpha, true
	case "digit":
		return clDigit, true
	case "alnum":
		return clAlnum, true
	case "upper":
		return clUpper, true
	case "lower":
		return clLower, true
	case "space":
		return clSpace, true
	case "blank":
		return clBlank, true
	case "punct":
		return clPunct, true
	case "print":
		return clPrint, true
	case "graph":
		return clGraph, true
	case "cntrl":
		return clCntrl, true
	case "xdigit":
		return clXdigit, true
	case "word":
		return clWord, true
	}
	return 0, false
}

// classHas reports whether r is in class cl. For ASCII it is the C
// locale's answer. Outside ASCII the locale decides: r is taken to be in
// every class, unless negated is true (the class is inside [!…]), where
// it is taken to be in none — either way the bracket matches r.
func classHas(cl charClass, r rune, negated bool) bool {
	if r < 0 || r >= utf8.RuneSelf {
		return !negated
	}
	c := byte(r)
	upper, lower, digit := 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9'
	switch cl {
	case clAlpha:
		return upper || lower
	case clDigit:
		return digit
	case clAlnum:
		return upper || lower || digit
	case clUpper:
		return upper
	case clLower:
		return lower
	case clSpace:
		return c == ' ' || '\t' <= c && c <= '\r'
	case clBlank:
		return c == ' ' || c == '\t'
	case clPunct:
		return '!' <= c && c <= '~' && !upper && !lower && !digit
	case clPrint:
		return ' ' <= c && c <= '~'
	case clGraph:
		return '!' <= c && c <= '~'
	case clCntrl:
		return c < ' ' || c == 0x7f
	case clXdigit:
		return digit || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
	case clWord:
		return upper || lower || digit || c == '_'
	}
	return !negated
}

// equivHas reports whether r is in the equivalence class [=e=]: e itself;
// in a locale other than C the class of a letter may also hold its other
// case and its accented forms, so those are in it unless negated is true
// (as in classHas).
func equivHas(e, r rune, negated bool) bool {
	switch {
	case r == e:
		return true
	case negated:
		return false
	case r >= utf8.RuneSelf:
		return isASCIILetter(e) || e >= utf8.RuneSelf
	case e >= utf8.RuneSelf:
		return isASCIILetter(r)
	}
	return isASCIILetter(e) && (r|0x20) == (e|0x20)
}

func isASCIILetter(r rune) bool { return 'a' <= r|0x20 && r|0x20 <= 'z' }

// Check reports what is wrong with a shell pattern (a rule's,
// or a value pattern of the program table), in the terms path globs use:
// a '[' without its ']', a range whose ends are reversed (`[z-a]` matches
// nothing, so a deny with it would deny nothing), an empty class, or a
// trailing backslash. Match would read such a pattern as
// literal text, which is never what its author meant.
func Check(p string) error {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			if i+1 >= len(p) {
				return errors.New("the pattern ends with a backslash that escapes nothing")
			}
			i++
		case '[':
			if LoneBracket(p, i) {
				continue
			}
			end, err := checkShellClass(p, i)
			if err != nil {
				return err
			}
			i = end
		}
	}
	return nil
}

// checkShellClass checks the bracket expression at p[start] == '[' as
// MatchClass reads it, and returns the index of its closing ']'.
func checkShellClass(p string, start int) (int, error) {
	b := scanBracket(p, start, 0, false)
	switch {
	case !b.exact:
		return 0, fmt.Errorf("the bracket expression at offset %d is not one every shell reads alike (a [:class:] of a known name and [.c.] of one character are; [=c=], whose end bash reads differently, and a class at either end of a range are not)", start)
	case !b.valid:
		return 0, fmt.Errorf("'[' at offset %d has no closing ']' (write \\[ for a literal bracket)", start)
	case b.reversed >= 0:
		return 0, fmt.Errorf("the character range at offset %d is reversed and matches nothing", b.reversed)
	}
	return b.end - 1, nil
}

// CheckPathBrackets rejects, in a rule's path glob, a bracket expression
// holding "[:", "[=" or "[.": the path matcher (gobwas/glob) has no POSIX
// classes and would read [[:alpha:]] as the characters "[:alph" then a
// literal ']', while the matching of unknown paths (FromPathText) reads
// a class — a deny rule would miss the paths its author meant.
func CheckPathBrackets(p string) error {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '[':
			j := strings.IndexByte(p[i+1:], ']')
			if j < 0 {
				return nil
			}
			body := p[i+1 : i+1+j]
			if strings.Contains(body, "[:") || strings.Contains(body, "[=") || strings.Contains(body, "[.") {
				return fmt.Errorf("the bracket expression at offset %d holds a POSIX class, equivalence class or collating symbol, which path globs do not support (write a range or the characters: [a-z], [abc])", i)
			}
			i += j
		}
	}
	return nil
}

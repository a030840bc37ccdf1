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
// bracket (the '[' is then literal); end is the index after it.
func MatchClass(pattern string, start int, r rune) (ok bool, end int, valid bool) {
	i := start + 1
	negate := false
	if i < len(pattern) && (pattern[i] == '!' || pattern[i] == '^') {
		negate = true
		i++
	}
	matched := false
	first := true
	for i < len(pattern) {
		if pattern[i] == ']' && !first {
			return matched != negate, i + 1, true
		}
		first = false
		lo, size := utf8.DecodeRuneInString(pattern[i:])
		if lo == '\\' && i+1 < len(pattern) {
			i++
			lo, size = utf8.DecodeRuneInString(pattern[i:])
		}
		i += size
		hi := lo
		if i+1 < len(pattern) && pattern[i] == '-' && pattern[i+1] != ']' {
			var s int
			hi, s = utf8.DecodeRuneInString(pattern[i+1:])
			i += 1 + s
		}
		if lo <= r && r <= hi {
			matched = true
		}
	}
	return false, 0, false
}

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
	i := start + 1
	if i < len(p) && (p[i] == '!' || p[i] == '^') {
		i++
	}
	first := true
	for i < len(p) {
		if p[i] == ']' && !first {
			return i, nil
		}
		first = false
		lo, size := utf8.DecodeRuneInString(p[i:])
		if lo == '\\' && i+1 < len(p) {
			i++
			lo, size = utf8.DecodeRuneInString(p[i:])
		}
		i += size
		if i+1 < len(p) && p[i] == '-' && p[i+1] != ']' {
			hi, s := utf8.DecodeRuneInString(p[i+1:])
			if hi == '\\' && i+2 < len(p) {
				hi, s = utf8.DecodeRuneInString(p[i+2:])
				s++
			}
			if hi < lo {
				return 0, fmt.Errorf("character range %c-%c at offset %d is reversed and matches nothing", lo, hi, i-size)
			}
			i += 1 + s
		}
	}
	return 0, fmt.Errorf("'[' at offset %d has no closing ']' (write \\[ for a literal bracket)", start)
}

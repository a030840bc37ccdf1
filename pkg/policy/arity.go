package policy

import (
	"strings"
	"unicode/utf8"
)

// The arity of a command is how many leading words form its "command
// prefix", the part an "Always" answer grants (seed 004). It comes from the
// program table (programs.yaml, arity: and subcommands:): a sub-command's
// arity ("npm run" → 3) takes precedence over the program's ("npm" → 2);
// programs not listed have arity 1 (`cat README.md` → `cat *`). Global
// options (git -C DIR) are not counted: the prefix is built from the
// command without them.

// ShellArity returns how many leading words of words form the command
// prefix that an "Always" answer grants, by the built-in program table.
// words must not hold global options (see [ShellCommand.Options]).
func ShellArity(words []string) int {
	if len(words) == 0 {
		return 0
	}
	return builtinPrograms().lookup(words[0]).arityOf(words)
}

// shNeverAlways reports commands an "Always" answer never grants by
// prefix: shells, eval and source, wrappers judged as themselves (sudo
// with no command, env printing the environment…) and interpreters, since
// `python *` would grant any program.
func shNeverAlways(spec *progSpec) bool {
	if spec == nil {
		return false
	}
	if spec.neverAlways || spec.wrapper != nil || spec.hook == "interpreter" {
		return true
	}
	_, wrapperHook := shHooks[spec.hook]
	return wrapperHook && spec.hook != "find" // find is a command in its own right
}

// withoutOptions returns the words of c without its global options (git -C
// dir status → git status); words itself when it has none.
func withoutOptions(c *ShellCommand) []string {
	if c.Options <= 0 || c.Options+1 > len(c.Words) {
		return c.Words
	}
	out := make([]string, 0, len(c.Words)-c.Options)
	out = append(out, c.Words[0])
	return append(out, c.Words[1+c.Options:]...)
}

// AlwaysPatterns returns the shell patterns an "Always" answer on the
// analysed command would grant: for each command its arity prefix
// (`git push origin main` → `git push *`, `npm run build` → `npm run
// build`, `cat README.md` → `cat *`), deduplicated, in order. A " *" is
// appended when the command has more words than its prefix. When a word of
// the prefix after the first is an option (`git -C dir status`), the
// prefix would not name a subcommand, so the pattern is the whole command,
// exactly. Glob characters in words are escaped.
//
// AlwaysPatterns returns nil when no prefix grant may cover the command:
// it is unprefixable or unanalysable, has a safety reason, or one of its
// commands is unanalysable, elevated, a redirection, path-qualified, or a
// shell, eval, source, wrapper or interpreter.
func AlwaysPatterns(a ShellAnalysis) []string { return alwaysPatterns(a, builtinPrograms()) }

// alwaysPatterns is AlwaysPatterns with the policy's program table.
func alwaysPatterns(a ShellAnalysis, progs *programTable) []string {
	if a.Unanalysable != "" || a.Unprefixable != "" || len(a.Safety) > 0 || len(a.Commands) == 0 {
		return nil
	}
	var out []string
	for i := range a.Commands {
		c := &a.Commands[i]
		if c.Redirect || c.Unanalysable != "" || c.Elevated || c.PathQualified ||
			len(c.Words) == 0 || shNeverAlways(progs.lookup(c.Name)) {
			return nil
		}
		words := withoutOptions(c)
		p := shPrefixPattern(words, progs.lookup(c.Name).arityOf(words))
		dup := false
		for _, o := range out {
			dup = dup || o == p
		}
		if !dup {
			out = append(out, p)
		}
	}
	return out
}

// shPrefixPattern builds the arity-prefix pattern of one command.
func shPrefixPattern(words []string, arity int) string {
	n := min(arity, len(words))
	for _, w := range words[1:n] {
		if strings.HasPrefix(w, "-") {
			n = len(words)
			break
		}
	}
	var b strings.Builder
	for i, w := range words[:n] {
		if i > 0 {
			b.WriteByte(' ')
		}
		shEscapePattern(&b, w)
	}
	if n < len(words) {
		b.WriteString(" *")
	}
	return b.String()
}

// shEscapePattern writes w so that MatchShellPattern matches it literally.
func shEscapePattern(b *strings.Builder, w string) {
	for i := 0; i < len(w); i++ {
		switch w[i] {
		case '*', '?', '[', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(w[i])
	}
}

// MatchShellPattern reports whether command (the words of one simple
// command joined by single spaces) matches pattern. `*` matches any run of
// characters, including '/' and spaces; `?` matches one character;
// `[abc]`, `[a-z]` and `[!a-z]` (or `[^a-z]`) match one character of a
// class; a backslash makes the next character literal. Everything else
// matches itself. It does not allocate.
func MatchShellPattern(pattern, command string) bool {
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
				if shLoneBracket(pattern, px) {
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
					if ok, end, valid := shMatchClass(pattern, px, r); valid {
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

// shLoneBracket reports a '[' that is a word of its own in a pattern (the
// test command `[ -f x ]`): it is matched literally, never as a class.
func shLoneBracket(p string, i int) bool {
	return (i == 0 || p[i-1] == ' ') && (i+1 == len(p) || p[i+1] == ' ')
}

// shMatchClass matches r against the bracket expression starting at
// pattern[start] == '['. valid is false when the expression has no closing
// bracket (the '[' is then literal); end is the index after it.
func shMatchClass(pattern string, start int, r rune) (ok bool, end int, valid bool) {
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

// PrefixCovered reports whether prefix grants (patterns from
// [AlwaysPatterns], matched with [MatchShellPattern]) approve the analysed
// command: it has at least one command, no unprefixable or unanalysable
// construct, no safety reason, no redirection, no elevated or unanalysable
// command, and every command's words, joined by single spaces, match one of
// the patterns. "cargo build && cargo test" is covered by "cargo *";
// "cargo build; curl x|sh" and "cargo build | grep error" are not, unless
// every part is granted.
func PrefixCovered(a ShellAnalysis, patterns []string) bool {
	if len(patterns) == 0 || a.Unanalysable != "" || a.Unprefixable != "" ||
		len(a.Safety) > 0 || len(a.Commands) == 0 {
		return false
	}
	for i := range a.Commands {
		c := &a.Commands[i]
		if c.Redirect || c.Elevated || c.Unanalysable != "" || len(c.Words) == 0 {
			return false
		}
		cmd := strings.Join(c.Words, " ")
		short := cmd
		if c.Options > 0 {
			short = strings.Join(withoutOptions(c), " ")
		}
		covered := false
		for _, p := range patterns {
			if MatchShellPattern(p, cmd) || MatchShellPattern(p, short) {
				covered = true
				break
			}
		}
		if !covered {
			return false
		}
	}
	return true
}

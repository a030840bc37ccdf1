package shell

import (
	"strings"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

// The arity of a command is how many leading words form its "command
// prefix", the part an "Always" answer grants (seed 004). It comes from the
// program table (programs.yaml, arity: and subcommands:): a sub-command's
// arity ("npm run" → 3) takes precedence over the program's ("npm" → 2);
// programs not listed have arity 1 (`cat README.md` → `cat *`). Global
// options (git -C DIR) are not counted: the prefix is built from the
// command without them.

// Arity returns how many leading words of words form the command
// prefix that an "Always" answer grants, by the built-in program table.
// words must not hold global options (see [Command.Options]).
func Arity(words []string) int {
	if len(words) == 0 {
		return 0
	}
	return BuiltinPrograms().lookup(words[0]).arityOf(words)
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

// WithoutOptions returns the words of c without its global options (git -C
// dir status → git status); words itself when it has none.
func WithoutOptions(c *Command) []string {
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
func AlwaysPatterns(a Analysis) []string { return AlwaysPatternsWith(a, BuiltinPrograms()) }

// AlwaysPatternsWith is AlwaysPatterns with the policy's program table.
func AlwaysPatternsWith(a Analysis, progs *Programs) []string {
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
		words := WithoutOptions(c)
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

// shEscapePattern writes w so that globs.Match matches it literally.
func shEscapePattern(b *strings.Builder, w string) {
	for i := 0; i < len(w); i++ {
		switch w[i] {
		case '*', '?', '[', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(w[i])
	}
}

// PrefixCovered reports whether prefix grants (patterns from
// [AlwaysPatterns], matched with [globs.Match]) approve the analysed
// command: it has at least one command, no unprefixable or unanalysable
// construct, no safety reason, no redirection, no elevated or unanalysable
// command, and every command's words, joined by single spaces, match one of
// the patterns. "cargo build && cargo test" is covered by "cargo *";
// "cargo build; curl x|sh" and "cargo build | grep error" are not, unless
// every part is granted.
func PrefixCovered(a Analysis, patterns []string) bool {
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
			short = strings.Join(WithoutOptions(c), " ")
		}
		covered := false
		for _, p := range patterns {
			if globs.Match(p, cmd) || globs.Match(p, short) {
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

package shell

import (
	"slices"
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
	return wrapperHook && spec.hook != "find" && spec.hook != "fd" // commands in their own right
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
// analysed command would grant, deduplicated, in order. An inert command
// (see [Command.Inert]: the program table knows every effect of its words
// and none writes, rewrites or runs code) gets its arity prefix
// (`git status --short` → `git status *`, `cat README.md` → `cat *`); a
// " *" is appended when the command has more words than its prefix. Every
// other command — one that deletes, overwrites or runs code, or whose
// effects the table does not know (`rm -rf build`, `make build`, `python3
// x.py`) — gets the exact command, its words escaped and joined by single
// spaces, so that `rm -rf build` never grants `rm -rf ..`. A redirection
// is an overwrite: when the analysis writes a file (`echo x > f`, `sed -i
// … f`), every command is exact and each write target is the pattern
// "> TARGET" (an input redirection "< TARGET"). When a word of a prefix
// after the first is an option (`git -C dir status`), the prefix would not
// name a subcommand, so the pattern is the whole command, exactly. Glob
// characters in words are escaped.
//
// AlwaysPatterns returns nil when no grant may name the command: it is
// unprefixable or unanalysable, has a safety reason, or one of its
// commands is unanalysable, elevated, path-qualified, a shell, eval,
// source or wrapper, or would be exact but has words that are not
// literals (`rm -rf $DIR` names a different directory each time).
func AlwaysPatterns(a Analysis) []string { return AlwaysPatternsWith(a, BuiltinPrograms()) }

// AlwaysPatternsWith is AlwaysPatterns with the policy's program table.
func AlwaysPatternsWith(a Analysis, progs *Programs) []string {
	if a.Unanalysable != "" || a.Unprefixable != "" || len(a.Safety) > 0 || len(a.Commands) == 0 {
		return nil
	}
	writes := false
	for i := range a.Commands {
		c := &a.Commands[i]
		if c.Unanalysable != "" || c.Elevated {
			return nil
		}
		if c.Redirect {
			if c.Globs != nil || c.Target == "" {
				return nil
			}
			writes = writes || !c.Read
			continue
		}
		spec := progs.lookup(c.Name)
		if len(c.Words) == 0 || c.PathQualified ||
			(shNeverAlways(spec) && (spec.hook != "interpreter" || spec.neverAlways)) {
			return nil
		}
	}
	var out []string
	add := func(p string) {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for i := range a.Commands {
		c := &a.Commands[i]
		switch {
		case c.Redirect:
			add(redirectPattern(c))
		case c.Inert && !writes:
			words := WithoutOptions(c)
			add(shPrefixPattern(words, progs.lookup(c.Name).arityOf(words)))
		case c.Globs != nil:
			return nil
		default:
			add(ExactPattern(c))
		}
	}
	return out
}

// ExactPattern is the pattern that matches c and nothing else: its words
// escaped and joined by single spaces, or for a redirection "> TARGET"
// ("< TARGET" when it reads).
func ExactPattern(c *Command) string {
	if c.Redirect {
		return redirectPattern(c)
	}
	return shPrefixPattern(c.Words, len(c.Words))
}

func redirectPattern(c *Command) string {
	var b strings.Builder
	if c.Read {
		b.WriteString("< ")
	} else {
		b.WriteString("> ")
	}
	shEscapePattern(&b, c.Target)
	return b.String()
}

// isRedirectPattern reports a pattern that names a redirection target.
func isRedirectPattern(p string) bool {
	return strings.HasPrefix(p, "> ") || strings.HasPrefix(p, "< ")
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
		shEscapePattern(&b, QuoteWord(w))
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

// PrefixCovered reports whether grants (patterns from [AlwaysPatterns],
// matched with [globs.Match]) approve the analysed command: it has at
// least one command, no unprefixable or unanalysable construct, no safety
// reason, no elevated or unanalysable command, and every command's words,
// joined by single spaces, match one of the patterns. "cargo build &&
// cargo test" is covered by "cargo *"; "cargo build; curl x|sh" and "cargo
// build | grep error" are not, unless every part is granted. An analysis
// that writes a file is covered only exactly: every command must equal an
// exact pattern ([ExactPattern]) and every redirection its "> TARGET"
// pattern, so that a write never rides on a prefix (`cat *` does not make
// `cat ~/.ssh/id_rsa > f` a granted write of f).
func PrefixCovered(a Analysis, patterns []string) bool {
	if len(patterns) == 0 || a.Unanalysable != "" || a.Unprefixable != "" ||
		len(a.Safety) > 0 || len(a.Commands) == 0 {
		return false
	}
	writes := false
	for i := range a.Commands {
		c := &a.Commands[i]
		if c.Elevated || c.Unanalysable != "" || (!c.Redirect && len(c.Words) == 0) {
			return false
		}
		writes = writes || (c.Redirect && !c.Read)
	}
	for i := range a.Commands {
		if !commandCovered(&a.Commands[i], writes, patterns) {
			return false
		}
	}
	return true
}

// commandCovered reports whether one of patterns covers the command c of
// an analysis that writes a file (writes) or not, by PrefixCovered's rule.
func commandCovered(c *Command, writes bool, patterns []string) bool {
	if c.Redirect || writes {
		return c.Globs == nil && slices.Contains(patterns, ExactPattern(c))
	}
	cmd, short := CommandTexts(c)
	for _, p := range patterns {
		if !isRedirectPattern(p) && (globs.Match(p, cmd) || globs.Match(p, short)) {
			return true
		}
	}
	return false
}

// CommandTexts returns the text rules and grants match a command by, and
// the same without its global options: its words as CommandText writes
// them, or, for a command with words that are not literals (Globs), its
// words as written, joined by spaces.
func CommandTexts(c *Command) (cmd, short string) {
	if c.Text != "" {
		return c.Text, c.ShortText
	}
	if c.Globs == nil {
		cmd = CommandText(c.Words)
		short = cmd
		if c.Options > 0 {
			short = CommandText(WithoutOptions(c))
		}
		return cmd, short
	}
	// Words with an expansion or a pattern are shown as written, and the
	// literal words beside them quoted where the shell would take them
	// apart or expand them (Shown): git clean -fdx '-e keep --dry-run'
	// ~/p must not read as a dry run, nor rm -rf '~' "$x" as the home.
	words := c.Words
	if c.Shown != nil {
		words = c.Shown
	}
	cmd = strings.Join(words, " ")
	short = cmd
	if c.Options > 0 && c.Options+1 <= len(words) {
		short = strings.Join(append([]string{words[0]}, words[1+c.Options:]...), " ")
	}
	return cmd, short
}

// CoversAny reports whether one of patterns covers at least one command of
// the analysed command, by [PrefixCovered]'s rule for each command: a grant
// of which it is false adds nothing to any cover of the command, so
// PrefixCovered of a set of grants' patterns is the same without it.
func CoversAny(a Analysis, patterns []string) bool {
	writes := false
	for i := range a.Commands {
		c := &a.Commands[i]
		writes = writes || (c.Redirect && !c.Read)
	}
	for i := range a.Commands {
		if commandCovered(&a.Commands[i], writes, patterns) {
			return true
		}
	}
	return false
}

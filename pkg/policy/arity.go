package policy

import (
	"strings"
	"unicode/utf8"
)

// The arity table of seed 004: how many leading words of a command form
// its "command prefix", the part an "Always" answer grants. A two-word key
// ("npm run") takes precedence over the first word alone ("npm"). Commands
// not listed have arity 1 (`cat README.md` → `cat *`).
//
// Extensions to the seed's table: more package managers and build tools
// with subcommands at arity 2 (go, make, pip3, podman, helm, brew, apt…),
// and their "run"/"exec"-style and resource-group subcommands at arity 3
// (pnpm run, yarn run, uv run, bundle exec, go mod, kubectl config, docker
// image…).
var shArity1 = map[string]int{
	// arity 2: tools with subcommands
	"git": 2, "npm": 2, "bun": 2, "docker": 2, "cargo": 2, "kubectl": 2, "pip": 2,
	"pnpm": 2, "yarn": 2, "terraform": 2, "systemctl": 2, "bunx": 2,
	"go": 2, "make": 2, "pip3": 2, "podman": 2, "helm": 2, "brew": 2, "apt": 2,
	"apt-get": 2, "dnf": 2, "yum": 2, "poetry": 2, "uv": 2, "deno": 2, "rustup": 2,
	"conda": 2, "dotnet": 2, "composer": 2, "bundle": 2, "gem": 2, "just": 2,
	"tofu": 2, "pulumi": 2, "npx": 2, "pnpx": 2, "nix": 2, "swift": 2,
	"flutter": 2, "dart": 2, "mix": 2, "mvn": 2, "gradle": 2,
	// arity 3: deep subcommand tools
	"aws": 3, "gcloud": 3, "gh": 3, "az": 3,
}

type shArityKey struct{ first, second string }

var shArity2 = map[shArityKey]int{
	{"npm", "run"}:          3,
	{"bun", "run"}:          3,
	{"docker", "compose"}:   3,
	{"git", "remote"}:       3,
	{"git", "stash"}:        3,
	{"pnpm", "run"}:         3,
	{"yarn", "run"}:         3,
	{"npm", "exec"}:         3,
	{"pnpm", "exec"}:        3,
	{"podman", "compose"}:   3,
	{"uv", "run"}:           3,
	{"poetry", "run"}:       3,
	{"bundle", "exec"}:      3,
	{"git", "submodule"}:    3,
	{"git", "worktree"}:     3,
	{"go", "mod"}:           3,
	{"helm", "repo"}:        3,
	{"kubectl", "config"}:   3,
	{"kubectl", "rollout"}:  3,
	{"docker", "image"}:     3,
	{"docker", "container"}: 3,
	{"docker", "volume"}:    3,
	{"docker", "network"}:   3,
	{"cargo", "+nightly"}:   3,
}

// ShellArity returns how many leading words of words form the command
// prefix that an "Always" answer grants (seed 004's arity table).
func ShellArity(words []string) int {
	if len(words) == 0 {
		return 0
	}
	if len(words) >= 2 {
		if n, ok := shArity2[shArityKey{words[0], words[1]}]; ok {
			return n
		}
	}
	if n, ok := shArity1[words[0]]; ok {
		return n
	}
	return 1
}

// shNeverAlways reports commands an "Always" answer never grants by
// prefix: shells, eval and source, wrappers judged as themselves (sudo
// with no command, env printing the environment…) and interpreters, since
// `python *` would grant any program.
func shNeverAlways(name string) bool {
	if _, ok := shWrappers[name]; ok {
		return name != "find" // find is a command in its own right
	}
	if _, ok := shInterpreters[name]; ok {
		return true
	}
	return strings.HasPrefix(name, "python")
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
func AlwaysPatterns(a ShellAnalysis) []string {
	if a.Unanalysable != "" || a.Unprefixable != "" || len(a.Safety) > 0 || len(a.Commands) == 0 {
		return nil
	}
	var out []string
	for _, c := range a.Commands {
		if c.Redirect || c.Unanalysable != "" || c.Elevated || c.PathQualified ||
			len(c.Words) == 0 || shNeverAlways(c.Name) {
			return nil
		}
		p := shPrefixPattern(c.Words)
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
func shPrefixPattern(words []string) string {
	n := min(ShellArity(words), len(words))
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
	for _, c := range a.Commands {
		if c.Redirect || c.Elevated || c.Unanalysable != "" || len(c.Words) == 0 {
			return false
		}
		cmd := strings.Join(c.Words, " ")
		covered := false
		for _, p := range patterns {
			if MatchShellPattern(p, cmd) {
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

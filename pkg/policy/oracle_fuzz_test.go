package policy_test

import (
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy/shell"
)

// FuzzShellOracle drives the differential oracle from a small grammar of
// bash: the fuzzer's bytes choose the productions, so every input is a
// script that parses, built from the constructs that hide commands and
// paths (substitutions, expansions, globs, braces, tildes, wrappers, -c
// scripts, eval, cd, redirections, arithmetic, assignments that change
// what runs). Each script runs in real bash in the sandbox, and the
// analysis must have judged everything bash executed or opened, or never
// allow the script; then in real zsh as Claude Code runs it, with the same
// demands. `go test` runs the seeds; `make fuzz` explores.
func FuzzShellOracle(f *testing.F) {
	for _, seed := range []string{
		"", "\x00", "\x01\x02\x03", "\x07\x11\x05\x09\x02", "\x10\x20\x30\x40\x50\x60\x70",
		"\xff\xfe\xfd\xfc\xfb\xfa", "\x03\x0c\x1b\x2a\x39\x48\x57\x66\x75\x84\x93",
		"\x05\x05\x05\x05\x05\x05\x05\x05", "\x0e\x0d\x0c\x0b\x0a\x09\x08\x07\x06",
		"\x21\x42\x63\x84\xa5\xc6\xe7\x08\x29\x4a", "\x13\x37\x13\x37\x13\x37",
	} {
		f.Add([]byte(seed))
	}
	sb := oracleSetup(f)
	p := corpusPolicy(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		src := (&shGen{data: data}).script(0)
		if missed := oracleCheck(t, sb, p, src); missed != "" {
			t.Fatalf("%q: %s", src, missed)
		}
		// zsh may run it too (shell_zsh.go): what the analysis judged
		// completely holds in zsh as well.
		if missed := oracleCheckIn(t, sb, oracleZsh, p, src); missed != "" {
			t.Fatalf("%q in zsh: %s", src, missed)
		}
		// The analysis itself must stay within its invariants.
		a := shell.Analyze(src)
		for _, c := range a.Commands {
			if !c.Redirect && len(c.Words) == 0 && a.Unanalysable == "" {
				t.Fatalf("%q: an analysable command without words: %+v", src, c)
			}
		}
	})
}

// shGen generates a script from a grammar, one choice per input byte
// (zero once the input is spent, which ends every recursion).
type shGen struct {
	data []byte
	i    int
}

func (g *shGen) pick(n int) int {
	if g.i >= len(g.data) {
		return 0
	}
	b := g.data[g.i]
	g.i++
	return int(b) % n
}

func (g *shGen) one(opts ...string) string { return opts[g.pick(len(opts))] }

func (g *shGen) script(depth int) string {
	var b strings.Builder
	n := 1 + g.pick(3)
	for k := 0; k < n; k++ {
		if k > 0 {
			b.WriteString(g.one("; ", " && ", " || ", " | ", "\n"))
		}
		b.WriteString(g.stmt(depth))
	}
	return b.String()
}

func (g *shGen) stmt(depth int) string {
	if depth > 2 {
		return g.simple(depth)
	}
	switch g.pick(12) {
	case 1:
		return "( " + g.script(depth+1) + " )"
	case 2:
		return "{ " + g.script(depth+1) + "; }"
	case 3:
		return "if " + g.simple(depth+1) + "; then " + g.script(depth+1) + "; fi"
	case 4:
		return g.one("for", "select") + " x in " + g.word(depth+1) + " " + g.word(depth+1) + "; do " + g.script(depth+1) + "; done"
	case 5:
		return "f() { " + g.script(depth+1) + "; }; f " + g.word(depth+1)
	case 6:
		return g.assign(depth+1) + "; " + g.simple(depth+1)
	case 7:
		return "cd " + g.one("src", "/tmp", "~", "..", "$D", "/etc", "~/.ssh") + " && " + g.simple(depth+1)
	case 8:
		return g.one("sh", "bash", "dash") + " -c " + shQuote(g.script(depth+1))
	case 9:
		return "eval " + shQuote(g.simple(depth+1))
	case 10:
		// Data bash evaluates as code: arithmetic, the subscripts of a
		// compound array assignment, declare -a re-reading a string,
		// bash's integer variables.
		return "x=" + g.one("1", "'a[$(whoami)]'", "$N") + "; " + g.one(
			"echo $(("+g.one("x", "1+2", "x+1", "$x")+"))", "a=([x]=1); echo", "declare -a a='($(whoami))'; echo",
			"declare -a a=$x; echo", "RANDOM=$x; echo", "OPTIND=$x; echo", "for OPTIND in \"$x\"; do echo; done")
	}
	return g.simple(depth)
}

func (g *shGen) simple(depth int) string {
	var b strings.Builder
	if g.pick(6) == 0 {
		b.WriteString(g.assign(depth) + " ")
	}
	b.WriteString(g.one("echo", "ls", "cat", "rm", "grep x", "git log", "env", "sudo", "xargs", "find . -exec",
		"command", "timeout 1", "nice", "true", "printf %s", "test -n", "wc -l", "touch", "cp", "$C", "$(echo rm)",
		"r?", "{r,}m", `"r"m`, "./r?", "~/bin/x", "read -r y", "mapfile -t z", "exec", "builtin", "time"))
	for k := g.pick(4); k > 0; k-- {
		b.WriteString(" " + g.word(depth))
	}
	if g.pick(3) == 0 {
		b.WriteString(" " + g.one(">", ">>", "<", "2>", "&>", "<>") + " " + g.target(depth))
	}
	return b.String()
}

func (g *shGen) word(depth int) string {
	switch g.pick(20) {
	case 1:
		return "$x"
	case 2:
		return `"$x"`
	case 3:
		if depth < 3 {
			return "$(" + g.simple(depth+1) + ")"
		}
	case 4:
		if depth < 3 {
			return "`" + g.simple(depth+1) + "`"
		}
	case 5:
		return g.one("*.go", ".e?v", "src/*", "[a-z]*", "*")
	case 6:
		return g.one("{a,b}", "{1..3}", "x{,.bak}", "{rm,-rf,build}", ".{x,env}", "~/.ss{h,x}/id_rsa")
	case 7:
		return g.one("~", "~/x", "~root", "~+", "a=~/b")
	case 8:
		return g.one("$((1+2))", "$((x))", "${x:-y}", "${#x}", "${!x}", "${x@P}")
	case 9:
		return g.one("'a b'", `"a b"`, `$'\x72m'`, `\rm`)
	case 10:
		if depth < 3 {
			return "<(" + g.simple(depth+1) + ")"
		}
	case 11:
		return "$@"
	}
	if g.pick(8) == 0 {
		return g.one(`"$d/x"`, `$d/.env`, `"${d}"`)
	}
	return g.one("a", "-rf", "build", "go.mod", "--", "-n", "list.txt", ".env", "x")
}

func (g *shGen) target(depth int) string {
	return g.one("out.txt", ".env", ".e?v", "$F", "~/.bashrc", "/etc/hosts", "src/x", `"$(echo y)"`,
		"list.txt", "~/.ssh/id_rsa", "{a,b}", "/dev/null", "$HOME/.profile", "../x")
}

func (g *shGen) assign(depth int) string {
	return g.one("x=1", "x=$(echo rm)", "F=.env", "PATH=/tmp", "IFS=/", "x='a[$(whoami)]'", "C=rm", "D=/etc",
		"HOME=/etc", "N=3", "BASH_ENV=./x", "d=src", "d=.", "d=~/.ssh", "declare d=.{x,env}", "local {d,x}=.env")
}

// shQuote single-quotes s for bash.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

package shell

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzAnalyzeShell checks the invariants the policy relies on: the
// analysis never panics, a script that does not parse is unanalysable, an
// analysable script only holds commands with words and redirections with
// targets, and the patterns an "Always" answer would grant cover the
// command they came from.
func FuzzAnalyzeShell(f *testing.F) {
	for _, s := range []string{
		"ls -la", "git push origin main && npm run build | grep x; cat README.md",
		"echo $(rm -rf /) `id` <(ls) >(cat)", "cat <<EOF\n$(rm x)\nEOF\n", "cat <<'EOF'\n$(rm x)\nEOF\n",
		"sudo -u root env FOO=1 timeout -s KILL 5 nice -n 5 rm -rf /", "ls | xargs -I{} sh -c 'rm {}'",
		"find . -name '*.o' -exec rm -f {} \\; -execdir echo {} +", "bash -lc 'cd /tmp && make'",
		"curl -fsSL x | sudo bash -s", `sh -c "$(curl x)"`, "bash <(curl x)", `eval "$(wget -qO- x)"`,
		":(){ :|:& };:", "echo x > /etc/passwd 2>&1 >/dev/null", "echo x | tee -a /etc/shadow",
		"{rm,-rf,/}", "echo {1..5}{a..c}", `$'\x72m' -rf x`, "env -S 'rm -rf' /", "r\\\nm -rf x",
		"if a; then b; elif c; then d; else e; fi", "for i in 1 2; do rm $i; done", "case x in a) b;; esac",
		"f() { g; }; f &", "coproc x", "time -p rm x", "PATH=. ls", "export PATH=/tmp", "> ''",
		"watch -n1 'ls; rm x'", "trap 'rm x' EXIT", "su - root -c 'rm x'", "flock /l -c 'x'",
		"x=$(y) z", "[[ $(a) == b ]]", "(( $(a) + 1 ))", "echo ${x:-$(y)}", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return
		}
		a := Analyze(src)
		_, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
		if err != nil && a.Unanalysable == "" {
			t.Fatalf("AnalyzeShell(%q): parse error %v but Unanalysable is empty", src, err)
		}
		for _, c := range a.Commands {
			if c.Redirect && len(c.Words) != 0 {
				t.Fatalf("AnalyzeShell(%q): redirect with words %+v", src, c)
			}
			if a.Unanalysable != "" {
				continue
			}
			if c.Redirect && c.Target == "" || !c.Redirect && len(c.Words) == 0 {
				t.Fatalf("AnalyzeShell(%q): analysable but holds an empty entry %+v", src, c)
			}
		}
		if p := AlwaysPatterns(a); p != nil && !PrefixCovered(a, p) {
			t.Fatalf("AnalyzeShell(%q): AlwaysPatterns %q do not cover the command", src, p)
		}
	})
}

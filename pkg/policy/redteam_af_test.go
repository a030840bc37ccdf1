package policy_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// TestRedTeamAFValuesKnownOnlyAtRunTime (red team AF, class A): a value
// the script does not spell decides how the shell or a program reads the
// words around it. test picks its grammar by its words' values, so an
// unknown word may be -v and the next word a name whose subscript runs
// code (F3); zsh evaluates the counts of exit, return, shift, read -t and
// printf's numbers as math, whose subscripts run code (F5); an expansion
// may be an option that reads a file, du --files0-from=~/.netrc (F4).
// Each was verified in the real shells; the plain forms stay allowed.
func TestRedTeamAFValuesKnownOnlyAtRunTime(t *testing.T) {
	p := progKPolicy(t, "read", "test", "[", "du", "exit", "return", "shift", "printf", "echo", "grep", "cat", "head", "tail")
	wantActions(t, p, []bashCase{
		// F3: test's operator slot holds a value.
		{`read -r a b <<< "-v a[\$(touch\${IFS}PWNED)]"; [ "$a" "$b" ]`, policy.Ask},
		{`for a in -v; do for b in "a[\$(id)]"; do test "$a" "$b"; done; done`, policy.Ask},
		{`a=(-v "a[\$(id)]"); test "${a[0]}" "${a[1]}"`, policy.Ask},
		{`[ "$(head -1 f)" "$(tail -1 f)" ]`, policy.Ask},
		{`x=$(cat f); [ $x ]`, policy.Ask},
		{`read -r a b c <<< "! -v x"; [ "$a" "$b" "$c" ]`, policy.Ask},
		{`[ "$a" = "$b" ]`, policy.Allow},
		{`[ -n "$x" ] && echo y`, policy.Allow},
		{`[ $# -eq 0 ]`, policy.Allow},
		{`[ ! -f "$f" ]`, policy.Allow},
		{`test "$1" != --help`, policy.Allow},
		// The word after a unary operator that is never binary is its
		// operand; past it the words are read again.
		{`[ -n "$a" -a -n "$b" ]`, policy.Allow},
		{`[ -n "$a" "$b" "$c" "$d" ]`, policy.Ask},
		// F5: zsh's math arguments.
		{`read -r x <<< "path[\$(id)]"; exit "$x"`, policy.Ask},
		{`read -r x < data5.txt; return "$x"`, policy.Ask},
		{`while read -r n; do read -t "$n" y </dev/null; done < d.txt`, policy.Ask},
		{`read -r n < f; shift "$n"`, policy.Ask},
		{`read -r n < f; printf '%d\n' "$n"`, policy.Ask},
		{`printf "$fmt" "$n"`, policy.Ask},
		{`exit $?`, policy.Allow},
		{`rc=3; exit "$rc"`, policy.Allow},
		{`read -r n < f; printf '%s\n' "$n"`, policy.Allow},
		{`printf '%d%%\n' 5`, policy.Allow},
		// F4: an expansion that may be an option reading a file is a read
		// of what it names: any path, when the script sets it unknown.
		{`read -r a <<< "--files0-from=/home/dev/.netrc"; du "$a"`, policy.Deny},
		{`while read -r a; do du -s "$a"; done < dirs.txt`, policy.Deny},
		{`du -sh . "$(cat data.txt)"`, policy.Deny},
		{`for d in */; do du -sh "$d"; done`, policy.Allow},
		{`d=src; du -sh "$d"`, policy.Allow},
		{`du -sh -- "$(cat data.txt)"`, policy.Allow},
		{`f='*.go'; grep -r --include="$f" TODO .`, policy.Allow},
	})
}

// TestRedTeamAFHostAndHookFiles (red team AF, class B): the built-in
// policy guarded the hosts' settings files by name, while the settings run
// files beside them (.claude/hooks/*.sh) and skills and agents carry hooks
// of their own (F2); hook managers keep git's hooks in the work tree,
// which git commit and checkout run (F1); and the hosts' own sign-in
// tokens were readable (L2).
func TestRedTeamAFHostAndHookFiles(t *testing.T) {
	p := builtinPolicy(t)
	for _, tc := range []struct {
		tool, path string
		want       policy.Action
	}{
		{"Write", ".claude/hooks/check-style.sh", policy.Ask},
		{"Edit", ".claude/skills/fmt/SKILL.md", policy.Ask},
		{"Write", ".claude/agents/reviewer.md", policy.Ask},
		{"Write", ".gemini/commands/x.toml", policy.Ask},
		{"Write", "opencode.json", policy.Ask},
		{"Write", ".opencode/plugin/p.ts", policy.Ask},
		{"Write", ".cursor/mcp.json", policy.Ask},
		{"Write", ".vscode/tasks.json", policy.Ask},
		{"Write", ".devcontainer/devcontainer.json", policy.Ask},
		{"Write", ".husky/post-checkout", policy.Ask},
		{"Write", ".githooks/pre-commit", policy.Ask},
		{"Write", ".pre-commit-config.yaml", policy.Ask},
		{"Write", "lefthook.yml", policy.Ask},
		{"Write", ".zed/settings.json", policy.Ask},
		{"Write", ".aider.conf.yml", policy.Ask},
		{"Write", ".simple-git-hooks.json", policy.Ask},
		{"Write", ".huskyrc.json", policy.Ask},
		{"Write", "src/main.go", policy.Allow},
		// The hosts' instruction files ask since red team AS F3: their
		// @-imports read files into the model's context without a tool
		// call (a case-insensitive file system reads claude.md as one).
		{"Write", "CLAUDE.md", policy.Ask},
		{"Write", "docs/claude.md", policy.Ask},
		{"Write", "sub/GEMINI.md", policy.Ask},
		{"Write", "AGENTS.md", policy.Ask},
		{"Write", "docs/README.md", policy.Allow},
		{"Read", "/home/dev/.codex/auth.json", policy.Deny},
		{"Read", "/home/dev/.gemini/oauth_creds.json", policy.Deny},
		{"Read", "/home/dev/.claude/.credentials.json", policy.Deny},
	} {
		args, _ := json.Marshal(map[string]string{"file_path": tc.path, "content": "x"})
		d := p.Evaluate(policy.Call{Tool: tc.tool, Arguments: args, Cwd: "/home/dev/proj"})
		if d.Action != tc.want {
			t.Errorf("%s %s: got %s (%s), want %s", tc.tool, tc.path, d.Action, d.Reason, tc.want)
		}
	}
	// The settings file keeps its own reason, after the directory's rule.
	args, _ := json.Marshal(map[string]string{"file_path": ".claude/settings.json", "content": "{}"})
	if d := p.Evaluate(policy.Call{Tool: "Write", Arguments: args, Cwd: "/home/dev/proj"}); d.Action != policy.Ask || !strings.Contains(d.Reason, "hooks, permissions, environment") {
		t.Errorf(".claude/settings.json: %s (%s), want ask as the host's settings", d.Action, d.Reason)
	}
}

// TestRedTeamAFKeysFoldAsServersDecodeThem (red team AF F6): a Go server
// decoding arguments with encoding/json matches keys by Unicode simple
// folding, so {"pathſ": […]} fills its field "paths" (ſ is U+017F, a long
// s) and {"abſolute_path": …} its "absolute_path": they are path keys here
// too.
func TestRedTeamAFKeysFoldAsServersDecodeThem(t *testing.T) {
	p := mustParsePolicy(t, "fs.yaml", `home: /home/dev
mode: auto-edit
tools:
  tiers: {"mcp__fs__*": read}
rules:
  - { rule: "@files(~/.ssh/**)", action: deny }
`)
	for _, args := range []string{
		`{"path":"README.md","pathſ":["/home/dev/.ssh/id_rsa"]}`,
		`{"abſolute_path":"/home/dev/.ssh/id_rsa"}`,
		`{"ab\u017folute_path":"/home/dev/.ssh/id_rsa"}`,
	} {
		d := p.Evaluate(policy.Call{Tool: "mcp__fs__read_multiple_files", Arguments: json.RawMessage(args), Cwd: "/home/dev/proj"})
		if d.Action != policy.Deny {
			t.Errorf("%s: %s (%s), want deny", args, d.Action, d.Reason)
		}
	}
	if d := p.Evaluate(policy.Call{Tool: "mcp__fs__read_file", Arguments: json.RawMessage(`{"päth":"/home/dev/.ssh/id_rsa"}`), Cwd: "/home/dev/proj"}); d.Action != policy.Allow {
		t.Errorf("a key no decoder folds to a path key: %s (%s), want allow", d.Action, d.Reason)
	}
}

package policy

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
	"github.com/signoff-dev/signoff/pkg/policy/shell"
)

// TestProgramTableIsValid checks the embedded table loads and covers the
// programs the issue names and every program of the built-in policy's
// allow rules.
func TestProgramTableIsValid(t *testing.T) {
	tbl := shell.BuiltinPrograms()
	for _, n := range []string{
		"sed", "tar", "git", "sort", "uniq", "tree", "rg", "go", "awk", "find", "make", "python", "perl",
		"ruby", "node", "php", "less", "man", "vim", "ssh", "curl", "wget", "cp", "mv", "install", "ln", "dd",
		"truncate", "tee", "chrt", "parallel", "strace", "setpriv", "unshare", "prlimit", "fakeroot", "sg",
		"toybox", "busybox", "systemd-run", "script", "flock", "ionice", "taskset", "setsid", "watch",
		"run0", "sudoedit", "sudo-rs", "timeout",
	} {
		if !tbl.Knows(n) {
			t.Errorf("the program table has no entry for %s", n)
		}
	}
	for _, r := range Default().static.rules {
		if !r.shell || r.action != Allow {
			continue
		}
		name := shellKeyOf(r.shellPattern)
		if name == "" {
			continue // [ *: the analysis models the test builtin
		}
		// Builtins the shell analysis models itself: cd moves later
		// paths, read and test judge their names, the rest take numbers.
		builtins := []string{"cd", "test", "[", "true", "false", ":", "exit", "break", "continue", "return", "read", "type"}
		if !tbl.Knows(name) && !slices.Contains(builtins, name) &&
			!slices.Contains([]string{"pwd", "which", "whoami", "uname", "basename", "dirname", "realpath"}, name) {
			t.Errorf("built-in rule %s allows %s, which the program table does not describe", r.text, name)
		}
	}
}

func TestProgramsInAPolicyFile(t *testing.T) {
	p := mustParse(t, `
mode: auto-edit
programs:
  mytool:
    options: {"--out=": write, "--hook=": run}
    operands: {all: read}
  sort:
    options: {"--debug-file=": write}
  git:
    arity: 3
rules:
  - { rule: "bash(*)", action: allow }
  - { rule: "bash(rm *)", action: deny }
  - { rule: "write_file(/etc/**)", action: deny }
`)
	for cmd, want := range map[string]Action{
		"mytool --out=/etc/x":      Deny,
		"mytool --hook='rm x'":     Deny,
		"mytool a b":               Allow,
		"sort --debug-file /etc/x": Deny,
		"sort -o /etc/x f":         Deny, // the built-in options stay
		"sort f":                   Allow,
		"git -C /x status --short": Allow, // global options stay too
		"git -c core.pager=id log": Ask,
	} {
		if d := p.Evaluate(Call{Tool: "bash", Arguments: args("command", cmd)}); d.Action != want {
			t.Errorf("%s → %s (%s), want %s", cmd, d.Action, d.Reason, want)
		}
	}
	// git log is inert (read-only, every option known): its prefix is kept.
	a := shell.AnalyzeWith("git log main README.md", p.progs)
	if got := shell.AlwaysPatternsWith(a, p.progs); !slices.Equal(got, []string{"git log main *"}) {
		t.Errorf("arity 3 from the policy file: %q", got)
	}
	if got := shell.AlwaysPatterns(shell.Analyze("git log main README.md")); !slices.Equal(got, []string{"git log *"}) {
		t.Errorf("the built-in table is unchanged: %q", got)
	}
}

func TestProgramsLoadErrors(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"an unknown key", "programs:\n  x: {aritty: 2}\n", `policy.yaml:2:7: programs.x: unknown key "aritty"`},
		{"an unknown effect", "programs:\n  x:\n    options: {\"-o=\": wrte}\n", `policy.yaml:3:22: programs.x.options.-o=: unknown effect "wrte"`},
		{"a write option without a value", "programs:\n  x:\n    options: {\"-o\": write}\n", `policy.yaml:3:15: programs.x.options: option -o has effect write but takes no value`},
		{"a badly spelt option", "programs:\n  x:\n    options: {\"o=\": write}\n", `policy.yaml:3:15: programs.x.options: option "o=" must be spelled`},
		{"a bad operand position", "programs:\n  x:\n    operands: {second: read}\n", `policy.yaml:3:16: programs.x.operands: unknown operand position "second"`},
		{"an unknown hook", "programs:\n  x: {hook: frob}\n", `policy.yaml:2:13: programs.x.hook: unknown hook "frob"`},
		{"same_as an unknown program", "programs:\n  x: {same_as: nope}\n", `policy.yaml:2:16: programs.x.same_as: unknown program "nope"`},
		{"a broken value pattern", "programs:\n  x:\n    options: {\"-c=\": {effect: ask, when: [\"[z-a]\"]}}\n", `policy.yaml:3:43: programs.x.options.-c=.when[0]: invalid shell pattern "[z-a]"`},
		{"a program name with a slash", "programs:\n  /bin/x: {arity: 2}\n", `policy.yaml:2:3: programs: program name "/bin/x"`},
		{"a zero arity", "programs:\n  x: {arity: 0}\n", `policy.yaml:2:14: programs.x.arity: must be at least 1`},
		{"an env_inert name that is not a variable", "programs:\n  x: {env_inert: [\"A-B\"]}\n", `policy.yaml:2:19: programs.x.env_inert: "A-B" is not an environment variable name`},
		{"a closed that is not a boolean", "programs:\n  x: {closed: yes please}\n", `policy.yaml:2:15: programs.x.closed`},
		{"a runner verb that is an option", "programs:\n  x: {subcommands: {s: {wrapper: {verb: \"-r\"}}}}\n", `policy.yaml:2:41: programs.x.subcommands.s.wrapper.verb: want a sub-command word`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "policy.yaml")
			var ce *ConfigError
			if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error\n got: %v\nwant prefix: %s", err, tt.want)
			}
		})
	}
}

// TestBrokenShellGlobsFailToLoad: a shell pattern that globs.Match
// would read as literal text is a load error with its line, as a broken
// path glob is.
func TestBrokenShellGlobsFailToLoad(t *testing.T) {
	for _, pat := range []string{"rm [z-a]*", "git diff [*", `echo x\`, "ls []"} {
		y := "rules:\n  - { rule: \"bash(" + strings.ReplaceAll(pat, `\`, `\\`) + ")\", action: deny }\n"
		_, err := Parse([]byte(y), "policy.yaml")
		if err == nil || !strings.HasPrefix(err.Error(), "policy.yaml:2:") || !strings.Contains(err.Error(), "invalid shell pattern") {
			t.Errorf("bash(%s): error %v, want a line-precise invalid shell pattern", pat, err)
		}
	}
	for _, pat := range []string{"[ *", "[ -f * ]", "ls [abc]*", `echo \[`, "git diff *"} {
		y := "rules:\n  - { rule: \"bash(" + strings.ReplaceAll(pat, `\`, `\\`) + ")\", action: allow }\n"
		if _, err := Parse([]byte(y), "policy.yaml"); err != nil {
			t.Errorf("bash(%s): %v", pat, err)
		}
	}
	if !globs.Match("[ -f * ]", "[ -f go.mod ]") || globs.Match("[ -f * ]", "f") {
		t.Error("a lone [ is the test command, not a class")
	}
}

// TestGrantsSkipGlobalOptions: an "Always" grant of git status * covers
// git -C dir status, as the rule would; a global option that runs
// something is never covered.
func TestGrantsSkipGlobalOptions(t *testing.T) {
	grants := []string{"git status *", "git log *"}
	for cmd, want := range map[string]bool{
		"git status":                        true,
		"git -C repo status --short":        true,
		"git --no-pager log -n 3":           true,
		"git -c color.ui=never log":         true,
		"git -c core.pager=id log":          false,
		"git -C repo push":                  false,
		"git --git-dir=/tmp/evil status":    false,
		"git -C repo status > /tmp/out.txt": false,
	} {
		if got := shell.PrefixCovered(shell.Analyze(cmd), grants); got != want {
			t.Errorf("PrefixCovered(%q, %q) = %v, want %v", cmd, grants, got, want)
		}
	}
}

package policy

import (
	"bufio"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// trickyPathPolicy holds path rules the index must file, or refuse to file,
// correctly: alternatives and classes that hide segments, upper case,
// base names, home, absolute and relative patterns, later allows over
// earlier denies, groups, match: forms and an agent layer.
const trickyPathPolicy = `mode: auto-edit
home: /home/dev
rules:
  - { rule: "@files(**/.env)", action: deny }
  - { rule: "@files(*.env.example)", action: allow }
  - { rule: "write_file({src,lib}/gen/**)", action: deny }
  - { rule: "write_file({a/b,c}/**)", action: ask }
  - { rule: "write_file({x/hidden/y,d}/**)", action: deny }
  - { rule: "read_file([Ss]ecret/**)", action: deny }
  - { rule: "read_file(Src/Secret/**)", action: deny }
  - { rule: "write_file(src/**)", action: allow }
  - { rule: "write_file(src/pkg?/**)", action: ask }
  - { rule: "write_file(**/gen*/x.go)", action: deny }
  - { rule: "edit(~/.ssh/**)", action: deny }
  - { rule: "write_file(/etc/**)", action: deny }
  - { rule: "write_file(docs/)", action: allow }
  - { rule: "write_file(./build/**)", action: ask }
  - { rule: "@write(/var/**)", action: ask }
  - { rule: "@files(**/.git/**)", action: ask }
  - { rule: "read_file(src/**)", action: allow }
  - { rule: "read_file(src/internal/**)", action: ask }
  - { rule: "read_file(.npmrc)", action: deny }
  - { tool: write_file, match: { path: "src/pkg1/**" }, action: deny }
  - { tool: grep, match: { path: "logs/**" }, action: allow }
  - { rule: "@shell", action: ask }
  - { rule: "bash(cat *)", action: allow }
  - { rule: "bash(grep *)", action: allow }
  - { rule: "bash(sort *)", action: allow }
  - { rule: "bash(echo *)", action: allow }
  - { rule: "@shell(rm -rf *)", action: deny }
  - { rule: "@shell(/usr/bin/cat *)", action: ask }
  - { rule: "@shell(cat /etc/*)", action: ask }
  - { rule: "@exec(grep -r *)", action: ask }
  - { rule: "@shell(gre? *)", action: ask }
  - { rule: "bash(sort -o *)", action: ask }
agents:
  explore:
    rules:
      - { rule: "write_file(src/**)", action: deny }
      - { rule: "read_file(src/internal/**)", action: allow }
`

// indexTestPaths are path arguments that meet the tricky policy's rules in
// every way: by a filed segment, by an unfiled pattern, in another case,
// relative and absolute, under home, escaping the working directory.
var indexTestPaths = []string{
	"src/app/main.go", "src/pkg1/a.go", "src/pkg7/b.go", "src/gen/x.go", "lib/gen/y.go",
	"a/b/c.txt", "c/d.txt", "d/e.txt", "x/hidden/y/z", "secret/k", "Secret/k", "SECRET/k", "Src/Secret/k", "src/secret/k",
	"tools/gen4/x.go", "gen/x.go", "/home/dev/.ssh/id_rsa", "~/.ssh/config", "~/.SSH/config",
	"/etc/passwd", "/ETC/hosts", "docs", "docs/a.md", "build/out", "./build/out", "/var/log/x",
	".env", "app/.env", "app/.ENV", "app/.env.example", "repo/.git/config", "src/internal/k.go",
	".npmrc", "pkg/.npmrc", "../outside/src/x", "logs/today.log", "/srv/data12/f",
	"services/svc5/a.go", "/home/dev/proj/src/app/main.go", "x/src/y", "src", "/",
}

// indexCalls builds file tool and shell calls over the test paths.
func indexCalls(paths []string) []Call {
	var calls []Call
	add := func(tool string, args map[string]string) {
		raw, _ := json.Marshal(args)
		for _, cwd := range []string{"", "/home/dev/proj"} {
			for _, agent := range []string{"", "explore"} {
				calls = append(calls, Call{Tool: tool, Arguments: raw, Cwd: cwd, AgentType: agent})
			}
		}
	}
	for _, p := range paths {
		for _, tool := range []string{"read_file", "write_file", "edit", "delete", "glob", "grep", "Read", "Write"} {
			add(tool, map[string]string{"path": p, "file_path": p, "pattern": "x"})
		}
		q := shellQuote(p)
		for _, cmd := range []string{"cat " + q, "echo x > " + q, "grep -n fix " + q + " | sort >> " + q, "grep -r x " + q,
			"/usr/bin/cat " + q, "/bin/rm -rf " + q, "rm -rf " + q, "sort -o " + q + " x", "env grep -r x " + q} {
			add("bash", map[string]string{"command": cmd})
		}
	}
	return calls
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// unindexed parses the policy again without the indexes this file's
// tests guard: no path rule is filed by segment, and the multi-tool rules
// (@shell(curl *)) are filed as if their first word had wildcards, so that
// every path subject meets every rule of its lists and every command every
// multi-tool rule of its tool. (The shell tools' own first-word index is
// older and stays: the inexact matcher, engine_inexact.go, takes its
// candidates from it.)
func unindexed(t testing.TB, src []byte) *Policy {
	t.Helper()
	p, err := Parse(src, "unindexed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range append([]*ruleLayer{p.static}, slices.Collect(maps.Values(p.agents))...) {
		for i := range l.rules {
			if l.rules[i].multi() {
				l.rules[i].shellKey = ""
			}
		}
		l.multiFor.Store(nil)
		l.paths = nil
	}
	return p
}

// corpusCommands reads the commands of the shell corpora (testdata/corpus).
func corpusCommands(t *testing.T) []Call {
	t.Helper()
	names, err := filepath.Glob("testdata/corpus/*.txt")
	if err != nil || len(names) == 0 {
		t.Fatalf("corpus: %v, %d files", err, len(names))
	}
	var calls []Call
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if _, cmd, ok := strings.Cut(sc.Text(), "\t"); ok && !strings.HasPrefix(sc.Text(), "#") {
				raw, _ := json.Marshal(map[string]string{"command": cmd})
				calls = append(calls, Call{Tool: "bash", Arguments: raw}, Call{Tool: "bash", Arguments: raw, Cwd: "/home/dev/proj"})
			}
		}
		f.Close()
	}
	return calls
}

// TestPathIndexKeepsDecisions compares every decision of indexed policies
// with the same policies without the path and multi-tool indexes: the built-in policy, the corpus and
// example policies, the tricky one and a generated 3,000-rule policy, over
// file tool calls, shell calls on the same paths and the shell corpora.
func TestPathIndexKeepsDecisions(t *testing.T) {
	sources := map[string][]byte{"default": DefaultYAML(), "tricky": []byte(trickyPathPolicy), "scale3000": []byte(scalePolicyText(3000))}
	for _, name := range []string{"testdata/corpus_policy.yaml", "testdata/example_policy.yaml"} {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sources[name] = src
	}
	calls := append(indexCalls(indexTestPaths), corpusCommands(t)...)
	for name, src := range sources {
		t.Run(name, func(t *testing.T) {
			p, err := Parse(src, name)
			if err != nil {
				t.Fatal(err)
			}
			if p.static.paths == nil {
				t.Fatalf("%s: no path rule filed", name)
			}
			u := unindexed(t, src)
			for _, c := range calls {
				if got, want := p.Evaluate(c), u.Evaluate(c); !reflect.DeepEqual(got, want) {
					t.Errorf("%s %s (cwd %q, agent %q):\nindexed   %+v\nunindexed %+v", c.Tool, c.Arguments, c.Cwd, c.AgentType, got, want)
				}
			}
		})
	}
}

// FuzzPathIndex checks that the index never changes a decision of the
// tricky policy, whatever the path.
func FuzzPathIndex(f *testing.F) {
	for _, p := range indexTestPaths {
		f.Add(p)
	}
	p, err := Parse([]byte(trickyPathPolicy), "tricky.yaml")
	if err != nil {
		f.Fatal(err)
	}
	u := unindexed(f, []byte(trickyPathPolicy))
	f.Fuzz(func(t *testing.T, path string) {
		for _, c := range indexCalls([]string{path}) {
			if got, want := p.Evaluate(c), u.Evaluate(c); !reflect.DeepEqual(got, want) {
				t.Fatalf("%s %s: indexed %+v, unindexed %+v", c.Tool, c.Arguments, got, want)
			}
		}
	})
}

// TestPathKey pins which segment a rule is filed under.
func TestPathKey(t *testing.T) {
	p, err := Parse([]byte(trickyPathPolicy), "tricky.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"@files(**/.env)": ".env", "@files(*.env.example)": "", "write_file({src,lib}/gen/**)": "", "write_file({x/hidden/y,d}/**)": "",
		"read_file([Ss]ecret/**)": "", "read_file(Src/Secret/**)": "secret", "write_file(src/pkg?/**)": "src",
		"write_file(**/gen*/x.go)": "x.go", "edit(~/.ssh/**)": ".ssh", "write_file(docs/)": "docs",
	}
	for i := range p.static.rules {
		r := &p.static.rules[i]
		if w, ok := want[r.text]; ok {
			if got := pathKey(r); got != w {
				t.Errorf("%s: filed under %q, want %q", r.text, got, w)
			}
			delete(want, r.text)
		}
	}
	if len(want) > 0 {
		t.Errorf("rules not found: %v", fmt.Sprint(want))
	}
}

// A multi-tool rule that names a path-qualified program judges it as the
// tool's own rules do, in a layer that has rules of the shell tool too
// (POLICY.md, "Path-qualified commands": an allow matches the path as
// written). Before the candidate lists were indexed, the merge treated the
// multi-tool list of a path-qualified command as one whose allows did not
// count (a position meant for the tier's other file tools), so these
// allows were ignored in such a layer but not in one without bash rules.
func TestMultiToolRulesJudgePathQualifiedCommandsLikeTheToolsOwn(t *testing.T) {
	for _, c := range []struct {
		name, policy, command string
		want                  Action
	}{
		{"an allow naming the path", "mode: always-ask\nrules:\n  - { rule: \"bash(ls *)\", action: allow }\n  - { rule: \"@shell(/usr/bin/curl *)\", action: allow }\n",
			"/usr/bin/curl https://x.example", Allow},
		{"the later rule wins", "mode: yolo\nrules:\n  - { rule: \"bash(ls *)\", action: allow }\n  - { rule: \"@shell(rm *)\", action: deny }\n  - { rule: \"@shell(/bin/rm *)\", action: allow }\n",
			"/bin/rm -rf build", Allow},
		{"a deny by base name still denies", "mode: yolo\nrules:\n  - { rule: \"bash(ls *)\", action: allow }\n  - { rule: \"@shell(/bin/rm *)\", action: allow }\n  - { rule: \"@shell(rm *)\", action: deny }\n",
			"/bin/rm -rf build", Deny},
		{"an allow of the base name does not allow the path", "mode: always-ask\nrules:\n  - { rule: \"bash(ls *)\", action: allow }\n  - { rule: \"@shell(curl *)\", action: allow }\n",
			"/tmp/evil/curl https://x.example", Ask},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse([]byte(c.policy), "p.yaml")
			if err != nil {
				t.Fatal(err)
			}
			args, _ := json.Marshal(map[string]string{"command": c.command})
			if d := p.Evaluate(Call{Tool: "bash", Arguments: args}); d.Action != c.want {
				t.Errorf("%s: %s (%s), want %s", c.command, d.Action, d.Reason, c.want)
			}
			// The same without a rule of bash's own: the layer's lists differ.
			alone, err := Parse([]byte(strings.Replace(c.policy, "  - { rule: \"bash(ls *)\", action: allow }\n", "", 1)), "p.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if d := alone.Evaluate(Call{Tool: "bash", Arguments: args}); d.Action != c.want {
				t.Errorf("without bash's own rule, %s: %s (%s), want %s", c.command, d.Action, d.Reason, c.want)
			}
		})
	}
}

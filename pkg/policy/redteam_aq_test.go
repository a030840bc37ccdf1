package policy_test

import (
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// TestRedteamAQSiblings: the siblings red team AQ found of this sitting's
// fixes, each proven with the real program (git 2.39, bash 5.2, pip 23,
// Maven 3) against decoy secrets.
func TestRedteamAQSiblings(t *testing.T) {
	p := mustParsePolicy(t, "aq.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "@shell(git *)", action: allow }
  - { rule: "@shell(set *)", action: allow }
  - { rule: "@shell(unsetopt *)", action: allow }
  - { rule: "@shell(cd *)", action: allow }
  - { rule: "@shell(cat *)", action: allow }
  - { rule: "@shell(pip config *)", action: allow }
  - { rule: "@files(config/prod.key)", action: deny }
  - { rule: "@files(**/.env)", action: deny }
`)
	wantActionsIn(t, p, "/home/dev/proj", []bashCase{
		// git takes a unique prefix of a long option (F1, F11), but not
		// for a word that is an option of its own.
		{`git status --verb -- .env`, policy.Deny},
		{`git status --verb --verb`, policy.Deny},
		{`git commit --dry-run --verb`, policy.Deny},
		{`git reset --patc`, policy.Deny},
		{`git log --pat -- config/prod.key`, policy.Deny},
		{`git log --color --oneline`, policy.Allow},
		// status -v and commit -v print every staged change whatever
		// the pathspec (F2); log --full-diff every file of the commits
		// the paths select (F15).
		{`git status -vv -- src`, policy.Deny},
		{`git log -p --full-diff -- src/a.go`, policy.Deny},
		{`git log -p -- src/a.go`, policy.Allow},
		// Flags that make cd physical, bundled or turned on by their no
		// form (F6).
		{`set -eo physical; cd shared/..; cat x`, policy.Ask},
		{`set -euo physical; cd shared && cd ..; cat x`, policy.Ask},
		{`set +o nochaselinks; cd shared && cd ..; cat x`, policy.Ask},
		{`set -euo pipefail; cd shared && cd ..; cat x`, policy.Allow},
		// pip config --editor runs a program (F9).
		{`pip config --editor ./x.sh edit`, policy.Ask},
		{`pip config --editor=./x.sh list`, policy.Ask},
		{`pip config list`, policy.Allow},
		// The analysis does not panic on these (F4).
		{`npm pkg get`, policy.Ask},
		{`git config --glob -l`, policy.Ask}, // --glob is an abbreviation git config does not take as --global here
	})
	b := builtinPolicy(t)
	for _, call := range []policy.Call{
		// A host's descriptors through other /proc spellings (F5).
		{Tool: "Read", Arguments: mustJSON(t, map[string]string{"file_path": "/proc/thread-self/fd/3"})},
		{Tool: "Read", Arguments: mustJSON(t, map[string]string{"file_path": "/proc/self/task/12/fd/3"})},
		// A backslash is a separator to Gemini (F16).
		{Tool: "read_many_files", Arguments: mustJSON(t, map[string]any{"include": []string{`deploy\id_rsa`}})},
		{Tool: "Read", Arguments: mustJSON(t, map[string]string{"file_path": `/home/dev/proj/deploy\id_rsa`})},
		// A venv of any name, a build tool's settings (F12, F13).
		{Tool: "Write", Arguments: mustJSON(t, map[string]string{"file_path": "/home/dev/proj/env/pyvenv.cfg", "content": "x"})},
		{Tool: "Write", Arguments: mustJSON(t, map[string]string{"file_path": "/home/dev/proj/.mvn/jvm.config", "content": "x"})},
		{Tool: "Write", Arguments: mustJSON(t, map[string]string{"file_path": "/home/dev/proj/gradle.properties", "content": "x"})},
	} {
		call.Cwd = "/home/dev/proj"
		if d := b.Evaluate(call); d.Action == policy.Allow {
			t.Errorf("%s %s: allowed", call.Tool, call.Arguments)
		}
	}
}

package policy_test

import (
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// TestTargetDirectoryOperandsAreSources (red team Z3): with -t DIR (cp,
// mv, install, ln) every operand is a source — the last one too, which
// without the option is the destination — and each lands as DIR/NAME,
// which a rule on NAME meets (cp -t sub HEAD writes sub/HEAD).
func TestTargetDirectoryOperandsAreSources(t *testing.T) {
	p, err := policy.Parse([]byte(`mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(cp *)", action: allow }
  - { rule: "bash(install *)", action: allow }
  - { rule: "bash(ln *)", action: allow }
  - { rule: "@read(**/*.pem)", action: deny }
  - { rule: "@write(**/HEAD)", action: ask }
  - { rule: "@write(**/.mcp.json)", action: ask }
`), "target.yaml")
	if err != nil {
		t.Fatal(err)
	}
	wantActions(t, p, []bashCase{
		{`cp -t out key.pem`, policy.Deny},
		{`cp -t out a.txt key.pem`, policy.Deny},
		{`cp --target-directory=out key.pem`, policy.Deny},
		{`install -t out key.pem`, policy.Deny},
		{`cp -t sub HEAD`, policy.Ask},
		{`cp -t sub x/.mcp.json`, policy.Ask},
		{`install -t bin x/HEAD`, policy.Ask},
		{`ln -t sub x/HEAD`, policy.Ask},
		{`cp -t out a.txt b.txt`, policy.Allow},
		{`cp -t out key.txt`, policy.Allow},
		{`cp a.txt out/`, policy.Allow},
	})
}

// TestGitFillsTheTreeWithACommitsFiles (red team Z4): the git commands
// that write the files of a commit, the index or a stash write names the
// policy cannot see (a fetched branch may hold .claude/settings.json):
// under bash(git *) they ask when a rule on writes alone names a path
// anywhere. Rules that judge reads too, and rules on .git directories,
// do not make them ask; the commands that only move, remove or list, or
// write the index alone, stay allowed.
func TestGitFillsTheTreeWithACommitsFiles(t *testing.T) {
	settings, err := policy.Parse([]byte(`mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(git *)", action: allow }
  - { rule: "@files(**/.env)", action: deny }
  - { rule: "@write(**/.git/**)", action: ask }
  - { rule: "@write(**/.claude/settings*.json)", action: ask }
`), "settings.yaml")
	if err != nil {
		t.Fatal(err)
	}
	wantActions(t, settings, []bashCase{
		{`git checkout evil`, policy.Ask},
		{`git checkout HEAD~3 -- .`, policy.Ask},
		{`git checkout FETCH_HEAD -- src`, policy.Ask},
		{`git switch -c feat origin/evil`, policy.Ask},
		{`git restore --source=evil .`, policy.Ask},
		{`git reset --hard FETCH_HEAD`, policy.Ask},
		{`git merge FETCH_HEAD`, policy.Ask},
		{`git pull`, policy.Ask},
		{`git stash pop`, policy.Ask},
		{`git read-tree -u -m evil`, policy.Ask},
		{`git read-tree evil && git checkout-index -a -f`, policy.Ask},
		{`git submodule update --init`, policy.Ask},
		{`git worktree add w evil`, policy.Ask},
		{`git clone https://example.com/x/y.git`, policy.Ask},
		{`git checkout -b feat`, policy.Allow},
		{`git switch -c feat`, policy.Allow},
		{`git reset HEAD~1`, policy.Allow},
		{`git restore --staged a.go`, policy.Allow},
		{`git read-tree HEAD`, policy.Allow},
		{`git stash list`, policy.Allow},
		{`git worktree list`, policy.Allow},
		{`git submodule status`, policy.Allow},
		{`git mv a.go b.go`, policy.Allow},
		{`git rm a.go`, policy.Allow},
		{`git clean -fd`, policy.Allow},
		{`git status`, policy.Allow},
	})
	secretsOnly, err := policy.Parse([]byte(`mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(git *)", action: allow }
  - { rule: "@files(**/.env)", action: deny }
  - { rule: "@write(**/.git/**)", action: ask }
`), "secrets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	wantActions(t, secretsOnly, []bashCase{
		{`git checkout evil`, policy.Allow},
		{`git pull --rebase`, policy.Allow},
		{`git clone https://example.com/x/y.git`, policy.Allow},
		{`git apply x.diff`, policy.Ask}, // a patch is no commit yet
		{`git checkout evil -- .env`, policy.Deny},
	})
}

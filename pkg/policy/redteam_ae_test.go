package policy_test

import (
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// TestRedTeamAEOnThisSittingsFixes: the siblings and regressions a red
// team found in this sitting's own fixes. A locale set through env, or
// behind another wrapper, reaches the shell it runs (AE1); an option's
// value with an unquoted expansion, a pattern or a literal part beside
// it, attached or not, may split into an option and a file (AE3); uniq's
// +N is an option only with digits (AE4, a regression: +notes is a
// file); git checkout -b with -f, or with - as its start, and restore
// --staged --worktree write the tree, and a word after -- is no verb
// (AE2, AE5).
func TestRedTeamAEOnThisSittingsFixes(t *testing.T) {
	p := progKPolicy(t, "env", "timeout", "bash", "echo", "head", "cut", "uniq", "sort")
	wantActions(t, p, []bashCase{
		{`env LC_ALL=zh_CN.GBK bash -c 'echo "中\" ; cat ~/.ssh/id_rsa #"'`, policy.Ask},
		{`timeout 5 env LC_ALL=zh_CN.GBK bash -c 'echo hi'`, policy.Ask},
		{`env LC_ALL=C bash -c 'echo hi'`, policy.Allow},
		{`LC_ALL=en_US.ISO-8859-1 sort x`, policy.Allow},
		{`x=$(cat f); head -n $x* README`, policy.Ask},
		{`x=$(cat f); head -n 1$x README`, policy.Ask},
		{`head -n$N README`, policy.Ask},
		{`head --lines=$N README`, policy.Ask},
		{`cut -f $x* a`, policy.Ask},
		{`head -n"$N" README`, policy.Allow},
		{`uniq +notes .git/config`, policy.Deny},
		{`uniq +x ~/.bashrc`, policy.Deny},
		{`uniq +0 a b`, policy.Allow},
	})
	git := mustParsePolicy(t, "git.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(git *)", action: allow }
  - { rule: "@write(**/.claude/settings*.json)", action: ask }
`)
	wantActions(t, git, []bashCase{
		{`git checkout -f -b y`, policy.Ask},
		{`git checkout -b z -`, policy.Ask},
		{`git stash -- list`, policy.Ask},
		{`git restore --source=FETCH_HEAD --staged --worktree -- .`, policy.Ask},
		{`git checkout -b feat`, policy.Allow},
		{`git stash list`, policy.Allow},
		{`git restore --staged a.go`, policy.Allow},
	})
}

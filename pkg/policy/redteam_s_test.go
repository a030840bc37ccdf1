package policy_test

import (
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// TestCdThatRepeats (red team R's R3): a relative cd in the body of a
// loop or a function moves again each time the body runs (for i in 1 2;
// do cd ..; done is cd ../..), so the directories it leads to are unknown
// and a relative path after it may be anywhere; a cd in a subshell of the
// body starts from the body's directory each time, and an absolute one
// leads to the same place every time.
func TestCdThatRepeats(t *testing.T) {
	p := progKPolicy(t, "cat", "cd", "git status", "ls")
	wantActions(t, p, []bashCase{
		{`for i in 1 2; do cd ..; done; cat dev/.ssh/id_rsa`, policy.Deny},
		{`for i in 1 2 3; do cd ..; done; cat home/dev/.ssh/id_rsa`, policy.Deny},
		{`while true; do cd ..; done; cat dev/.ssh/id_rsa`, policy.Deny},
		{`until false; do cd ..; done; cat x`, policy.Ask},
		{`for ((i=0;i<2;i++)); do cd ..; done; cat x`, policy.Ask},
		{`f() { cd ..; }; f; f; cat dev/.ssh/id_rsa`, policy.Deny},
		{`for i in 1 2; do cat dev/.ssh/id_rsa; cd ..; done`, policy.Deny},
		{`(for i in 1 2; do cd ..; done; cat dev/.ssh/id_rsa)`, policy.Deny},
		{`for i in 1 2; do (cd ..); cd ..; done; cat dev/.ssh/id_rsa`, policy.Deny},
		{`for d in a b; do cd $d; cat README.md; cd ..; done`, policy.Ask},
		// Ordinary work: once per run, from the same place.
		{`for d in a b; do (cd $d && cat README.md); done`, policy.Allow},
		{`for i in 1 2; do (cd ..; cat dev/.ssh/id_rsa); done`, policy.Allow},
		{`for d in a b; do cd /home/dev/proj/$d; cat README.md; done`, policy.Allow},
		{`cd ..; cd ..; cat x`, policy.Allow},
	})
}

// TestPWDIsTheShellsDirectory (red team R's R2): "$PWD/x" is a path under
// the directory bash is in, read as ./x; a program's own directory option
// (git -C sub) does not move it, as it moves a relative operand.
func TestPWDIsTheShellsDirectory(t *testing.T) {
	p := progKPolicy(t, "git diff", "git log", "cat", "tar")
	wantActions(t, p, []bashCase{
		{`git -C sub diff --no-index "$PWD/../.ssh/id_rsa" x`, policy.Deny},
		{`git -C sub -C "$PWD/../.ssh" log -p`, policy.Deny},
		{`tar -C sub -cf /dev/null "$PWD/../.ssh/id_rsa"`, policy.Deny},
		{`git -C sub diff --no-index ../.ssh/id_rsa x`, policy.Allow}, // sub/../.ssh: the workspace's
		{`git -C sub diff --no-index "$PWD/x" y`, policy.Allow},
		{`git -C "$PWD/sub" log -p`, policy.Allow},
	})
}

// TestSplitWritesNamesItsPrefixStarts (red team R's R9): split FILE
// PREFIX writes PREFIXaa, PREFIXab… — with -a 1 the twentieth piece is
// PREFIXt — so a write rule meets every name that starts with PREFIX.
func TestSplitWritesNamesItsPrefixStarts(t *testing.T) {
	p := progKPolicy(t, "split")
	wantActions(t, p, []bashCase{
		{`split -l 1 -a 1 payload ~/.bashr`, policy.Deny},
		{`split -l 1 -a 1 payload .en`, policy.Deny},
		{`split -l1 payload .git/hooks/pre-commi`, policy.Deny},
		{`split -b 1k payload .e*`, policy.Deny},
		{`split -l 100 big.log "$P"`, policy.Deny}, // any name: meets the deny rules
		{`split -l 100 big.log parts/big-`, policy.Allow},
		{`split -n 4 big.log`, policy.Allow},
	})
}

package policy_test

import (
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// TestWordsBashMayHandOverAsSeveral (red team AC G6–G8): positions and
// option values count the words bash hands a program, and a pathname
// pattern may be several of them, an unquoted expansion none or several.
// Where that count decides which operand is written or is the pattern
// (uniq IN OUT, grep PATTERN FILE…), or the value's other words become
// operands, the command asks or judges them as operands.
func TestWordsBashMayHandOverAsSeveral(t *testing.T) {
	p := progKPolicy(t, "uniq", "grep", "paste", "head", "cd", "cp")
	wantActions(t, p, []bashCase{
		{`uniq .g*/config`, policy.Ask},
		{`e=; uniq $e a ~/.bashrc`, policy.Ask},
		{`uniq $NOPE a ~/.bashrc`, policy.Ask},
		{`uniq "$@" a .git/config`, policy.Ask},
		{`grep -v ~/.ssh/*`, policy.Ask},
		// * may also be grep -fNAME, whose value is a name there: a read
		// of ~/.ssh/* the deny rule meets (red team AO F8).
		{`cd ~/.ssh && grep -v *`, policy.Deny},
		{`cd ~/.ssh && paste -d * x`, policy.Deny},
		{`head -n $N x`, policy.Ask},
		{`uniq -c a b`, policy.Allow},
		{`grep foo *.go`, policy.Allow},
		{`grep -e foo *.go`, policy.Allow},
		{`grep "$P" f`, policy.Allow},
		{`N=5; head -n $N x`, policy.Allow},
		{`head -n "$N" x`, policy.Allow},
		{`cp ./*.go dst/`, policy.Allow},
	})
}

// TestShellReadingsOfSomeShells (red team AC G1, G3, G5, G11): $"…" is a
// translation bash expands; an unset nameref takes its target from the
// next assignment; zsh's ~[x] is a directory a function names; bash as sh
// decodes $'…'. Each asks.
func TestShellReadingsOfSomeShells(t *testing.T) {
	p := progKPolicy(t, "echo", "cat", "bash", "sh")
	wantActions(t, p, []bashCase{
		{`echo $"hi"`, policy.Ask},
		{"bash -c 'TEXTDOMAINDIR=. TEXTDOMAIN=x\necho $\"hi\"'", policy.Ask},
		{`declare -n r; r='a[$(cat ~/.ssh/id_rsa >&2)]'; echo "$r"`, policy.Ask},
		{`zsh_directory_name() { reply=(~/.ssh); }; cat ~[x]/id_rsa`, policy.Ask},
		{`sh -c 'cat ~/$'\''.netrc'\'''`, policy.Ask},
		{`echo "hi"`, policy.Allow},
		{`sh -c 'echo hi'`, policy.Allow},
		{`cat ~/x.txt`, policy.Allow},
	})
}

// TestOptionsThatReadADirectory (red team AC G9): diff --from-file=DIR
// compares each operand NAME with DIR/NAME, dot files too: DIR is read as
// a tree. A file named --from-file=.. that * matches makes diff * do so
// with the parent directory: a pattern that may expand to such an option
// asks.
func TestOptionsThatReadADirectory(t *testing.T) {
	p := progKPolicy(t, "diff", "grep", "wc")
	wantActions(t, p, []bashCase{
		{`diff --from-file=.. .netrc`, policy.Deny},
		{`diff --from-file /home/dev/.ssh id_rsa`, policy.Deny},
		{`diff * x`, policy.Ask},
		{`diff ./* x`, policy.Allow},
		{`diff -- * x`, policy.Allow},
		{`diff --to-file=src a.go`, policy.Allow},
		{`grep -rn TODO *`, policy.Allow},
		{`wc -l *`, policy.Allow},
	})
}

// TestDotDotClimbsFromWhereALinkPoints (red team AC G4): a directory in
// the workspace may be a link (node_modules/@scope/pkg, which a workspace
// links to ../../packages/pkg), and the kernel climbs a .. from its
// target: a .. after such a directory, in a path or after a cd, asks; one
// from the working directory or the home climbs by its text.
func TestDotDotClimbsFromWhereALinkPoints(t *testing.T) {
	p := progKPolicy(t, "cat", "cd", "echo", "ls")
	wantActions(t, p, []bashCase{
		{`cat node_modules/@scope/pkg/../../../x.txt`, policy.Ask},
		{`cd node_modules/@scope/pkg && cat ../../../x`, policy.Ask},
		{`echo x > node_modules/@scope/pkg/../../../.bashrc`, policy.Ask},
		{`cd node_modules/@scope/pkg && echo x > ../../../.bashrc`, policy.Ask},
		{`cat src/*/../README.md`, policy.Ask},
		{`cat ../README.md`, policy.Allow},
		{`cd src && cat README.md`, policy.Allow},
		{`ls ..`, policy.Allow},
	})
}

// TestLocalesWithAnotherCharacterSet (red team AC G2): in GBK or Big5 a
// byte \ can end a character, so a shell reads quotes and escapes where
// the analysis, which reads UTF-8, reads none: a locale variable naming
// such a character set asks; C, POSIX and UTF-8 ones change nothing.
func TestLocalesWithAnotherCharacterSet(t *testing.T) {
	p := progKPolicy(t, "bash", "echo", "ls", "sort", "cat", "env")
	wantActions(t, p, []bashCase{
		{`LC_ALL=zh_CN.GBK bash -c 'echo "中\"; cat ~/.ssh/id_rsa; echo "中\"'`, policy.Ask},
		{`export LC_ALL=zh_TW.BIG5; ls`, policy.Ask},
		{`env LC_CTYPE=zh_CN.GBK ls`, policy.Ask},
		{`read LANG; ls`, policy.Ask},
		{`LC_ALL=C sort x`, policy.Allow},
		{`LANG=en_US.UTF-8 ls`, policy.Allow},
		{`LC_ALL=C.utf8 cat x`, policy.Allow},
	})
}

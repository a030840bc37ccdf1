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

// TestStraceTamperingQualifiers (red team S's S5): strace is a wrapper
// judged as the command it traces, but -e inject= and fault= rewrite that
// command's system calls (poke_enter=@arg2=HEX replaces the path cat
// opens with any other, retval= fakes a result): a qualifier that only
// chooses what is shown is listed, any other asks. fakeroot -i reads its
// state file.
func TestStraceTamperingQualifiers(t *testing.T) {
	p := progKPolicy(t, "cat", "strace", "fakeroot")
	wantActions(t, p, []bashCase{
		{`strace -o /dev/null -P aaaa -e trace=openat -e inject=openat:poke_enter=@arg2=2f00 cat aaaa`, policy.Ask},
		{`strace -e fault=openat cat x`, policy.Ask},
		{`strace -e ' inject=openat:retval=0' cat x`, policy.Ask},
		{`strace -e kill=openat cat x`, policy.Ask},
		{`strace --inject=openat:retval=0 cat x`, policy.Ask},
		{`fakeroot -i .env cat README`, policy.Deny},
		{`strace -e trace=openat cat x`, policy.Allow},
		{`strace -e openat,read -f cat x`, policy.Allow},
		{`strace -e signal=none -e verbose=all cat x`, policy.Allow},
	})
}

// TestBackupSuffixWrites (red team S's S1): a backup copy is the written
// file's name and the suffix — cp -b -S v new .en moves the old .en to
// .env — so a suffix option adds a write of each written path with it
// appended (cp, mv, install, ln, patch -z, tar --suffix, rsync), and
// SIMPLE_BACKUP_SUFFIX, which gives the suffix to -b, asks when set.
func TestBackupSuffixWrites(t *testing.T) {
	p := progKPolicy(t, "cp", "mv", "install", "ln", "patch", "tar", "rsync", "export")
	wantActions(t, p, []bashCase{
		{`cp --backup --suffix=v new .en`, policy.Deny},
		{`cp -b -Sv new .en`, policy.Deny},
		{`mv -b -S v new .en`, policy.Deny},
		{`install -b -S v new .en`, policy.Deny},
		{`ln -f -b -S v new .en`, policy.Deny},
		{`patch -b -z v .en < p.diff`, policy.Deny},
		{`patch -b --suffix=v .en p.diff`, policy.Deny},
		{`tar xf a.tar .en --backup --suffix=v`, policy.Deny},
		{`rsync -b --suffix=v new .en`, policy.Deny},
		{`cp -b -S shrc new ~/.ba`, policy.Deny},
		{`SIMPLE_BACKUP_SUFFIX=v cp -b new .en`, policy.Ask},
		{`export SIMPLE_BACKUP_SUFFIX=v; mv -b new .en`, policy.Ask},
		{`cp -b -S .bak a b`, policy.Allow},
		{`cp -b new old`, policy.Allow},
	})
}

// TestUnknownProgramsSuffixOption (red team S's S2): an unknown program
// given a suffix option (xz -d -S n .envn writes .env; xz -S v .en too)
// may write its operand without any of its ends, or with the suffix
// after it; without one, only a compressor's extension is a stem.
func TestUnknownProgramsSuffixOption(t *testing.T) {
	p := progKPolicy(t, "xz")
	wantActions(t, p, []bashCase{
		{`xz -d --suffix=n .envn`, policy.Ask},
		{`xz -dS n .envn`, policy.Ask},
		{`xz -S v .en`, policy.Ask},
		{`xz -dk -S shrc ~/.bashrcshrc`, policy.Ask},
		{`xz -d -S .bak report.bak`, policy.Allow},
		{`xz -k notes.txt`, policy.Allow},
	})
}

// TestCopiesThatKeepTheSourcesPath (red team S's S3): cp --parents (in any
// abbreviation) and rsync -R write each source's whole path under the
// directory, not its last name: cp --parents a/.git/config d writes
// d/a/.git/config.
func TestCopiesThatKeepTheSourcesPath(t *testing.T) {
	p := progKPolicy(t, "cp", "rsync")
	wantActions(t, p, []bashCase{
		{`cp --parents src/.git/config d`, policy.Deny},
		{`cp --par a/.git/hooks/pre-commit .`, policy.Deny},
		{`rsync -R a/.git/config d/`, policy.Deny},
		{`rsync --relative .ssh/authorized_keys ~/`, policy.Deny},
		{`cp --parents src/a.go d`, policy.Allow},
	})
}

// TestOptionsThatNameADirectoryToWriteInto (red team S's S4): go build -o
// DIR/, go test -outputdir and sort -T write files into the directory
// they name: a write of its tree, which a rule on what is under it meets.
func TestOptionsThatNameADirectoryToWriteInto(t *testing.T) {
	p := progKPolicy(t, "go build", "go test", "sort", "docker build")
	wantActions(t, p, []bashCase{
		{`go test -outputdir=../.ssh -cpuprofile=authorized_keys .`, policy.Deny},
		{`go test -outputdir ~/.ssh -coverprofile=x .`, policy.Deny},
		{`go build -o ~/.ssh/ .`, policy.Deny},
		{`go test -c -o .git/hooks .`, policy.Deny},
		{`sort -T ~/.ssh -S 1 big`, policy.Deny},
		{`docker build -o type=local,dest=.git/hooks .`, policy.Deny},
		{`docker build -o out .`, policy.Allow},
		{`go build -o bin/app ./cmd/app`, policy.Allow},
		{`go build -o bin/ ./...`, policy.Allow},
		{`go test -coverprofile=cover.out ./...`, policy.Allow},
		{`sort -T tmp big`, policy.Allow},
	})
}

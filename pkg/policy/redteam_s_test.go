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
		{`git -C sub diff --no-index ../.ssh/id_rsa x`, policy.Ask}, // sub/../.ssh: the workspace's, unless sub is a link
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
		// Into a directory: the backup of the name written there (T11).
		{`cp -b -S v x/.en d/`, policy.Deny},
		{`install -b -S v x/.en d/`, policy.Deny},
		{`rsync -b --suffix=v x/.en d/`, policy.Deny},
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
		{`xz -d --suf=n .envn`, policy.Ask}, // getopt_long's abbreviations
		{`xz -d --su n .envn`, policy.Ask},
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
		{`docker build -o type=local,Dest=.git/hooks .`, policy.Deny}, // keys in any case (T10)
		{`docker build -o out .`, policy.Allow},
		{`go build -o bin/app ./cmd/app`, policy.Allow},
		{`go build -o bin/ ./...`, policy.Allow},
		{`go test -coverprofile=cover.out ./...`, policy.Allow},
		{`sort -T tmp big`, policy.Allow},
	})
}

// TestWildcardComponentsNameAnyDirectory (red team S's second S1): a
// pattern read is met anchored (wc -l *.go does not meet *.env.*), but a
// component made of * and ? alone spells nothing and is any name not
// starting with a dot: ~/.config/*/hosts.yml may be gh's token file. Such
// a pattern meeting a rule on a file in a named directory asks; a rule for
// a name anywhere (*.env) is met by any directory's contents, as a tree
// read's, and stays out of reach (docs/POLICY.md).
func TestWildcardComponentsNameAnyDirectory(t *testing.T) {
	p := mustParsePolicy(t, "wild.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(cat *)", action: allow }
  - { rule: "bash(grep *)", action: allow }
  - { rule: "bash(cd *)", action: allow }
  - { rule: "@files(~/.config/gh/**)", action: deny }
  - { rule: "@files(~/.ssh/**)", action: deny }
  - { rule: "@files(*.env)", action: deny }
`)
	wantActions(t, p, []bashCase{
		{`cat ~/.config/*/hosts.yml`, policy.Ask},
		{`cat ~/.config/??/hosts.yml`, policy.Ask},
		// The tree under ~/.config/* holds ~/.config/gh: the deny meets
		// it (red team AV F1: a recursive read of a pattern is judged on
		// the trees it may name).
		{`grep -r token ~/.config/*`, policy.Deny},
		{`cd ~/.config && cat */hosts.yml`, policy.Ask},
		{`cat ~/.config/g*/hosts.yml`, policy.Deny}, // spells g: met anchored
		// A wildcard does not match a leading dot: ~/*/id_rsa is not ~/.ssh.
		{`cat ~/*/id_rsa`, policy.Allow},
		{`cat */README.md`, policy.Allow},
		{`cat ~/.local/*/settings.json`, policy.Allow},
		{`cat *`, policy.Allow},
		{`grep -rn TODO *`, policy.Allow},
	})
}

// TestWrapperReadsItsOwnEnvironment (red team S's S3): parallel reads
// options from PARALLEL and a config from PARALLEL_HOME (--ssh=PROG runs
// PROG); setting them asks, in front of the wrapper or exported before.
func TestWrapperReadsItsOwnEnvironment(t *testing.T) {
	p := progKPolicy(t, "parallel", "echo", "export")
	wantActions(t, p, []bashCase{
		{`PARALLEL='--ssh=./evil -S h' parallel echo ::: a`, policy.Ask},
		{`export PARALLEL_HOME=.; parallel echo ::: a`, policy.Ask},
		{`parallel echo ::: a b`, policy.Allow},
	})
}

// TestInputMayBeAnOption (red team S's S4): what xargs reads is input
// nobody saw, which may start with '-': an option of the program that
// writes, runs or reads a file (echo --fromfile ~/.ssh/id_rsa | xargs tree
// prints the key). -- before it, or a ./ prefix, keeps it an operand.
func TestInputMayBeAnOption(t *testing.T) {
	p := progKPolicy(t, "echo", "tree", "date", "du", "ls", "basename")
	wantActions(t, p, []bashCase{
		{`echo --fromfile ~/.ssh/id_rsa | xargs tree`, policy.Ask},
		{`echo --file=/home/dev/.ssh/id_rsa | xargs date`, policy.Ask},
		{`echo -o .git/hooks/pre-commit | xargs tree`, policy.Ask},
		{`ls | xargs -I{} tree {}`, policy.Ask},
		{`ls | xargs du -sh`, policy.Ask},
		{`ls | xargs du -sh --`, policy.Allow},
		{`ls | xargs -I{} tree ./{}`, policy.Allow},
		{`ls | xargs -n1 basename`, policy.Allow},
	})
}

// TestFindDeleteRemovesWhatItMatches (red team S's S10): find -delete
// removes what it would hand -exec: under each root what the name filters
// match, so a write rule on those names meets it; with no filter (or one
// that is not a plain conjunction) every file under the roots.
func TestFindDeleteRemovesWhatItMatches(t *testing.T) {
	p := progKPolicy(t, "find")
	wantActions(t, p, []bashCase{
		{`find . -name .env -delete`, policy.Deny},
		{`find ~ -name .bashrc -delete`, policy.Deny},
		{`find . -path '*/.git/*' -delete`, policy.Deny},
		// A whole tree, or names it cannot read: a removal of the tree,
		// judged as rm -r is (anchored rules under it).
		{`find . -delete`, policy.Allow},
		{`find . -name x -o -name .env -delete`, policy.Allow},
		{`find ~/.ssh -delete`, policy.Deny},
		{`find . -name '*.pyc' -delete`, policy.Allow},
		{`find . -type d -name __pycache__ -delete`, policy.Allow},
	})
}

// TestRsyncOptionsThatReachOtherTrees (red team S's S7, S8): --copy-dest
// and --compare-dest read the files under their directory (copying a
// secret into the project), --link-dest hard-links them, and --daemon
// with --config runs what an agent-written configuration says.
func TestRsyncOptionsThatReachOtherTrees(t *testing.T) {
	p := progKPolicy(t, "rsync")
	wantActions(t, p, []bashCase{
		{`rsync -t --copy-dest=/home/dev/.ssh x/id_rsa y/`, policy.Deny},
		{`rsync -t --compare-dest=../.ssh x/id_rsa y/`, policy.Deny},
		{`rsync -a --link-dest=../.ssh x/ y/`, policy.Ask},
		{`rsync --daemon --config=x.conf`, policy.Ask},
		{`rsync -t --copy-dest=../old x/a y/`, policy.Allow},
	})
}

// TestDeviceReads (red team S's S11): a disk or the kernel's memory holds
// the bytes of files no rule names: a read of a device asks, but for
// the character devices every program reads.
func TestDeviceReads(t *testing.T) {
	p := progKPolicy(t, "cat", "grep", "head")
	wantActions(t, p, []bashCase{
		{`grep -a token /dev/vda1`, policy.Ask},
		{`cat /proc/kcore`, policy.Ask},
		{`cat /dev/mapper/root`, policy.Ask},
		{`cat /dev/vd*`, policy.Ask},
		{`cat /dev/null`, policy.Allow},
		{`head -c 16 /dev/urandom`, policy.Allow},
		{`cat /dev/stdin`, policy.Allow},
	})
}

// TestShellArgumentsOfOtherHosts (red team S's S13): Codex local_shell's
// user runs the command as another user, Zed's terminal tool takes cd and
// hosts spell the environment environment: each is judged as the keys
// the table already had (sudo asks; a directory of its own asks).
func TestShellArgumentsOfOtherHosts(t *testing.T) {
	p := progKPolicy(t, "ls", "cat")
	for _, tt := range []struct {
		args string
		want policy.Action
	}{
		{`{"command":["ls"],"user":"root"}`, policy.Ask},
		{`{"command":"ls","environment":{"GIT_PAGER":"sh"}}`, policy.Ask},
		{`{"command":"cat .ssh/id_rsa","cd":"/home/dev"}`, policy.Ask},
		{`{"command":"cat .ssh/id_rsa","working_dir":"/home/dev"}`, policy.Ask},
		{`{"command":"ls","user":""}`, policy.Allow},
		{`{"command":"ls","cd":"/home/dev/proj"}`, policy.Allow},
	} {
		d := p.Evaluate(policy.Call{Tool: "bash", Arguments: []byte(tt.args), Cwd: "/home/dev/proj"})
		if d.Action != tt.want {
			t.Errorf("%s: got %s (%s), want %s", tt.args, d.Action, d.Reason, tt.want)
		}
	}
}

// TestRedTeamT (red team T, on this sitting's changes): a subshell's cd in
// a loop whose body also changes directory, and a function's, start where
// an earlier run or call left them; input after a dash is an option too;
// parallel reads any variable set for it; a tree read of /dev reads the
// devices; csplit's -f is a prefix.
func TestRedTeamT(t *testing.T) {
	p := progKPolicy(t, "cat", "cd", "echo", "date", "du", "parallel", "export", "grep", "csplit", "split", "systemd-run")
	wantActions(t, p, []bashCase{
		{`for i in 1 2; do (cd .ssh; cat id_rsa); cd; done`, policy.Ask},
		{`for i in 1 2; do echo "$(cd .ssh; cat id_rsa)"; cd ~; done`, policy.Ask},
		{`f() ( cd .ssh; cat id_rsa; ); f; cd; f`, policy.Ask},
		{`echo f/home/dev/.ssh/id_rsa | xargs -I{} date -{}`, policy.Ask},
		{`cat list | xargs -I{} du --{}`, policy.Ask},
		{`PARALLEL_ENV='touch PWNED;' parallel echo ::: a`, policy.Ask},
		{`XDG_CONFIG_HOME=. parallel echo ::: a`, policy.Ask},
		{`export XDG_CONFIG_HOME=.; parallel echo ::: a`, policy.Ask},
		{`grep -r -D read -a token /dev`, policy.Ask},
		{`cd /dev && grep -r -D read -a token .`, policy.Ask},
		{`csplit -s -f .en -b v%.0d in 2`, policy.Deny},
		// A directory that climbs out of ~ is joined before ~ is
		// expanded, not cleaned with it (T9).
		{`cd ~/../dev/.ssh; cat id_rsa`, policy.Deny},
		{`cd ~/..; cat dev/.ssh/id_rsa`, policy.Deny},
		{`cd ~/.ssh/../../dev/.ssh && cat id_rsa`, policy.Deny},
		{`cat /dev/shm/*.log`, policy.Allow}, // F4: plain files
		// A systemd service starts in / or the home unless -d or --scope
		// keeps the caller's directory (T13).
		{`systemd-run --user -P cat .ssh/id_rsa`, policy.Deny},
		{`systemd-run --user -P -d cat README.md`, policy.Allow},
		// ${V=word} assigns V as V=word does (dotglob, CDPATH).
		{`echo ${GLOBIGNORE=x}; cat ~/*/*/id_rsa`, policy.Ask},
		{`echo "${CDPATH:=/home/dev}"; cd .ssh; cat id_rsa`, policy.Ask},
		// Ordinary work.
		{`echo ${FOO:=bar}; cat x`, policy.Allow},
		{`for d in a b; do (cd $d && cat README.md); done`, policy.Allow},
		{`for d in a b; do (cd $d && cat README.md); echo "$d"; done`, policy.Allow},
		{`for d in a b; do (cd $d && cat x); "$c" ..; done`, policy.Ask}, // "$c" may be cd
		{`LANG=C parallel echo ::: a`, policy.Allow},
		{`csplit -f part- big.txt 10`, policy.Allow},
	})
}

// TestSplitSuffixesAreLettersAndDigits (friction T): split's suffixes are
// letters or digits, two of them and then four, six… (yz, zaaa), or
// exactly -a N: split -b 10M db.sql db.sql. cannot write db.sql.env, while
// split -a 3 can, and .e with two letters is .env.
func TestSplitSuffixesAreLettersAndDigits(t *testing.T) {
	p := mustParsePolicy(t, "split.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(split *)", action: allow }
  - { rule: "bash(find *)", action: allow }
  - { rule: "@files(*.env)", action: deny }
  - { rule: "@write(~/.bashrc)", action: deny }
`)
	wantActions(t, p, []bashCase{
		{`split -b 10M backup.tar chunk.`, policy.Allow},
		{`split -b 100M db.sql db.sql.`, policy.Allow},
		{`split -d -l 100 big.log parts/big-`, policy.Allow},
		{`split -a 3 -b 1 x x.`, policy.Deny},
		{`split -a3 -b 1 x x.`, policy.Deny},
		{`split -b 1k payload .e`, policy.Deny},
		{`split -l 1 payload ~/.bash`, policy.Deny},
		{`split --suffix-length=3 -b 1 x x.`, policy.Deny},
		{`split -l1 --additional-suffix=.env in pre`, policy.Deny},
		{`split -n 4000 f x.`, policy.Deny}, // three letters: x.env is the 3064th chunk
		// find -delete with a filter it cannot read removes a tree, as
		// rm -r does: no denial for the names it may not remove.
		{`find . -regex '.*\.o' -delete`, policy.Allow},
		{`find build -delete`, policy.Allow},
	})
}

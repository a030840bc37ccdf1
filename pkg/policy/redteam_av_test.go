package policy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/policy/shell"
)

// TestRedteamAVARecursiveReadOfAPatternIsJudgedOnItsTrees: a recursive or
// directory read of a pattern operand reads the trees under every path
// the pattern names. grep -r x /home/d* read the whole home, its SSH key
// included, because the pattern's text was met against the rules' text
// only, never against the directories they protect (red team AV F1). Real
// grep and diff show the premise on a home of decoys; the policy, with
// that home, denies the same commands.
func TestRedteamAVARecursiveReadOfAPatternIsJudgedOnItsTrees(t *testing.T) {
	needPrograms(t, "bash", "grep", "diff")
	root := t.TempDir()
	home := filepath.Join(root, "h", "dev")
	for name, body := range map[string]string{
		".ssh/id_rsa":        "DECOY-SSH",
		".codex/auth.json":   "DECOY-CODEX",
		".claude.json":       "DECOY-CLAUDE",
		"proj/src/main.go":   "package main",
		"proj/README.md":     "hello",
		"empty/.placeholder": "",
	} {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	proj := filepath.Join(home, "proj")
	hd := filepath.Join(root, "h", "d*")
	cases := []struct {
		cmd   string
		leaks string // what the real command prints from the home
	}{
		{"grep -r DECOY " + hd, "DECOY-SSH"},
		{"grep -r DECOY ../../d*", "DECOY-SSH"},
		{"grep -r DECOY ~/.cod?x", "DECOY-CODEX"},
		{"diff -N " + hd + " " + filepath.Join(home, "empty"), "DECOY-CLAUDE"},
	}
	for _, c := range cases {
		cmd := exec.Command("bash", "-c", c.cmd)
		cmd.Dir = proj
		cmd.Env = append(os.Environ(), "HOME="+home)
		out, _ := cmd.CombinedOutput()
		if !strings.Contains(string(out), c.leaks) {
			t.Fatalf("test premise: %s printed no %s:\n%s", c.cmd, c.leaks, out)
		}
	}
	p := mustParsePolicy(t, "builtin.yaml", "home: "+home+"\n"+string(policy.DefaultYAML()))
	for _, c := range cases {
		wantActionsIn(t, p, proj, []bashCase{{c.cmd, policy.Deny}})
	}
	// With the home /home/dev: every spelling of a pattern over the home
	// or over a protected directory, through every recursive reader.
	wantActionsIn(t, builtinPolicy(t), "/home/dev/proj", []bashCase{
		{`grep -r x /home/d*`, policy.Deny},
		{`rg x /home/de?`, policy.Deny},
		{`rg x /home/[d]ev`, policy.Deny},
		{`grep -r x /hom?/dev`, policy.Deny},
		{`grep -r x ~/.clau[d]e`, policy.Deny},
		{`rg -uu x ~/.gem*`, policy.Deny},
		{`diff -rN /home/d* /tmp/empty`, policy.Deny},
		{`git diff --no-index ~/.gem* /tmp/empty`, policy.Deny},
		{`git log -p ../.cod?x`, policy.Deny},
		// What is not over a protected directory passes.
		{`grep -r x src/*`, policy.Allow},
		{`grep -rn TODO src/p*`, policy.Allow},
		{`grep -rl x */`, policy.Allow},
		{`rg foo /home/dev/proj/*`, policy.Allow},
		{`grep -r x /tmp/b*`, policy.Allow},
		{`rg -g '*.go' TODO`, policy.Allow},
	})
}

// TestRedteamAVTheHomesDotFilesAreReadByClass: reads of the home were
// judged against a closed list of token files while writes were judged
// by class (red team AV F8): ~/.my.cnf, a Maven settings.xml, the hosts'
// transcripts of every session (F7: copies of every file a session read,
// approved or not) and shell histories were readable. Every dot file of
// the home now asks to be read, its known stores are denied, and the
// sources of installed libraries and the hosts' own skills pass.
func TestRedteamAVTheHomesDotFilesAreReadByClass(t *testing.T) {
	wantActionsIn(t, builtinPolicy(t), "/home/dev/proj", []bashCase{
		{`cat ~/.my.cnf`, policy.Ask},
		{`grep password ~/.m2/settings.xml`, policy.Ask},
		{`cat ~/.cache/huggingface/token`, policy.Ask},
		{`grep -r KEY ~/.claude/projects`, policy.Ask},
		{`cat ~/.codex/history.jsonl`, policy.Ask},
		{`cat ~/.bash_history`, policy.Ask},
		{`cat ~/.gitconfig`, policy.Ask},
		{`cat ~/Library/LaunchAgents/x.plist`, policy.Ask},
		{`cat ~/.ssh/id_rsa`, policy.Deny},
		{`cat ~/.cargo/registry/src/index.crates.io-0/serde-1.0.0/src/lib.rs`, policy.Allow},
		{`cat ~/.cargo/registry/src/*/serde-1.0.0/src/lib.rs`, policy.Allow},
		{`cat ~/.rustup/toolchains/stable/lib/rustlib/src/rust/library/std/src/lib.rs`, policy.Allow},
		{`cat ~/.claude/skills/pdf/reference.md`, policy.Allow},
		// Extensions' and plugins' own data hold their settings (red
		// team AX F4).
		{`grep -r KEY ~/.gemini/extensions`, policy.Ask},
		{`cat ~/.claude/plugins/data/x/config.json`, policy.Ask},
		{`cat ~/go/pkg/mod/golang.org/x/sync@v0.1.0/errgroup/errgroup.go`, policy.Allow},
		{`ls -la ~/.config`, policy.Allow},
	})
	b := builtinPolicy(t)
	for _, c := range []struct {
		tool string
		args map[string]any
		want policy.Action
	}{
		{"Read", map[string]any{"file_path": "/home/dev/.claude/projects/-home-dev-proj/s1.jsonl"}, policy.Ask},
		{"Grep", map[string]any{"pattern": "SECRET", "path": "/home/dev/.codex/sessions"}, policy.Ask},
		{"Write", map[string]any{"file_path": "/home/dev/Library/LaunchAgents/x.plist", "content": "x"}, policy.Ask},
		{"Write", map[string]any{"file_path": "/home/dev/proj/WARP.md", "content": "x"}, policy.Ask},
		{"Write", map[string]any{"file_path": "/home/dev/proj/.github/agents/x.agent.md", "content": "x"}, policy.Ask},
		{"Write", map[string]any{"file_path": "/home/dev/proj/.idea/watcherTasks.xml", "content": "x"}, policy.Ask},
		{"Read", map[string]any{"file_path": "/home/dev/proj/README.md"}, policy.Allow},
	} {
		if d := b.Evaluate(policy.Call{Tool: c.tool, Arguments: mustJSON(t, c.args), Cwd: "/home/dev/proj"}); d.Action != c.want {
			t.Errorf("%s %v: %s (%s), want %s", c.tool, c.args, d.Action, d.Reason, c.want)
		}
	}
}

// TestRedteamAVSecondSpellingsOfAProfile: a Windows profile is a second
// home whatever pattern names it, in any case, through its 8.3 short
// names and the Documents and Settings junction; macOS's boot volume under
// /Volumes is a link to / (red team AV F2, F3).
func TestRedteamAVSecondSpellingsOfAProfile(t *testing.T) {
	wantActionsIn(t, builtinPolicy(t), "/home/dev/proj", []bashCase{
		{`cat /mnt/c/Users/dev/.claude.js?n`, policy.Ask},
		{`cat /mnt/c/Users/*/.claude.json`, policy.Ask},
		{`cat /mnt/*/Users/dev/.gemini/oauth_creds.json`, policy.Ask},
		{`grep -r DECOY /mnt/c/Users/d*`, policy.Deny},
		{`grep -r tok /mnt/c/USERS`, policy.Deny},
		{`cat /mnt/c/Users/dev/AWS~1/CREDEN~1`, policy.Ask},
		{`cat /mnt/c/Users/dev/CLAUDE~1.JSO`, policy.Ask},
		{`cat "/mnt/c/Documents and Settings/dev/.claude.json"`, policy.Ask},
		{`cat "/Volumes/Macintosh HD/Users/dev/.kube/config"`, policy.Ask},
		{`grep -r x /mnt/c/work`, policy.Allow},
		{`grep -r x /mnt/c/Users/dev/source/app`, policy.Allow},
		{`cat /mnt/c/Users/dev/source/app/README.md`, policy.Allow},
	})
}

// TestRedteamAVGitCommitDoesWhatItsHooksSay: git commit runs the
// repository's hooks, which delegate to scripts the agent may rewrite
// without a question (red team AV F9). Real git shows the premise; the
// analysis marks the verbs that run hooks as doing what files say, so a
// standing answer's offer says so.
func TestRedteamAVGitCommitDoesWhatItsHooksSay(t *testing.T) {
	needPrograms(t, "git", "sh")
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@x", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@x")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	marker := filepath.Join(repo, "ran")
	for name, body := range map[string]string{
		".git/hooks/pre-commit": "#!/bin/sh\nsh scripts/check.sh\n",
		"scripts/check.sh":      "touch " + marker + "\n", // the agent's write, allowed
		"x.txt":                 "x\n",
	} {
		p := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git("add", "x.txt")
	git("commit", "-qm", "wip")
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("test premise: git commit did not run the hook's script: %v", err)
	}
	for cmd, want := range map[string]bool{
		"git commit -am wip": true, "git push origin main": true, "git merge topic": true,
		"git checkout main": true, "git switch -c x": true, "git pull": true, "git rebase main": true,
		"git cherry-pick abc": true, "git revert abc": true, "git am x.patch": true,
		// Index and ref updates run hooks too (red team AW F5).
		"git status": true, "git branch x": true, "git tag v1": true, "git stash": true, "git reset --hard": true,
		"git sparse-checkout set a": true, "git update-ref refs/y HEAD": true,
		// An index refresh runs post-index-change (red team AX F2).
		"git diff": true, "git add x": true, "git rm x": true, "git mv x y": true,
		"git log -5": false, "git show HEAD": false, "git blame x": false,
	} {
		a := shell.Analyze(cmd)
		if len(a.Commands) == 0 || a.Commands[0].Text != cmd || a.Commands[0].RunsFiles != want {
			t.Errorf("%s: analysed as %+v, want RunsFiles %v", cmd, a.Commands, want)
		}
	}
}

// TestRedteamAWSiblings closes the classes red team AW found beside AV's:
// the library trees the home's read class allows are their library
// directories only (F3: an interpreter prefix's etc/npmrc and a virtual
// environment's pip.conf hold registry tokens); without a working
// directory a shell's read that climbs with .. asks, as a file tool's does
// (F4: cat ../../.kube/config was judged by its text alone); a short name
// at a drive's root and a profile's legacy junctions are second spellings
// of the profile (F6).
func TestRedteamAWSiblings(t *testing.T) {
	b := builtinPolicy(t)
	wantActionsIn(t, b, "/home/dev/proj", []bashCase{
		{`cat ~/.nvm/versions/node/v20.0.0/etc/npmrc`, policy.Ask},
		{`grep -r _authToken ~/.nvm/versions`, policy.Ask},
		{`cat ~/.pyenv/versions/3.12.1/pip.conf`, policy.Ask},
		{`cat ~/.local/share/virtualenvs/proj-Ab3dEf/pip.conf`, policy.Ask},
		{`cat ~/.cargo/git/db/x/config`, policy.Ask},
		{`cat ~/.pyenv/versions/3.12.1/lib/python3.12/json/__init__.py`, policy.Allow},
		{`cat ~/.nvm/versions/node/v20.0.0/lib/node_modules/npm/package.json`, policy.Allow},
		{`cat /mnt/c/DOCUME~1/dev/.claude.json`, policy.Ask},
		{`grep -r token /mnt/c/DOCUME~1/dev`, policy.Ask},
		{`cat '/mnt/c/Users/dev/Application Data/GitHub CLI/hosts.yml'`, policy.Ask},
		{`cat '/mnt/c/Users/dev/Local Settings/Microsoft/Credentials/x'`, policy.Ask},
	})
	wantActionsIn(t, b, "", []bashCase{
		{`cat ../../.kube/config`, policy.Ask},
		{`grep -r token ../..`, policy.Ask},
		{`grep -r x ../d*`, policy.Ask},
		{`cat ./../.claude.js?n`, policy.Ask},
		{`cat src/main.go`, policy.Allow},
		{`cat src/*.go`, policy.Allow},
		// A climb by cd, or by git -C, asks too (red team AX F1).
		{`cd ..; cat .config/gh/hosts.yml`, policy.Ask},
		{`cd x/../..; cat y`, policy.Ask},
		{`git -C .. diff --no-index .config/gh/hosts.yml /dev/null`, policy.Ask},
		{`cd src && cd .. && cat x`, policy.Allow},
		{`git show HEAD:go.mod`, policy.Allow},
	})
}

// TestRedteamAWKernelSpellingsOfAPath: macOS's /.nofollow/, /.resolve/N/
// and volfs, and a toolbox container's /run/host, spell any path of the
// system in a way no rule on the path meets (red team AW F8).
func TestRedteamAWKernelSpellingsOfAPath(t *testing.T) {
	p := mustParsePolicy(t, "mac.yaml", "home: /Users/dev\n"+string(policy.DefaultYAML()))
	wantActionsIn(t, p, "/Users/dev/proj", []bashCase{
		{`cat /.nofollow/Users/dev/.claude.json`, policy.Ask},
		{`cat /.resolve/1/Users/dev/.kube/config`, policy.Ask},
		{`grep -r token /.nofollow/Users/dev`, policy.Ask},
		{`cat /.vol/16777230/1234567`, policy.Ask},
		{`cat /run/host/home/dev/.claude.json`, policy.Ask},
		{`cat /var/run/host/home/dev/.claude.json`, policy.Ask}, // /var/run is /run (AX F6)
		{`cat /Users/dev/proj/README.md`, policy.Allow},
	})
}

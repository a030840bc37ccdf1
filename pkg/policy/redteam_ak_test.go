package policy_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/policy/shell"
)

// TestBraceSequencesNumberTheirTermsAsTheShellsDo: a bound written with a
// leading zero pads every term to the wider bound's width in bash and zsh
// ({01..03} is 01 02 03), so the engine reads the padded names; where the
// two shells number terms differently (a plus sign, a signed zero, a
// padded step) the word is not enumerated and asks.
func TestBraceSequencesNumberTheirTermsAsTheShellsDo(t *testing.T) {
	p := mustParsePolicy(t, "seq.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(cat *)", action: allow }
  - { rule: "bash(echo *)", action: allow }
  - { rule: "@files(**/key01)", action: deny }
  - { rule: "@files(**/key007)", action: deny }
`)
	wantActions(t, p, []bashCase{
		{`cat key{01..01}`, policy.Deny},
		{`cat key{1..01}`, policy.Deny},
		{`cat key{005..8}`, policy.Deny},
		{`cat key{1..1}`, policy.Allow},
		{`cat key{5..8}`, policy.Allow},
		{`echo {01..10}`, policy.Allow},
		{`echo {-1..2}`, policy.Allow},
		{`echo {+1..3}`, policy.Ask},
		{`echo {-0..2}`, policy.Ask},
		{`echo {0..-02}`, policy.Ask},
		{`echo {1..10..03}`, policy.Ask},
	})
}

// TestZshMathTakesAnArithmeticExpansionAsANumber: an argument zsh
// evaluates as math (exit, return, shift…) that is one arithmetic
// expansion is a number, whose own expression is judged where it is
// expanded; anything more stays unknown.
func TestZshMathTakesAnArithmeticExpansionAsANumber(t *testing.T) {
	p := builtinPolicy(t)
	wantActions(t, p, []bashCase{
		{`exit "$((1))"`, policy.Allow},
		{`exit $((1+2))`, policy.Allow},
		{`exit $(($# > 0))`, policy.Allow},
		{`read a < f; exit $((a))`, policy.Ask},
		{`read a < f; exit "$((a+1))"`, policy.Ask},
		{`exit "$((1))x"`, policy.Ask},
		{`exit "$(( $(cat f) ))"`, policy.Ask},
	})
}

// TestGitConfiguredToolsAsk: git difftool and git mergetool without a
// command of their own run the tool the git configuration names, a
// program nobody judged (red team AH L5), as git --ext-diff does.
func TestGitConfiguredToolsAsk(t *testing.T) {
	p := mustParsePolicy(t, "git.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(git *)", action: allow }
  - { rule: "bash(ls *)", action: allow }
`)
	wantActions(t, p, []bashCase{
		{`git difftool`, policy.Ask},
		{`git difftool HEAD~1 -- a.go`, policy.Ask},
		{`git difftool -y main`, policy.Ask},
		{`git mergetool`, policy.Ask},
		{`git difftool --tool-help`, policy.Allow},
		{`git mergetool --tool-help`, policy.Allow},
		{`git diff HEAD~1`, policy.Allow},
	})
}

// TestGitOptionPathsAreReadFromAnyTopLevel (red team AK F4): git moves to
// the top of the work tree before it runs a sub-command and prefixes only
// the values it parses as file names, so git blame --contents
// ../.kube/config in a sub-directory printed ~/.kube/config. A relative
// path a git option reads is judged under every directory from the working
// directory up; operands (pathspecs, patch files), which git prefixes,
// stay where they are.
func TestGitOptionPathsAreReadFromAnyTopLevel(t *testing.T) {
	in := func(p *policy.Policy, cwd string, cases []bashCase) { t.Helper(); wantActionsIn(t, p, cwd, cases) }
	p := builtinPolicy(t)
	in(p, "/home/dev/proj/sub", []bashCase{
		{`git blame --contents ../.kube/config a.txt`, policy.Deny},
		{`git blame -S ../.kube/config a.txt`, policy.Deny},
		{`git blame --ignore-revs-file ../.kube/config a.txt`, policy.Deny},
		// A pattern the shell expands here is read from the top too
		// (red team AM F5: ../.npmr? was the project's .npmrc here, and
		// ~/.npmrc for git).
		{`git blame --contents ../.npmr? a.txt`, policy.Deny},
		{`git blame -S ../.kube/conf* a.txt`, policy.Deny},
		{`git blame a.txt`, policy.Allow},
		{`git blame --contents a.txt a.txt`, policy.Allow},
		{`git log -p -- a.txt`, policy.Allow},
	})
	in(p, "/home/dev/work", []bashCase{{`git blame --contents .kube/config ../.bashrc`, policy.Deny}})
	// After a cd in the same command, a .. is asked about anyway (the
	// directory may be a link).
	in(p, "/home/dev/proj", []bashCase{{`cd sub && git blame --contents ../.kube/config a.txt`, policy.Deny}})
	g := mustParsePolicy(t, "git.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(git *)", action: allow }
  - { rule: "@files(~/.kube/**)", action: deny }
`)
	in(g, "/home/dev/proj/a/b/c", []bashCase{
		{`git notes add -F ../.kube/config HEAD`, policy.Deny},
		{`git grep -f ../.kube/config`, policy.Deny},
		{`git fast-export --import-marks=../.kube/config HEAD`, policy.Deny},
		{`git commit -F msg.txt`, policy.Allow},
		{`git apply fix.patch`, policy.Allow},
		// Operands of the readers that take no revision are files, a..b
		// too (red team AN F4); interpret-trailers opens them from the
		// top (AN F5).
		{`git hash-object -w sub/../../.kube/config`, policy.Ask},
		{`git interpret-trailers ../.kube/config`, policy.Deny},
		{`git hash-object README.md`, policy.Allow},
		{`git log HEAD~3..HEAD`, policy.Allow},
		// A write git does not prefix lands at the top too (red team AM F9).
		{`git fast-export --export-marks=README.md HEAD`, policy.Ask},
		{`git diff --output=x.patch HEAD`, policy.Allow},
		// So does pack-objects' base name (git 2.39: ../x in repo/sub
		// wrote x-SHA.pack beside the repository).
		{`git pack-objects ../../.kube/config </dev/null`, policy.Deny},
		{`git pack-objects pk </dev/null`, policy.Ask},
	})
}

// TestRelativeDenyRulesHoldFromSubDirectories (red team AK F12): a
// relative deny or ask rule names the project's paths; the agent may have
// moved into a sub-directory, so the rule is anchored at the working
// directory and every directory above it. An allow stays anchored at the
// working directory.
func TestRelativeDenyRulesHoldFromSubDirectories(t *testing.T) {
	p := mustParsePolicy(t, "rel.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(cat *)", action: allow }
  - { rule: "bash(echo *)", action: allow }
  - { rule: "@files(secrets/**)", action: deny }
  - { rule: "@files(config/prod.key)", action: deny }
  - { rule: "@write(migrations/**)", action: deny }
  - { rule: "@files(src/**)", action: allow }
`)
	in := func(cwd string, tool string, args map[string]string, want policy.Action) {
		t.Helper()
		raw, _ := json.Marshal(args)
		if d := p.Evaluate(policy.Call{Tool: tool, Arguments: raw, Cwd: cwd}); d.Action != want {
			t.Errorf("in %s, %s %s: got %s (%s), want %s", cwd, tool, raw, d.Action, d.Reason, want)
		}
	}
	sub := "/home/dev/proj/sub"
	bash := func(c string) map[string]string { return map[string]string{"command": c} }
	in(sub, "bash", bash(`cat ../secrets/key`), policy.Deny)
	in(sub, "bash", bash(`cat /home/dev/proj/secrets/key`), policy.Deny)
	in(sub, "bash", bash(`cat ../config/prod.key`), policy.Deny)
	in(sub, "bash", bash(`cat ../secrets/*`), policy.Deny)
	in(sub, "bash", bash(`cat ../sec*/key`), policy.Deny)
	in(sub, "bash", bash(`echo x > ../migrations/001.sql`), policy.Deny)
	in(sub, "Read", map[string]string{"file_path": "/home/dev/proj/secrets/key"}, policy.Deny)
	in(sub, "Write", map[string]string{"file_path": "/home/dev/proj/migrations/001.sql", "content": "x"}, policy.Deny)
	// Patterns: absolute ones, and ones whose wildcard reaches into the
	// project from above it (red team AM F2).
	in(sub, "bash", bash(`cat /home/dev/proj/secret?/key`), policy.Deny)
	if d := p.Evaluate(policy.Call{Tool: "bash", Arguments: mustJSON(t, bash(`cat ../../pro*/secrets/key`)), Cwd: sub}); d.Action == policy.Allow {
		t.Errorf("cat ../../pro*/secrets/key from %s is allowed: %s", sub, d.Reason)
	}
	in(sub, "bash", bash(`cat /home/dev/proj/src/*.go`), policy.Allow)
	in(sub, "bash", bash(`cat ../*.md`), policy.Allow)
	// Not under a directory above the working directory: as before.
	in(sub, "bash", bash(`cat a/secrets/key`), policy.Allow)
	in(sub, "bash", bash(`cat ../README.md`), policy.Allow)
	in("/home/dev/proj", "bash", bash(`cat lib/secrets.go`), policy.Allow)
}

// TestSettingsThatNameProgramsAsk (red team AK F5, F6, F7, F8, F10): a
// setting that names a program to run, code to load, or where a token
// goes asks, whether it comes as an option (cargo --config, node
// --env-file, npm --registry) or as a file the program reads from the
// project or the home, which the built-in policy guards (.cargo/config.toml,
// .yarnrc, .npmrc, ~/.bashrc).
func TestSettingsThatNameProgramsAsk(t *testing.T) {
	p := mustParsePolicy(t, "pm.yaml", "home: /home/dev\n"+string(policy.DefaultYAML())+`
  - { rule: "bash(npm view *)", action: allow }
  - { rule: "bash(cargo tree *)", action: allow }
  - { rule: "bash(cargo tree)", action: allow }
  - { rule: "bash(node --check *)", action: allow }
  - { rule: "bash(yarn --version)", action: allow }
  - { rule: "bash(yarn info *)", action: allow }
  - { rule: "bash(pnpm ls *)", action: allow }
  - { rule: "bash(npm ls *)", action: allow }
  - { rule: "bash(mv *)", action: allow }
  - { rule: "bash(ln *)", action: allow }
`)
	wantActions(t, p, []bashCase{
		// Every npm setting is an option, one dash or two, abbreviated
		// (red team AM F3, F4, F7).
		{`npm view x -registry=http://registry.npmjs.org/ -proxy=http://127.0.0.1:8099/`, policy.Ask},
		{`npm view x -reg http://y/`, policy.Ask},
		{`npm view git+file:///tmp/r --git=./scripts/lint.sh`, policy.Ask},
		{`npm view x --@acme:registry=http://y/`, policy.Ask},
		{`npm view x --no-strict-ssl`, policy.Ask},
		{`yarn info x --use-yarnrc f`, policy.Ask},
		{`pnpm ls --config.registry=http://y/`, policy.Ask},
		{`npm ls -g`, policy.Allow},
		{`npm ls --global --depth=0 --json`, policy.Allow},
		{`pnpm ls --depth 1`, policy.Allow},
		// What yarn, mise, curl and the PATH run later (AM F6, F8).
		{`echo x > .yarn/releases/yarn-4.1.cjs && yarn --version`, policy.Ask},
		{`echo x > mise.dev.toml`, policy.Ask},
		{`echo 'upload-file = ~/.ssh/id_rsa' > ~/.curlrc`, policy.Ask},
		{`echo x > ~/.local/bin/ls`, policy.Ask},
		// The directory that holds a guarded one, made in one step (red
		// team AN F1, F2, F3).
		{`mv n node_modules && npm test`, policy.Ask},
		{`ln -s stage .yarn`, policy.Ask},
		{`echo git=/tmp/g.sh > etc/npmrc`, policy.Ask},
		{`npm view x --prefix sub`, policy.Allow},
		{`npm view x --logs-dir=/home/dev/.config/autostart`, policy.Ask},
		{`Npm_Config_Git=/tmp/g.sh npm view x`, policy.Ask},
		{`yarn_yarn_path=./x.js yarn --version`, policy.Ask},
		{`mkdir y; echo git=/x > y/npmrc; mv y etc`, policy.Ask},
		{`mv a.txt b.txt`, policy.Allow},
		{`ln -s a.txt b.txt`, policy.Allow},
		{`npm view left-pad version --registry=http://registry.npmjs.org/ --proxy=http://127.0.0.1:8099/`, policy.Ask},
		{`npm view left-pad version --userconfig=x.ini`, policy.Ask},
		{`cargo tree --config 'build.rustc-wrapper="sh"'`, policy.Ask},
		{`node --check --env-file=x.txt app.js`, policy.Ask},
		{`node --check --env-file=/home/dev/.ssh/id_rsa app.js`, policy.Deny},
		{`echo 'yarn-path "./evil.js"' > .yarnrc && yarn --version`, policy.Ask},
		{`echo '[build]' > .cargo/config.toml && cargo tree`, policy.Ask},
		{`echo 'registry=http://x/' > .npmrc`, policy.Ask},
		{`echo x > rust-toolchain.toml`, policy.Ask},
		{`echo 'cat ~/.ssh/id_rsa' >> ~/.bashrc`, policy.Ask},
		// Programs and start-up code later commands run (red team AM F1).
		{`echo 'import os' > .venv/lib/python3.11/site-packages/_cov.pth && pip list`, policy.Ask},
		{`echo x > .venv/bin/python`, policy.Ask},
		{`echo x > node_modules/.bin/tsc`, policy.Ask},
		{`echo x > sitecustomize.py`, policy.Ask},
		// Ordinary use stays allowed.
		{`npm view left-pad version`, policy.Allow},
		{`cargo tree`, policy.Allow},
		{`node --check app.js`, policy.Allow},
		{`yarn --version`, policy.Allow},
		{`echo x > notes.txt`, policy.Allow},
	})
	// The home as the workspace: its start-up files still ask.
	args, _ := json.Marshal(map[string]string{"command": `echo 'cat ~/.ssh/id_rsa' >> .bashrc`})
	if d := p.Evaluate(policy.Call{Tool: "bash", Arguments: args, Cwd: "/home/dev"}); d.Action != policy.Ask {
		t.Errorf("a write of ~/.bashrc from the home: %s (%s)", d.Action, d.Reason)
	}
}

// TestDateWithATimeOperandAsks (red team AK F11): date MMDDhhmm sets the
// clock as date -s does; a +FORMAT operand only prints.
func TestDateWithATimeOperandAsks(t *testing.T) {
	wantActions(t, builtinPolicy(t), []bashCase{
		{`date 01010000`, policy.Ask},
		{`date 010100002030.59`, policy.Ask},
		{`date`, policy.Allow},
		{`date +%s`, policy.Allow},
		{`date -u "+%F %T"`, policy.Allow},
		{`date -d yesterday +%F`, policy.Allow},
	})
}

func mustJSON(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAQuotedTildeIsADirectoryHere (red team AN F8): bash expands a
// leading ~ only unquoted, and the ~ after an option's = not at all;
// '~/x', \~/x, '$HOME/x' and --file=~/x name a directory called ~ (or
// $HOME) in the working directory, which the file tools can make, so
// '~/../../.npmrc' from a project in the home is ~/.npmrc.
func TestAQuotedTildeIsADirectoryHere(t *testing.T) {
	wantActions(t, builtinPolicy(t), []bashCase{
		{`cat '~/../../.npmrc'`, policy.Deny},
		{`cat \~/../../.npmrc`, policy.Deny},
		{`cat "~/../../.npmrc"`, policy.Deny},
		{`cat '$HOME/../../.npmrc'`, policy.Deny},
		{`date --file=~/../../.npmrc`, policy.Deny},
		{`cd '~' && cat ../../.npmrc`, policy.Deny},
		{`cd ./~ && cat ../../.npmrc`, policy.Deny},
		{`cat ~/notes.txt`, policy.Allow},
		{`cat '~/notes.txt'`, policy.Allow},
		{`echo '~'`, policy.Allow},
	})
	// The command reads back as it runs: the quoted ~ stays quoted, the
	// one bash expands does not.
	for cmd, want := range map[string]string{`cat '~/notes.txt'`: `cat '~/notes.txt'`, `cat \~/x`: `cat '~/x'`, `cat ~/notes.txt`: `cat ~/notes.txt`} {
		a := shell.Analyze(cmd)
		if len(a.Commands) != 1 {
			t.Fatalf("%s: %d commands", cmd, len(a.Commands))
		}
		if got, _ := shell.CommandTexts(&a.Commands[0]); got != want {
			t.Errorf("%s reads back as %q, want %q", cmd, got, want)
		}
	}
}

// TestRemovingADirectoryNamedTildeIsNotRemovingTheHome: rm -rf '~' removes
// ./~; the safety override that names the home is for the home.
func TestRemovingADirectoryNamedTildeIsNotRemovingTheHome(t *testing.T) {
	p := builtinPolicy(t)
	for cmd, home := range map[string]bool{
		`rm -rf '~'`: false, `rm -rf \~`: false, `rm -r "~/"`: false, `rm -rf '$HOME'`: false,
		`rm -rf ~`: true, `rm -rf "$HOME"`: true, `rm -rf ~/`: true, `rm -r ${HOME}/*`: true,
	} {
		d := p.Evaluate(policy.Call{Tool: "bash", Arguments: mustJSON(t, map[string]string{"command": cmd}), Cwd: "/home/dev/proj"})
		if d.Action == policy.Allow {
			t.Errorf("%s: allowed", cmd)
		}
		// What rm deletes is a write: a deny rule on a file of the home
		// may decide it first (rm -r ${HOME}/*).
		if got := strings.Contains(d.Reason, "deletes the home directory"); got != home && !(home && d.Action == policy.Deny) {
			t.Errorf("%s: %s", cmd, d.Reason)
		}
	}
}

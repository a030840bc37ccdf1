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

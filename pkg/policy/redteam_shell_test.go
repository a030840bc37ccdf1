package policy_test

import (
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// TestRevParseOutputIsItsArgument: git rev-parse REV prints REV itself
// when REV is not a revision (a path that exists), so "$(git rev-parse
// ../.aws)" is judged as ../.aws; --verify and merge-base print object
// names only, and the ordinary idioms stay allowed.
func TestRevParseOutputIsItsArgument(t *testing.T) {
	p, err := policy.Parse([]byte(`
mode: auto-edit
home: /home/dev
rules:
  - { rule: "bash(git rev-parse *)", action: allow }
  - { rule: "bash(git log *)", action: allow }
  - { rule: "bash(git diff *)", action: allow }
  - { rule: "bash(git merge-base *)", action: allow }
  - { rule: "bash(cat *)", action: allow }
  - { rule: "bash(grep *)", action: allow }
  - { rule: "read_file(**/.aws/**)", action: deny }
  - { rule: "read_file(**/.netrc)", action: deny }
`), "revparse.yaml")
	if err != nil {
		t.Fatal(err)
	}
	wantActions(t, p, []bashCase{
		{`cat "$(git rev-parse ../.netrc)"`, policy.Deny},
		{`grep -r . "$(git rev-parse ../.aws)"`, policy.Deny},
		{`git log "$(git rev-parse HEAD~5)"..HEAD`, policy.Allow},
		{`git log --oneline "$(git rev-parse origin/main)"..HEAD`, policy.Allow},
		{`git log "$(git rev-parse --verify HEAD)"`, policy.Allow},
		{`git diff "$(git merge-base main HEAD)"`, policy.Allow},
		// A function named git prints what it likes.
		{`git() { echo ../.aws; }; grep -r . "$(git rev-parse HEAD)"`, policy.Ask},
	})
}

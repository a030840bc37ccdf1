package policy_test

import (
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
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

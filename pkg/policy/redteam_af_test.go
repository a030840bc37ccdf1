package policy_test

import (
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// TestRedTeamAFValuesKnownOnlyAtRunTime (red team AF, class A): a value
// the script does not spell decides how the shell or a program reads the
// words around it. test picks its grammar by its words' values, so an
// unknown word may be -v and the next word a name whose subscript runs
// code (F3); zsh evaluates the counts of exit, return, shift, read -t and
// printf's numbers as math, whose subscripts run code (F5); an expansion
// may be an option that reads a file, du --files0-from=~/.netrc (F4).
// Each was verified in the real shells; the plain forms stay allowed.
func TestRedTeamAFValuesKnownOnlyAtRunTime(t *testing.T) {
	p := progKPolicy(t, "read", "test", "[", "du", "exit", "return", "shift", "printf", "echo", "grep", "cat", "head", "tail")
	wantActions(t, p, []bashCase{
		// F3: test's operator slot holds a value.
		{`read -r a b <<< "-v a[\$(touch\${IFS}PWNED)]"; [ "$a" "$b" ]`, policy.Ask},
		{`for a in -v; do for b in "a[\$(id)]"; do test "$a" "$b"; done; done`, policy.Ask},
		{`a=(-v "a[\$(id)]"); test "${a[0]}" "${a[1]}"`, policy.Ask},
		{`[ "$(head -1 f)" "$(tail -1 f)" ]`, policy.Ask},
		{`x=$(cat f); [ $x ]`, policy.Ask},
		{`read -r a b c <<< "! -v x"; [ "$a" "$b" "$c" ]`, policy.Ask},
		{`[ "$a" = "$b" ]`, policy.Allow},
		{`[ -n "$x" ] && echo y`, policy.Allow},
		{`[ $# -eq 0 ]`, policy.Allow},
		{`[ ! -f "$f" ]`, policy.Allow},
		{`test "$1" != --help`, policy.Allow},
		// F5: zsh's math arguments.
		{`read -r x <<< "path[\$(id)]"; exit "$x"`, policy.Ask},
		{`read -r x < data5.txt; return "$x"`, policy.Ask},
		{`while read -r n; do read -t "$n" y </dev/null; done < d.txt`, policy.Ask},
		{`read -r n < f; shift "$n"`, policy.Ask},
		{`read -r n < f; printf '%d\n' "$n"`, policy.Ask},
		{`printf "$fmt" "$n"`, policy.Ask},
		{`exit $?`, policy.Allow},
		{`rc=3; exit "$rc"`, policy.Allow},
		{`read -r n < f; printf '%s\n' "$n"`, policy.Allow},
		{`printf '%d%%\n' 5`, policy.Allow},
		// F4: an expansion that may be an option reading a file is a read
		// of what it names: any path, when the script sets it unknown.
		{`read -r a <<< "--files0-from=/home/dev/.netrc"; du "$a"`, policy.Deny},
		{`while read -r a; do du -s "$a"; done < dirs.txt`, policy.Deny},
		{`du -sh . "$(cat data.txt)"`, policy.Deny},
		{`for d in */; do du -sh "$d"; done`, policy.Allow},
		{`d=src; du -sh "$d"`, policy.Allow},
		{`du -sh -- "$(cat data.txt)"`, policy.Allow},
		{`f='*.go'; grep -r --include="$f" TODO .`, policy.Allow},
	})
}

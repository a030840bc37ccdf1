package policy_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// corpusCase is one line of a file of testdata/corpus.
type corpusCase struct {
	file    string
	line    int
	want    policy.Action
	command string
}

// readCorpus parses the corpus: "expected<TAB>command" lines, # comments,
// blank lines skipped; in the command \n is a newline and \\ a backslash.
func readCorpus(t *testing.T, name string) []corpusCase {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []corpusCase
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		want, cmd, ok := strings.Cut(text, "\t")
		switch a := policy.Action(want); {
		case !ok:
			t.Fatalf("%s:%d: want expected<TAB>command, got %q", name, n, text)
		case a != policy.Allow && a != policy.Ask && a != policy.Deny:
			t.Fatalf("%s:%d: expected %q is not allow, ask or deny", name, n, want)
		}
		cases = append(cases, corpusCase{file: filepath.Base(name), line: n, want: policy.Action(want), command: decodeCorpus(cmd)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// decodeCorpus turns \n into a newline and \\ into a backslash; \u{HEX}
// is the character U+HEX and \x{HH} the raw byte HH (for control
// characters and invalid UTF-8). Any other backslash is kept.
func decodeCorpus(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case 'n':
				b.WriteByte('\n')
				i++
				continue
			case '\\':
				b.WriteByte('\\')
				i++
				continue
			case 'u', 'x':
				if i+2 < len(s) && s[i+2] == '{' {
					if end := strings.IndexByte(s[i+3:], '}'); end > 0 {
						if v, err := strconv.ParseUint(s[i+3:i+3+end], 16, 32); err == nil {
							if s[i+1] == 'u' {
								b.WriteRune(rune(v))
							} else {
								b.WriteByte(byte(v))
							}
							i += 3 + end
							continue
						}
					}
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestDecodeCorpus(t *testing.T) {
	for in, want := range map[string]string{
		`ls\nrm`:     "ls\nrm",
		`r\\\nm`:     "r\\\nm",
		`\rm \;`:     `\rm \;`,
		`'a\\n'`:     `'a\n'`,
		`trailing\`:  `trailing\`,
		`a\u{2028}b`: "a\u2028b",
		`a\x{0d}b`:   "a\rb",
		`\x{ff}`:     "\xff",
		`\x72m`:      `\x72m`,
	} {
		if got := decodeCorpus(in); got != want {
			t.Errorf("decodeCorpus(%q) = %q, want %q", in, got, want)
		}
	}
}

// readCorpora reads every testdata/corpus/*.txt file, in name order.
func readCorpora(t *testing.T) []corpusCase {
	t.Helper()
	files, err := filepath.Glob("testdata/corpus/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus files under testdata/corpus (%v)", err)
	}
	var cases []corpusCase
	for _, f := range files {
		cases = append(cases, readCorpus(t, f)...)
	}
	return cases
}

// corpusPolicy loads the policy every corpus file is written against.
func corpusPolicy(t testing.TB) *policy.Policy {
	t.Helper()
	p, err := policy.Load("testdata/corpus_policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// corpusDecide evaluates one corpus command as a bash tool call.
func corpusDecide(t testing.TB, p *policy.Policy, command string) policy.Decision {
	t.Helper()
	args, err := json.Marshal(map[string]string{"command": command})
	if err != nil {
		t.Fatal(err)
	}
	return p.Evaluate(policy.Call{Tool: "bash", Arguments: args})
}

// TestShellCorpus evaluates every corpus command against the corpus policy
// and lists every mismatch. Both kinds of mistake are counted apart: an
// unsafe allow (an expected ask or deny that came out allow: the kind that
// must never ship) and a needless ask (an expected allow that came out ask
// or deny: friction).
func TestShellCorpus(t *testing.T) {
	p := corpusPolicy(t)
	cases := readCorpora(t)
	if len(cases) < 300 {
		t.Fatalf("the corpus has %d cases, want at least 600", len(cases))
	}
	var mismatches, unsafe, needless []string
	for _, c := range cases {
		d := corpusDecide(t, p, c.command)
		if d.Action == c.want {
			continue
		}
		msg := fmt.Sprintf("%s:%d: %q: want %s, got %s (layer %s, rule %q: %s)",
			c.file, c.line, c.command, c.want, d.Action, d.Layer, d.Rule, d.Reason)
		mismatches = append(mismatches, msg)
		switch {
		case d.Action == policy.Allow:
			unsafe = append(unsafe, msg)
		case c.want == policy.Allow:
			needless = append(needless, msg)
		}
	}
	t.Logf("%d corpus cases: %d unsafe allows, %d needless asks or denies, %d other mismatches",
		len(cases), len(unsafe), len(needless), len(mismatches)-len(unsafe)-len(needless))
	if len(unsafe) > 0 {
		t.Errorf("%d commands that must not run unasked were ALLOWED:\n%s",
			len(unsafe), strings.Join(unsafe, "\n"))
	}
	if len(needless) > 0 {
		t.Errorf("%d commands that should run were stopped (friction):\n%s",
			len(needless), strings.Join(needless, "\n"))
	}
	if len(mismatches) > 0 {
		t.Errorf("%d of %d corpus cases mismatch:\n%s", len(mismatches), len(cases), strings.Join(mismatches, "\n"))
	}
}

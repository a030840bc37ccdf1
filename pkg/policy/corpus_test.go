package policy_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// corpusCase is one line of testdata/shell_corpus.txt.
type corpusCase struct {
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
		cases = append(cases, corpusCase{line: n, want: policy.Action(want), command: decodeCorpus(cmd)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// decodeCorpus turns \n into a newline and \\ into a backslash; any other
// backslash is kept.
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
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func TestDecodeCorpus(t *testing.T) {
	for in, want := range map[string]string{
		`ls\nrm`:    "ls\nrm",
		`r\\\nm`:    "r\\\nm",
		`\rm \;`:    `\rm \;`,
		`'a\\n'`:    `'a\n'`,
		`trailing\`: `trailing\`,
	} {
		if got := decodeCorpus(in); got != want {
			t.Errorf("decodeCorpus(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestShellCorpus evaluates every corpus command against the corpus policy
// and lists every mismatch; an expected ask or deny that came out allow is
// reported on its own, as the kind of mistake that must never ship.
func TestShellCorpus(t *testing.T) {
	p, err := policy.Load("testdata/corpus_policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := readCorpus(t, "testdata/shell_corpus.txt")
	if len(cases) < 170 {
		t.Fatalf("corpus has %d cases, want at least 170", len(cases))
	}
	var mismatches, unforgivable []string
	for _, c := range cases {
		args, err := json.Marshal(map[string]string{"command": c.command})
		if err != nil {
			t.Fatal(err)
		}
		d := p.Evaluate(policy.Call{Tool: "bash", Arguments: args})
		if d.Action == c.want {
			continue
		}
		msg := fmt.Sprintf("shell_corpus.txt:%d: %q: want %s, got %s (layer %s, rule %q: %s)",
			c.line, c.command, c.want, d.Action, d.Layer, d.Rule, d.Reason)
		mismatches = append(mismatches, msg)
		if d.Action == policy.Allow {
			unforgivable = append(unforgivable, msg)
		}
	}
	if len(unforgivable) > 0 {
		t.Errorf("%d commands that must not run unasked were ALLOWED:\n%s",
			len(unforgivable), strings.Join(unforgivable, "\n"))
	}
	if len(mismatches) > 0 {
		t.Errorf("%d of %d corpus cases mismatch:\n%s", len(mismatches), len(cases), strings.Join(mismatches, "\n"))
	}
}

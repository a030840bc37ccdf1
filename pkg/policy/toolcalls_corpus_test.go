package policy_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// toolCall is one line of testdata/toolcalls.txt after its expected
// action: a call of a tool that is not a shell, the policy it is judged by
// ("corpus": testdata/corpus_policy.yaml, the default; "builtin": the
// built-in policy) and the admin's mode for it ("" = the policy's).
type toolCall struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Cwd       string          `json:"cwd"`
	Mode      policy.Mode     `json:"mode"`
	Policy    string          `json:"policy"`
}

// TestToolCallCorpus judges every call of testdata/toolcalls.txt
// ("expected<TAB>call" lines, # comments) and lists every mismatch: the
// red team's bypasses of the file tools, next to the ordinary calls that
// must stay allowed.
func TestToolCallCorpus(t *testing.T) {
	policies := map[string]*policy.Policy{"corpus": corpusPolicy(t), "builtin": policy.Default()}
	data, err := os.ReadFile("testdata/toolcalls.txt")
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	cases := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		want, line, ok := strings.Cut(text, "\t")
		var c toolCall
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if !ok || dec.Decode(&c) != nil {
			t.Fatalf("toolcalls.txt:%d: want expected<TAB>{tool, arguments, cwd, mode, policy}, got %q", n, text)
		}
		if c.Policy == "" {
			c.Policy = "corpus"
		}
		p := policies[c.Policy]
		if p == nil {
			t.Fatalf("toolcalls.txt:%d: unknown policy %q", n, c.Policy)
		}
		cases++
		d := p.Evaluate(policy.Call{Tool: c.Tool, Arguments: c.Arguments, Cwd: c.Cwd, Mode: c.Mode})
		if string(d.Action) != want {
			bad = append(bad, fmt.Sprintf("toolcalls.txt:%d: %s: want %s, got %s (%s: %s)", n, line, want, d.Action, d.Layer, d.Reason))
		}
	}
	if cases < 40 {
		t.Fatalf("toolcalls.txt has %d cases, want at least 40", cases)
	}
	if len(bad) > 0 {
		t.Errorf("%d of %d tool calls are misjudged:\n%s", len(bad), cases, strings.Join(bad, "\n"))
	}
}

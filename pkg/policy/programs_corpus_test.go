package policy_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// TestProgramsCorpus evaluates testdata/corpus/programs.txt (issue 15's
// cases) against the corpus policy, reporting unsafe allows on their own.
func TestProgramsCorpus(t *testing.T) {
	p, err := policy.Load("testdata/corpus_policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := readCorpus(t, "testdata/corpus/programs.txt")
	if len(cases) < 100 {
		t.Fatalf("programs corpus has %d cases, want at least 100", len(cases))
	}
	var mismatches, unsafe []string
	for _, c := range cases {
		args, _ := json.Marshal(map[string]string{"command": c.command})
		d := p.Evaluate(policy.Call{Tool: "bash", Arguments: args})
		if d.Action == c.want {
			continue
		}
		msg := fmt.Sprintf("programs.txt:%d: %q: want %s, got %s (layer %s: %s)", c.line, c.command, c.want, d.Action, d.Layer, d.Reason)
		mismatches = append(mismatches, msg)
		if d.Action == policy.Allow {
			unsafe = append(unsafe, msg)
		}
	}
	if len(unsafe) > 0 {
		t.Errorf("%d unsafe allows:\n%s", len(unsafe), strings.Join(unsafe, "\n"))
	}
	if len(mismatches) > 0 {
		t.Errorf("%d of %d cases mismatch:\n%s", len(mismatches), len(cases), strings.Join(mismatches, "\n"))
	}
}

package policy

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// docYAMLBlock is one ```yaml block of a Markdown file, dedented.
type docYAMLBlock struct {
	line int // of the opening fence, 1-based
	text string
}

// docYAMLBlocks returns the ```yaml blocks of a Markdown file. A fence
// indented inside a list item has its indentation removed from every line.
func docYAMLBlocks(t *testing.T, file string) []docYAMLBlock {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var blocks []docYAMLBlock
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " ")
		if trimmed != "```yaml" {
			continue
		}
		indent := len(lines[i]) - len(trimmed)
		start := i
		var b strings.Builder
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			l := lines[i]
			if len(l) >= indent && strings.TrimSpace(l[:indent]) == "" {
				l = l[indent:]
			}
			b.WriteString(l)
			b.WriteByte('\n')
		}
		if i == len(lines) {
			t.Fatalf("%s:%d: the ```yaml block is never closed", file, start+1)
		}
		blocks = append(blocks, docYAMLBlock{line: start + 1, text: b.String()})
	}
	return blocks
}

// policyDocSnippet turns a documentation block into a policy file: a bare
// list of rules (the docs' rule examples) becomes the rules: of a policy.
// ok is false when the block is not a policy (an approver bot's config, say):
// its top-level keys are not all policy keys.
func policyDocSnippet(text string) (policy string, ok bool) {
	var top any
	if err := yaml.Unmarshal([]byte(text), &top); err != nil {
		return text, true // let Parse report it with its line
	}
	switch v := top.(type) {
	case []any:
		var b strings.Builder
		b.WriteString("rules:\n")
		for _, l := range strings.Split(text, "\n") {
			b.WriteString("  " + l + "\n")
		}
		return b.String(), true
	case map[string]any:
		for k := range v {
			if !isRootKey(k) {
				return text, false
			}
		}
		return text, true
	}
	return text, false
}

func isRootKey(k string) bool {
	for _, r := range rootKeys {
		if r == k {
			return true
		}
	}
	return false
}

// TestDocPolicySnippetsLoad loads every policy snippet of the docs as a user
// copying it into a policy file would: every ```yaml block of docs/POLICY.md
// (rule lists wrapped in rules:) and the blocks of the other docs whose keys
// are policy keys. A snippet the loader refuses is a doc that lies.
func TestDocPolicySnippetsLoad(t *testing.T) {
	docs := []struct {
		file string
		all  bool // every block must be a policy
	}{
		{"../../docs/POLICY.md", true},
		{"../../docs/AGENTS.md", false},
		{"../../docs/APPROVERS.md", false},
		{"../../docs/PAGING.md", false},
		{"../../docs/OPERATIONS.md", false},
		{"../../README.md", false},
	}
	loaded := 0
	for _, d := range docs {
		for _, b := range docYAMLBlocks(t, d.file) {
			name := filepath.Base(d.file) + ":" + strconv.Itoa(b.line)
			text, ok := policyDocSnippet(b.text)
			if !ok {
				if d.all {
					t.Errorf("%s: the block is not a policy (its top-level keys are not policy keys):\n%s", name, b.text)
				}
				continue
			}
			loaded++
			if _, err := Parse([]byte(text), name); err != nil {
				t.Errorf("%s: the documented policy does not load: %v\n%s", name, err, text)
			}
		}
	}
	// docs/POLICY.md alone has a dozen; fewer means the extraction broke.
	if loaded < 12 {
		t.Fatalf("found %d policy snippets in the docs; the extraction is broken", loaded)
	}
}

// TestBuiltinPolicyDocumented keeps the built-in policy shown in
// docs/POLICY.md equal to default_policy.yaml.
func TestBuiltinPolicyDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/POLICY.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), string(defaultPolicyYAML)) {
		t.Errorf("docs/POLICY.md does not show default_policy.yaml as it is")
	}
}

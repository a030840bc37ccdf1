package quickstart

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink is a Markdown link or image target: [text](target) or ![alt](target).
var mdLink = regexp.MustCompile(`\]\(([^()\s]+)\)`)

// headingSlugs returns the anchors GitHub gives the headings of a Markdown
// file: lower case, punctuation dropped, spaces as hyphens, a repeated
// heading numbered (-1, -2…). Headings inside fenced code are not headings.
func headingSlugs(data string) map[string]bool {
	slugs := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(data, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimSpace(strings.TrimLeft(line, "#"))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			slugs[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			slugs[slug] = true
		}
		seen[slug]++
	}
	return slugs
}

// stripCode removes fenced blocks and inline code spans, where a "](x)" is
// text, not a link.
func stripCode(data string) string {
	var b strings.Builder
	fenced := false
	for _, line := range strings.Split(data, "\n") {
		if strings.HasPrefix(strings.TrimLeft(line, " "), "```") {
			fenced = !fenced
			b.WriteByte('\n')
			continue
		}
		if fenced {
			b.WriteByte('\n')
			continue
		}
		parts := strings.Split(line, "`")
		for i := 0; i < len(parts); i += 2 {
			b.WriteString(parts[i])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TestEveryDocLinkResolves follows every relative link of README.md and
// docs/*.md: the file (or directory) it names exists, and its #anchor is a
// heading of that Markdown file — what a reader clicking through the docs
// on GitHub gets.
func TestEveryDocLinkResolves(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	docs = append(docs, filepath.Join(repoRoot, "README.md"))
	slugCache := map[string]map[string]bool{}
	slugsOf := func(file string) map[string]bool {
		if s, ok := slugCache[file]; ok {
			return s
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		s := headingSlugs(string(data))
		slugCache[file] = s
		return s
	}
	checked := 0
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, doc)
		for i, line := range strings.Split(stripCode(string(data)), "\n") {
			for _, m := range mdLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				path, anchor, _ := strings.Cut(target, "#")
				file := doc
				if path != "" {
					file = filepath.Join(filepath.Dir(doc), path)
					if _, err := os.Stat(file); err != nil {
						t.Errorf("%s:%d: link %q: %s does not exist", rel, i+1, target, path)
						continue
					}
				}
				if anchor == "" {
					continue
				}
				if !strings.HasSuffix(file, ".md") {
					t.Errorf("%s:%d: link %q: an anchor into a file that is not Markdown", rel, i+1, target)
					continue
				}
				if !slugsOf(file)[anchor] {
					t.Errorf("%s:%d: link %q: %s has no heading #%s", rel, i+1, target, filepath.Base(file), anchor)
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("found only %d relative links in the docs: the link extraction is broken", checked)
	}
}

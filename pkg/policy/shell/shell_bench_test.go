package shell

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

// benchPipeline is the 3-command pipeline the analysis budget is set for.
const benchPipeline = "git log --oneline -n 20 | grep -v WIP | head -5"

// benchScript exercises wrappers, substitutions, redirects and sh -c.
const benchScript = `cd /repo && sudo -u ci env GOFLAGS=-mod=mod timeout 300 go test ./... 2>&1 | tee test.log; ` +
	`find . -name '*.orig' -exec rm -f {} \; ; bash -lc "make lint && make vet" > /dev/null; echo "done $(date)"`

func BenchmarkAnalyzeShell(b *testing.B) {
	for _, bc := range []struct{ name, src string }{
		{"pipeline", benchPipeline},
		{"script", benchScript},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Analyze(bc.src)
			}
		})
	}
}

// BenchmarkParseOnly is the floor Analyze is measured against: a bare
// parse with a pooled parser, no analysis.
func BenchmarkParseOnly(b *testing.B) {
	for _, bc := range []struct{ name, src string }{
		{"pipeline", benchPipeline},
		{"script", benchScript},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			p := syntax.NewParser(syntax.Variant(syntax.LangBash))
			for b.Loop() {
				if _, err := p.Parse(strings.NewReader(bc.src), ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAlwaysPatterns(b *testing.B) {
	a := Analyze(benchPipeline)
	b.ReportAllocs()
	for b.Loop() {
		AlwaysPatterns(a)
	}
}

func BenchmarkMatchShellPattern(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		globs.Match("git log *", "git log --oneline -n 20")
	}
}

func BenchmarkPrefixCovered(b *testing.B) {
	a := Analyze(benchPipeline)
	patterns := []string{"git log *", "grep *", "head *"}
	b.ReportAllocs()
	for b.Loop() {
		PrefixCovered(a, patterns)
	}
}

// BenchmarkAnalyzeShellHostile measures the worst shapes for the
// structural checks at the broker's 64 KiB message limit: many functions,
// pipelines and substitutions.
func BenchmarkAnalyzeShellHostile(b *testing.B) {
	for _, bc := range []struct{ name, unit string }{
		{"functions", "f(){ f|f& };"},
		{"pipelines", "curl x|sh;"},
		{"substitutions", "sh $(curl x) "},
		{"nested-functions", "f(){ "},
	} {
		src := strings.Repeat(bc.unit, 64<<10/len(bc.unit))
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Analyze(src)
			}
		})
	}
}

// BenchmarkAnalyzeShellWorstCase measures every hostile shape of
// shHostileShapes (64 KiB each) against an ordinary command of the same
// size, in the same run: the bound is 10 ms per decision.
func BenchmarkAnalyzeShellWorstCase(b *testing.B) {
	shapes := append([]struct {
		name, src    string
		unanalysable bool
	}{{"baseline-ordinary", strings.Repeat("git log --oneline -n 20 | grep -v WIP; ", 64<<10/40), false}},
		shHostileShapes()...)
	for _, s := range shapes {
		b.Run(strings.ReplaceAll(s.name, " ", "-"), func(b *testing.B) {
			b.SetBytes(int64(len(s.src)))
			for b.Loop() {
				Analyze(s.src)
			}
		})
	}
}

package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

// shGlobOfWord describes w as a glob over the strings it can stand for.
// exact is true when w is a plain literal (no expansion, no pattern).
func (a *shAnalyzer) shGlobOfWord(w *syntax.Word) globs.Glob {
	g := make(globs.Glob, 0, 16)
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				user, _, _ := strings.Cut(v[1:], "/")
				if user != "" {
					// ~user, ~+, ~-: a directory the analysis cannot know.
					g = append(g, globs.AnyRun)
					v = v[1+len(user):]
				}
			}
			g = globs.AppendUnquoted(g, v)
		case *syntax.SglQuoted:
			if p.Dollar {
				var b strings.Builder
				shDecodeANSIC(&b, p.Value)
				g = globs.Literal(g, b.String())
			} else {
				g = globs.Literal(g, p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					var b strings.Builder
					shUnescapeDouble(&b, l.Value)
					g = globs.Literal(g, b.String())
				} else if len(g) == 0 || !g[len(g)-1].Star || !g[len(g)-1].Any || g[len(g)-1].NoSlash {
					g = append(g, globs.AnyRun)
				}
			}
		case *syntax.BraceExp:
			// Left by SplitBraces only; treated as unknown.
			g = append(g, globs.AnyRun)
		default:
			if len(g) == 0 || g[len(g)-1] != globs.AnyRun {
				g = append(g, globs.AnyRun)
			}
		}
	}
	if len(g) > gMaxWord {
		return globs.Glob{globs.AnyRun} // could be anything: the strict reading
	}
	return g
}

// gMaxWord bounds the tokens of one word's glob; a longer word is taken
// as unknown.
const gMaxWord = 1024

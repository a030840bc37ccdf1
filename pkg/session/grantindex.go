package session

import (
	"slices"
	"strings"
)

// The grant index (docs/STATE.md "Grants"): a store keeps each session's
// and each agent's grants in buckets, so that a Lookup reads only the
// grants that could allow the call. A grant's bucket is its tool and its
// [GrantProgram]: the literal first word all its patterns begin with, or
// none (the tool's own bucket) for a grant without patterns, or whose
// patterns begin with a glob or differ in their first word. A pattern
// (globs.Match: `*`, `?`, `[`, `\` are special, everything else matches
// itself) whose first word w is literal matches only a command whose words,
// joined by single spaces, are w or begin with "w ": a command whose first
// space-separated word is w. So a grant indexed under program w can allow
// only a shell command with a sub-command of program w ([LookupQuery]), and
// reading only those buckets changes no decision: it only leaves out grants
// that could not apply.

// PatternProgram returns the first word of a shell grant pattern (the text
// before its first space) when it is literal: not empty and without a
// character globs.Match treats specially ("*?[\"). Else "".
func PatternProgram(p string) string {
	w, _, _ := strings.Cut(p, " ")
	if w == "" || strings.ContainsAny(w, `*?[\`) {
		return ""
	}
	return w
}

// GrantProgram returns the program g is indexed under: the literal first
// word ([PatternProgram]) shared by all of g's patterns, or "" (the
// tool's own bucket) when g has no patterns, one of them has no literal
// first word, they differ in it, or g is a legacy grant.
func GrantProgram(g *Grant) string {
	if g.Legacy || len(g.Patterns) == 0 {
		return ""
	}
	w := PatternProgram(g.Patterns[0])
	for _, p := range g.Patterns[1:] {
		if PatternProgram(p) != w {
			return ""
		}
	}
	return w
}

// Reads reports whether a Lookup for q returns g (when live): g belongs
// to q's tool (or q names none) and its program is "" or one q reads.
func (q *LookupQuery) Reads(g *Grant) bool {
	if q.Tool == "" {
		return true
	}
	if g.Tool != q.Tool {
		return false
	}
	p := GrantProgram(g)
	return p == "" || !q.ProgramsKnown || slices.Contains(q.Programs, p)
}

// SortGrants orders grants of one owner as stores return them: by
// creation time, then by id.
func SortGrants(gs []Grant) {
	slices.SortStableFunc(gs, func(a, b Grant) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}

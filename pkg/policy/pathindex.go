package policy

import (
	"slices"
	"strings"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

// pathIndex files a layer's path rules under a literal segment of their
// pattern, so that judging a path visits the rules that can match it and
// not the thousands that name other directories (docs/BENCHMARKS.md,
// "Rules in the policy").
//
// Why it never changes a decision: in a pattern made of literal text, '*',
// '?' and '/', a segment without wildcards (pkg7 in src/pkg7/**, gen3 in
// **/gen3/*.go, .env in **/.env) is matched by itself, between two '/'
// of the path or at its ends: every path the pattern matches has that
// segment. Lower-cased on both sides, it is also a segment of every path
// the folded pattern matches (deny and ask rules meet paths whatever their
// case). A lookup gathers the rules filed under the segments of the path,
// its base name and its form relative to the working directory; every
// other rule stays on the open lists and is tried as before. Patterns with
// alternatives, classes or escapes ({a,b}, [ab], \*), which can hide a '/'
// or a segment, are never filed. The index serves only literal,
// non-recursive paths: a tree (grep -r) may hold paths its own name does
// not show, and inexact subjects (engine_inexact.go) keep the full lists.
// pathindex_test.go compares indexed and unindexed decisions.
type pathIndex struct {
	bySeg   map[string][]int32 // rule positions in ascending order
	indexed []bool             // by rule position
}

// pathKey returns the segment a rule is filed under: the last literal
// segment of its path pattern, lower-cased; "" when it cannot be filed.
func pathKey(r *rule) string {
	if r.path == nil || r.anyArgs || strings.ContainsAny(r.path.text, "{}[]\\") {
		return ""
	}
	segs := strings.Split(globs.Fold(r.path.text), "/")
	for i := len(segs) - 1; i >= 0; i-- {
		if segs[i] != "" && !isGlob(segs[i]) {
			return segs[i]
		}
	}
	return ""
}

// buildPathIndex files the layer's path rules and fills the open lists
// (each list without the rules the index files). A layer without a rule
// to file keeps no index.
func (l *ruleLayer) buildPathIndex() {
	ix := &pathIndex{bySeg: map[string][]int32{}, indexed: make([]bool, len(l.rules))}
	for i := range l.rules {
		if k := pathKey(&l.rules[i]); k != "" {
			ix.bySeg[k] = append(ix.bySeg[k], int32(i))
			ix.indexed[i] = true
		}
	}
	if len(ix.bySeg) == 0 {
		return
	}
	l.paths = ix
	l.writesOpen, l.readsOpen = ix.open(l.writes), ix.open(l.reads)
	l.byToolOpen = make(map[string][]int32, len(l.byTool))
	for tool, list := range l.byTool {
		l.byToolOpen[tool] = ix.open(list)
	}
	for _, si := range l.shell {
		si.anyOpen = ix.open(si.any)
	}
}

// open returns the positions of list the index does not file.
func (ix *pathIndex) open(list []int32) []int32 {
	if ix == nil {
		return list
	}
	out := []int32{}
	for _, i := range list {
		if !ix.indexed[i] {
			out = append(out, i)
		}
	}
	return out
}

// indexablePath reports whether the index may serve the subject: a
// literal path judged as a path (not a tree, not a glob's pattern).
func indexablePath(s *subject) bool {
	switch s.kind {
	case subjPath, subjRedirect, subjRead:
		return !s.recursive && !s.inexact && !s.walk
	}
	return false
}

// hits returns the positions of the filed rules that may match the
// subject's path, in ascending order, without duplicates.
func (ix *pathIndex) hits(s *subject, buf []int32) []int32 {
	out := buf[:0]
	for _, p := range [3]string{s.value, s.rel, s.base} {
		if p == "" {
			continue
		}
		for seg := range strings.SplitSeq(globs.Fold(p), "/") {
			out = append(out, ix.bySeg[seg]...)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// lastPathMatch is lastMatch for a subject the path index serves: each
// candidate list is its open part plus the filed rules of the list that
// the path's segments name.
func (l *ruleLayer) lastPathMatch(e *evaluation, s *subject) *rule {
	all := l.lists(e, s, false)
	c := l.lists(e, s, true)
	var buf [32]int32
	hits := l.paths.hits(s, buf[:])
	if len(hits) > 0 {
		for i := 0; i < c.n; i++ {
			c.lists[i] = withHits(c.lists[i], hits, all.lists[i])
		}
	}
	return l.lastOf(&c, s)
}

// withHits merges into open (ascending) the hits that belong to all
// (ascending), keeping the order.
func withHits(open, hits, all []int32) []int32 {
	var in []int32
	for _, h := range hits {
		if _, ok := slices.BinarySearch(all, h); ok {
			in = append(in, h)
		}
	}
	if len(in) == 0 {
		return open
	}
	out := make([]int32, 0, len(open)+len(in))
	out = append(append(out, open...), in...)
	slices.Sort(out)
	return out
}

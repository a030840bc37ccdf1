package policy

import (
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Matching words whose value is not known (issue 12, class 4).
//
// A word such as `.en?`, `$f`, `"$(cmd)"`, `~root/x` or `a{b,c}*` stands for a
// set of strings, not one: bash chooses the string when it runs. The
// analysis describes such a word as a glob over strings (gWord): literal
// characters, `?`-like single characters, and `*`-like runs, where an
// expansion ($x, $(…), ~user) is a run of any characters, and a pathname
// pattern keeps its own * ? [..].
//
// A rule then matches the word in one of two senses:
//
//   - an allow rule matches only when every string the word can stand for
//     matches it (gCovers: inclusion, decided soundly by letting only a
//     `*` of the rule absorb an unknown run);
//   - a deny or ask rule matches when some string could match it
//     (gIntersects: emptiness of the intersection of the two glob
//     languages, by a search over pairs of positions, bounded; when the
//     bound is hit the answer is "could match", the strict side).

// gTok is one position of a glob: a literal rune, one character of a set,
// or a run (star) of characters of a set.
type gTok struct {
	star bool
	// set: any character (unless noSlash), or the class text (class), or
	// the literal r.
	any     bool
	noSlash bool
	class   string // a bracket expression "[…]", matched with shMatchClass
	r       rune
}

func (t gTok) lit() bool { return !t.any && t.class == "" }

// gWord is a glob: a sequence of tokens.
type gWord []gTok

// gMaxProduct bounds the pairs of positions one match explores.
const gMaxProduct = 1 << 18

// gLiteral returns the glob matching exactly s.
func gLiteral(dst gWord, s string) gWord {
	for _, r := range s {
		dst = append(dst, gTok{r: r})
	}
	return dst
}

// gAnyRun is the token of an unknown expansion.
var gAnyRun = gTok{star: true, any: true}

// String renders g in MatchShellPattern syntax (for messages).
func (g gWord) String() string {
	var b strings.Builder
	for _, t := range g {
		switch {
		case t.star:
			b.WriteByte('*')
		case t.any:
			b.WriteByte('?')
		case t.class != "":
			b.WriteString(t.class)
		default:
			b.WriteRune(t.r)
		}
	}
	return b.String()
}

// gFromShellPattern compiles a rule's shell pattern (MatchShellPattern
// syntax: * and ? cross everything).
func gFromShellPattern(p string) gWord {
	g := make(gWord, 0, len(p))
	for i := 0; i < len(p); {
		c := p[i]
		switch c {
		case '*':
			g = append(g, gAnyRun)
			i++
			continue
		case '?':
			g = append(g, gTok{any: true})
			i++
			continue
		case '[':
			if _, end, valid := shMatchClass(p, i, 'x'); valid {
				g = append(g, gTok{class: p[i:end]})
				i = end
				continue
			}
		case '\\':
			if i+1 < len(p) {
				i++
			}
		}
		r, size := utf8.DecodeRuneInString(p[i:])
		g = append(g, gTok{r: r})
		i += size
	}
	return g
}

// gPathAlternatives compiles a normalized path pattern (gobwas/glob syntax
// with '/' separators and **) into the globs it is the union of: braces
// and "**/" (zero or more segments) become alternatives. A pattern without
// '/' matches a path's base name, so it also stands for "…/pattern". ok is
// false when the pattern has too many alternatives to enumerate.
func gPathAlternatives(p string) (alts []gWord, ok bool) {
	work, texts := []string{p}, []string(nil)
	for len(work) > 0 {
		if len(work)+len(texts) > 64 {
			return nil, false
		}
		t := work[len(work)-1]
		work = work[:len(work)-1]
		if open, close, commas := gBraces(t); open >= 0 {
			body := t[open+1 : close]
			start := 0
			for _, c := range append(commas, len(body)) {
				work = append(work, t[:open]+body[start:c]+t[close+1:])
				start = c + 1
			}
			continue
		}
		if i := strings.Index(t, "**/"); i >= 0 && (i == 0 || t[i-1] == '/') {
			work = append(work, t[:i]+t[i+3:], t[:i]+"\x00"+t[i+3:])
			continue
		}
		texts = append(texts, t)
	}
	for _, t := range texts {
		g := gFromPathText(t)
		alts = append(alts, g)
		if !strings.Contains(p, "/") {
			// base-name pattern: also anything ending in "/pattern"
			alts = append(alts, append(gWord{gAnyRun, {r: '/'}}, g...))
		}
	}
	return alts, true
}

// gBraces finds the first top-level {a,b} group of t: the index of '{',
// of its '}', and of its commas relative to the body.
func gBraces(t string) (open, close int, commas []int) {
	open = -1
	depth := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '\\':
			i++
		case '{':
			if depth == 0 {
				open, commas = i, nil
			}
			depth++
		case ',':
			if depth == 1 {
				commas = append(commas, i-open-1)
			}
		case '}':
			if depth > 0 {
				depth--
				if depth == 0 {
					return open, i, commas
				}
			}
		}
	}
	return -1, -1, nil
}

// gFromPathText compiles one brace-free path glob: ** crosses '/', * and ?
// do not. A NUL stands for "**/" taken as one or more whole segments.
func gFromPathText(p string) gWord {
	g := make(gWord, 0, len(p))
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == 0:
			g = append(g, gAnyRun, gTok{r: '/'})
			i++
			continue
		case c == '*' && i+1 < len(p) && p[i+1] == '*':
			g = append(g, gAnyRun)
			for i < len(p) && p[i] == '*' {
				i++
			}
			continue
		case c == '*':
			g = append(g, gTok{star: true, any: true, noSlash: true})
			i++
			continue
		case c == '?':
			g = append(g, gTok{any: true, noSlash: true})
			i++
			continue
		case c == '[':
			if _, end, valid := shMatchClass(p, i, 'x'); valid {
				g = append(g, gTok{class: p[i:end]})
				i = end
				continue
			}
		case c == '\\' && i+1 < len(p):
			i++
		}
		r, size := utf8.DecodeRuneInString(p[i:])
		g = append(g, gTok{r: r})
		i += size
	}
	return g
}

// gSetsMeet reports whether two single-character sets may share a
// character. Classes are compared exactly against literals; two classes
// are assumed to meet (the strict answer for deny and ask rules).
func gSetsMeet(x, y gTok) bool {
	switch {
	case x.lit() && y.lit():
		return x.r == y.r
	case x.lit():
		return gTokHas(y, x.r)
	case y.lit():
		return gTokHas(x, y.r)
	}
	return true
}

// gTokHas reports whether the set of t holds r.
func gTokHas(t gTok, r rune) bool {
	switch {
	case t.any:
		return !(t.noSlash && r == '/')
	case t.class != "":
		ok, _, _ := shMatchClass(t.class, 0, r)
		return ok
	}
	return t.r == r
}

// gIntersects reports whether some string matches both a and b. It
// explores pairs of positions once each; past gMaxProduct pairs it answers
// true.
func gIntersects(a, b gWord) bool {
	na, nb := len(a)+1, len(b)+1
	if na*nb > gMaxProduct {
		return true
	}
	seen := make([]bool, na*nb)
	stack := make([]int32, 0, 64)
	push := func(i, j int) {
		k := i*nb + j
		if !seen[k] {
			seen[k] = true
			stack = append(stack, int32(k))
		}
	}
	push(0, 0)
	for len(stack) > 0 {
		k := int(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
		i, j := k/nb, k%nb
		if i == len(a) && j == len(b) {
			return true
		}
		if i < len(a) && a[i].star {
			push(i+1, j)
		}
		if j < len(b) && b[j].star {
			push(i, j+1)
		}
		if i < len(a) && j < len(b) && gSetsMeet(a[i], b[j]) {
			ni, nj := i+1, j+1
			if a[i].star {
				ni = i
			}
			if b[j].star {
				nj = j
			}
			if ni != i || nj != j {
				push(ni, nj)
			}
		}
	}
	return false
}

// gIntersectsAnchored reports whether some string matches both the word
// w and the rule pattern p with every run of p's literal characters
// (between its stars and slashes: ".env" in "*.env*", ".ssh" in
// "**/.ssh/**") meeting at least one character w spells itself (a
// literal or a class, not a run or a ?). It is how a read operand that is
// a pattern or an expansion meets a deny or ask rule: "cat .e*" and
// "cat ~/.ss?/id_rsa" could read .env and ~/.ssh/id_rsa, while in
// "wc -l *.go" or "cat $f" the rule's name would have to come wholly out of
// the word's wildcard (for a dot file, bash's * and ? do not even match
// its leading dot). Past gMaxProduct it answers true.
func gIntersectsAnchored(w, p gWord) bool {
	nw, np := len(w)+1, len(p)+1
	if 2*nw*np > gMaxProduct {
		return true
	}
	inRun := func(j int) bool {
		return j < len(p) && !p[j].star && !(p[j].lit() && p[j].r == '/')
	}
	seen := make([]bool, 2*nw*np)
	stack := make([]int32, 0, 64)
	push := func(i, j, t int) {
		k := (i*np+j)*2 + t
		if !seen[k] {
			seen[k] = true
			stack = append(stack, int32(k))
		}
	}
	// step moves past p[j] (consumed against w[i] when wi is true),
	// checking the run p[j] ends.
	step := func(ni, i, j, t int, anchor bool) {
		if !inRun(j) {
			push(ni, j+1, 0)
			return
		}
		if anchor {
			t = 1
		}
		if !inRun(j + 1) {
			if t == 0 {
				return
			}
			t = 0
		}
		push(ni, j+1, t)
	}
	push(0, 0, 0)
	for len(stack) > 0 {
		k := int(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
		t := k % 2
		i, j := (k/2)/np, (k/2)%np
		if i == len(w) && j == len(p) {
			return true
		}
		if i < len(w) && w[i].star {
			push(i+1, j, t)
		}
		if j < len(p) && p[j].star {
			push(i, j+1, 0)
		}
		if i < len(w) && j < len(p) && gSetsMeet(w[i], p[j]) {
			switch {
			case p[j].star && w[i].star:
				// Both runs go on; nothing of a run of p is consumed.
			case p[j].star:
				push(i+1, j, 0)
			case w[i].star:
				step(i, i, j, t, false)
			default:
				step(i+1, i, j, t, !w[i].any)
			}
		}
	}
	return false
}

// gHasUpper reports whether a literal token of g is an upper-case letter.
func gHasUpper(g gWord) bool {
	for _, t := range g {
		if t.lit() && unicode.IsUpper(t.r) {
			return true
		}
	}
	return false
}

// gLower returns g with its literal tokens in lower case (a copy).
func gLower(g gWord) gWord {
	out := slices.Clone(g)
	for i, t := range out {
		if t.lit() {
			out[i].r = unicode.ToLower(t.r)
		}
	}
	return out
}

// gCovers reports whether every string w stands for matches the pattern
// p. It is sound (true only when it holds), and exact when w's unknown
// runs meet p's stars.
func gCovers(p, w gWord) bool {
	np, nw := len(p)+1, len(w)+1
	if np*nw > gMaxProduct {
		return false
	}
	seen := make([]bool, np*nw)
	stack := make([]int32, 0, 64)
	push := func(j, i int) {
		k := j*nw + i
		if !seen[k] {
			seen[k] = true
			stack = append(stack, int32(k))
		}
	}
	push(0, 0)
	for len(stack) > 0 {
		k := int(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
		j, i := k/nw, k%nw
		if j == len(p) && i == len(w) {
			return true
		}
		if j >= len(p) {
			continue
		}
		pt := p[j]
		if pt.star {
			push(j+1, i)
			// A star of the pattern absorbs any token of the word, unless
			// it excludes '/' and the token may hold one.
			if i < len(w) && (!pt.noSlash || w[i].lit() && w[i].r != '/' || !w[i].lit() && w[i].noSlash) {
				push(j, i+1)
			}
			continue
		}
		if i >= len(w) || w[i].star {
			continue
		}
		wt := w[i]
		switch {
		case wt.lit():
			if gTokHas(pt, wt.r) {
				push(j+1, i+1)
			}
		case pt.any && (!pt.noSlash || wt.noSlash):
			push(j+1, i+1)
		}
	}
	return false
}

// shGlobOfWord describes w as a glob over the strings it can stand for.
// exact is true when w is a plain literal (no expansion, no pattern).
func (a *shAnalyzer) shGlobOfWord(w *syntax.Word) gWord {
	g := make(gWord, 0, 16)
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				user, _, _ := strings.Cut(v[1:], "/")
				if user != "" {
					// ~user, ~+, ~-: a directory the analysis cannot know.
					g = append(g, gAnyRun)
					v = v[1+len(user):]
				}
			}
			g = gAppendUnquotedGlob(g, v)
		case *syntax.SglQuoted:
			if p.Dollar {
				var b strings.Builder
				shDecodeANSIC(&b, p.Value)
				g = gLiteral(g, b.String())
			} else {
				g = gLiteral(g, p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					var b strings.Builder
					shUnescapeDouble(&b, l.Value)
					g = gLiteral(g, b.String())
				} else if len(g) == 0 || !g[len(g)-1].star || !g[len(g)-1].any || g[len(g)-1].noSlash {
					g = append(g, gAnyRun)
				}
			}
		case *syntax.BraceExp:
			// Left by SplitBraces only; treated as unknown.
			g = append(g, gAnyRun)
		default:
			if len(g) == 0 || g[len(g)-1] != gAnyRun {
				g = append(g, gAnyRun)
			}
		}
	}
	if len(g) > gMaxWord {
		return gWord{gAnyRun} // could be anything: the strict reading
	}
	return g
}

// gMaxWord bounds the tokens of one word's glob; a longer word is taken
// as unknown.
const gMaxWord = 1024

// gAppendUnquotedGlob appends the glob of an unquoted literal: * ? [..]
// are pattern characters (they never match '/' in a pathname expansion),
// a backslash quotes the next character.
func gAppendUnquotedGlob(g gWord, v string) gWord {
	for i := 0; i < len(v); {
		c := v[i]
		switch c {
		case '\\':
			if i+1 < len(v) {
				i++
			}
		case '*':
			if n := len(g); n == 0 || !g[n-1].star {
				g = append(g, gTok{star: true, any: true, noSlash: true})
			}
			i++
			continue
		case '?':
			g = append(g, gTok{any: true, noSlash: true})
			i++
			continue
		case '[':
			if _, end, valid := shMatchClass(v, i, 'x'); valid && !strings.Contains(v[i:end], "/") {
				g = append(g, gTok{class: v[i:end]})
				i = end
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(v[i:])
		g = append(g, gTok{r: r})
		i += size
	}
	return g
}

// gCleanPath prepares the glob of a path for matching path rules: a
// leading ~ or $HOME is the home directory, and the literal text is
// cleaned as cleanPath cleans values. A ".." after an unknown part could
// climb anywhere: the path is then entirely unknown.
func gCleanPath(g gWord, home string) gWord {
	// Render literal runs, with a private-use rune per unknown token.
	const base = 0xF0000
	var b strings.Builder
	for k, t := range g {
		if t.lit() {
			b.WriteRune(t.r)
		} else {
			b.WriteRune(rune(base + k))
		}
	}
	s := b.String()
	s, _ = expandHome(s, home)
	firstUnknown := strings.IndexFunc(s, func(r rune) bool { return r >= base })
	if firstUnknown >= 0 {
		rest := "/" + s[firstUnknown:] + "/"
		if strings.Contains(rest, "/../") {
			return gWord{gAnyRun}
		}
	}
	s = path.Clean(s)
	out := make(gWord, 0, len(s))
	for _, r := range s {
		if r >= base && int(r-base) < len(g) {
			out = append(out, g[r-base])
		} else {
			out = append(out, gTok{r: r})
		}
	}
	return out
}

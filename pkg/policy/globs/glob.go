package globs

import (
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Matching words whose value is not known (issue 12, class 4).
//
// A word such as `.en?`, `$f`, `"$(cmd)"`, `~root/x` or `a{b,c}*` stands for a
// set of strings, not one: bash chooses the string when it runs. The
// analysis describes such a word as a glob over strings (Glob): literal
// characters, `?`-like single characters, and `*`-like runs, where an
// expansion ($x, $(…), ~user) is a run of any characters, and a pathname
// pattern keeps its own * ? [..].
//
// A rule then matches the word in one of two senses:
//
//   - an allow rule matches only when every string the word can stand for
//     matches it (Covers: inclusion, decided soundly by letting only a
//     `*` of the rule absorb an unknown run);
//   - a deny or ask rule matches when some string could match it
//     (Intersects: emptiness of the intersection of the two glob
//     languages, by a search over pairs of positions, bounded; when the
//     bound is hit the answer is "could match", the strict side).

// Tok is one position of a glob: a literal rune, one character of a set,
// or a run (star) of characters of a set.
type Tok struct {
	Star bool
	// set: any character (unless noSlash), or the class text (class), or
	// the literal r.
	Any     bool
	NoSlash bool
	Class   string // a bracket expression "[…]", matched with MatchClass
	// Fold: the class also matches the other case of its members (Lower).
	Fold bool
	R    rune
}

func (t Tok) Lit() bool { return !t.Any && t.Class == "" }

// Glob is a glob: a sequence of tokens.
type Glob []Tok

// gMaxProduct bounds the pairs of positions one match explores.
const gMaxProduct = 1 << 18

// Literal returns the glob matching exactly s.
func Literal(dst Glob, s string) Glob {
	for _, r := range s {
		dst = append(dst, Tok{R: r})
	}
	return dst
}

// AnyRun is the token of an unknown expansion.
var AnyRun = Tok{Star: true, Any: true}

// String renders g in Match syntax (for messages).
func (g Glob) String() string {
	var b strings.Builder
	for _, t := range g {
		switch {
		case t.Star:
			b.WriteByte('*')
		case t.Any:
			b.WriteByte('?')
		case t.Class != "":
			b.WriteString(t.Class)
		default:
			b.WriteRune(t.R)
		}
	}
	return b.String()
}

// FromShellPattern compiles a rule's shell pattern (Match
// syntax: * and ? cross everything).
func FromShellPattern(p string) Glob {
	return fromShellPattern(p, false)
}

// FromFilterPattern compiles the file-name pattern of a search filter
// (find -name, grep --include, rg -g, fd --glob) as FromShellPattern
// does, but for the readings of the programs that take it: find and grep
// (fnmatch) read [[:alpha:]] as a class, rg and fd (globset) as the
// characters "[:alph" then a literal ']'; globset takes a backslash in
// a bracket as a member, fnmatch as an escape. A bracket expression
// followed by "[:", "[=", "[." or a backslash is therefore read as any
// character followed by anything up to the last ']', which holds every
// reading.
func FromFilterPattern(p string) Glob {
	return fromShellPattern(p, true)
}

func fromShellPattern(p string, filter bool) Glob {
	g := make(Glob, 0, len(p))
	for i := 0; i < len(p); {
		c := p[i]
		switch c {
		case '*':
			g = append(g, AnyRun)
			i++
			continue
		case '?':
			g = append(g, Tok{Any: true})
			i++
			continue
		case '[':
			if out, end, ok := appendBracket(g, p, i, false, filter, nil); ok {
				g, i = out, end
				continue
			}
		case '\\':
			if i+1 < len(p) {
				i++
			}
		}
		r, size := utf8.DecodeRuneInString(p[i:])
		g = append(g, Tok{R: r})
		i += size
	}
	return g
}

// AnyClass is the class of a bracket expression that is not read exactly
// (see BracketExact): it matches any character.
const AnyClass = "[[:?:]]"

// appendBracket appends the glob of the bracket expression at p[i] ==
// '[': a class token when it is read exactly (in a pathname, one holding
// '/' is literal: ok false). One that is not (BracketExact), or whose end
// an expansion may move (words), may end at any later ']' (or inside an
// expansion): it becomes AnyClass then a run up to the last of these, the
// union of every reading; a run that may cross '/' when the text spans
// one or an expansion. With no ']' and no expansion after it, the '[' is
// literal (ok false). words, when not nil, holds the tokens of p's
// expansions (the unescaped wordUnknown and wordQuoted runes, in order);
// slash is true in a pathname; filter is true for FromFilterPattern.
func appendBracket(g Glob, p string, i int, slash, filter bool, words *wordTokens) (Glob, int, bool) {
	b := scanBracket(p, i, 'x', words != nil)
	if rest := p[i+1:]; filter && (strings.Contains(rest, "[:") || strings.Contains(rest, "[=") || strings.Contains(rest, "[.") ||
		strings.ContainsRune(rest, '\\')) {
		b.exact = false
	}
	if b.exact && b.valid {
		if slash && strings.Contains(p[i:b.end], "/") {
			return g, 0, false
		}
		if words != nil {
			words.skip(p[i:b.end])
		}
		return append(g, Tok{Class: p[i:b.end]}), b.end, true
	}
	if b.exact {
		return g, 0, false // no closing ']': a literal '['
	}
	// Even an escaped ']' counts: globset reads a backslash in a bracket
	// as a member.
	far := -1
	for k := i + 1; k < len(p); k++ {
		switch c := p[k]; {
		case c == ']':
			far = k + 1
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(p[k:])
			if words != nil && r == wordUnknown {
				far = k + size
			}
			k += size - 1
		}
	}
	if far < 0 {
		return g, 0, false
	}
	span := p[i:far]
	cross := !slash || strings.Contains(span, "/")
	if words != nil {
		if words.skip(span) {
			cross = true
		}
	}
	g = append(g, Tok{Class: AnyClass})
	if far > i+1 {
		if cross {
			g = append(g, AnyRun)
		} else {
			g = append(g, Tok{Star: true, Any: true, NoSlash: true})
		}
	}
	return g, far, true
}

// PathAlternatives compiles a normalized path pattern (gobwas/glob syntax
// with '/' separators and **) into the globs it is the union of: braces
// and "**/" (zero or more segments) become alternatives. A pattern without
// '/' matches a path's base name, so it also stands for "…/pattern". ok is
// false when the pattern has too many alternatives to enumerate.
func PathAlternatives(p string) (alts []Glob, ok bool) {
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
		g := FromPathText(t)
		alts = append(alts, g)
		if !strings.Contains(p, "/") {
			// base-name pattern: also anything ending in "/pattern"
			alts = append(alts, append(Glob{AnyRun, {R: '/'}}, g...))
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

// FromPathText compiles one brace-free path glob: ** crosses '/', * and ?
// do not. A NUL stands for "**/" taken as one or more whole segments.
func FromPathText(p string) Glob {
	g := make(Glob, 0, len(p))
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == 0:
			g = append(g, AnyRun, Tok{R: '/'})
			i++
			continue
		case c == '*' && i+1 < len(p) && p[i+1] == '*':
			g = append(g, AnyRun)
			for i < len(p) && p[i] == '*' {
				i++
			}
			continue
		case c == '*':
			g = append(g, Tok{Star: true, Any: true, NoSlash: true})
			i++
			continue
		case c == '?':
			g = append(g, Tok{Any: true, NoSlash: true})
			i++
			continue
		case c == '[':
			if out, end, ok := appendBracket(g, p, i, true, false, nil); ok {
				g, i = out, end
				continue
			}
		case c == '\\' && i+1 < len(p):
			i++
		}
		r, size := utf8.DecodeRuneInString(p[i:])
		g = append(g, Tok{R: r})
		i += size
	}
	return g
}

// gSetsMeet reports whether two single-character sets may share a
// character. Classes are compared exactly against literals; two classes
// are assumed to meet (the strict answer for deny and ask rules).
func gSetsMeet(x, y Tok) bool {
	switch {
	case x.Lit() && y.Lit():
		return x.R == y.R
	case x.Lit():
		return gTokHas(y, x.R)
	case y.Lit():
		return gTokHas(x, y.R)
	}
	return true
}

// gTokHas reports whether the set of t holds r.
func gTokHas(t Tok, r rune) bool {
	switch {
	case t.Any:
		return !(t.NoSlash && r == '/')
	case t.Class != "":
		ok, _, _ := MatchClass(t.Class, 0, r)
		if !ok && t.Fold {
			if u := unicode.ToUpper(r); u != r {
				ok, _, _ = MatchClass(t.Class, 0, u)
			}
			if l := unicode.ToLower(r); !ok && l != r {
				ok, _, _ = MatchClass(t.Class, 0, l)
			}
		}
		return ok
	}
	return t.R == r
}

// pairSearch is a depth-first search over pairs of positions (i, j),
// i < n, j < m, that visits each pair once: the walk of Intersects and
// Covers through two patterns.
type pairSearch struct {
	m     int
	seen  []bool
	stack []int32
}

func newPairSearch(n, m int) pairSearch {
	return pairSearch{m: m, seen: make([]bool, n*m), stack: make([]int32, 0, 64)}
}

// push queues (i, j) unless it was queued before.
func (s *pairSearch) push(i, j int) {
	k := i*s.m + j
	if !s.seen[k] {
		s.seen[k] = true
		s.stack = append(s.stack, int32(k))
	}
}

// pop takes the next pair; ok is false when none is left.
func (s *pairSearch) pop() (i, j int, ok bool) {
	if len(s.stack) == 0 {
		return 0, 0, false
	}
	k := int(s.stack[len(s.stack)-1])
	s.stack = s.stack[:len(s.stack)-1]
	return k / s.m, k % s.m, true
}

// Intersects reports whether some string matches both a and b. It
// explores pairs of positions once each; past gMaxProduct pairs it answers
// true.
func Intersects(a, b Glob) bool {
	if (len(a)+1)*(len(b)+1) > gMaxProduct {
		return true
	}
	s := newPairSearch(len(a)+1, len(b)+1)
	s.push(0, 0)
	for i, j, ok := s.pop(); ok; i, j, ok = s.pop() {
		if i == len(a) && j == len(b) {
			return true
		}
		if i < len(a) && a[i].Star {
			s.push(i+1, j)
		}
		if j < len(b) && b[j].Star {
			s.push(i, j+1)
		}
		if i < len(a) && j < len(b) && gSetsMeet(a[i], b[j]) {
			ni, nj := i+1, j+1
			if a[i].Star {
				ni = i
			}
			if b[j].Star {
				nj = j
			}
			if ni != i || nj != j {
				s.push(ni, nj)
			}
		}
	}
	return false
}

// anchorDirs marks in skip the runs of p, an absolute pattern, that name
// the directories it is anchored in: its components before its name (the
// last component that spells a character: .aws of /home/dev/.aws/**,
// credentials of /home/dev/.aws/credentials) and before any "**". They
// are not names a word must spell part of: a wildcard that fills such a
// component names that directory (cat /home/*/.aws/credentials reads
// ~/.aws/credentials), as plainly as its own text would. The name, and
// the names after a "**" (.ssh of **/.ssh/**), stay runs to spell.
//
// With whole set (the word ends in a component its wildcards alone fill,
// wildName), the name is skipped too: a word confined to one directory
// whose every name it reads (cat ~/.docker/*) reads the rule's file when
// that directory is the rule's, as plainly as cat ~/.docker/c* does.
func anchorDirs(p Glob, skip []bool, whole bool) {
	if len(p) == 0 || !p[0].Lit() || p[0].R != '/' {
		return // a relative pattern floats: its first name is a name
	}
	float := len(p) // the first **
	for j, t := range p {
		if t.Star && t.Any && !t.NoSlash {
			float = j
			break
		}
	}
	// name: the start of the last component that spells a character.
	name, start, spells := 0, 0, false
	for j := 0; j <= len(p); j++ {
		if j == len(p) || p[j].Lit() && p[j].R == '/' {
			if spells {
				name = start
			}
			start, spells = j+1, false
			continue
		}
		spells = spells || p[j].Lit()
	}
	if whole {
		name = len(p)
	}
	for j := 0; j < name && j < float; j++ {
		skip[j] = true
	}
}

// wildName reports whether w, an absolute path, ends in a component that
// only a pattern's wildcards spell (*, ?: no literal, no class, no
// expansion's run, which may cross '/'): the word names every file of a
// directory it spells.
func wildName(w Glob) bool {
	if len(w) == 0 || !w[0].Lit() || w[0].R != '/' {
		return false // a relative form floats (it is matched against relative rules)
	}
	slash := -1
	for i, t := range w {
		if t.Lit() && t.R == '/' {
			slash = i
		}
	}
	if slash < 0 || slash == len(w)-1 {
		return false
	}
	for _, t := range w[slash+1:] {
		if !t.Any || !t.NoSlash {
			return false
		}
	}
	return true
}

// nameSeparators marks, in each run of p's literal characters that a star
// ends, the separators ('.', '-', '_') that close it after a name: in
// "*.env.*" the run is ".env." and its name ".env" — the last dot only
// joins the name to what the star brings (".env.local"). Without this, the
// dot of "*.go" would anchor the name ("x.env.go"): the rule's name would
// again come wholly out of the word's wildcard. A run of separators alone
// ("*.*") keeps them: there they are the name.
func nameSeparators(p Glob) []bool {
	var tail []bool
	isSep := func(t Tok) bool { return t.Lit() && (t.R == '.' || t.R == '-' || t.R == '_') }
	for j := 0; j < len(p); j++ {
		if j+1 >= len(p) || !p[j+1].Star || p[j].Star || !isSep(p[j]) {
			continue
		}
		k := j
		for k >= 0 && isSep(p[k]) {
			k--
		}
		if k < 0 || p[k].Star || p[k].Lit() && p[k].R == '/' {
			continue // separators alone: the name itself
		}
		if tail == nil {
			tail = make([]bool, len(p))
		}
		for m := k + 1; m <= j; m++ {
			tail[m] = true
		}
	}
	if tail == nil {
		return make([]bool, len(p))
	}
	return tail
}

// IntersectsAnchored reports whether some string matches both the word
// w and the rule pattern p with every run of p's literal characters
// (between its stars and slashes: ".env" in "*.env*", ".ssh" in
// "**/.ssh/**"; separators that end a run before a star are not part of
// its name: ".env" in "*.env.*", see nameSeparators) meeting at least one character w spells itself (a
// literal or a class, not a run or a ?). It is how a read operand that is
// a pattern or an expansion meets a deny or ask rule: "cat .e*" and
// "cat ~/.ss?/id_rsa" could read .env and ~/.ssh/id_rsa, while in
// "wc -l *.go" or "cat $f" the rule's name would have to come wholly out of
// the word's wildcard (for a dot file, bash's * and ? do not even match
// its leading dot). Past gMaxProduct it answers true.
func IntersectsAnchored(w, p Glob) bool {
	nw, np := len(w)+1, len(p)+1
	if 2*nw*np > gMaxProduct {
		return true
	}
	tail := nameSeparators(p)
	anchorDirs(p, tail, wildName(w))
	inRun := func(j int) bool {
		return j < len(p) && !p[j].Star && !(p[j].Lit() && p[j].R == '/') && !tail[j]
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
		if i < len(w) && w[i].Star {
			push(i+1, j, t)
		}
		if j < len(p) && p[j].Star {
			push(i, j+1, 0)
		}
		if i < len(w) && j < len(p) && gSetsMeet(w[i], p[j]) {
			switch {
			case p[j].Star && w[i].Star:
				// Both runs go on; nothing of a run of p is consumed.
			case p[j].Star:
				push(i+1, j, 0)
			case w[i].Star:
				step(i, i, j, t, false)
			default:
				step(i+1, i, j, t, !w[i].Any)
			}
		}
	}
	return false
}

// HasUpper reports whether a literal token of g is an upper-case letter,
// or a class (one may hold upper-case letters: .[E]NV, [[:upper:]]).
func HasUpper(g Glob) bool {
	for _, t := range g {
		if t.Lit() && FoldRune(t.R) != t.R || t.Class != "" {
			return true
		}
	}
	return false
}

// FoldRune maps r to the rune case-insensitive file systems take it for:
// its lower case, after its upper case, so that the letters whose upper
// case is an ASCII letter fold with it (ſ is S is s, ı is I is i, the
// Kelvin sign is K is k), as APFS's case folding and NTFS's upcase table
// do.
func FoldRune(r rune) rune {
	if r < 0x80 {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}
	return unicode.ToLower(unicode.ToUpper(r))
}

// Fold returns s with every rune folded by FoldRune (s itself when none
// changes).
func Fold(s string) string {
	for i, r := range s {
		if FoldRune(r) != r {
			var b strings.Builder
			b.Grow(len(s))
			b.WriteString(s[:i])
			for _, r := range s[i:] {
				b.WriteRune(FoldRune(r))
			}
			return b.String()
		}
	}
	return s
}

// Lower returns g with its literal tokens in lower case and its classes
// folded (they also match the other case of their members: .[E]nv meets
// .env on a case-insensitive file system) (a copy).
func Lower(g Glob) Glob {
	out := slices.Clone(g)
	for i, t := range out {
		switch {
		case t.Lit():
			out[i].R = FoldRune(t.R)
		case t.Class != "":
			out[i].Fold = true
		}
	}
	return out
}

// Covers reports whether every string w stands for matches the pattern
// p. It is sound (true only when it holds), and exact when w's unknown
// runs meet p's stars.
func Covers(p, w Glob) bool {
	if (len(p)+1)*(len(w)+1) > gMaxProduct {
		return false
	}
	s := newPairSearch(len(p)+1, len(w)+1)
	s.push(0, 0)
	for j, i, ok := s.pop(); ok; j, i, ok = s.pop() {
		if j == len(p) && i == len(w) {
			return true
		}
		if j >= len(p) {
			continue
		}
		pt := p[j]
		if pt.Star {
			s.push(j+1, i)
			// A star of the pattern absorbs any token of the word, unless
			// it excludes '/' and the token may hold one.
			if i < len(w) && (!pt.NoSlash || w[i].Lit() && w[i].R != '/' || !w[i].Lit() && w[i].NoSlash) {
				s.push(j, i+1)
			}
			continue
		}
		if i >= len(w) || w[i].Star {
			continue
		}
		wt := w[i]
		switch {
		case wt.Lit():
			if gTokHas(pt, wt.R) {
				s.push(j+1, i+1)
			}
		case pt.Any && (!pt.NoSlash || wt.NoSlash):
			s.push(j+1, i+1)
		}
	}
	return false
}

// AppendUnquoted appends the glob of an unquoted literal: * ? [..]
// are pattern characters (they never match '/' in a pathname expansion),
// a backslash quotes the next character.
func AppendUnquoted(g Glob, v string) Glob {
	return appendWordText(g, v, nil)
}

// WordPart is one part of a shell word, for AppendWord: unquoted text
// (pattern characters and backslashes), quoted text (literal), or an
// expansion whose value is not known, described by Tok (AnyRun, or a run
// of a class), quoted or not.
type WordPart struct {
	Text    string
	Quoted  bool
	Unknown bool
	Tok     Tok
}

// The runes that stand for an expansion in the text appendWordText
// compiles: wordUnknown for an unquoted one (its value is pattern text:
// it may open or close a bracket expression), wordQuoted for a quoted
// one (literal text).
const wordQuoted = '\uFDD1'

// wordTokens are the tokens of the expansions of a word's text, in order.
type wordTokens struct {
	toks []Tok
	next int
}

// skip passes over the expansions of s (a span of the text a bracket
// expression takes), and reports whether one of them was unquoted.
func (w *wordTokens) skip(s string) (unquoted bool) {
	for k := 0; k < len(s); k++ {
		switch c := s[k]; {
		case c == '\\':
			k++
			if k < len(s) && s[k] >= utf8.RuneSelf {
				_, size := utf8.DecodeRuneInString(s[k:])
				k += size - 1
			}
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(s[k:])
			if r == wordUnknown || r == wordQuoted {
				unquoted = unquoted || r == wordUnknown
				w.next++
			}
			k += size - 1
		}
	}
	return unquoted
}

// AppendWord appends the glob of a word made of parts. A bracket
// expression may span them, as bash reads it once quote removal has
// marked the quoted characters: in .["e"]nv, .[e"x"]nv and .[$x]nv the
// brackets are classes (an expansion in one makes its set, and with an
// unquoted one its end, unknown), while ".["e]nv and .[e"]" stay literal.
// A ']' after an unquoted expansion may close a bracket the expansion
// opened: it matches any character.
func AppendWord(g Glob, parts []WordPart) Glob {
	var b strings.Builder
	w := &wordTokens{}
	for _, p := range parts {
		switch {
		case p.Unknown:
			w.toks = append(w.toks, p.Tok)
			if p.Quoted {
				b.WriteRune(wordQuoted)
			} else {
				b.WriteRune(wordUnknown)
			}
		case p.Quoted:
			for _, r := range p.Text {
				b.WriteByte('\\')
				b.WriteRune(r)
			}
		default:
			for k := 0; k < len(p.Text); k++ {
				c := p.Text[k]
				if c == '\\' && k+1 == len(p.Text) {
					b.WriteString(`\\`) // a trailing backslash is itself
					break
				}
				if c == '\\' {
					b.WriteByte(c)
					k++
					c = p.Text[k]
				} else if r, size := utf8.DecodeRuneInString(p.Text[k:]); r == wordUnknown || r == wordQuoted {
					b.WriteByte('\\')
					b.WriteString(p.Text[k : k+size])
					k += size - 1
					continue
				}
				b.WriteByte(c)
			}
		}
	}
	return appendWordText(g, b.String(), w)
}

// appendWordText compiles a word's text (see AppendWord; words is nil for
// a plain unquoted literal).
func appendWordText(g Glob, v string, words *wordTokens) Glob {
	// open is the index in g where the first unquoted expansion since the
	// last '/' starts, or -1: that expansion may open a bracket expression
	// (a bracket never spans a '/' of a pathname) which a later ']' closes.
	open := -1
	for i := 0; i < len(v); {
		c := v[i]
		switch c {
		case '\\':
			if i+1 < len(v) {
				i++
			}
		case '*':
			if n := len(g); n == 0 || !g[n-1].Star {
				g = append(g, Tok{Star: true, Any: true, NoSlash: true})
			}
			i++
			continue
		case '?':
			g = append(g, Tok{Any: true, NoSlash: true})
			i++
			continue
		case '[':
			n := len(g)
			if out, end, ok := appendBracket(g, v, i, true, false, words); ok {
				if open < 0 && words != nil && strings.ContainsRune(v[i:end], wordUnknown) {
					open = n
				}
				g, i = out, end
				continue
			}
		case ']':
			if open >= 0 {
				// What lies between the expansion and this ']' may be the
				// inside of a bracket expression it opened: one character.
				g = append(g[:open], AnyRun, Tok{Class: AnyClass})
				i++
				continue
			}
		}
		r, size := utf8.DecodeRuneInString(v[i:])
		i += size
		if words != nil && c != '\\' && isWordToken(r) {
			t := words.toks[words.next]
			words.next++
			if r == wordUnknown && open < 0 {
				open = len(g)
			}
			if n := len(g); t != AnyRun || n == 0 || g[n-1] != AnyRun {
				g = append(g, t)
			}
			continue
		}
		if r == '/' {
			open = -1
		}
		g = append(g, Tok{R: r})
	}
	return g
}

// dotWildcard reports a component that is a dot and then one wildcard
// that may match a dot (.?, .*, .[.]): bash before 5.2 (and with
// globskipdots off) matches ".." with it, so it may climb.
func dotWildcard(comp []Tok) bool {
	if len(comp) != 2 || comp[0] != (Tok{R: '.'}) {
		return false
	}
	t := comp[1]
	return t.Any || t.Class != "" && gSetsMeet(t, Tok{R: '.'})
}

// DotDotVariant returns g with its first dotWildcard component read as
// "..", cleaned (CleanPath): the other reading of ~/.*/id_rsa or
// .?/.aws/credentials, which the pattern's own reading does not show; nil
// when g has none.
func DotDotVariant(g Glob, home string) Glob {
	start := 0
	for k := 0; k <= len(g); k++ {
		if k < len(g) && !(g[k].Lit() && g[k].R == '/') {
			continue
		}
		if dotWildcard(g[start:k]) {
			v := append(append(slices.Clone(g[:start]), Tok{R: '.'}, Tok{R: '.'}), g[k:]...)
			return CleanPath(v, home)
		}
		start = k + 1
	}
	return nil
}

// dottedExpansion returns the offset in s (CleanPath's rendering of g, an
// unknown token k as the rune base+k) of the first component that is "."
// or ".." followed at once by a run that may cross a "/" — an expansion's
// value, as in ..$HOME or .$X — or -1.
func dottedExpansion(s string, g Glob, base rune) int {
	off := 0
	for _, c := range strings.SplitAfter(s, "/") {
		rest := strings.TrimPrefix(strings.TrimPrefix(c, "."), ".")
		if len(rest) < len(c) {
			if r, _ := utf8.DecodeRuneInString(rest); r >= base && int(r-base) < len(g) {
				if t := g[r-base]; t.Star && t.Any && !t.NoSlash {
					return off
				}
			}
		}
		off += len(c)
	}
	return -1
}

// platformAliases are other names macOS gives the same directories: /etc,
// /var and /tmp are links into /private, and the data volume's firmlinks
// show every path again under /System/Volumes/Data. A rule on /etc/** or
// ~/.aws/** must meet /private/etc/hosts and
// /System/Volumes/Data/Users/dev/.aws/credentials.
var platformAliases = []struct{ from, to string }{
	{"/System/Volumes/Data/", "/"}, {"/private/etc/", "/etc/"}, {"/private/var/", "/var/"},
	{"/private/tmp/", "/tmp/"},
}

// PlatformAlias returns the cleaned path p under the name rules use for
// it (platformAliases).
func PlatformAlias(p string) string {
	for n := 0; n < 4; n++ { // /System/Volumes/Data/private/etc: to a fixed point
		if len(p) < 9 || p[0] != '/' || (p[1]|0x20) != 'p' && (p[1]|0x20) != 's' {
			return p // the common case: no alias to look at
		}
		q := p
		for _, a := range platformAliases {
			// APFS is case-insensitive: /Private/ETC is /etc.
			if len(p)+1 >= len(a.from) && strings.EqualFold((p + "/")[:len(a.from)], a.from) {
				q = path.Clean(a.to + (p + "/")[len(a.from):])
				break
			}
		}
		if q == p {
			return p
		}
		p = q
	}
	return p
}

// KernelDotDot reports whether the path p has a ".." that climbs from under
// /proc or /dev (a relative p: after a proc or dev component): there are
// the kernel's magic links (a process's cwd and root, its open files,
// /dev/fd), from whose targets the kernel climbs, so the path cannot be
// cleaned by its text.
func KernelDotDot(p string) bool { return kernelDotDotAt(p) >= 0 }

// DotDotEscapes reports whether a ".." component of the absolute pattern
// g — or one holding a run that may cross a "/" (an expansion's value:
// /tmp/..$HOME/x) — may climb from a directory outside every one of trusted (each a
// directory's literal path), after cleaning what comes before it: such a
// directory may be a link (/var/run, /proc/net, a process's cwd), whose
// target the text does not show.
func DotDotEscapes(g Glob, trusted []string, home string) bool {
	start := 0
	for k := 0; k <= len(g); k++ {
		if k < len(g) && !(g[k].Lit() && g[k].R == '/') {
			continue
		}
		comp := g[start:k]
		named := len(comp) == 2 && comp[0] == (Tok{R: '.'}) && comp[1] == (Tok{R: '.'}) || dotWildcard(comp)
		climbs := named
		for _, t := range comp {
			// An expansion's value may hold "/.." (/tmp/..$HOME/x): it
			// may climb from where it stands.
			climbs = climbs || t.Star && t.Any && !t.NoSlash
		}
		if climbs && start > 0 {
			prefix := CleanPath(g[:start-1:start-1], home)
			inside := false
			for _, d := range trusted {
				if d == "" {
					continue
				}
				dir := Literal(nil, d)
				// A named .. climbs by its text only from a trusted
				// directory or one of its ancestors (real directories): one
				// below may be a link (node_modules/@s/pkg/../..). An
				// expansion's possible .. is taken as within them.
				if Covers(dir, prefix) || !named && Covers(append(Literal(nil, d+"/"), AnyRun), prefix) ||
					Covers(append(prefix[:len(prefix):len(prefix)], Tok{R: '/'}, AnyRun), dir) {
					inside = true
					break
				}
			}
			if !inside {
				return true
			}
		}
		start = k + 1
	}
	return false
}

// kernelDotDotAt returns the offset in p of the first ".." component that
// climbs from /proc, /dev or under them (the prefix before it cleaned), or
// -1. In a relative p, whose place is not known, any ".." after a proc or
// dev component counts.
func kernelDotDotAt(p string) int {
	off := 0
	named := false
	for _, c := range strings.SplitAfter(p, "/") {
		name := strings.TrimSuffix(c, "/")
		if name == ".." {
			if strings.HasPrefix(p, "/") {
				pre := path.Clean(p[:off])
				if pre == "/proc" || pre == "/dev" || strings.HasPrefix(pre, "/proc/") || strings.HasPrefix(pre, "/dev/") {
					return off
				}
			} else if named {
				return off
			}
		}
		named = named || name == "proc" || name == "dev"
		off += len(c)
	}
	return -1
}

// CleanPath prepares the glob of a path for matching path rules: a
// leading ~ or $HOME is the home directory, and the literal text is
// cleaned as cleanPath cleans values. A ".." after an unknown part could
// climb anywhere: the path is then any directory followed by what comes
// after the last such "..".
func CleanPath(g Glob, home string) Glob {
	// Render literal runs, with a private-use rune per unknown token.
	const base = 0xF0000
	var b strings.Builder
	for k, t := range g {
		if t.Lit() {
			b.WriteRune(t.R)
		} else {
			b.WriteRune(rune(base + k))
		}
	}
	s := b.String()
	s, _ = ExpandHome(s, home)
	firstUnknown := strings.IndexFunc(s, func(r rune) bool { return r >= base })
	if k := kernelDotDotAt(s); k >= 0 && (firstUnknown < 0 || k < firstUnknown) {
		// /proc/self/cwd/../x, /dev/fd/../cwd: the kernel climbs from a
		// magic link's target, which the text does not show.
		firstUnknown = k
	}
	var head Glob
	if firstUnknown >= 0 {
		rest := "/" + s[firstUnknown:] + "/"
		if k := dottedExpansion(s, g, base); k >= 0 {
			// ..$HOME/x, .$X/x: a component that starts with a dot and
			// holds an expansion's value, which may be "./.." or
			// "./../home": it may climb, as a literal .. would, so what
			// follows it is under any directory.
			rest = "/../"
			if j := strings.IndexByte(s[k:], '/'); j >= 0 {
				rest += s[k+j+1:] + "/"
			}
		}
		if k := strings.LastIndex(rest, "/../"); k >= 0 {
			// The kernel resolves a .. after an unknown part physically
			// (the part may be a link): the path is any directory, then
			// what follows the last .. (./*/../.env is some …/.env).
			tail := rest[k+len("/../"):]
			tail = strings.TrimSuffix(tail, "/")
			if tail == "" {
				return Glob{AnyRun}
			}
			head = Glob{AnyRun, {R: '/'}}
			s = tail
		}
	}
	s = PlatformAlias(path.Clean(s))
	out := make(Glob, 0, len(head)+len(s))
	out = append(out, head...)
	for _, r := range s {
		if r >= base && int(r-base) < len(g) {
			out = append(out, g[r-base])
		} else {
			out = append(out, Tok{R: r})
		}
	}
	return out
}

package policy

import (
	"path"
	"strings"

	"github.com/gobwas/glob"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

// pathCompiler compiles path patterns: '/' separates segments, so `*` and
// `?` stay within one segment, `**` crosses them, and a whole-segment `**/`
// also matches zero segments (gitignore). There is no special case for
// leading dots: `*.env` matches ".env" (dotfiles match, as in seed 004).
var pathCompiler = glob.Compiler{Separators: []rune{'/'}, Globstar: true}

// pathPattern is a compiled argument glob for path-like arguments.
type pathPattern struct {
	g *glob.Pattern
	// base is true when the pattern has no '/': it then matches the base
	// name of the path, gitignore-style, so `*.env` catches "app/.env".
	base bool
	// text is the normalized pattern, for matching paths that are not
	// known literally (engine_inexact.go).
	text string
	// abs is true when the pattern is anchored at the root (after home
	// expansion); a relative pattern also matches paths relative to the
	// call's working directory.
	abs bool
	// dir is the pattern's fixed leading directory ("/home/u/.ssh" for
	// ~/.ssh/**), "" when it starts with a wildcard.
	dir string
	// fold is the pattern in lower case, for deny and ask rules to meet
	// paths whatever their case (a case-insensitive file system, macOS's
	// and Windows' default, opens .env for ".ENV"); the pattern itself
	// when it has no upper-case letter.
	fold *pathPattern
	// trees are the pattern's absolute alternatives when a wildcard comes
	// before its last directory (/mnt/*/Users/*/.kube/**, {/mnt/*,/?}/…),
	// for treeMeets; treesAll when they cannot be listed (a recursive
	// read under its fixed directory may meet it). Computed once.
	trees    []globs.Glob
	treesAll bool
}

// foldedMatch reports whether the pattern, both sides in lower case,
// matches the path (as a tree when tree is true): how a deny or ask rule
// meets ".ENV" or "~/.SSH/id_rsa", which a case-insensitive file system
// opens as .env and ~/.ssh/id_rsa. It allocates only when the path has
// upper-case letters.
func (p *pathPattern) foldedMatch(clean, base string, tree bool) bool {
	lc, lb := globs.Fold(clean), globs.Fold(base)
	if lc == clean && lb == base && p.fold == p {
		return false // the exact match already said no
	}
	if tree {
		return p.fold.matchTree(lc, lb)
	}
	return p.fold.match(lc, lb)
}

func (p *pathPattern) match(clean, base string) bool {
	if p.base {
		return p.g.Match(base)
	}
	return p.g.Match(clean)
}

// matchTree reports whether the pattern matches the tree at clean: the
// directory itself or a path under it (a recursive read or write of
// ~/.ssh meets **/.ssh/**, and a delete of .git meets .git/**), or, for an
// anchored pattern, whether its fixed directory lies under clean (grep -r
// x ~ reads ~/.ssh/** too). A base-name pattern (*.env) is matched against
// the tree's own name only: every directory may hold a .env, and asking
// for every recursive read would teach people to click yes.
func (p *pathPattern) matchTree(clean, base string) bool {
	if p.match(clean, base) {
		return true
	}
	if p.base {
		return false
	}
	if p.g.Match(strings.TrimSuffix(clean, "/") + "/\x00") {
		return true
	}
	return p.dirUnder(clean)
}

// treeMeets reports whether some path under the directory clean may match
// the pattern, whose fixed directory (if it has one: {/mnt/*,/?}/Users
// has none) clean lies under, past a wildcard
// (/mnt/*/Users/*/.* meets a recursive read of /mnt/c/Users/dev, which
// matchTree's fixed-directory test does not see: red team AS F2). The
// tree's paths and the pattern are intersected as globs.
func (p *pathPattern) treeMeets(clean string) bool {
	if len(p.trees) == 0 && !p.treesAll ||
		p.dir != "" && (len(clean) <= len(p.dir) || clean[len(p.dir)] != '/' || !strings.HasPrefix(clean, p.dir)) {
		return false
	}
	if p.treesAll {
		return true
	}
	tree := append(globs.Literal(nil, strings.TrimSuffix(clean, "/")+"/"), globs.AnyRun)
	for _, a := range p.trees {
		if globs.Intersects(a, tree) {
			return true
		}
	}
	return false
}

// treeAlternatives sets p.trees (and treesAll) for treeMeets: an absolute
// pattern (or one of absolute alternatives, {/mnt/*,/?}/…) with a wildcard
// after its fixed directory; a floating pattern (**/.env) meets trees
// otherwise.
func (p *pathPattern) treeAlternatives() {
	switch {
	case p.dir != "" && !p.abs, p.dir == "" && !strings.HasPrefix(p.text, "{/"), !hasGlobMeta(p.text[len(p.dir):]):
		return
	}
	alts, ok := globs.PathAlternatives(p.text)
	if !ok {
		p.treesAll = true
		return
	}
	for _, a := range alts {
		if len(a) > 0 && a[0].Lit() && a[0].R == '/' {
			p.trees = append(p.trees, a)
		}
	}
}

// profileAlias is the path under home that p names when p lies in a
// Windows user profile as WSL (/mnt/c/Users/NAME), WSL with its automount
// root at / or Git Bash (/c/Users/NAME) and Cygwin (/cygdrive/c/Users/NAME)
// show it: the same tools keep the same settings and tokens there (red
// team AS F2, AU F4). "" when p is not in one or home is not known.
func profileAlias(p, home string) string {
	if home == "" || len(p) < 10 || p[0] != '/' {
		return ""
	}
	rest := p[1:]
	switch {
	case strings.HasPrefix(rest, "mnt/"):
		rest = rest[4:]
	case strings.HasPrefix(rest, "cygdrive/"):
		rest = rest[9:]
	}
	// A drive letter, then Users (any case), then the profile's name.
	if len(rest) < 2 || rest[1] != '/' || (rest[0]|0x20) < 'a' || (rest[0]|0x20) > 'z' {
		return ""
	}
	rest = rest[2:]
	if len(rest) < 6 || !strings.EqualFold(rest[:6], "users/") {
		return ""
	}
	rest = rest[6:]
	name, sub, _ := strings.Cut(rest, "/")
	if name == "" || strings.EqualFold(name, "Public") || strings.EqualFold(name, "Default") {
		return ""
	}
	if sub == "" {
		return home
	}
	return home + "/" + sub
}

// dirUnder reports whether the pattern's fixed directory (~/.ssh for
// ~/.ssh/**) is clean or lies under it; a floating pattern (**/.env) has
// none.
func (p *pathPattern) dirUnder(clean string) bool {
	if p.dir == "" {
		return false
	}
	if clean == "/" {
		return true
	}
	return p.dir == clean || strings.HasPrefix(p.dir, strings.TrimSuffix(clean, "/")+"/") ||
		clean == "." && !path.IsAbs(p.dir)
}

// normalizePatternText prepares a path pattern for compilation: home
// expansion, a leading "./" dropped (values are cleaned the same way), and a
// trailing '/' meaning "this directory and everything under it".
func normalizePatternText(p, home string) string {
	p, _ = globs.ExpandHome(expandBracedHome(p, home), home)
	for strings.HasPrefix(p, "./") && len(p) > 2 {
		p = p[2:]
	}
	if len(p) > 1 && strings.HasSuffix(p, "/") {
		p += "**"
	}
	return p
}

// expandBracedHome expands a ~ that begins an alternative of a brace
// group ({~/.npmrc,~/.pypirc}), as bash does after brace expansion: such a
// rule would otherwise name a directory called ~ and never match.
func expandBracedHome(p, home string) string {
	if home == "" || !strings.Contains(p, "{") || !strings.Contains(p, "~") {
		return p
	}
	var b strings.Builder
	depth := 0
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\\' && i+1 < len(p):
			b.WriteByte(c)
			i++
			c = p[i]
		case c == '{':
			depth++
		case c == '}' && depth > 0:
			depth--
		case c == '~' && depth > 0 && (p[i-1] == '{' || p[i-1] == ',') &&
			(i+1 == len(p) || p[i+1] == '/' || p[i+1] == ',' || p[i+1] == '}'):
			b.WriteString(home)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// bracedAbs reports a pattern that begins with alternatives each of which
// is absolute ({/mnt/*,/cygdrive/*,/?}/Users/…): an absolute pattern, as
// one beginning with '/' (its relative forms name no path).
func bracedAbs(p string) bool {
	if !strings.HasPrefix(p, "{") {
		return false
	}
	end := strings.IndexByte(p, '}')
	if end < 0 || strings.ContainsAny(p[1:end], "{[") {
		return false
	}
	for alt := range strings.SplitSeq(p[1:end], ",") {
		if !strings.HasPrefix(alt, "/") {
			return false
		}
	}
	return true
}

// compilePathPattern compiles a normalized path pattern.
func compilePathPattern(p string) (*pathPattern, error) {
	g, err := pathCompiler.Compile(p)
	if err != nil {
		return nil, err
	}
	pp := &pathPattern{g: g, base: !strings.Contains(p, "/"), abs: strings.HasPrefix(p, "/") || bracedAbs(p), text: p}
	if !pp.base {
		lit := p
		if i := strings.IndexAny(p, globMeta); i >= 0 {
			lit = p[:i]
		}
		if j := strings.LastIndexByte(lit, '/'); j > 0 {
			pp.dir = path.Clean(lit[:j])
		}
	}
	pp.treeAlternatives()
	pp.fold = pp
	if lp := globs.Fold(p); lp != p {
		f, err := compilePathPattern(lp)
		if err != nil {
			return nil, err
		}
		pp.fold = f
	}
	return pp, nil
}

// cleanPath turns a path argument into the form rules match: home expanded,
// lexically cleaned (so "a/../../etc" cannot sneak past "/etc/**"), and
// reports whether a relative path climbs out of the working directory.
func cleanPath(v, home string) (clean, base string, escapes bool) {
	v, _ = globs.ExpandHome(v, home)
	clean = globs.PlatformAlias(path.Clean(v))
	if !path.IsAbs(clean) {
		escapes = clean == ".." || strings.HasPrefix(clean, "../")
	}
	return clean, path.Base(clean), escapes
}

// isDeviceSink reports redirect targets that are not files: writing to them
// changes nothing on disk.
func isDeviceSink(target string) bool {
	switch target {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return true
	}
	if rest, ok := strings.CutPrefix(target, "/dev/fd/"); ok && rest != "" {
		for i := 0; i < len(rest); i++ {
			if rest[i] < '0' || rest[i] > '9' {
				return false
			}
		}
		return true
	}
	return false
}

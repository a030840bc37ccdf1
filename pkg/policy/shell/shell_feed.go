package shell

import (
	"path"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

// Feeds: what the placeholder of a command run by find -exec, fd -x,
// xargs or parallel stands for (red team B, class 1). A read or write
// operand of the command that is exactly the placeholder names the paths
// the feeder hands it, not a file called {}: find's starting points (and
// everything under them, or what its name filters match there), fd's
// likewise, and any path at all for input the analysis cannot see
// (xargs, parallel reading their input). Those operands take the paths'
// globs, so the read and write rules meet them as they meet a pattern or
// an expansion.

// shFeed is what a feeder hands the command it runs.
type shFeed struct {
	// mark is the placeholder ("{}", xargs -I's text).
	mark string
	// paths are what an operand that is exactly mark stands for, each a
	// word with a glob; an operand with mark inside another text (x{},
	// {}.bak) is any path.
	paths []shWord
	// feeder names it in reasons ("find", "xargs").
	feeder string
}

// shFeedAnyPath is a path the analysis cannot see: computed (it can spell
// any name, so it meets every rule), absolute or relative.
func shFeedAnyPath(feeder string) shWord {
	return shWord{text: "{" + feeder + " input}", g: globs.Glob{globs.AnyRun}, computed: true}
}

// shFeedAny is the feed of input the analysis cannot see.
func shFeedAny(mark, feeder string) *shFeed {
	return &shFeed{mark: mark, paths: []shWord{shFeedAnyPath(feeder)}, feeder: feeder}
}

// unseen reports whether the feed is input the analysis cannot see
// (shFeedAny), which may spell an option.
func (f *shFeed) unseen() bool {
	return f != nil && slices.ContainsFunc(f.paths, func(w shWord) bool { return w.computed })
}

// markInput marks the words of ws that start with the feed's
// placeholder as input (shWord.input) when the feed is unseen, copying
// ws first; ws unchanged otherwise.
func (f *shFeed) markInput(ws []shWord) []shWord {
	if !f.unseen() || f.mark == "" {
		return ws
	}
	out := slices.Clone(ws)
	for i := range out {
		// {} alone, or after a dash (-{}, --{}: an option whose letters
		// and value are the input).
		if before, _, ok := strings.Cut(out[i].text, f.mark); out[i].lit && ok && (before == "" || before[0] == '-') {
			out[i].input = true
		}
	}
	return out
}

// feedWords replaces in ws every operand that holds the frame's
// placeholder by the paths it stands for.
func (fr *shFrame) feedWords(ws []shWord) []shWord {
	f := fr.feed
	if f == nil || f.mark == "" {
		return ws
	}
	var out []shWord
	for i, w := range ws {
		if !strings.Contains(w.text, f.mark) {
			if out != nil {
				out = append(out, w)
			}
			continue
		}
		if out == nil {
			out = append(make([]shWord, 0, len(ws)+len(f.paths)), ws[:i]...)
		}
		switch rest, ok := strings.CutPrefix(w.text, f.mark); {
		case w.text == f.mark:
			out = append(out, f.paths...)
		case ok && rest == feedStem:
			// gunzip {}: each path's stems.
			for _, p := range f.paths {
				out = append(out, feedStems(p)...)
			}
		case ok && w.lit && !strings.Contains(rest, f.mark) && !strings.Contains(rest, "/"):
			// {}.gz, {}.bak: each path with the suffix (gzip {} writes
			// {}.gz; cp {} {}.bak).
			for _, p := range f.paths {
				out = append(out, wordWithSuffix(p, rest))
			}
		default:
			out = append(out, shFeedAnyPath(f.feeder))
		}
	}
	if out == nil {
		return ws
	}
	return out
}

// feedStem, after a feeder's mark, stands for the path it yields without
// its extension (compressNames: gunzip {} writes the stem).
const feedStem = "\x00stem"

// feedStems are the names a decompressor may write for a fed path (gunzip
// {}): the path itself (gzip -d NAME writes NAME from NAME.gz), and each
// prefix of its name up to a '.', '-' or '_' it spells (.profile.gz is
// .profile; gzip's suffixes are .gz, -gz, _z…); where a wildcard fills
// the name, any name starting with the literal text before it
// (Makefile.* is Makefile, Makefile.x…).
func feedStems(p shWord) []shWord {
	out := []shWord{p}
	if p.g == nil {
		dir, name := path.Split(p.text)
		for i := 1; i < len(name); i++ {
			if strings.IndexByte(".-_", name[i]) >= 0 {
				out = append(out, shWord{text: dir + name[:i], lit: true})
			}
		}
		return out
	}
	g := p.g
	b := 0
	for i, t := range g {
		if t.Lit() && t.R == '/' {
			b = i + 1
		}
	}
	add := func(stem globs.Glob) {
		out = append(out, shWord{text: stem.String(), lit: p.lit, glob: p.glob, g: stem, computed: p.computed, tree: p.tree})
	}
	for j := b; j < len(g); j++ {
		switch t := g[j]; {
		case !t.Lit():
			// A wildcard (one of **/ too): the name may end within it.
			add(append(slices.Clip(g[:j]), globs.Tok{Star: true, Any: true, NoSlash: true}))
		case j > b && strings.ContainsRune(".-_", t.R):
			add(slices.Clip(g[:j]))
		}
	}
	return out
}

// writeFed records a write of a path a feeder yields (sed -i {} under
// find -exec): a write target judged as every path its glob names, marked
// Fed so that the engine checks where those may lie.
func (a *shAnalyzer) writeFed(w shWord, fr shFrame, recursive bool) {
	if a.full() {
		return
	}
	c := Command{Redirect: true, Target: w.pathText(), Elevated: fr.elevated, Fed: true, FedAny: w.computed || w.tree, Recursive: recursive}
	if len(fr.wrappers) > 0 {
		c.Wrappers = append([]string(nil), fr.wrappers...)
	}
	c.Globs = []globs.Glob{w.g}
	// A relative path (find . -name '*.go') cannot name /etc/passwd; the
	// engine places it in the working directory.
	rel := w.g[0].Lit() && !w.g[0].Star && w.g[0].R != '/' && w.g[0].R != '~'
	if r := shProtectedWriteGlob(w.g); r != "" && !rel {
		a.addSafety(r)
	}
	a.res.Commands = append(a.res.Commands, c)
	a.info = append(a.info, shCmdInfo{span: a.cur})
}

// findFeed is what find hands the commands of its -exec (and -execdir,
// -ok, -okdir) actions: each starting point, and under it what the name
// filters match when the expression is a plain conjunction (no -o, !, ,
// or parentheses, which may pass files the filters reject), else every
// path under it.
func (a *shAnalyzer) findFeed(spec *progSpec, w []shWord) *shFeed {
	u := findUse(spec, w)
	plain := true
	for i := 1; i < len(w); i++ {
		switch t := w[i].text; {
		case findExec(t):
			i = findExecEnd(w, i+1)
		case t == "-o" || t == "-or" || t == "!" || t == "-not" || t == "," || t == "(" || t == ")":
			plain = false
		}
	}
	return a.walkFeed(u.roots, u.named, plain, "find")
}

// fdFeed is what fd hands the commands of its -x and -X options: the
// files its pattern and -e match under its roots.
func (a *shAnalyzer) fdFeed(spec *progSpec, w []shWord) *shFeed {
	u := fdUse(spec, w)
	if _, cmds := fdSplit(spec, w); len(cmds) == 0 {
		u.fdFilters() // fd -0 | xargs -0: what it lists is handed on
	}
	return a.walkFeed(u.reads, u.filters, u.ask == "", spec.name)
}

// walkFeed builds the feed of a program that walks the trees under roots:
// the roots themselves and, under them, what filters match (narrow) or
// every path.
func (a *shAnalyzer) walkFeed(roots, filters []shWord, narrow bool, feeder string) *shFeed {
	if len(roots) == 0 {
		roots = []shWord{{text: ".", lit: true}}
	}
	f := &shFeed{mark: "{}", feeder: feeder}
	for _, r := range roots {
		f.paths = append(f.paths, feedRoot(r))
	}
	if narrow && len(filters) > 0 {
		u := progUse{recursive: true, reads: slices.Clone(f.paths), filters: a.filterValues(filters)}
		u.filterReads()
		if u.ask == "" {
			f.paths = u.reads
			return f
		}
	}
	for _, r := range roots {
		g := feedRoot(r).g
		g = append(append(slices.Clip(g), globs.Tok{R: '/'}), globs.AnyRun)
		// Any path under the root: read, like a recursive read of the
		// root (grep -r KEY .), by the names it spells; written, any name.
		f.paths = append(f.paths, shWord{text: strings.TrimSuffix(r.text, "/") + "/**", g: g, computed: r.computed, tree: true})
	}
	return f
}

// feedRoot is a starting point as a path word with a glob: a relative
// pattern is placed under "." so that a glob starting with an unknown
// part always means a path that may lie anywhere.
func feedRoot(r shWord) shWord {
	g := r.g
	switch {
	case g == nil:
		g = globs.Literal(nil, strings.TrimSuffix(r.text, "/"))
		if r.text == "/" {
			g = globs.Literal(nil, "/")
		}
	case len(g) == 0:
		g = globs.Glob{globs.AnyRun}
	case r.lit && !(g[0].Lit() && (g[0].R == '/' || g[0].R == '~' || g[0].R == '.')):
		g = append(globs.Literal(nil, "./"), g...)
	}
	r.g = g
	return r
}

// filterValues resolves the file-name filters of a walk: a filter that is
// a variable the script gave only literal values (f=.env; find -name
// "$f") stands for those values, as an operand does (recordReads); any
// other filter that is not a literal is a computed value, any name.
func (a *shAnalyzer) filterValues(filters []shWord) []shWord {
	var out []shWord
	for _, f := range filters {
		if f.lit {
			out = append(out, f)
			continue
		}
		name := varOfWord(f.text)
		vals := a.varVals[name]
		if name != "" && len(vals) > 0 && !a.unknownVals[name] && !a.inShared && !a.sharedVars &&
			!shShellSets(name) && !shPositional(name) {
			out = append(out, vals...)
			continue
		}
		f.computed = true
		out = append(out, f)
	}
	return out
}

// xargsFeed is what xargs hands its command in place of replace (-I) or
// of the arguments it appends: what find … -print0 or fd -0 on the left
// of the pipe lists when xargs splits at NULs (-0), any path otherwise
// (its input is not seen, or split at blanks a file name may hold).
func (a *shAnalyzer) xargsFeed(replace string, null bool) *shFeed {
	mark := replace
	if mark == "" {
		mark = shXargsArgs
	}
	if null {
		if f := a.pipedFeed(); f != nil {
			f.mark, f.feeder = mark, "xargs"
			return f
		}
	}
	return shFeedAny(mark, "xargs")
}

// pipedFeed is the feed of the command piped into the one being resolved,
// when it is find listing with -print0 alone or fd -0, and runs nothing;
// nil otherwise.
func (a *shAnalyzer) pipedFeed() *shFeed {
	n := len(a.stack)
	if n < 3 {
		return nil
	}
	st, ok1 := a.stack[n-2].(*syntax.Stmt)
	bc, ok2 := a.stack[n-3].(*syntax.BinaryCmd)
	if !ok1 || !ok2 || bc.Op != syntax.Pipe || bc.Y != st || len(st.Redirs) > 0 {
		return nil
	}
	left := bc.X
	for {
		b, ok := left.Cmd.(*syntax.BinaryCmd)
		if !ok || b.Op != syntax.Pipe {
			break
		}
		left = b.Y
	}
	call, ok := left.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Assigns) > 0 || len(left.Redirs) > 0 || left.Negated {
		return nil
	}
	// Not a.words: its scratch holds the words being resolved.
	w := make([]shWord, 0, len(call.Args))
	for _, x := range call.Args {
		if shHasBraces(x) {
			return nil
		}
		w = append(w, a.word(x))
	}
	if len(w) == 0 || !w[0].lit {
		return nil
	}
	spec := a.progs.lookup(path.Base(w[0].text))
	switch {
	case spec == nil:
		return nil
	case spec.hook == "find" && findListsNul(w):
		return a.findFeed(spec, w)
	case spec.hook == "fd" && fdListsNul(spec, w):
		return a.fdFeed(spec, w)
	case spec.hook == "git":
		return gitLsFilesNulFeed(w)
	}
	return nil
}

// gitLsFilesListOptions are the git ls-files options that choose which
// files it lists, not how it prints them.
var gitLsFilesListOptions = map[string]bool{"-z": true, "-c": true, "--cached": true, "-m": true, "--modified": true,
	"-o": true, "--others": true, "--exclude-standard": true, "-d": true, "--deleted": true}

// gitLsFilesNulFeed is the feed of git ls-files -z
// with pathspecs: NUL-separated names of tracked (or, with -o, untracked)
// files under the working directory that match the pathspecs. A pathspec
// without '/' and with a wildcard is a name filter (git's * also crosses
// '/', so "*.go" names ./**/*.go); a literal one without wildcards is a
// directory or file root; anything else (magic, '/', options the entry
// does not list) gives no feed (any path).
func gitLsFilesNulFeed(w []shWord) *shFeed {
	if len(w) < 3 || w[1].text != "ls-files" {
		return nil
	}
	nul, dashes := false, false
	var specs []shWord
	for _, t := range w[2:] {
		switch {
		case !t.lit:
			return nil
		case !dashes && t.text == "--":
			dashes = true
		case !dashes && t.text == "-z":
			nul = true
		case !dashes && strings.HasPrefix(t.text, "-"):
			if !gitLsFilesListOptions[t.text] {
				return nil
			}
		default:
			specs = append(specs, t)
		}
	}
	if !nul || len(specs) == 0 {
		return nil
	}
	f := &shFeed{mark: "{}", feeder: "git ls-files"}
	for _, p := range specs {
		x := p.text
		switch {
		case x == "" || x[0] == ':' || strings.Contains(x, "/") || strings.ContainsAny(x, "\\{"):
			return nil
		case strings.ContainsAny(x, "*?["):
			g := globs.FromShellPattern(x)
			if g == nil {
				return nil
			}
			g = append(append(globs.Literal(nil, "./"), globs.AnyRun, globs.Tok{R: '/'}), g...)
			if strings.Trim(x, "*?") == "" {
				// git's wildcards match a leading dot, a shell's do not:
				// git ls-files -z '*' lists .env, which a name made of
				// wildcards alone meets only as any path.
				return nil
			}
			f.paths = append(f.paths, shWord{text: "./**/" + x, g: g}, shWord{text: "./" + x, g: append(globs.Literal(nil, "./"), globs.FromShellPattern(x)...)})
		default:
			r := feedRoot(shWord{text: x, lit: true})
			f.paths = append(f.paths, r)
			g := append(append(slices.Clip(r.g), globs.Tok{R: '/'}), globs.AnyRun)
			f.paths = append(f.paths, shWord{text: x + "/**", g: g, tree: true})
		}
	}
	return f
}

// findListsNul reports a find whose only output is -print0: no other
// action prints, writes or runs a command.
func findListsNul(w []shWord) bool {
	nul := false
	for _, t := range w[1:] {
		switch {
		case !t.lit:
			return false
		case t.text == "-print0":
			nul = true
		case findExec(t.text) || t.text == "-delete" || strings.HasPrefix(t.text, "-print") ||
			strings.HasPrefix(t.text, "-fprint") || t.text == "-ls" || t.text == "-fls":
			return false
		}
	}
	return nul
}

// fdListsNul reports an fd that lists with -0 (--print0) and runs nothing.
func fdListsNul(spec *progSpec, w []shWord) bool {
	if _, cmds := fdSplit(spec, w); len(cmds) > 0 {
		return false
	}
	for _, t := range w[1:] {
		if t.lit && (t.text == "-0" || t.text == "--print0") {
			return true
		}
	}
	return false
}

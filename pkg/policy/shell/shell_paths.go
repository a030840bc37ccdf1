package shell

import (
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
	"mvdan.cc/sh/v3/syntax"
)

// What redirections read and write, and where relative paths point after
// a cd (issue 12, class 4).

// shCd is one directory change of the script: dir is its literal operand
// ("~" for a bare cd), or known is false.
type shCd struct {
	dir   string
	known bool
}

// shMaxCdDirs bounds the directories a relative path is judged under.
const shMaxCdDirs = 16

// noteCd records cd, pushd or popd with their operands.
func (a *shAnalyzer) noteCd(args []shWord) {
	var ops []shWord
	for i, w := range args {
		if w.lit && w.text == "--" {
			ops = append(ops, args[i+1:]...)
			break
		}
		if w.lit && len(w.text) > 1 && w.text[0] == '-' {
			continue // -L, -P, -e, -@
		}
		ops = append(ops, w)
	}
	switch {
	case len(ops) == 0:
		a.cds = append(a.cds, shCd{dir: "~", known: true})
	case len(ops) == 1 && ops[0].lit && ops[0].g == nil && ops[0].text != "-" &&
		!strings.HasPrefix(ops[0].text, "+") && !strings.HasPrefix(ops[0].text, "-") &&
		(!a.repeats() || path.IsAbs(ops[0].text) || strings.HasPrefix(ops[0].pathText(), "~")):
		a.cds = append(a.cds, shCd{dir: ops[0].pathText(), known: true})
	default:
		a.cds = append(a.cds, shCd{})
	}
}

// repeats reports whether the command on top of the stack may run more
// than once: in the body of a loop or of a function. A relative cd there
// moves again each time (for i in 1 2; do cd ..; done is cd ../..), so the
// directory it leads to is unknown; an absolute one leads to the same
// place every time, which the cds' subsets already hold. A subshell
// inside the body starts each run where the body is (for d in a b; do
// (cd $d && make); done), so a cd in it moves once — unless the body
// itself changes directory outside it, when the next run's subshell
// starts where that cd left the body (for i in 1 2; do (cd .kube; cat
// config); cd; done reads ~/.kube/config on the second run). A function
// runs where each call is, after any cd of the script: its relative cds
// are unknown, in a subshell too.
func (a *shAnalyzer) repeats() bool {
	sub := false
	for i := len(a.stack) - 1; i >= 0; i-- {
		switch n := a.stack[i].(type) {
		case *syntax.Subshell, *syntax.CmdSubst, *syntax.ProcSubst:
			sub = true
		case *syntax.ForClause, *syntax.WhileClause:
			if !sub {
				return true
			}
			m, ok := a.moves[n]
			if !ok {
				if a.moves == nil {
					a.moves = map[syntax.Node]bool{}
				}
				m = movesDir(n)
				a.moves[n] = m
			}
			return m
		case *syntax.FuncDecl:
			// Its calls may come after any cd of the script, in any
			// order (f() ( cd .kube; cat config; ); f; cd; f).
			return true
		}
	}
	return false
}

// movesDir reports whether the body of the loop or function n changes
// the directory it runs in: a cd, pushd or popd not inside a subshell of
// it (nor a command whose name is not a literal, which may be one).
func movesDir(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(x syntax.Node) bool {
		switch x := x.(type) {
		case *syntax.Subshell, *syntax.CmdSubst, *syntax.ProcSubst:
			return x == n
		case *syntax.CallExpr:
			for i, w := range x.Args[:min(len(x.Args), 3)] {
				switch lit := w.Lit(); {
				case lit == "cd" || lit == "pushd" || lit == "popd" || lit == "chdir":
					found = true
				case i == 0 && lit == "" && !shPlainWord(w):
					found = true // "$c" may be cd
				}
			}
		}
		return !found
	})
	return found
}

// joinDir is the path r names in the directory d: path.Join's, but for a
// d that starts with ~, which the policy's home replaces only later —
// path.Join would let a .. cancel the ~ itself (~/../dev/.kube and config
// made dev/.kube/config, a path under the working directory) — the two
// joined as they are, for the engine to clean once ~ is expanded.
func joinDir(d, r string) string {
	if strings.HasPrefix(d, "~") {
		if r == "" || r == "." {
			return d
		}
		return strings.TrimSuffix(d, "/") + "/" + r
	}
	j := path.Join(d, r)
	if strings.HasPrefix(j, "~") || strings.HasPrefix(j, "$HOME") || strings.HasPrefix(j, "${HOME}") {
		// cd ./~: a directory called ~ here, which cleaning would make
		// read as the home (red team AN F8).
		return "./" + j
	}
	return j
}

// joinPath is the path r, a file's path a program opens, names after a cd
// to d: joinDir's, but a .. of r is left for the engine, which climbs
// from the directory it follows only where that is no link — bash's cd
// walks its operand as text (cd -L), the kernel the path a program opens
// from where the directory's link points (cd node_modules/@s/pkg && cat
// ../../../.npmrc, with pkg a workspace's link, reads ~/.npmrc). So is a
// .. of d when d is the directory a program's own option names (git -C,
// tar -C: red team AO F7): the program calls chdir, which climbs from
// where a link points too.
func joinPath(d, r string) string {
	if d != "." && (hasDotDot(r) || hasDotDot(d)) {
		return strings.TrimSuffix(d, "/") + "/" + r
	}
	return joinDir(d, r)
}

// hasDotDot reports a path with a .. component.
func hasDotDot(p string) bool {
	return slices.Contains(strings.Split(p, "/"), "..")
}

// finishCds gives the relative redirection targets of a script that
// changes directory the paths they may name: under every directory the
// cds may have led to, or anywhere when a cd's operand is unknown
// (CDPATH, cd -, cd "$d", popd).
func (a *shAnalyzer) finishCds() {
	if len(a.cds) == 0 {
		return
	}
	dirs := []string{"."}
	unknown := false
	for _, cd := range a.cds {
		if !cd.known {
			unknown = true
			break
		}
		n := len(dirs)
		for i := 0; i < n; i++ {
			d := cd.dir
			if !path.IsAbs(d) && !strings.HasPrefix(d, "~") {
				d = joinDir(dirs[i], d)
			}
			dirs = append(dirs, d)
		}
		if len(dirs) > shMaxCdDirs {
			unknown = true
			break
		}
	}
	for i := range a.res.Commands {
		c := &a.res.Commands[i]
		if !c.Redirect {
			continue
		}
		targets := c.Globs
		if targets == nil {
			if c.Target == "" || path.IsAbs(c.Target) || strings.HasPrefix(c.Target, "~") || shHarmlessSink(c.Target) {
				continue
			}
			targets = []globs.Glob{globs.Literal(nil, c.Target)}
		}
		var out []globs.Glob
		for _, t := range targets {
			if len(t) > 0 && (t[0].Lit() && (t[0].R == '/' || t[0].R == '~')) {
				out = append(out, t)
				continue
			}
			if unknown {
				out = append(out, t, append(globs.Glob{globs.AnyRun, {R: '/'}}, t...))
				continue
			}
			for _, d := range dirs {
				out = append(out, append(globs.Literal(nil, d+"/"), t...))
			}
		}
		c.Globs = out
	}
	a.placeReadsAfterCd(dirs, unknown)
}

// placeReadsAfterCd gives the relative files the commands of a script that
// changes directory read (cd .ssh && cat id_rsa) the paths they may name:
// each is judged as written and under every directory the cds may have led
// to, or under any directory when a cd's operand is unknown (cd .s*).
func (a *shAnalyzer) placeReadsAfterCd(dirs []string, unknown bool) {
	for i := range a.res.Commands {
		c := &a.res.Commands[i]
		if c.Redirect || len(c.Reads) == 0 {
			continue
		}
		n := len(c.Reads)
		for k := 0; k < n; k++ {
			r := c.Reads[k]
			var g globs.Glob
			if k < len(c.ReadGlobs) {
				g = c.ReadGlobs[k]
			}
			if x, home := globs.ExpandHome(r, ""); home || path.IsAbs(x) || g != nil && len(g) > 0 && g[0].Lit() && (g[0].R == '/' || g[0].R == '~') {
				continue
			}
			if g == nil {
				g = globs.Literal(nil, r)
			}
			add := func(text string, pg globs.Glob) {
				if c.ReadGlobs == nil {
					c.ReadGlobs = make([]globs.Glob, len(c.Reads), len(c.Reads)+len(dirs))
				}
				c.Reads = append(c.Reads, text)
				c.ReadGlobs = append(c.ReadGlobs, pg)
			}
			if unknown {
				add("*/"+r, append(globs.Glob{globs.AnyRun, {R: '/'}}, g...))
				continue
			}
			for _, d := range dirs {
				if d == "." {
					continue
				}
				if k < len(c.ReadGlobs) && c.ReadGlobs[k] != nil {
					add(joinPath(d, r), append(globs.Literal(nil, d+"/"), g...))
				} else {
					add(joinPath(d, r), nil)
				}
			}
		}
	}
}

// targetGlobs returns the paths a redirection target can name when it is
// not one known path, else nil.
func (a *shAnalyzer) targetGlobs(w shWord) []globs.Glob {
	if w.g == nil {
		return nil
	}
	return []globs.Glob{w.g}
}

// readTarget records an input redirection of the file named by w.
func (a *shAnalyzer) readTarget(w shWord) {
	if a.full() {
		return
	}
	// The file opened may be a directory (cat /dev/fd/3/id_rsa 3<~/.ssh,
	// grep -r . /dev/stdin < ~/.aws): the descriptor reaches its tree.
	c := Command{Redirect: true, Read: true, Recursive: true, Target: w.pathText(), Globs: a.targetGlobs(w)}
	if w.lit && w.g == nil && shHarmlessSink(path.Clean(w.text)) {
		return
	}
	if cl := path.Clean(w.text); w.lit && (strings.HasPrefix(cl, "/dev/tcp/") || strings.HasPrefix(cl, "/dev/udp/")) {
		// bash itself connects: cat < /dev/tcp/host/80 downloads.
		a.addSafety("reads from the network (" + cl + ")")
	}
	if w.lit && w.text == "" {
		a.setUnanalysable("redirect source is empty")
		c.Unanalysable = "redirect source is empty"
	}
	a.res.Commands = append(a.res.Commands, c)
	a.info = append(a.info, shCmdInfo{span: a.cur})
}

// shProtectedWriteGlob returns the safety reason when a pattern or an
// expansion could name a protected file or a device, or "".
func shProtectedWriteGlob(g globs.Glob) string {
	c := globs.Lower(globs.CleanPath(g, ""))
	for _, f := range shProtectedFileList {
		if globs.Intersects(c, globs.Literal(nil, f)) {
			return "may write to " + f
		}
	}
	if globs.Intersects(c, globs.FromPathText("/etc/sudoers.d/*")) {
		return "may write to a file in /etc/sudoers.d"
	}
	if globs.Intersects(c, globs.FromPathText("/dev/sd*")) || globs.Intersects(c, globs.FromPathText("/dev/nvme*")) {
		return "may write to a device under /dev"
	}
	return ""
}

// shCommandGlobs returns the globs of a command's words joined by spaces
// when one of them is not a plain literal, one per alternative, and the
// same for the base-name form of a path-qualified command. A "{}" passed
// by xargs or find -exec stands for input the policy cannot see; a word
// with a tilde bash expands (~/x, NAME=~/x) stands for a path the
// analysis does not spell out; a word that may vanish yields alternatives
// with and without it.
func shCommandGlobs(words []shWord, fr shFrame, qualified bool, name string) (full, base []globs.Glob) {
	fed := fr.placeholder != ""
	for _, w := range fr.wrappers {
		if w == "xargs" || strings.HasPrefix(w, "find -") {
			fed = true
		}
	}
	unknown := func(w shWord) bool {
		return fed && (strings.Contains(w.text, shXargsArgs) || fr.placeholder != "" && strings.Contains(w.text, fr.placeholder))
	}
	inexact, size, vanishing := false, len(words), 0
	for _, w := range words {
		size += len(w.text)
		if w.g != nil || !w.lit || unknown(w) || w.lit && !w.quotedHome && shTildeExpands(w.text) {
			inexact = true
		}
		if w.vanish {
			vanishing++
		}
	}
	if !inexact {
		return nil, nil
	}
	if size > gMaxCommand {
		// Too long to describe: the command could be anything.
		return []globs.Glob{{globs.AnyRun}}, nil
	}
	build := func(drop uint, glue bool) (g, b globs.Glob) {
		g = make(globs.Glob, 0, size)
		restAt, baseAt, k := 0, -1, 0
		for i, w := range words {
			if w.vanish {
				k++
				if drop&(1<<(k-1)) != 0 {
					continue
				}
			}
			if i > 0 && !(glue && w.vanish) {
				g = append(g, globs.Tok{R: ' '})
			}
			g = gAppendWord(g, w, unknown(w))
			if i == 0 {
				restAt = len(g)
				// The base name of a pattern or path name: after its last '/'.
				baseAt = -1
				for k := len(g) - 1; k >= 0; k-- {
					if g[k].Lit() && g[k].R == '/' {
						baseAt = k + 1
						break
					}
				}
			}
		}
		switch {
		case qualified:
			b = append(globs.Literal(make(globs.Glob, 0, len(g)), name), g[restAt:]...)
		case baseAt > 0:
			b = slices.Clone(g[baseAt:])
		}
		return g, b
	}
	if vanishing == 0 || vanishing > 3 || words[0].vanish {
		// One glob; a vanishing word absorbs the space before it.
		g, b := build(0, vanishing > 0)
		if b == nil {
			return []globs.Glob{g}, nil
		}
		return []globs.Glob{g}, []globs.Glob{b}
	}
	for drop := uint(0); drop < 1<<vanishing; drop++ {
		g, b := build(drop, false)
		full = append(full, g)
		if b != nil {
			base = append(base, b)
		}
	}
	return full, base
}

// gAppendWord appends the glob of one command word; unknown says the word
// stands for input the policy cannot see (the {} of xargs or find -exec).
func gAppendWord(g globs.Glob, w shWord, unknown bool) globs.Glob {
	switch {
	case unknown:
		g = append(g, globs.AnyRun)
	case w.g != nil:
		at := len(g)
		g = append(g, w.g...)
		if len(w.g) > 0 && w.g[0].Lit() && w.g[0].R == '~' && (len(w.g) == 1 || w.g[1].Lit() && w.g[1].R == '/') {
			// ~/.ss?/x: bash expands the tilde before the pattern,
			// so the word names a path under a directory the
			// analysis does not spell out (as gAppendTilde).
			g[at] = globs.AnyRun
		}
		if w.glob {
			// A pathname pattern expands to every match, as
			// separate words that may hold slashes each
			// (./.env ./.env.local): the rest may be anything.
			g = append(g, globs.AnyRun)
		}
	case !w.lit:
		g = append(g, globs.AnyRun)
	case !w.quotedHome && shTildeExpands(w.text):
		// ('~/x' is a directory called ~: literal, and its text is
		// shown quoted as bash reads it back.)
		g = gAppendTilde(g, w.text)
	default:
		g = globs.Literal(g, w.text)
	}
	return g
}

// shTildeExpands reports a word in which bash expands a tilde: at its
// start, or after the = (and after a :) of a NAME=value word.
func shTildeExpands(s string) bool {
	if strings.HasPrefix(s, "~") {
		return true
	}
	name, val, ok := strings.Cut(s, "=")
	if !ok || !shIsIdent(name) {
		return false
	}
	return strings.HasPrefix(val, "~") || strings.Contains(val, ":~")
}

// gAppendTilde appends the glob of a word whose tilde prefixes bash
// expands: each ~prefix (up to a / or :) is a directory the analysis does
// not spell out.
func gAppendTilde(g globs.Glob, s string) globs.Glob {
	for i := 0; i < len(s); {
		if s[i] == '~' && (i == 0 || s[i-1] == '=' || s[i-1] == ':') {
			g = append(g, globs.AnyRun)
			for i < len(s) && s[i] != '/' && s[i] != ':' {
				i++
			}
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		g = append(g, globs.Tok{R: r})
		i += size
	}
	return g
}

// gMaxCommand bounds the length of a command described as a glob.
const gMaxCommand = 8192

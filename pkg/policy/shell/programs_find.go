package shell

import (
	"slices"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

// find and fd: programs that walk trees and run commands on what they
// find. Their entries are complete: every word of find's expression and
// every option of fd is classified, and the words of the commands they
// run (find -exec … ;, fd -x … ;) are judged as commands of their own
// (shFind, shFd), not as the program's words.

// findExecEnd returns the index of the word that ends the command of a
// find -exec, -execdir, -ok or -okdir whose first word is w[j]: a ";", or
// a "+" right after "{}"; len(w) when none does.
func findExecEnd(w []shWord, j int) int {
	k := j
	for k < len(w) && w[k].text != ";" && (w[k].text != "+" || k == j || w[k-1].text != "{}") {
		k++
	}
	return k
}

// findExec reports the actions of find that run a command.
func findExec(s string) bool {
	switch s {
	case "-exec", "-execdir", "-ok", "-okdir":
		return true
	}
	return false
}

// findUse reads find's words: the options before the starting points (-H
// -L -P -D opts -Olevel), the starting points (read recursively, written
// recursively when the expression has -delete) and the expression, whose
// words are the entry's options (tests, actions, options) and the
// operators ( ) ! , — anything else is not understood and asks. The
// commands of -exec and the like are skipped here: shFind judges them.
func findUse(spec *progSpec, w []shWord) progUse {
	u := progUse{spec: spec, global: 1, recursive: true}
	i := 1
	for i < len(w) && w[i].lit {
		s := w[i].text
		if s == "-H" || s == "-L" || s == "-P" || strings.HasPrefix(s, "-O") {
			i++
			continue
		}
		if s == "-D" {
			i += 2
			continue
		}
		break
	}
	start := i
	for i < len(w) {
		t := &w[i]
		if t.lit && (strings.HasPrefix(t.text, "-") && len(t.text) > 1 || t.text == "(" || t.text == "!" || t.text == ",") {
			break
		}
		if mayExpandToOption(t) {
			u.setAsk("the word " + t.text + " may expand to an expression of find that writes or runs something")
		}
		i++
	}
	points := w[start:min(i, len(w))]
	if len(points) == 0 {
		points = []shWord{{text: ".", lit: true}}
	}
	u.roots = points
	del, execs := u.findExpression(w, i)
	u.named = u.filters
	if !execs {
		// Without a command to hand them to, the files the name patterns
		// match are listed, not read.
		u.filters = nil
	}
	u.deletes = del
	if !del {
		u.reads = append(u.reads, points...)
	}
	return u
}

// findExpression reads find's expression from w[i] and applies the
// effects of its words; it reports whether the expression deletes
// (-delete) and whether it runs commands on what it finds (-exec…).
func (u *progUse) findExpression(w []shWord, i int) (del, execs bool) {
	for ; i < len(w); i++ {
		t := &w[i]
		if !t.lit {
			u.setAsk(notUnderstood("find", "expression word", t.text))
			continue
		}
		s := t.text
		switch {
		case s == "(" || s == ")" || s == "!" || s == ",":
			continue
		case findExec(s):
			i, execs = findExecEnd(w, i+1), true
			continue
		}
		o := u.spec.options[s]
		if o == nil {
			u.setAsk(notUnderstood("find", "expression word", s))
			continue
		}
		var v *shWord
		if o.value == valRequired && i+1 < len(w) {
			i++
			v = &w[i]
		}
		if s == "-fprintf" && i+1 < len(w) {
			i++ // -fprintf FILE FORMAT
		}
		if o.effect == effInPlace {
			del = true
			continue
		}
		u.apply(o, v)
	}
	return del, execs
}

// shFind emits find itself (it is a command in its own right, with its
// own rules and effects: it reads its starting points recursively, -delete
// and -fprint write; see findUse) and every command its -exec, -execdir,
// -ok and -okdir actions run, the found paths standing for {}.
func shFind(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped {
	a.emit(w, *fr, "", shCmdInfo{})
	var feed *shFeed
	for i := 1; i < len(w); {
		s := w[i].text
		if !findExec(s) {
			i++
			continue
		}
		j := i + 1
		k := findExecEnd(w, j)
		if k > j {
			sub := fr.withWrapper("find " + s)
			sub.placeholder, sub.feeder = "{}", "find"
			if feed == nil {
				feed = a.findFeed(spec, w)
			}
			sub.feed = feed
			if s == "-execdir" || s == "-okdir" {
				// The command runs in the directory of each file found:
				// its relative paths are not where they look (tee .bashrc
				// there writes ~/.bashrc when find walks ~), as after a cd
				// the analysis cannot follow.
				a.cds = append(a.cds, shCd{})
			}
			if why := transformedPlaceholder(w[j:k], "{}"); why != "" {
				a.emit(w[j:k], sub, why, shCmdInfo{})
			} else {
				a.resolve(w[j:k], sub)
			}
		}
		i = k + 1
	}
	return shWrapped{done: true}
}

// fdExecOption reports fd's options that run a command: -x/--exec once
// per result, -X/--exec-batch once for all.
func fdExecOption(name string) bool {
	switch name {
	case "-x", "--exec", "-X", "--exec-batch":
		return true
	}
	return false
}

// fdSplit separates fd's words into its own (own, the program's words
// without the commands it runs) and the commands of its -x and -X
// options: each runs the words after the option up to a ";" (or the end),
// the first of them attached to the option when it is spelled --exec=CMD
// or -xCMD.
func fdSplit(spec *progSpec, w []shWord) (own []shWord, cmds [][]shWord) {
	own = make([]shWord, 0, len(w))
	own = append(own, w[0])
	dashes := false
	for i := 1; i < len(w); i++ {
		t := w[i]
		own = append(own, t)
		if dashes || !t.lit || len(t.text) < 2 || t.text[0] != '-' {
			continue
		}
		if t.text == "--" {
			dashes = true
			continue
		}
		first, at, ok := fdExecAt(spec, t.text)
		if !ok {
			if o := fdValueOption(spec, t.text); o && i+1 < len(w) {
				i++
				own = append(own, w[i])
			}
			continue
		}
		if at > 1 {
			own[len(own)-1] = shWord{text: t.text[:at], lit: true} // -Hx: -H stays
		} else {
			own = own[:len(own)-1]
		}
		k := i + 1
		for k < len(w) && !(w[k].lit && w[k].text == ";") {
			k++
		}
		cmd := make([]shWord, 0, k-i)
		if first != "" {
			cmd = append(cmd, shWord{text: first, lit: true})
		}
		cmds = append(cmds, append(cmd, w[i+1:k]...))
		i = k
	}
	return own, cmds
}

// fdExecAt finds an exec option in the option word s: the index where it
// starts (the words before it are other options of a cluster, -Hx) and
// the attached first word of its command, if any.
func fdExecAt(spec *progSpec, s string) (first string, at int, ok bool) {
	if strings.HasPrefix(s, "--") {
		name, val, _ := strings.Cut(s, "=")
		if fdExecOption(name) {
			return val, 0, true
		}
		return "", 0, false
	}
	for j := 1; j < len(s); j++ {
		name := "-" + s[j:j+1]
		if fdExecOption(name) {
			return s[j+1:], j, true
		}
		if o := spec.options[name]; o != nil && o.value != valNone {
			return "", 0, false // the rest of the cluster is this option's value
		}
	}
	return "", 0, false
}

// fdValueOption reports whether the option word s ends with an option
// that takes the next word as its value (-d 3, --exclude x).
func fdValueOption(spec *progSpec, s string) bool {
	if strings.HasPrefix(s, "--") {
		name, _, hasVal := strings.Cut(s, "=")
		o := spec.options[name]
		return o != nil && o.value == valRequired && !hasVal
	}
	for j := 1; j < len(s); j++ {
		if o := spec.options["-"+s[j:j+1]]; o != nil && o.value != valNone {
			return o.value == valRequired && j == len(s)-1
		}
	}
	return false
}

// fdUse reads fd's own words (without the commands -x and -X run, which
// shFd judges) by its entry.
func fdUse(spec *progSpec, w []shWord) progUse {
	own, cmds := fdSplit(spec, w)
	u := scanProgram(spec, own, false)
	if len(u.reads) == 0 {
		// No path: fd searches its working directory, which
		// --base-directory moves (placeUnder).
		u.reads = append(u.reads, shWord{text: ".", lit: true})
	}
	if len(cmds) > 0 {
		// The results are handed to a command (fd -x cat): the files the
		// pattern and -e match are read; without one they are listed.
		u.fdFilters()
	}
	return u
}

// fdFilters records fd's pattern and extensions as filters: -e EXT is
// *.EXT; the pattern operand is a glob with -g/--glob, else a regular
// expression, approximated by the names containing its text.
func (u *progUse) fdFilters() {
	glob := false
	for _, s := range u.seen {
		switch s.opt.name {
		case "-g", "--glob":
			glob = true
		case "-e", "--extension":
			if s.value != nil {
				u.filters = append(u.filters, shWord{text: "*." + s.value.text, lit: s.value.lit})
			}
		}
	}
	if len(u.operands) == 0 {
		return
	}
	p := u.operands[0]
	if !glob && p.lit {
		lit, ok := fdRegexLiteral(p.text)
		if !ok {
			u.setAsk("fd's pattern " + strconv.Quote(p.text) + " is a regular expression whose matches are not judged (only plain text, \\. and the anchors ^ $ are)")
			return
		}
		p.text = "*" + lit + "*"
	}
	u.filters = append(u.filters, p)
}

// fdRegexLiteral is the text fd's regular expression pattern matches
// anywhere in a name, when it is plain text: letters, digits, - _ and
// escaped dots, between optional anchors (dropped: the filter then covers
// more names, never fewer). Any other operator (. [ ] ( ) | * + ? { }, a
// class, another escape) is not understood.
func fdRegexLiteral(re string) (string, bool) {
	re = strings.TrimSuffix(strings.TrimPrefix(re, "^"), "$")
	var b strings.Builder
	for i := 0; i < len(re); i++ {
		c := re[i]
		switch {
		case c == '\\' && i+1 < len(re) && re[i+1] == '.':
			b.WriteByte('.')
			i++
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
			b.WriteByte(c)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// shFd emits fd itself (its own words: the pattern, the roots it reads
// recursively) and every command its -x and -X options run. The results
// stand for {} (and {/}, {//}, {.}, {/.}); a command without any gets
// them appended, as fd does.
func shFd(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped {
	a.emit(w, *fr, "", shCmdInfo{})
	_, cmds := fdSplit(spec, w)
	var feed *shFeed
	if len(cmds) > 0 {
		feed = a.fdFeed(spec, w)
	}
	for _, cmd := range cmds {
		if len(cmd) == 0 {
			continue
		}
		placed := false
		for _, x := range cmd {
			placed = placed || strings.Contains(x.text, "{")
		}
		if !placed {
			cmd = append(cmd, shWord{text: shXargsArgs, lit: true})
		}
		sub := fr.withWrapper(spec.name + " --exec")
		sub.placeholder, sub.feeder, sub.feed = "{", spec.name, feed
		if why := transformedPlaceholder(cmd, "{"); why != "" {
			a.emit(cmd, sub, why, shCmdInfo{})
			continue
		}
		a.resolve(cmd, sub)
	}
	return shWrapped{done: true}
}

// transformedPlaceholder says why a command find or fd runs is not judged
// when one of its words makes another path of the file found ("" when
// none does): the filters say which files are found (-name, fd's pattern
// and -e), and the command reads or writes those only while each word that
// holds the placeholder is exactly {}. fd's {.}, {/}, {//} and {/.} strip
// the extension or the directory, and a word with {} inside ({}.bak,
// x{}) names another file: .env.example found, {.} is .env. Closed: any
// such word asks.
func transformedPlaceholder(cmd []shWord, mark string) string {
	for _, x := range cmd {
		if strings.Contains(x.text, mark) && x.text != "{}" {
			return "the word " + strconv.Quote(x.text) + " makes another path of the file found (only a bare {} is the file the filters matched)"
		}
	}
	return ""
}

// filterGlob compiles a file-name pattern as the program reads it: grep,
// find and the other fnmatch readers read [[:alpha:]] as a class; rg and
// fd (globset) and a program the analysis does not tell apart may read it
// as characters, so their glob holds both readings
// (globs.FromFilterPattern).
func (u *progUse) filterGlob(p string) globs.Glob {
	if u.spec != nil {
		switch u.spec.name {
		case "grep", "egrep", "fgrep", "find":
			return globs.FromShellPattern(p)
		}
	}
	return globs.FromFilterPattern(p)
}

// shMaxFilterReads bounds the reads filters add (patterns × paths).
const shMaxFilterReads = 64

// filterReads turns the file-name patterns of a recursive program (find
// -name, rg -g, fd -e, grep -r --include) into reads of the files they
// match under each path it searches (its reads so far, or "." when it
// names none): PATH/**/PATTERN, a glob the engine meets the read rules
// with (anchored: `-g '*.go'` cannot read .env, `-g .env` and `-name
// '.env*'` can). A pattern that is not a literal is any name; rg's
// negated globs (!x) exclude, and read nothing.
func (u *progUse) filterReads() {
	if !u.recursive || len(u.filters) == 0 {
		return
	}
	roots := slices.Clone(u.reads)
	if len(roots) == 0 {
		roots = []shWord{{text: ".", lit: true}}
	}
	n := 0
	for _, f := range u.filters {
		if f.lit && strings.HasPrefix(f.text, "!") {
			continue
		}
		fg := globs.Glob{globs.AnyRun}
		if f.lit && strings.ContainsAny(f.text, "{}") {
			// rg's and fd's globs alternate ({env,txt}); a shell pattern
			// does not: what the braces match is not judged.
			u.setAsk("the file-name filter " + strconv.Quote(f.text) + " has braces, whose matches are not judged")
			return
		}
		if f.lit {
			fg = u.filterGlob(strings.TrimPrefix(f.text, "/"))
		}
		for _, r := range roots {
			if n++; n > shMaxFilterReads {
				u.setAsk("too many file-name filters and paths to judge their reads")
				return
			}
			g := r.g
			if g == nil {
				g = globs.Literal(nil, strings.TrimSuffix(r.text, "/"))
			}
			g = append(append(append(slices.Clip(g), globs.Tok{R: '/'}), globs.AnyRun), fg...)
			// A filter the analysis cannot read (a regular expression, a
			// type, a computed value) is any name, met by every rule.
			u.reads = append(u.reads, shWord{text: strings.TrimSuffix(r.text, "/") + "/**/" + f.text, g: g,
				computed: f.computed || r.computed})
		}
	}
}

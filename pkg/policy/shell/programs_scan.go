package shell

import (
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

// progUse is what one command does according to its program's entry: the
// paths it reads and writes, the command lines it runs, and what makes it
// ask.
type progUse struct {
	spec *progSpec
	// global is the index of the first word after the global options.
	global int
	// sub is the sub-command's entry, when the program has one for it.
	sub    *progSpec
	reads  []shWord
	writes []shWord
	// prefixes start the names of files the command writes (effPrefix).
	prefixes []shWord
	// trees are paths written with whatever a tree under them holds
	// (tar x's named members, which may be directories).
	trees []shWord
	// relocates: an option moves where what the command writes lands
	// under its target (tar --strip-components, --no-anchored).
	relocates bool
	// dirs are files or directories it writes, with the trees under them
	// (effWriteDir).
	dirs      []shWord
	runs      []progRun
	ask       string // a reason that makes the command ask
	recursive bool
	// extracts: the command unpacks an archive, whose members may be
	// links to anywhere (tar x, unzip).
	extracts bool
	inPlace  bool
	backup   bool // a backup-suffix option gave suffix (effBackup)
	deletes  bool // find -delete: what its feed yields is written
	pattern  bool // an option gave the pattern (grep -e)
	document bool // an option makes every operand a document (man -l)
	// suffix is the backup suffix of an in-place edit (sed -i.bak): each
	// file rewritten is also copied to FILE+suffix.
	suffix string
	stop   bool
	// module: an option named code to run (python -m): the options end
	// after it, and every operand is that code's argument, read.
	module    bool
	symlink   bool // ln -s: the command makes a symbolic link
	opaque    bool // it writes files it does not name (git apply)
	commit    bool // those are a commit's files (Command.Commit)
	unelevate bool
	script    *shWord
	// readsTree: an option named a directory read as a tree (effReadDir):
	// the command's reads are trees, its writes keep their names.
	readsTree bool
	// targetDir is the directory an option named for the operands to go
	// into (cp -t DIR): none of them is the destination (effTargetDir).
	targetDir *shWord
	// chdir is the directory an option moves the program to (git -C).
	chdir *shWord
	// filters are the file-name patterns of options with effect filter
	// (filter-any: computed words, any name).
	filters []shWord
	// roots are find's starting points, named its name filters whether
	// or not it hands the files to a command (feeds).
	roots, named []shWord
	// types and typeAdds are rg's -t values and --type-add definitions
	// (typeFilters).
	types    []shWord
	typeAdds []string
	// operands are the words that are not options or option values.
	operands []shWord
	// seen are the options found, in order, for hooks (tar's mode); only
	// recorded when record is set.
	seen   []seenOption
	record bool
	// known are the indices of the words an option the entry lists read
	// whole (the option and its value: docker run -e K=V), which
	// partialReads leaves out; tracked for partial entries whose
	// sub-command lists options (trackKnown).
	known      []int
	trackKnown bool
}

// literalTilde is the other reading of an option's value that begins with
// ~: bash expands a tilde after the = of --file=~/x only in an
// assignment-like word (a=~/x), zsh in neither, so the value may be a
// directory called ~ here (red team AN F8: date --file=~/../../.npmrc
// through a directory named ~ read ~/.npmrc). nil for any other value.
func literalTilde(v shWord) *shWord {
	if !v.lit || !strings.HasPrefix(v.text, "~") {
		return nil
	}
	return &shWord{text: "./" + v.text, lit: true}
}

// gitTopReadings are the other places a relative path that an option of
// git reads may be: git moves to the top of the work tree before it runs
// a sub-command and prefixes only the values it parses as file names, so
// git blame --contents ../.kube/config, run in a sub-directory, reads the
// file beside the repository, ~/.kube/config (red team AK F4; also
// blame -S, notes -F, grep -f). The top is any directory from the
// working directory up: the value is read under each of them.
//
// A pattern or an expansion is the same: the shell expands it where the
// command runs (../.npmr? is ../.npmrc, the project's), and git reads
// what it became from the top (red team AM F5: ~/.npmrc). Its forms are
// the pattern under each directory up.
func gitTopReadings(v shWord) []shWord {
	if v.text == "" || v.text == "-" || path.IsAbs(v.text) || strings.HasPrefix(v.text, "~") {
		return nil
	}
	if !v.lit && v.g == nil {
		return nil
	}
	if v.g != nil && len(v.g) > 0 && v.g[0].Lit() && !v.g[0].Star && (v.g[0].R == '/' || v.g[0].R == '~') {
		return nil
	}
	out := make([]shWord, 0, gitTopLevels)
	up := ""
	for range gitTopLevels {
		up += "../"
		w := shWord{text: up + v.text, lit: v.lit}
		if v.g != nil {
			w.g = append(globs.Literal(nil, up), v.g...)
			w.glob = v.glob
		}
		out = append(out, w)
	}
	return out
}

// gitTopWrites are the options of git's sub-commands whose file git
// writes from the work tree's top, not prefixed as --output is (red team
// AM F9: fast-export --export-marks=README.md in a sub-directory wrote
// the top's README.md): the value is written under every directory from
// the working directory up, as gitTopReadings reads.
var gitTopWrites = map[string]bool{"--export-marks": true}

// gitTopLevels is how many directories above the working directory the
// top of its work tree may be, for gitTopReadings: deeper than any
// directory an agent works in.
const gitTopLevels = 24

// seenOption is one option found by the scan and its value.
type seenOption struct {
	opt   *progOption
	value *shWord
}

// progRun is a command line an option runs.
type progRun struct {
	what  string // "tar --to-command"
	value shWord
	// appends: the runner appends arguments of its own (progOption).
	appends bool
}

// option finds the entry of an option spelled name ("-o", "--output"),
// looking in the sub-command's options first. After the sub-command of a
// program whose global options come first (global_first), they are not
// looked up: git switch -c, git grep -c and git diff -C are the
// sub-command's own options, not git -c or -C.
func (u *progUse) option(name string) *progOption {
	if u.sub != nil {
		if o := u.sub.options[name]; o != nil {
			return o
		}
		if u.spec.globalFirst && u.spec.global[name] != nil {
			return nil
		}
	}
	if o := u.spec.options[name]; o != nil {
		return o
	}
	return u.spec.global[name]
}

// longOption resolves a long option as getopt_long does: an exact name, or
// an unambiguous prefix of one (--outp → --output). When the prefix is
// ambiguous, the first candidate with an effect is returned, so that an
// option the program would refuse is judged by its most dangerous reading.
func (u *progUse) longOption(name string) *progOption {
	if o := u.option(name); o != nil {
		return o
	}
	if len(name) < 3 {
		return nil
	}
	var found *progOption
	for _, longs := range [2][]string{u.subLongs(), u.spec.longs} {
		for _, l := range longs {
			if !strings.HasPrefix(l, name) {
				continue
			}
			o := u.option(l)
			if o == nil {
				continue // a name of the other list (git config --glob: --global)
			}
			if found == nil || found.effect == effNone && o.effect != effNone {
				found = o
			}
		}
	}
	return found
}

// complete reports whether the entry that reads the options (the
// sub-command's, else the program's) lists every option the program
// accepts.
func (u *progUse) complete() bool {
	if u.sub != nil {
		return u.sub.complete
	}
	return u.spec.complete
}

// partial reports an entry of a program with sub-commands or global
// options that does not list every option (docker, pip, npm): what its
// words read beyond the options it lists is not known, so they are read
// as an unknown program's (unknownReads). Wrappers and
// runners are left out: the command they run is judged on its own.
func (u *progUse) partial() bool {
	s := u.spec
	return !u.closedOptions() && (len(s.subs) > 0 || s.closed || len(s.global) > 0) &&
		s.wrapper == nil && (u.sub == nil || u.sub.wrapper == nil || u.sub.wrapper.verb != "")
}

// openOperands reports an entry that is both complete and closed
// (kubectl, helm): every option is known, but its operands — resource
// names, chart references, directories, files — are read as an unknown
// program's, as a partial entry's are (partialReads), besides what the
// options the entry lists read. Wrappers and runners are left out, as
// for partial.
func (u *progUse) openOperands() bool {
	s := u.spec
	return s.complete && s.closed && s.wrapper == nil && (u.sub == nil || u.sub.wrapper == nil || u.sub.wrapper.verb != "")
}

// closedOptions reports whether an option the entry does not list makes
// the command ask: the entry is complete, or it is a sub-command of a
// complete program (git): what such a sub-command's entry does not list
// (git commit-tree -F FILE, git archive --add-file=FILE) may read a file
// or run a program, and is not understood.
func (u *progUse) closedOptions() bool {
	return u.complete() || u.sub != nil && u.spec.complete
}

// progName names the program, with its sub-command, for messages.
func (u *progUse) progName() string {
	if u.sub != nil {
		return u.sub.name
	}
	return u.spec.name
}

// notUnderstood is the reason a command asks when it uses a word its
// program's complete entry does not list: the policy cannot know what the
// word does, so it does not guess that it is harmless.
func notUnderstood(prog, what, word string) string {
	return "not understood: the program table does not know the " + what + " " + shQuoteShort(word) + " of " + prog
}

func (u *progUse) subLongs() []string {
	if u.sub == nil {
		return nil
	}
	return u.sub.longs
}

// dangerous reports whether the program has options that write, run or
// ask, so that a word that may expand to an option matters (a file named
// --checkpoint-action=exec=sh x that * matches makes tar run sh). Options
// that only read are left out: a name that * matches is one name in the
// directory, and asking for every wc -l *.go and grep foo *.go would stop
// ordinary work (docs/POLICY.md, limits).
func (s *progSpec) dangerous() bool {
	for _, m := range []map[string]*progOption{s.options} {
		for _, o := range m {
			switch o.effect {
			case effWrite, effPrefix, effWriteDir, effTargetDir, effRun, effCode, effAsk, effInPlace, effScript:
				return true
			}
		}
	}
	for _, sub := range s.subs {
		if sub.dangerous() {
			return true
		}
	}
	return false
}

// wordMayBeOption makes the command ask for a word t, where the program
// still takes options, that may become one: for a program with options
// that write or run (danger caches spec.dangerous: -1 unknown), or, for
// input nobody saw (echo --fromfile ~/.kube/config | xargs tree), one
// with an option that reads a file, which a directory's own names (wc -l
// *.go) are let be. An expansion that may be an option that reads a file
// is a read of its value (read a; du "$a" may be du --files0-from=FILE).
func (u *progUse) wordMayBeOption(t *shWord, danger *int) {
	spec, s := u.spec, t.text
	if *danger < 0 {
		*danger = 0
		if spec.dangerous() {
			*danger = 1
		}
	}
	if *danger == 1 {
		u.setAsk("the word " + s + " may expand to an option of " + spec.name + " that writes or runs something (./" + strings.TrimPrefix(s, "./") + " or -- before it keeps names from reading as options)")
	} else if t.input && spec.readsByOption() {
		u.setAsk("the word " + s + " is input the policy cannot see, which may be an option of " + spec.name + " that reads a file (-- before it keeps input from reading as options)")
	} else if !t.lit && !t.glob && t.expansionFirst() && spec.readsByOption() {
		// An expansion may be --files0-from=~/.netrc as well as a name
		// (read a <<< …; du "$a"): it is a read of what its value names,
		// as an operand of cat is — any path when the script sets it to
		// a value the analysis does not know (finishReads).
		u.reads = append(u.reads, *t)
	} else if t.glob && t.g != nil && spec.readsByOption() {
		// A file named --files0-from=.npmrc that *=* matches makes wc
		// read .npmrc (red team AO F8): the option's value is the end
		// of one name the pattern matches — a name in the working
		// directory, dot files included, that ends as the pattern does
		// after its last wildcard (wc -l *.go reads only NAME.go
		// files, which it reads anyway).
		u.reads = append(u.reads, optionValueNames(t.g))
		if globs.Intersects(t.g, dotDotName) && spec.readsDirByOption() {
			u.setAsk("the word " + s + " may expand to an option of " + spec.name + " that reads a directory, with .. as its value (./" + strings.TrimPrefix(s, "./") + " or -- before it keeps names from reading as options)")
		}
	} else if t.glob && t.g != nil && globs.Intersects(t.g, dotDotName) && spec.readsDirByOption() {
		// A file named --from-file=.. that * matches makes diff * read
		// ../NAME for every NAME: a name can be .. , which climbs out
		// of the directory the pattern lists. (A file read by an option,
		// grep -f.., is no directory: it fails.)
		u.setAsk("the word " + s + " may expand to an option of " + spec.name + " that reads a directory, with .. as its value (./" + strings.TrimPrefix(s, "./") + " or -- before it keeps names from reading as options)")
	}
}

// optionValueNames is the read of the value an option takes when a
// name the pattern g matches is the option (--files0-from=NAME, -fNAME):
// a suffix of such a name, which is any name in the working directory
// that ends with g's literal tail after its last wildcard.
func optionValueNames(g globs.Glob) shWord {
	tail := len(g)
	for tail > 0 && g[tail-1].Lit() {
		tail--
	}
	v := append(globs.Glob{{Star: true, Any: true, NoSlash: true}}, g[tail:]...)
	return shWord{text: "*" + v[1:].String(), lit: true, glob: true, g: v}
}

// readsDirByOption reports whether the program has an option whose value
// is a directory it reads files of (diff --from-file, rsync
// --compare-dest).
func (s *progSpec) readsDirByOption() bool {
	for _, o := range s.options {
		if o.effect == effReadDir {
			return true
		}
	}
	for _, sub := range s.subs {
		if sub.readsDirByOption() {
			return true
		}
	}
	return false
}

// dotDotName is every name that starts with '-' and ends in "..": an
// option whose value climbs to the parent directory.
var dotDotName = globs.Glob{{R: '-'}, globs.AnyRun, {R: '.'}, {R: '.'}}

// readsByOption reports whether the program has an option that reads a
// file it names, or the files a list names (date -f, tree --fromfile, du
// --files0-from).
func (s *progSpec) readsByOption() bool {
	for _, o := range s.options {
		switch o.effect {
		case effRead, effList, effDocument, effPattern:
			return true
		}
	}
	for _, sub := range s.subs {
		if sub.readsByOption() {
			return true
		}
	}
	return false
}

// scanProgram reads the words of a command by its program's entry: the
// global options, the sub-command, the options (getopt style, or single
// words for style single) and the operands, and records their effects.
// firstOperandEnds stops the option scan at the first operand (python
// SCRIPT ARGS…). Options the entry does not list make the command ask
// when the entry is complete (it lists every option the program has), and
// are skipped otherwise.
func scanProgram(spec *progSpec, w []shWord, firstOperandEnds bool) progUse {
	// Only the hooks that read the options found (tar's mode, sed's and
	// awk's scripts, cp --parents) need them recorded: an append per
	// option otherwise.
	record := spec.hook == "tar" || spec.hook == "sed" || spec.hook == "awk" || spec.hook == "fd" ||
		spec.hook == "make" || spec.hook == "curl" || spec.hook == "wget" || spec.hook == "compress" ||
		copyPrograms[spec.name] || spec.name == "csplit"
	u := progUse{spec: spec, global: 1, recursive: spec.recursive, record: record}
	u.scanGlobal(w)
	u.trackKnown = u.openOperands()
	i := u.global
	if spec.closed && !spec.complete && spec.subs != nil && i < len(w) && w[i].lit && strings.HasPrefix(w[i].text, "-") {
		i = u.checkVerbAfterOptions(w, i)
	}
	if spec.subs != nil && i < len(w) && u.scanSub(&w[i]) {
		i++
		// go run PKG ARGS…: the program's arguments are not go's.
		firstOperandEnds = firstOperandEnds || u.sub.optionsFirst
		u.trackKnown = len(u.sub.options) > 0 && u.partial() || u.openOperands()
	}
	// Operands are kept only where something reads them (an allocation
	// on the hot path otherwise).
	keepOps := len(spec.operands) > 0 || u.sub != nil && len(u.sub.operands) > 0 || u.record
	optionsDone := spec.style == styleNone
	danger := -1 // unknown until needed
	seenOperand, firstOperand := false, ""
	for ; i < len(w) && !u.stop; i++ {
		t := &w[i]
		s := t.text
		if !optionsDone && !u.module && mayExpandToOption(t) {
			u.wordMayBeOption(t, &danger)
		}
		if s == "--" && t.lit && !optionsDone {
			optionsDone = true
			continue
		}
		if s != "" && s[0] == '+' && t.lit && !optionsDone {
			// uniq's +N is an option only with digits (when:): +x is a
			// file.
			if o := u.option("+"); o != nil && (o.when == nil || o.appliesTo(s[1:])) {
				u.apply(o, &shWord{text: s[1:], lit: true})
				continue
			}
		}
		if !t.lit && !optionsDone && (u.expandedValue(t) || spec.style != styleSingle && u.expandedShort(t)) {
			continue
		}
		if optionsDone || u.module || !t.lit || len(s) < 2 || s[0] != '-' {
			if !seenOperand {
				seenOperand, firstOperand = true, s
			}
			if keepOps {
				u.operands = append(u.operands, *t)
			}
			optionsDone = optionsDone || firstOperandEnds
			continue
		}
		patBefore := u.pattern
		if spec.style == styleSingle || s[1] == '-' {
			i = u.longWord(w, i)
		} else {
			i = u.shortCluster(w, i)
		}
		if !patBefore && u.pattern && seenOperand && u.ask == "" {
			// sed 'w ~/.bashrc' -e p: GNU getopt takes -e p as the
			// script and the first operand as a file; BSD sed (macOS),
			// like every awk, stops at the operand and runs it.
			u.setAsk("the option " + s + " follows the operand " + shQuoteShort(firstOperand) + ": a " + spec.name +
				" that stops reading options at its first operand (BSD, macOS) runs that operand as its program")
		}
	}
	u.operandEffects()
	return u
}

// scanSub reads w, the word after the global options, as the entry's
// sub-command: it reports whether w is one (u.sub), and makes a complete
// or closed entry ask for a word it does not know there.
func (u *progUse) scanSub(w *shWord) bool {
	spec := u.spec
	switch sub := spec.subs[w.text]; {
	case !w.lit:
		if spec.complete || spec.closed {
			u.setAsk(notUnderstood(spec.name, "sub-command", w.text))
		}
	case sub != nil:
		u.sub = sub
		return true
	case (spec.complete || spec.closed) && (w.text == "" || w.text[0] != '-'):
		u.setAsk(notUnderstood(spec.name, "sub-command", w.text))
	}
	return false
}

// checkVerbAfterOptions checks the verb of a closed entry that follows
// options the entry does not list as global (pip -q install, systemctl
// --user link): the first word that is not an option, skipping the value
// of an option the entry knows takes one (systemctl -H HOST status), must
// be a verb the entry knows, or the command asks — unless a word after it
// may be the verb and it the value of an option the entry does not list
// (npm --prefix web run build), or it is a path. The words keep their
// reading as a command without a known sub-command: an unlisted option
// may take the next word as its value (pip --log list install x installs),
// so the options are not skipped as global ones for the rules either —
// unless the entry lists every one of them: then the verb is read there.
func (u *progUse) checkVerbAfterOptions(w []shWord, i int) int {
	j, listed := i, true
	for j < len(w) && w[j].lit && strings.HasPrefix(w[j].text, "-") {
		name, _, attached := strings.Cut(w[j].text, "=")
		o := u.spec.options[name]
		if o == nil {
			o = u.spec.global[name]
		}
		listed = listed && o != nil
		j++
		if o != nil && o.value == valRequired && !attached && j < len(w) {
			j++
		}
	}
	if j >= len(w) || !w[j].lit {
		return i
	}
	if u.spec.subs[w[j].text] != nil {
		if listed {
			// Every option before it is one the entry knows, with its
			// value: the verb is this word (systemctl --user enable).
			u.global = j
			return j
		}
		return i
	}
	if strings.ContainsAny(w[j].text, "/.=:@") || slices.ContainsFunc(w[j+1:], func(t shWord) bool {
		return !t.lit || u.spec.subs[t.text] != nil
	}) {
		return i
	}
	u.setAsk(notUnderstood(u.spec.name, "sub-command", w[j].text))
	return i
}

// expandedValue applies a word that spells a long option with a value
// that is not a literal (--include="$f", --file=$(…)): the option with
// that value, as the program sees it, not an operand. It reports whether
// w was one.
func (u *progUse) expandedValue(w *shWord) bool {
	name, val, ok := strings.Cut(w.text, "=")
	if !ok || !strings.HasPrefix(name, "--") {
		return false
	}
	if strings.ContainsAny(name, "$\"'`\\{}[]*?") {
		// --from-file${x}=FILE: an option the policy cannot name.
		u.setAsk("the word " + w.text + " is an option of " + u.spec.name + " the policy cannot read")
		return true
	}
	o := u.longOption(name)
	if o == nil || o.value == valNone {
		return false
	}
	u.apply(o, &shWord{text: val, g: optionValueGlob(w.g, name), computed: w.computed, vars: w.vars})
	if w.splits {
		// --lines=$N with N='5 ~/.npmrc': an option and a file.
		u.setAsk("the word " + w.text + " holds an unquoted expansion, which may split it into an option of " + u.spec.name + " and more words")
	}
	return true
}

// optionValueGlob returns the glob of the value of a --name=VALUE word
// whose glob is g: g without its literal "--name=" head, so that the
// value keeps the text it spells (--from-file="$HOME/.ssh/id_rsa" reads a
// .ssh/id_rsa), or any string when g does not start so.
func optionValueGlob(g globs.Glob, name string) globs.Glob {
	head := name + "="
	if len(g) <= len(head) {
		return globs.Glob{globs.AnyRun}
	}
	for i := 0; i < len(head); i++ {
		if !g[i].Lit() || g[i].R != rune(head[i]) {
			return globs.Glob{globs.AnyRun}
		}
	}
	return g[len(head):]
}

// scanGlobal skips the global options at the start of w (git -C DIR) and
// applies the effects the entry gives them (git -c NAME=VALUE).
func (u *progUse) scanGlobal(w []shWord) {
	spec := u.spec
	if len(spec.global) == 0 {
		return
	}
	u.global = spec.globalEnd(w)
	for i := 1; i < u.global; i++ {
		name, val, hasVal := strings.Cut(w[i].text, "=")
		o := spec.global[name]
		if o == nil && len(name) > 2 && name[1] != '-' {
			o, val, hasVal = spec.global[name[:2]], w[i].text[2:], true
		}
		if o == nil {
			continue
		}
		v := shWord{text: val, lit: w[i].lit}
		if !hasVal && o.value == valRequired && i+1 < u.global {
			i++
			v = w[i]
		}
		if eo := spec.options[o.name]; eo != nil {
			u.apply(eo, &v)
		}
	}
}

// longWord reads the option word w[i] spelled --name[=value] (or -name
// for style single) and returns the index of the last word it used.
func (u *progUse) longWord(w []shWord, i int) int {
	start := i
	name, val, hasVal := strings.Cut(w[i].text, "=")
	var o *progOption
	if u.spec.style == styleSingle {
		// Go's flag package takes -name and --name alike.
		if o = u.option("-" + strings.TrimLeft(name, "-")); o == nil {
			o = u.option(name)
		}
	} else {
		o = u.longOption(name)
	}
	if o == nil {
		if u.closedOptions() {
			u.setAsk(notUnderstood(u.progName(), "option", name))
		}
		return i
	}
	var v *shWord
	switch {
	case hasVal:
		v = &shWord{text: val, lit: true}
	case o.value == valRequired && i+1 < len(w):
		i++
		v = &w[i]
		u.globValue(v)
	}
	u.apply(o, v)
	u.knownWordsOf(o, start, i)
	return i
}

// knownWordsOf notes the words of option o as known (knownWords),
// except, for an entry whose operands are read open (openOperands), an
// option that reads a path: its value may name several (kubectl -f
// a.yaml,b.yaml, helm --set-file k=FILE,k2=FILE2), which the open reading
// finds besides the value the option reads whole.
func (u *progUse) knownWordsOf(o *progOption, start, end int) {
	if o.effect == effRead && u.openOperands() {
		return
	}
	u.knownWords(start, end)
}

// knownWords notes words start…end as read whole by options the entry
// lists (progUse.known).
func (u *progUse) knownWords(start, end int) {
	if u.trackKnown {
		for k := start; k <= end; k++ {
			u.known = append(u.known, k)
		}
	}
}

// globValue checks a pattern taken as an option's value from the next
// word: it expands to every name it matches, the first the value and the
// others words of their own where options are read (tar -C * with a file
// named --checkpoint-action=exec=sh x.sh), so it asks as such a word
// does.
func (u *progUse) globValue(v *shWord) {
	switch {
	case v.lit && len(v.text) > 1 && v.text[0] == '-' && !shDashNumber(v.text) && !gnuGetopt[u.spec.name]:
		// rg --engine --pre bash, git log --unified --output=F: GNU
		// getopt gives a required value the next word whatever it is,
		// but clap, git's optional values, argparse and Go's flag
		// package may read it as the next option, which the analysis
		// would then not have seen.
		u.setAsk("the word " + v.text + " after an option of " + u.spec.name +
			" that takes a value may be read as its value or as an option of its own")
	case v.glob && mayExpandToOption(v) && u.spec.dangerous():
		u.setAsk("the pattern " + v.text + " given to an option of " + u.spec.name +
			" expands to several names, which may be options that write or run something")
	case !v.lit && mayBeSplit(v.text) && !v.computed && !shListExpansion(v.text):
		// head -n $N x with N='5 ~/.npmrc' from an earlier call's
		// export, head -n 1$x, head -n $x*: an unquoted expansion.
		u.setAsk("the word " + v.text + " given to an option of " + u.spec.name +
			" holds an unquoted expansion, which may split into several words or none")
	case v.glob:
		// paste -d * in ~/.ssh: the first name is the value, the others
		// are operands — judged as one too.
		u.operands = append(u.operands, *v)
	case !v.lit && (v.computed || shListExpansion(v.text)) && mayBeSplit(v.text):
		// x=(… --checkpoint-action=…); tar --exclude "${x[@]}": the
		// words after the first are options or operands of their own
		// (head -n $(echo 5 ~/.ssh/id_rsa) reads the key).
		u.setAsk("the word " + v.text + " given to an option of " + u.spec.name +
			" may expand to several words, which may be options")
	}
}

// gnuGetopt are the programs that read their options with GNU getopt,
// whose required value is always the next word (grep -e -v searches for
// "-v"): there a value starting with '-' has one reading.
var gnuGetopt = map[string]bool{"grep": true, "egrep": true, "fgrep": true, "sed": true, "sort": true,
	"head": true, "tail": true, "wc": true, "cut": true, "tr": true, "diff": true, "uniq": true,
	"tee": true, "cat": true, "ls": true, "du": true, "df": true, "date": true, "cp": true, "mv": true,
	"ln": true, "touch": true, "mkdir": true, "chmod": true, "chown": true, "xargs": true, "tar": true,
	"comm": true, "join": true, "paste": true, "nl": true, "od": true, "base64": true, "shuf": true}

// shDashNumber reports a negative number (head -n -5, tail -n -20): a
// value every option parser takes as one.
func shDashNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// shListExpansion reports an expansion of a list: an array's elements or
// the positional parameters ("${a[@]}", "$@", $*).
func shListExpansion(src string) bool {
	for _, m := range []string{"[@]", "[*]", "$@", "${@", "$*", "${*"} {
		if strings.Contains(src, m) {
			return true
		}
	}
	return false
}

// mayBeSplit reports whether the source text of a non-literal word may
// expand to several words: not one double-quoted expansion ("$x",
// "$(…)"), or an array or argument list in quotes ("${a[@]}", "$@").
func mayBeSplit(src string) bool {
	if shListExpansion(src) {
		return true
	}
	return !(len(src) >= 2 && src[0] == '"' && src[len(src)-1] == '"' && !strings.Contains(src[1:len(src)-1], `"`))
}

// expandedShort applies a word that spells a short option and a value
// that is not a literal (-f"$HOME/.env", -o$OUT): the option with that
// value, as getopt reads it, not an operand. A word whose letter the
// entry does not know, or whose option takes no value, is not
// understood: it asks. It reports whether w was such a word.
func (u *progUse) expandedShort(w *shWord) bool {
	g := w.g
	if len(g) < 2 || !g[0].Lit() || g[0].R != '-' {
		return false
	}
	if !g[1].Lit() || len(g) > 2 && g[1].R == '-' && !g[2].Lit() {
		// -$x…, --$x…: an option the policy cannot name.
		u.setAsk("the word " + w.text + " is an option of " + u.spec.name + " the policy cannot read")
		return true
	}
	if len(g) < 3 || g[1].R == '-' || g[1].R >= 0x80 {
		return false
	}
	name := "-" + string(g[1].R)
	o := u.option(name)
	if o == nil || o.value == valNone {
		u.setAsk("the word " + w.text + " is an option of " + u.spec.name + " with a value the policy cannot read")
		return true
	}
	if w.splits {
		// -n$x with x='5 ~/.npmrc': -n5 and a file.
		u.setAsk("the word " + w.text + " holds an unquoted expansion, which may split it into an option of " + u.spec.name + " and more words")
	}
	u.apply(o, &shWord{text: strings.TrimPrefix(strings.TrimLeft(w.text, `"'`), name), g: g[2:], computed: w.computed, vars: w.vars})
	return true
}

// shortCluster reads the short options clustered in w[i] (-uo FILE,
// -oFILE; for style next -Lo 1 FILE) and returns the index of the last
// word it used.
func (u *progUse) shortCluster(w []shWord, i int) int {
	s := w[i].text
	start, known := i, true
	defer func() {
		if known {
			u.knownWords(start, i)
		}
	}()
	for j := 1; j < len(s); j++ {
		o := u.option("-" + s[j:j+1])
		if o == nil {
			if u.closedOptions() {
				u.setAsk(notUnderstood(u.progName(), "option", "-"+s[j:j+1]))
			}
			known = false
			continue
		}
		if o.effect == effRead && u.openOperands() {
			known = false // its value is read open too (knownWordsOf)
		}
		if o.value == valNone {
			u.apply(o, nil)
			continue
		}
		var v *shWord
		if u.spec.style == styleNext {
			if o.value == valRequired && i+1 < len(w) {
				i++
				v = &w[i]
				u.globValue(v)
			}
			u.apply(o, v)
			continue // the rest of the cluster: more letters
		}
		switch {
		case j+1 < len(s) && s[j+1] == '=' && j+2 < len(s):
			// rg -f=FILE: getopt's value is =FILE, clap's and lexopt's
			// (ripgrep, most Rust programs) FILE: both are read.
			u.apply(o, &shWord{text: s[j+2:], lit: true})
			v = &shWord{text: s[j+1:], lit: true}
		case j+1 < len(s):
			v = &shWord{text: s[j+1:], lit: true}
		case o.value == valRequired && i+1 < len(w):
			i++
			v = &w[i]
			u.globValue(v)
		}
		u.apply(o, v)
		break
	}
	return i
}

// dashRun is the glob of the words that start with '-'.
var dashRun = globs.Glob{{R: '-'}, globs.AnyRun}

// mayExpandToOption reports whether the word t, where the program still
// takes options, may become one: an expansion whose value may start with
// '-' ("$f", $(…)), or a pathname pattern that may match a name starting
// with '-' (*, *.txt: bash does not keep such names out, so a file named
// --checkpoint-action=exec=sh x.txt in the directory is an option of tar).
func mayExpandToOption(t *shWord) bool {
	if t.input {
		return true
	}
	if t.glob && t.g != nil {
		return globs.Intersects(t.g, dashRun)
	}
	return !t.lit && t.mayBeOption() && (t.g == nil || globs.Intersects(t.g, dashRun))
}

// mayBeOption reports whether a word that is not a literal may begin with
// '-': by its parsed parts (shLead), else by its source text.
func (t *shWord) mayBeOption() bool {
	switch t.lead {
	case leadUnset:
		return mayBeOption(t.text)
	case leadDash, leadExpansion:
		return true
	}
	return false
}

// expansionFirst reports whether a word that is not a literal begins
// with an expansion that may be an option; one that begins with a
// literal - is an option whose value is expanded, read as such.
func (t *shWord) expansionFirst() bool {
	if t.lead == leadUnset {
		return expansionFirst(t.text)
	}
	return t.lead == leadExpansion
}

// expansionFirst reports whether the source text of a non-literal word
// starts with an expansion ("$a", $(cmd)): one that starts with a
// literal - is an option whose value is expanded, read as such.
func expansionFirst(src string) bool {
	s := strings.TrimLeft(src, `"`)
	return s != "" && (s[0] == '$' || s[0] == '`')
}

// mayBeOption reports whether the source text of a non-literal word may
// expand to something starting with '-': anything but a word that starts
// with literal text or the home directory.
func mayBeOption(src string) bool {
	s := strings.TrimLeft(src, `"`)
	if s == "" {
		return false
	}
	if _, home := globs.ExpandHome(s, ""); home {
		return false
	}
	switch s[0] {
	case '$', '`', '<':
		return true
	}
	return s[0] == '-'
}

// apply records the effect of option o with value v (nil when it has
// none).
func (u *progUse) apply(o *progOption, v *shWord) {
	if u.record {
		u.seen = append(u.seen, seenOption{opt: o, value: v})
	}
	if o.effect == effModule {
		u.applyModule(o, v)
		return
	}
	if v != nil && v.lit && (o.when != nil || o.unless != nil) && !o.appliesTo(v.text) {
		return
	}
	if o.flags != nil && v != nil {
		if f := o.unknownFlag(*v); f != "" {
			u.setAsk(notUnderstood(u.spec.name+" "+o.name, "flag", f))
		}
		return
	}
	if v != nil && o.pathAfter != nil {
		var ok bool
		if v, ok = o.markedPath(v); !ok {
			return
		}
	}
	if u.applyPath(o, v) {
		return
	}
	switch o.effect {
	case effRun, effCode, effAsk:
		u.applyRun(o, v)
	case effRecursive:
		u.recursive = true
	case effInPlace:
		u.inPlace = true
		if v != nil && v.text != "" {
			u.backupSuffix(o, v)
		}
	case effBackup:
		if v != nil {
			u.backup = true
			u.backupSuffix(o, v)
		}
	case effPattern:
		u.pattern = true
		if v != nil && o.name != "-e" && o.name != "--regexp" && o.name != "-E" {
			// grep -f FILE: the pattern comes from a file it reads.
			u.reads = append(u.reads, *v)
		}
	case effStop:
		u.stop = true
	case effUnelevate:
		u.unelevate = true
	case effChdir:
		u.applyChdir(v)
	case effScript:
		if v != nil {
			u.script = v
		}
	case effFilter:
		if v != nil {
			u.filters = append(u.filters, *v)
		}
	case effList:
		u.applyList(o, v)
	case effDocument:
		if v != nil {
			u.effectOn(effDocument, *v, u.spec.name+" "+o.name)
		} else {
			u.document = true
		}
	case effFilterAny:
		u.applyFilterAny(o, v)
	}
}

// markedPath returns the path the value v of an option with path_after
// names, and false when it names none: the part after the marker for a
// read or write (curl -d @FILE), and for a write-dir value that is a list
// of keys (docker build -o type=local,dest=DIR); a plain -o DIR names
// itself whole, type=registry nothing.
func (o *progOption) markedPath(v *shWord) (*shWord, bool) {
	switch {
	case o.effect == effRead || o.effect == effWrite:
	case o.effect == effWriteDir && !(v.lit && !strings.Contains(v.text, "=")):
	default:
		return v, true
	}
	w := o.pathWord(v)
	return w, w != nil
}

// applyPath records the path an option's value names for the effects
// that name one (read, write, write-prefix, write-dir, read-dir), and
// reports whether o's effect is one of them.
func (u *progUse) applyPath(o *progOption, v *shWord) bool {
	switch o.effect {
	case effRead, effWrite, effPrefix, effWriteDir, effReadDir, effTargetDir:
	default:
		return false
	}
	if v == nil {
		return true
	}
	switch o.effect {
	case effRead:
		u.reads = append(u.reads, *v)
		if lit := literalTilde(*v); lit != nil {
			u.reads = append(u.reads, *lit)
		}
		if o.reason != "" {
			// A file the program reads as settings that can make it run
			// code (node --env-file: NODE_OPTIONS): read, and asked about.
			u.setAsk(o.reason)
		}
		if u.spec.name == "git" {
			u.reads = append(u.reads, gitTopReadings(*v)...)
		}
	case effWrite:
		if o.pipes && pipedTarget(*v) {
			u.setAsk(u.spec.name + " " + o.name + " " + v.text + " may pipe into a command")
		}
		u.writes = append(u.writes, *v)
		if lit := literalTilde(*v); lit != nil {
			u.writes = append(u.writes, *lit)
		}
		if u.spec.name == "git" && gitTopWrites[o.name] {
			u.writes = append(u.writes, gitTopReadings(*v)...)
		}
	case effPrefix:
		u.prefixes = append(u.prefixes, *v)
	case effWriteDir:
		u.dirs = append(u.dirs, *v)
	case effTargetDir:
		// Written as the last operand is without the option: a tree
		// when the entry writes trees (write_tree).
		u.writes = append(u.writes, *v)
		u.targetDir = v
	case effReadDir:
		// diff --from-file=.. reads ../NAME for each operand NAME,
		// dot files too: the directory is read as a tree, as grep -r's.
		u.reads = append(u.reads, *v)
		u.readsTree = true
	}
	return true
}

// applyModule records the module an option runs (python -m MODULE): a
// module its when: list names ends the options, its arguments read; any
// other, or one the policy cannot read, asks with the option's reason
// (python -m timeit CODE, -m code and -m pdb run their arguments or
// input as code).
func (u *progUse) applyModule(o *progOption, v *shWord) {
	switch {
	case v == nil || !v.lit:
		u.setAsk(u.spec.name + " " + o.name + " runs a module the policy cannot read")
	case o.when != nil && !o.appliesTo(v.text):
		u.setAsk(u.spec.name + " " + o.name + " " + v.text + ": " + o.reason)
	default:
		u.module = true
	}
}

// applyChdir records the directory an option makes the program work in
// (git -C, make -C); several are each relative to the one before.
func (u *progUse) applyChdir(v *shWord) {
	if v == nil {
		return
	}
	if u.chdir != nil {
		j := shWord{text: joinPath(u.chdir.text, v.text), lit: u.chdir.lit && v.lit}
		if x, _ := globs.ExpandHome(v.text, ""); path.IsAbs(x) || strings.HasPrefix(v.text, "~") || v.shellCwd {
			j = *v
		}
		v = &j
	}
	u.chdir = v
}

// applyFilterAny records an option that selects the files read by other
// than a name pattern (effFilterAny): rg's types become their globs
// later (typeFilters); anything else is any name.
func (u *progUse) applyFilterAny(o *progOption, v *shWord) {
	switch {
	case v == nil:
	case o.name == "-t" || o.name == "--type":
		u.types = append(u.types, *v) // rg -t TYPE: typeFilters
	case o.name == "--type-add" && v.lit && rgTypeAdd(v.text) != "":
		u.typeAdds = append(u.typeAdds, v.text)
	default:
		u.filters = append(u.filters, shWord{text: v.text, g: globs.Glob{globs.AnyRun}, computed: true})
	}
}

// pipedTarget reports whether the value of a write option the table marks
// pipes: (strace -o '|cmd' and '!cmd' pipe the output into the command)
// may name a command: a literal that starts with | or !, or a word that is
// not a literal and may.
func pipedTarget(v shWord) bool {
	if v.lit && v.g == nil {
		return strings.HasPrefix(v.text, "|") || strings.HasPrefix(v.text, "!")
	}
	return v.g == nil || globs.Intersects(v.g, globs.Glob{{R: '|'}, globs.AnyRun}) || globs.Intersects(v.g, globs.Glob{{R: '!'}, globs.AnyRun})
}

// backupSuffix records the backup suffix of an in-place option (sed
// -i.bak, --in-place=.orig). A suffix with a * (the file's name stands for
// it: -i'bak/*', -i'/etc/*') or a /, or one that is not a literal, puts
// the copy where the policy cannot place it: the command asks.
func (u *progUse) backupSuffix(o *progOption, v *shWord) {
	if !v.lit || v.g != nil || strings.ContainsAny(v.text, "*/") {
		u.setAsk(u.spec.name + " " + o.name + v.text + " writes the backup copy where the suffix says, which the policy cannot place")
		return
	}
	u.suffix = v.text
}

// applyList records an option whose value lists the files the program
// works on (effList): the list file is read, and the command asks, naming
// where the list comes from.
func (u *progUse) applyList(o *progOption, v *shWord) {
	from := "its standard input"
	if v != nil && !(v.lit && (v.text == "-" || v.text == "/dev/stdin")) {
		u.reads = append(u.reads, *v)
		from = v.text
	}
	u.setAsk(u.spec.name + " " + o.name + " works on the files listed in " + from + ", which the policy cannot see")
}

// typeFilters turns rg's -t TYPE into filters: the globs of ripgrep's
// built-in TYPE and those --type-add NAME:GLOB gives it; a type with
// neither, or that is not a literal, is any name (computed).
func (u *progUse) typeFilters() {
	for _, t := range u.types {
		var gs []shWord
		if t.lit {
			gs = rgTypeGlobs(t.text)
			for _, add := range u.typeAdds {
				if name, glob, _ := strings.Cut(add, ":"); name == t.text {
					for _, g := range rgBraces(glob) {
						gs = append(gs, shWord{text: g, lit: true})
					}
				}
			}
		}
		if len(gs) == 0 {
			gs = []shWord{{text: t.text, g: globs.Glob{globs.AnyRun}, computed: true}}
		}
		u.filters = append(u.filters, gs...)
	}
	u.types, u.typeAdds = nil, nil
}

// rgBraces expands one level of alternation in a ripgrep glob
// (*.{html,css}: *.html, *.css); nested or several groups are left as
// they are (filterReads then asks).
func rgBraces(g string) []string {
	i, j := strings.IndexByte(g, '{'), strings.IndexByte(g, '}')
	if i < 0 || j < i || strings.Count(g, "{") != 1 || strings.Count(g, "}") != 1 {
		return []string{g}
	}
	var out []string
	for _, alt := range strings.Split(g[i+1:j], ",") {
		out = append(out, g[:i]+alt+g[j+1:])
	}
	return out
}

// rgTypeAdd returns the type name of rg's --type-add NAME:GLOB[,GLOB],
// or "" for another form (NAME:include:TYPES, which the analysis does not
// follow: any name).
func rgTypeAdd(s string) string {
	name, list, ok := strings.Cut(s, ":")
	if !ok || name == "" || list == "" || strings.HasPrefix(list, "include:") {
		return ""
	}
	return name
}

// applyRun records the effect of an option o that runs something, with
// value v (nil when it has none): the command line it runs, or why the
// command asks.
func (u *progUse) applyRun(o *progOption, v *shWord) {
	what := u.spec.name + " " + o.name
	reason := o.reason
	switch o.effect {
	case effRun:
		if v != nil {
			u.runs = append(u.runs, progRun{what: what, value: *v, appends: o.appends})
		} else if u.ask == "" {
			u.ask = what + " runs a program it is not told on the command line"
		}
	case effCode:
		if reason == "" {
			reason = what + " runs program text the policy cannot judge"
		}
		u.setAsk(reason)
		if v != nil && (u.spec.hook == "awk" || u.spec.hook == "sed" || u.spec.hook == "jq") {
			// awk -f, sed -f, jq -f FILE: FILE is read (the rules on
			// secrets deny it), and the program comes from it, so every
			// operand is an input.
			u.reads = append(u.reads, *v)
			u.pattern = true
		}
	case effAsk:
		if reason == "" {
			reason = what + " can make " + u.spec.name + " run or write something the policy cannot see"
			if v != nil {
				reason = what + " " + v.text + " can make " + u.spec.name + " run or write something the policy cannot see"
			}
		}
		u.setAsk(reason)
	}
}

// pathWord returns the path a value of an option with pathAfter names
// (curl -d @FILE: FILE), nil when a literal value names none. A value that
// is not a literal may name any path: its path is unknown.
func (o *progOption) pathWord(v *shWord) *shWord {
	if !v.lit {
		// curl -d "@$PWD/x", -F "k=@$f": where the value may hold the
		// marker, the path after it is any path (computed: it meets
		// every read rule); a value whose literal start rules the marker
		// out names none it can see.
		t := strings.TrimLeft(v.text, `"'`)
		files := slices.ContainsFunc(o.pathAfter, func(m string) bool { return strings.ContainsAny(m, "@<") })
		any := files && (strings.HasPrefix(t, "$") || strings.HasPrefix(t, "`") ||
			slices.ContainsFunc(o.pathAfter, func(m string) bool { return strings.Contains(t, m) }))
		return &shWord{text: v.text, g: globs.Glob{globs.AnyRun}, computed: any}
	}
	p, ok := o.pathOf(v.text)
	if !ok {
		return nil
	}
	return &shWord{text: p, lit: true}
}

func (u *progUse) setAsk(reason string) {
	if u.ask == "" {
		u.ask = reason
	}
}

// operandEffects applies the entry's operand positions to the operands,
// then adds the backup copies of an in-place edit with a suffix.
func (u *progUse) operandEffects() {
	if u.module {
		// python -m pytest tests/ ~/.netrc: the module's arguments, not
		// a script and its arguments — read, and written (json.tool IN
		// OUT, venv DIR, black FILE).
		for _, w := range u.operands {
			if w.lit && strings.HasPrefix(w.text, "-") {
				// --output=FILE, --junit-xml=FILE: the value is the path.
				if _, v, ok := strings.Cut(w.text, "="); ok && v != "" {
					w = shWord{text: v, lit: true}
				} else {
					continue
				}
			}
			u.reads = append(u.reads, w)
			u.writes = append(u.writes, w)
		}
		return
	}
	u.positionEffects()
	u.defaultTree()
	if u.inPlace {
		u.backupCopies() // a backup option's: programEffects, after intoDirectory
	}
}

// backupCopies adds the backup copies of the files the command writes,
// each written path with the suffix an in-place edit (sed -i.bak) or a
// backup option (cp -b -S v new .en writes .env) gave.
func (u *progUse) backupCopies() {
	if !u.inPlace && !u.backup || u.suffix == "" {
		return
	}
	for _, w := range slices.Concat(u.writes, u.trees) {
		b := shWord{text: w.text + u.suffix, lit: w.lit}
		if w.g != nil {
			b.g = globs.Literal(slices.Clone(w.g), u.suffix)
		}
		u.writes = append(u.writes, b)
	}
}

// defaultTree records the read of the working directory's tree by a
// recursive search given no path (grep -r PATTERN, rg PATTERN: GNU grep
// and ripgrep search "." then): a program whose first operand is its
// pattern and whose other operands are the paths it reads.
func (u *progUse) defaultTree() {
	specs := u.spec.operands
	if u.sub != nil && u.sub.operands != nil {
		specs = u.sub.operands
	}
	if !u.recursive || !u.hasFirstPattern(specs) {
		return
	}
	// With filters (grep -r --include='*' X, rg -g '*' X, rg -t txt X)
	// the tree is "." all the same: filterReads reads their names under
	// it, and the tree read meets the rules anchored below it.
	// Operands that may vanish (an empty $U, "$@", a pattern under
	// nullglob) leave the program without a path: grep -r X $U reads "."
	// when U is empty, and grep -r $U ~/.ssh takes ~/.ssh for the pattern.
	paths := 0
	for _, o := range u.operands {
		if !o.vanish {
			paths++
		}
	}
	if !u.pattern {
		paths-- // the first operand is the pattern
	}
	if paths <= 0 {
		u.reads = append(u.reads, shWord{text: ".", lit: true})
	}
}

// positionEffects applies the entry's operand positions to the operands.
func (u *progUse) positionEffects() {
	specs := u.spec.operands
	if u.sub != nil && u.sub.operands != nil {
		specs = u.sub.operands
	}
	ops := u.operands
	n := len(ops)
	if w, ok := u.unplacedOperand(specs); !ok {
		// Positions count the words bash hands over: a pattern may be
		// several (uniq .g*/config writes the second match), an unquoted
		// expansion none or several (uniq $e a ~/.bashrc).
		u.setAsk("cannot tell which operand of " + u.spec.name + " is which: " + w.text + " may expand to several words or none")
	}
	for _, sp := range specs {
		e := sp.effect
		if e == effRead && u.inPlace {
			e = effWrite
		}
		var sel []shWord
		switch sp.pos {
		case posAll:
			sel = ops
		case posFirst:
			if n > 0 {
				sel = ops[:1]
			}
			if e == effPattern {
				continue
			}
		case posLast:
			if n > 0 && u.targetDir == nil {
				sel = ops[n-1:]
			}
		case posRest:
			if n > 1 {
				sel = ops[1:]
			}
			if u.pattern && u.hasFirstPattern(specs) {
				sel = ops
			}
		case posInit:
			if u.targetDir != nil {
				sel = ops // cp -t DIR a b: b is a source too
			} else if n > 1 {
				sel = ops[:n-1]
			}
		case posKey:
			u.keyOperands(sp.key, e)
			continue
		default:
			if sp.pos <= n {
				sel = ops[sp.pos-1 : sp.pos]
			}
		}
		for _, o := range sel {
			// A condition on the operand's text (man: a file when it has
			// a / or a .) holds for a word that is not a literal: it may
			// be anything. man -l makes every operand a document.
			if sp.when != nil && o.lit && !(e == effDocument && u.document) && !slices.ContainsFunc(sp.when, func(p string) bool {
				return globs.Match(p, strings.ToLower(o.text))
			}) {
				continue
			}
			if sp.reason != "" && (e == effAsk || e == effCode) {
				u.setAsk(sp.reason)
				continue
			}
			u.effectOn(e, o, u.spec.name)
		}
	}
}

// keyOperands applies effect e to the values of the KEY=value operands
// (dd of=FILE).
func (u *progUse) keyOperands(key string, e effect) {
	for _, o := range u.operands {
		v, ok := strings.CutPrefix(o.text, key)
		switch {
		case ok && o.lit:
			u.effectOn(e, shWord{text: v, lit: true}, u.spec.name+" "+key)
		case ok && e != effNone:
			// dd of=$HOME/.bashrc, make SHELL=$PWD/x: a value the
			// analysis cannot read.
			u.setAsk(u.spec.name + " " + key + " takes " + o.text + ", a value that is not a literal")
		}
	}
}

// unplacedOperand returns the first operand whose count of words decides
// which position a later one takes, or the last one when the entry gives
// the last a position of its own, that may expand to several words or to
// none: a pathname pattern or an unquoted expansion. ok is false then.
func (u *progUse) unplacedOperand(specs []progOperand) (w shWord, ok bool) {
	ops := u.operands
	need, last := 0, false
	for _, sp := range specs {
		switch {
		case sp.effect == effNone:
		case sp.pos == posFirst && !(sp.effect == effPattern && u.pattern), sp.pos == posRest && !u.pattern:
			need = max(need, 1)
		case sp.pos == posLast, sp.pos == posInit:
			last = last || u.targetDir == nil
		case sp.pos > 0:
			need = max(need, sp.pos)
		}
	}
	exact := func(w shWord) bool { return !w.vanish && !w.glob }
	for i := 0; i < need && i < len(ops); i++ {
		if !exact(ops[i]) {
			return ops[i], false
		}
	}
	if n := len(ops); last && n > 0 && !exact(ops[n-1]) {
		return ops[n-1], false
	}
	return shWord{}, true
}

func (u *progUse) hasFirstPattern(specs []progOperand) bool {
	for _, sp := range specs {
		if sp.pos == posFirst && sp.effect == effPattern {
			return true
		}
	}
	return false
}

func (u *progUse) effectOn(e effect, w shWord, what string) {
	switch e {
	case effRead:
		u.reads = append(u.reads, w)
	case effWrite:
		u.writes = append(u.writes, w)
	case effPrefix:
		u.prefixes = append(u.prefixes, w)
	case effRun:
		u.runs = append(u.runs, progRun{what: what, value: w})
	case effCode:
		u.setAsk(what + " runs program text the policy cannot judge")
	case effAsk:
		u.setAsk(what + " " + w.text + " can run or write something the policy cannot see")
	case effDocument:
		u.reads = append(u.reads, w)
		u.setAsk(what + " reads " + w.text + " as a document whose requests (roff's .so) read other files the policy cannot see")
	}
}

// treeWord is the word of every path under the directory w names (DIR/…),
// as a pattern; w itself when it is not a plain literal (any path).
func treeWord(w shWord) shWord {
	if !w.lit || w.g != nil {
		return w
	}
	d := strings.TrimSuffix(w.text, "/") + "/"
	return shWord{text: d + "*", lit: true, glob: true, g: append(globs.Literal(nil, d), globs.AnyRun)}
}

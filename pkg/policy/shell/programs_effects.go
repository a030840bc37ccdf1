package shell

import (
	"path"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

// programEffects applies the program table's entry to the command just
// emitted (a.res.Commands[ci], run in frame fr): the paths it reads
// (recorded on the command), the paths it writes (recorded as write
// targets, judged like redirections), the command lines its options run
// (analysed as nested scripts), and what makes it ask.
func (a *shAnalyzer) programEffects(ci int, words []shWord, fr shFrame) {
	c := &a.res.Commands[ci]
	if c.Unanalysable != "" || len(words) == 0 {
		return
	}
	spec := a.progs.lookup(c.Name)
	if spec == nil || spec.arityOnly() {
		a.unknownProgram(ci, words, fr)
		return
	}
	u := programUseIn(spec, words, fr)
	a.madeLink = a.madeLink || u.symlink
	if w := fedCode(words, &u, fr.feed); w != "" {
		u.setAsk(spec.name + " reads " + w + " as program text or a document, and " + fr.feed.feeder +
			" replaces it with input the policy cannot see (a file name can be a program)")
	}
	if r := a.splitWords(words); r != "" {
		u.setAsk(r)
	}
	a.info[ci].envProg = u.progName()
	a.info[ci].env = spec
	if spec.elevated {
		c.Elevated = true
		fr.elevated = true // sudoedit FILE: an elevated write
	}
	c.Options = u.global - 1
	c.Recursive = u.recursive || u.readsTree || u.symlink // ln -s DIR p: p/x reads DIR/x
	// Inert only when the table knows every word's effect (a complete
	// entry, the sub-command's when it has one) and none of them writes,
	// rewrites in place or runs anything: the closed model of "Always"
	// prefixes (arity.go).
	c.Inert = u.complete() && u.ask == "" && len(u.writes) == 0 && len(u.runs) == 0 &&
		!u.inPlace && u.script == nil && spec.wrapper == nil && !spec.elevated &&
		spec.hook != "interpreter" && !spec.runsCode && (u.sub == nil || !u.sub.runsCode)
	c.RunsFiles = u.runsFiles()
	if (u.sub != nil && u.sub.writesCwd || u.sub == nil && spec.writesCwd) && len(u.writes) == 0 {
		u.writes = append(u.writes, shWord{text: ".", lit: true})
	}
	if spec.name == "csplit" {
		u.csplitNames()
	}
	u.impliedWrites(words, fr)
	if u.backup && spec.hook != "tar" {
		// cp -b -S v x/.en d/ backs up d/.en as d/.env: the names written
		// into a directory are among the writes now.
		u.backupCopies()
	}
	// The members written are not named: any path under the tree (a
	// member tar x extracts by name is one of u.trees; --strip-components
	// and --no-anchored move where those land under the target).
	opaque := u.opaque || u.extracts && (spec.hook != "tar" || len(u.operands) == 0 || u.relocates) || spec.name == "unzip" || spec.name == "patch" && len(u.operands) == 0 ||
		u.recursive && spec.writeTree // cp -r, rsync -a: the source's members
	if u.chdir != nil {
		u.placeUnder(*u.chdir)
	}
	u.typeFilters()
	u.filters = a.filterValues(u.filters)
	u.filterReads()
	if u.ask != "" {
		c.Unanalysable = u.ask
	}
	if u.partial() || u.openOperands() {
		u.partialReads(words)
		c.Walks = true
	}
	a.recordReads(c, fr.feedWords(u.reads))
	// c is not used below: writeTarget and nested append to the commands.
	a.recordWrites(&u, spec, words, fr, opaque)
	if u.deletes {
		a.findDeletes(&u, spec, words, fr)
	}
	if (u.extracts || spec.name == "unzip" && !unzipLists(words)) && a.extractedAt < 0 {
		// Paths of the script may go through links the archive made
		// (tar xf a.tar; cat k/id_rsa): finishExtracts.
		a.extractFrom, a.extractedAt = ci, len(a.res.Commands)
	}
	a.programRuns(ci, u.runs, fr)
}

// impliedWrites adds the writes a program makes without naming them as
// operands: into the working directory (go build, unzip), a source's name
// under a target directory (cp a/HEAD x/), an install directory (go
// install), and makes a copy of one of the kernel's links ask.
func (u *progUse) impliedWrites(words []shWord, fr shFrame) {
	spec := u.spec
	if (u.sub != nil && u.sub.writesCwd || u.sub == nil && spec.writesCwd) && len(u.writes) == 0 {
		u.writes = append(u.writes, shWord{text: ".", lit: true})
	}
	if fr.feed == nil {
		u.intoDirectory(spec.name) // (a fed target is any path already)
	}
	if copyPrograms[spec.name] {
		u.kernelLinkSources()
	}
	if u.sub != nil {
		if dir, ok := installDirs[u.sub.name]; ok {
			// go install writes the program into ~/go/bin, a directory
			// on the PATH: a write outside the workspace.
			u.writes = append(u.writes, shWord{text: dir, lit: true})
		}
	}
	if spec.name == "unzip" && len(u.writes) == 0 && !unzipLists(words) {
		u.writes = append(u.writes, shWord{text: ".", lit: true}) // unzip a.zip: here
	}
}

// partialReads reads the words of a partial entry (docker, pip:
// progUse.partial), and the operands of an entry read open (kubectl, helm:
// progUse.openOperands), as an unknown program's, besides what the entry
// knows: pip install -r .env, kubectl create secret
// --from-file=~/.ssh/id_rsa, docker build ~ (its operands may be
// directories it walks). Not the working directory: what these programs do
// there (npm run, docker build .) is the project's work, which the rule
// allowing them allows.
func (u *progUse) partialReads(words []shWord) {
	rest := words[1:]
	if u.sub != nil && u.global < len(words) || len(u.known) > 0 {
		// The sub-command's name is not a path (kubectl get pods), nor
		// are the options the entry lists and their values (docker run
		// -e K=V): what they read the entry says.
		rest = make([]shWord, 0, len(words))
		for i := 1; i < len(words); i++ {
			if u.sub != nil && i == u.global || slices.Contains(u.known, i) {
				continue
			}
			rest = append(rest, words[i])
		}
	}
	u.reads = append(u.reads, unknownReads(rest)...)
	u.reads = append(u.reads, credentialFiles(u.spec.name, words)...)
}

// programRuns judges the command lines the options of the command ci run.
func (a *shAnalyzer) programRuns(ci int, runs []progRun, fr shFrame) {
	for _, r := range runs {
		if !r.value.lit {
			if a.res.Commands[ci].Unanalysable == "" {
				a.res.Commands[ci].Unanalysable = r.what + " runs a command that is not a literal: " + r.value.text
			}
			continue
		}
		if r.appends {
			a.runAppended(ci, r, fr)
			continue
		}
		a.nested(r.value.text, syntax.LangBash, fr, r.what)
	}
}

// recordWrites records the writes of a program's use: each as a Redirect
// entry, a fed one as what its feeder hands on; opaque marks writes whose
// members the command does not name. A symbolic link's writes are noted
// as its own (finishLinks).
func (a *shAnalyzer) recordWrites(u *progUse, spec *progSpec, words []shWord, fr shFrame, opaque bool) {
	first := len(a.res.Commands)
	for _, w := range u.writes {
		if strings.HasSuffix(w.text, feedStem) && (fr.feed == nil || w.text != fr.feed.mark+feedStem) {
			// A stem marker (compressNames) on a name no feeder gives:
			// the name itself, written already.
			continue
		}
		if fr.feed != nil && strings.Contains(w.text, fr.feed.mark) {
			for _, p := range fr.feedWords([]shWord{w}) {
				a.writeFed(p, fr, u.recursive || spec.writeTree)
			}
			continue
		}
		n := len(a.res.Commands)
		a.writeTarget(w, fr)
		if len(a.res.Commands) > n {
			c := &a.res.Commands[n]
			c.Recursive = u.recursive || spec.writeTree
			c.Opaque, c.Commit = opaque, opaque && u.commit
		}
	}
	for _, w := range u.prefixes {
		a.writePrefix(w, fr, splitSuffixes(spec.name, words))
	}
	for _, w := range u.trees {
		n := len(a.res.Commands)
		a.writeTarget(w, fr)
		if len(a.res.Commands) > n {
			c := &a.res.Commands[n]
			c.Recursive, c.Opaque = true, true
		}
	}
	for _, w := range u.dirs {
		// go build -o DIR/ writes DIR/NAME: the tree under the value.
		n := len(a.res.Commands)
		a.writeTarget(w, fr)
		if len(a.res.Commands) > n {
			a.res.Commands[n].Recursive = true
		}
	}
	if u.symlink {
		for i := first; i < len(a.res.Commands); i++ {
			a.linkOwn = append(a.linkOwn, i) // its targets: lnTargets judged them
		}
	}
}

// runAppended judges the program an option runs with arguments the runner
// appends (rg --pre PROG: PROG FILE for each file searched) as that
// program with one more word, input the policy cannot see: a program
// whose first operand is its code (awk, sed, jq) then asks, and one that
// reads it reads any path. A value that is not a plain program and words
// (shell syntax) asks.
func (a *shAnalyzer) runAppended(ci int, r progRun, fr shFrame) {
	if strings.ContainsAny(r.value.text, "|&;<>()$`\\\"'*?[]{}~#=") {
		if a.res.Commands[ci].Unanalysable == "" {
			a.res.Commands[ci].Unanalysable = r.what + " runs " + shQuoteShort(r.value.text) +
				" with arguments of its own appended, which the policy does not read in shell syntax"
		}
		return
	}
	var words []shWord
	for _, f := range strings.Fields(r.value.text) {
		words = append(words, shWord{text: f, lit: true})
	}
	if len(words) == 0 {
		return
	}
	words = append(words, shWord{text: shXargsArgs, lit: true})
	sub := fr.withWrapper(r.what)
	sub.feed = shFeedAny(shXargsArgs, r.what)
	a.resolve(sub.feed.markInput(words), sub)
}

// fedCode returns a word of a command run by a feeder (find -exec, xargs,
// rg --pre) that holds the feed's mark and that the program's entry did
// not read as a path it reads or writes — for awk, sed and jq, whose first
// operand is code, the program text itself (find . -exec awk {} \;, a
// file named BEGIN{system(…)}); for man, any (a fed path is a roff file,
// whose .so reads any other) — or "".
func fedCode(words []shWord, u *progUse, f *shFeed) string {
	if f == nil || f.mark == "" {
		return ""
	}
	man := u.spec.name == "man" // a name with a / is a roff file whose .so reads any file
	switch {
	case man, u.spec.hook == "awk", u.spec.hook == "sed", u.spec.hook == "jq":
	default:
		return ""
	}
	for _, w := range words[1:] {
		if !strings.Contains(w.text, f.mark) {
			continue
		}
		if man {
			return w.text
		}
		used := false
		for _, r := range u.reads {
			used = used || r.text == w.text
		}
		for _, r := range u.writes {
			used = used || r.text == w.text
		}
		if !used {
			return w.text
		}
	}
	return ""
}

// splitWords returns why a word of words is not what the table reads it
// as, or "": an unquoted expansion of a variable the script sets to a
// literal with blanks splits into several words (o="-r ~/.ssh"; grep $o x
// gives grep the option -r and the operand ~/.ssh).
func (a *shAnalyzer) splitWords(words []shWord) string {
	for _, w := range words[1:] {
		if w.lit || len(w.vars) == 0 || !mayBeSplit(w.text) {
			continue
		}
		for _, v := range w.vars {
			for _, val := range a.varVals[v] {
				if strings.ContainsAny(val.text, " \t\n") {
					return "the word " + w.text + " splits into several words (" + v + " is " + shQuoteShort(val.text) + "), which the policy does not read one by one"
				}
			}
		}
	}
	return ""
}

// unzipLists reports unzip's modes that write no file: -l, -v, -t, -p,
// -z, -Z (list, test, print, comment, zipinfo).
func unzipLists(words []shWord) bool {
	for _, w := range words[1:] {
		if w.lit && len(w.text) > 1 && w.text[0] == '-' && w.text[1] != '-' && strings.ContainsAny(w.text[1:], "lvtpzZ") {
			return true
		}
	}
	return false
}

// finishExtracts makes a script ask when it unpacks an archive and reads
// or writes a path: the archive may hold symbolic links (k -> ~/.ssh, rc
// -> ~/.bashrc) that the path goes through, which its text does not show.
// Any path of the script counts, not only those written after it: a loop,
// a trap or a function may run them later.
func (a *shAnalyzer) finishExtracts() {
	if a.extractedAt < 0 {
		return
	}
	for i, c := range a.res.Commands {
		if i >= a.extractFrom && i < a.extractedAt {
			continue // the extraction and its own writes
		}
		if c.Redirect || len(c.Reads) > 0 {
			a.codeUnknown("the script reads or writes " + shQuoteShort(c.Target+strings.Join(c.Reads, " ")) +
				" after unpacking an archive, whose members may be links to anywhere")
			return
		}
	}
}

// programUse reads a command's words with its program's entry: by the
// hook that knows the program's grammar, else by the entry's options and
// operands, completed by the hook that knows more of what they do.
func programUse(spec *progSpec, words []shWord) progUse {
	switch spec.hook {
	case "find":
		return findUse(spec, words)
	case "fd":
		return fdUse(spec, words)
	case "tar":
		return tarUse(spec, words)
	}
	u := scanProgram(spec, words, spec.wrapper != nil || spec.optionsFirst)
	u.settingsWrites(words)
	switch spec.hook {
	case "sed":
		u.sedScripts(words)
	case "awk":
		u.awkProgram(words)
	case "apply_patch":
		u.patchOperands()
	case "jq":
		u.jqFiles(words)
	case "ln":
		u.lnTargets(words)
	case "make":
		u.makeArgs(words)
	case "curl":
		u.curlValues()
	case "wget":
		u.wgetNames()
	case "compress":
		u.compressNames()
	case "npm":
		u.npmSettings(words)
	case "kubectl":
		u.kubectlConfigSet(words)
	case "git":
		u.gitPaths(words)
		u.gitWrites(words)
		u.gitConfiguredTool(words)
		u.gitFormatPatch(words)
		u.gitNotesMessage(words)
		u.gitSourceRepository(words)
	}
	return u
}

// recordReads records on c the paths a command reads: each of reads, and
// the values the script gave the variables a read expands.
func (a *shAnalyzer) recordReads(c *Command, reads []shWord) {
	for _, r := range reads {
		if r.lit && len(r.text) > 1 && r.text[0] == '@' && r.g == nil {
			// strings @FILE, gcc @FILE, javac @FILE: programs that expand
			// response files read FILE first (and echo its words in
			// errors); a file named @FILE is read as well.
			reads = append(reads, shWord{text: r.text[1:], lit: true})
		}
	}
	if len(a.varVals) > 0 {
		// A read of "$f" where the script set f=VALUE: VALUE is read too.
		for _, r := range reads {
			if r.lit {
				continue
			}
			if name := varOfWord(r.text); name != "" {
				reads = append(reads, a.varVals[name]...)
			}
		}
	}
	for _, r := range reads {
		if r.g != nil && (r.computed || len(r.vars) > 0) {
			if c.readVars == nil {
				c.readVars = make([][]string, len(c.Reads), len(reads))
				c.ReadAny = make([]bool, len(c.Reads), len(reads))
			}
			vars := r.vars
			if varOfWord(r.text) == "" {
				// "./$f", "$f.bak": the literal values of f are not read
				// as they are (finishReads).
				vars = make([]string, len(r.vars))
				for i, v := range r.vars {
					vars[i] = "~" + v
				}
			}
			c.readVars = append(c.readVars, vars)
			c.ReadAny = append(c.ReadAny, r.computed)
		} else if c.readVars != nil {
			c.readVars = append(c.readVars, nil)
			c.ReadAny = append(c.ReadAny, false)
		}
		t := r.pathText()
		if !r.lit {
			// "$HOME/.ssh/x": the source form without its quotes, so that
			// home expansion and the patterns see the path.
			t = strings.ReplaceAll(t, `"`, "")
		}
		if r.g != nil {
			// A pattern or an expansion (cat .e*, cat "$f") reads whatever
			// it names: judged as every path it can stand for, like an
			// input redirection's target.
			if c.ReadGlobs == nil {
				c.ReadGlobs = make([]globs.Glob, len(c.Reads), len(reads))
			}
			c.ReadGlobs = append(c.ReadGlobs, r.g)
		} else if c.ReadGlobs != nil {
			c.ReadGlobs = append(c.ReadGlobs, nil)
		}
		c.Reads = append(c.Reads, t)
	}
}

// tarUse reads tar's words: its mode (c, x, t…, in any spelling: old
// style "czf", -c, --create) decides whether -f FILE is read or written,
// whether the operands are read (create) and where extraction writes (-C
// DIR, else the working directory).
func tarUse(spec *progSpec, w []shWord) progUse {
	words := w
	if len(w) > 1 && w[1].lit && w[1].text != "" && w[1].text[0] != '-' {
		// Old style: "tar czf out.tgz dir": letters are options whose
		// values follow in order.
		words = []shWord{w[0]}
		next := 2
		for _, c := range w[1].text {
			opt := "-" + string(c)
			words = append(words, shWord{text: opt, lit: true})
			if o := spec.options[opt]; o != nil && o.value == valRequired && next < len(w) {
				words = append(words, w[next])
				next++
			}
		}
		words = append(words, w[next:]...)
	}
	u := scanProgram(spec, words, false)
	mode, file, dir, renames, relocates := tarMode(u.seen)
	u.relocates = relocates
	if file != nil && file.lit {
		if host, _, ok := strings.Cut(file.text, ":"); ok && !strings.Contains(host, "/") {
			u.setAsk("tar -f " + file.text + " names a remote archive, which tar reaches by running rsh or ssh")
		}
	}
	switch mode {
	case 'c':
		if file != nil && file.text != "-" {
			u.writes = append(u.writes, *file)
		}
		if renames == "-C" || renames == "--directory" {
			u.setAsk("tar with several -C archives each name from the directory before it, which the policy does not follow")
		}
		u.recursive = true
		for _, op := range u.operands {
			// tar -C DIR c NAME archives DIR/NAME.
			if x, home := globs.ExpandHome(op.text, ""); dir != nil && !home && !path.IsAbs(x) && !op.shellCwd {
				if !dir.lit || !op.lit {
					u.setAsk("tar -C " + dir.text + " makes " + op.text + " a path the policy cannot place")
					continue
				}
				if op.g != nil || dir.g != nil {
					// tar -C ~ c .s*: bash expands the pattern here, to
					// names tar then reads under DIR: DIR/PATTERN; and
					// tar -C ~/.s* c . reads under what the pattern names.
					p := joinPath(dir.text, op.text)
					op = shWord{text: p, lit: true, glob: true, g: globs.FromPathText(p)}
				} else {
					op = shWord{text: joinPath(dir.text, op.text), lit: true}
				}
			}
			u.reads = append(u.reads, op)
		}
	case 'x':
		if file != nil && file.text != "-" {
			u.reads = append(u.reads, *file)
		}
		target := shWord{text: ".", lit: true}
		if dir != nil {
			target = *dir
		}
		u.recursive = true
		u.extracts = true
		u.writes = append(u.writes, target)
		u.tarMembers(target, renames)
	default:
		if file != nil && file.text != "-" {
			u.reads = append(u.reads, *file)
		}
	}
	u.backupCopies()
	return u
}

// tarMode reads tar's options as scanned: its mode ('c' for the modes
// that write the archive, 'x' extract, 't' list or compare, 0 none), the
// archive (-f), the directory (-C), and the renaming option used, if any.
func tarMode(seen []seenOption) (mode byte, file, dir *shWord, renames string, relocates bool) {
	for _, s := range seen {
		switch s.opt.name {
		case "--transform", "--xform", "-s":
			// -s is bsdtar's (macOS tar's) rename, GNU tar's
			// --same-order: which tar runs is not known.
			renames = s.opt.name
		case "-c", "--create", "-r", "--append", "-u", "--update", "-A", "--catenate", "--concatenate":
			mode = 'c'
		case "-x", "--extract", "--get":
			mode = 'x'
		case "-t", "--list", "-d", "--diff", "--compare":
			if mode == 0 {
				mode = 't'
			}
		case "--delete":
			mode = 'c' // rewrites the archive
		case "-f", "--file":
			file = s.value
		case "--strip-components", "--no-anchored":
			relocates = true
		case "-C", "--directory", "--one-top-level":
			if dir != nil || s.opt.name == "--one-top-level" && s.value == nil {
				// Each -C applies to the names after it (and
				// --one-top-level without a name makes one from the
				// archive's): where each lands is not followed.
				renames = s.opt.name
			}
			dir = s.value
		}
	}
	return mode, file, dir, renames, relocates
}

// tarMembers adds the writes of the members tar x extracts by name
// (tar xf a.tar .env writes ./.env, -C DIR writes DIR/.env, and the tree
// under it when the member is a directory): the tree write of the target
// does not meet a rule on a file's name, a member's write does. A member that is not a literal (an expansion, or a pattern
// tar --wildcards matches) asks, and so does --transform, which renames
// what lands.
func (u *progUse) tarMembers(target shWord, renames string) {
	if renames != "" {
		u.setAsk("tar " + renames + " changes where the members it extracts land, so the files it writes are not judged")
	}
	for _, op := range u.operands {
		if !op.lit || op.g != nil || !target.lit || strings.ContainsAny(op.text, "*?[\\") {
			u.setAsk("tar extracts the member " + op.text + " under " + target.text + ", which the policy cannot place")
			continue
		}
		// tar drops a member's leading / (without -P, which asks). A
		// member may be a directory, whose whole tree tar extracts (red
		// team U5: a member foo holding foo/.git/config).
		u.trees = append(u.trees, shWord{text: joinPath(target.text, strings.TrimLeft(op.text, "/")), lit: true})
	}
}

// awkProgram checks the awk program (the first operand, or -e/--source
// text): system(), pipes to and from commands ("cmd" | getline, print |
// "cmd"), print and printf redirected to a file, and gawk's @load and
// @include make it ask. -f FILE is code the table marks already.
func (u *progUse) awkProgram(w []shWord) {
	var progs []shWord
	for _, s := range u.seen {
		if (s.opt.name == "-e" || s.opt.name == "--source") && s.value != nil {
			progs = append(progs, *s.value)
		}
	}
	if !u.pattern && len(u.operands) > 0 {
		progs = append(progs, u.operands[0])
	}
	for _, p := range progs {
		if !p.lit {
			u.setAsk("awk program is not a literal: " + p.text)
			continue
		}
		r, writes := awkDanger(p.text)
		if r != "" {
			u.setAsk(r)
		}
		for _, f := range writes {
			u.writes = append(u.writes, shWord{text: f, lit: true})
		}
	}
}

// awkDanger returns why an awk program may run a command, read a file its
// operands do not name, or write a file, or "". It reads the program as
// awk's lexer does, so that text inside strings and regular expressions
// is skipped and nothing outside them is: a '/' after an operand (a name
// that is not a keyword, a number, a string, ')' or ']') divides, and
// anywhere else starts a regular expression, which ends at a '/' outside
// a bracket expression. What the scan cannot read (a string or regular
// expression left open) asks. A '>' counts as a redirection when it
// follows print or printf in the same statement outside parentheses: to a
// plain string that ends the statement (print > "out.txt") it is a write
// of that file, returned in writes; to anything else it asks. A getline
// followed later by a '<' reads a file.
func awkDanger(src string) (string, []string) {
	l := awkLexer{src: src}
	for ; l.i < len(src); l.i++ {
		c := src[l.i]
		if c != ' ' && c != '\t' && c != '\r' && c != '\\' && c != '#' && c != '\n' {
			l.last = c
		}
		why := ""
		switch {
		case c == ' ' || c == '\t' || c == '\r':
		case c == '\\':
			l.i++ // a line continuation, or a stray escape
		case c == '"' || c == '/' && !l.operand || c == '#':
			why = l.skip(c)
		case c == '(' || c == '[' || c == ')' || c == ']':
			l.bracket(c)
		case c == ';' || c == '\n' || c == '}' || c == '{':
			l.endStatement(c)
		case c >= '0' && c <= '9' || c == '.' && l.i+1 < len(src) && src[l.i+1] >= '0' && src[l.i+1] <= '9':
			l.number()
		case isAwkIdent(c):
			why = l.name()
		default:
			why = l.operator(c)
		}
		if why != "" {
			return why, nil
		}
	}
	return "", l.writes
}

// awkLexer is where [awkDanger] is in an awk program and what the tokens
// read so far say about the next one.
type awkLexer struct {
	src string
	i   int // the index of the character being read

	inPrint bool   // in a print or printf statement: a '>' may redirect it
	depth   int    // the parentheses open since print or printf
	operand bool   // the last token ends an operand: a '/' divides
	getline bool   // a getline was read: a '<' reads a file
	last    byte   // the last character of the last token: a newline after , && || ? : continues the statement
	word    string // the last token, when a name: if ( … ) is no operand
	parens  []bool // for each open '(', whether it follows if, while or for

	writes []string // the files print redirects to
}

// skip reads past the string, regular expression or comment that starts
// at c, and returns why the program asks when it is left open.
func (l *awkLexer) skip(c byte) string {
	switch c {
	case '"':
		if l.i = awkSkip(l.src, l.i+1, '"'); l.i < 0 {
			return "awk program has a string the policy cannot read"
		}
		l.operand = true
	case '/':
		if l.i = awkSkip(l.src, l.i+1, '/'); l.i < 0 {
			return "awk program has a regular expression the policy cannot read"
		}
		l.operand = true
	default: // '#'
		for l.i < len(l.src) && l.src[l.i] != '\n' {
			l.i++
		}
		l.i--
	}
	return ""
}

// bracket reads an opening or closing parenthesis or bracket. What closes
// is an operand, except the condition of if, while and for: a statement
// starts after it, and a '/' there begins a regular expression.
func (l *awkLexer) bracket(c byte) {
	switch c {
	case '(':
		l.depth++
		l.parens = append(l.parens, l.word == "if" || l.word == "while" || l.word == "for")
		l.operand = false
	case '[':
		l.operand = false
	case ')':
		l.depth--
		l.operand = true
		if n := len(l.parens); n > 0 {
			l.operand = !l.parens[n-1]
			l.parens = l.parens[:n-1]
		}
	default: // ']'
		l.operand = true
	}
	l.word = ""
}

// endStatement reads a character that may end a statement: ';', a brace,
// or a newline, unless it follows , && || ? or : (awk goes on after those).
func (l *awkLexer) endStatement(c byte) {
	if c == '\n' && strings.IndexByte(",&|?:", l.last) >= 0 {
		return
	}
	l.inPrint, l.depth, l.operand = false, 0, false
}

// number reads a number, an operand.
func (l *awkLexer) number() {
	for l.i+1 < len(l.src) && (isAwkIdent(l.src[l.i+1]) || l.src[l.i+1] == '.') {
		l.i++
	}
	l.operand = true
}

// name reads a name, a keyword or not, and returns why the program asks
// when the name runs a command, changes what the program reads or its
// state, or is read differently by gawk and mawk before a '/'.
func (l *awkLexer) name() string {
	j := l.i
	for j < len(l.src) && isAwkIdent(l.src[j]) {
		j++
	}
	word := l.src[l.i:j]
	l.word, l.i = word, j-1
	l.operand = !awkKeywords[word]
	if awkAmbiguous[word] {
		k := j
		for k < len(l.src) && (l.src[k] == ' ' || l.src[k] == '\t') {
			k++
		}
		if k < len(l.src) && l.src[k] == '/' {
			return "awk reads the / after " + word + " differently in gawk and mawk"
		}
	}
	switch word {
	case "print", "printf":
		l.inPrint, l.depth = true, 0
	case "system":
		return "awk program runs a command (system)"
	case "getline":
		l.getline = true
	case "ARGV", "ARGC", "SYMTAB", "PROCINFO", "FUNCTAB":
		return "awk program changes the files it reads or its own state (" + word + ")"
	}
	return ""
}

// operator reads any other character, and returns why the program asks
// when it pipes, loads an extension, reads a file with getline or
// redirects print to a file not named by a plain string. A redirection
// to a plain string is a write of that file, kept in l.writes.
func (l *awkLexer) operator(c byte) string {
	src, i := l.src, l.i
	switch {
	case c == '|':
		if i+1 < len(src) && src[i+1] == '|' {
			l.i++
			l.operand = false
			return ""
		}
		return "awk program pipes to or from a command (|)"
	case c == '@':
		return "awk program loads an extension or includes a file (@)"
	case c == '<' && l.getline:
		return "awk program reads a file (getline <)"
	case c == '>' && l.inPrint && l.depth <= 0:
		f, end := awkRedirectFile(src, i+1)
		if end < 0 {
			return "awk program redirects print to a file (>) the policy cannot read"
		}
		l.writes = append(l.writes, f)
		l.i = end
		return ""
	case (c == '+' || c == '-') && i+1 < len(src) && src[i+1] == c:
		l.i++ // ++ and -- leave an operand an operand
		return ""
	}
	l.operand, l.word = false, ""
	return ""
}

// awkRedirectFile reads the target of a print redirection whose '>'
// ends at i-1 (a second '>' appends): a plain string ending the
// statement, returned with the index of its closing quote, else end -1.
func awkRedirectFile(src string, i int) (file string, end int) {
	if i < len(src) && src[i] == '>' {
		i++
	}
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	if i >= len(src) || src[i] != '"' {
		return "", -1
	}
	k := awkSkip(src, i+1, '"')
	if k < 0 || strings.ContainsRune(src[i+1:k], '\\') || k == i+1 || strings.HasPrefix(src[i+1:k], "/inet") {
		return "", -1 // gawk's /inet/tcp/… opens a connection
	}
	j := k + 1
	for j < len(src) && (src[j] == ' ' || src[j] == '\t') {
		j++
	}
	if j < len(src) && !strings.ContainsRune(";}\n", rune(src[j])) {
		return "", -1 // print > "a" "b" concatenates
	}
	return src[i+1 : k], k
}

// awkKeywords are the names after which a '/' starts a regular
// expression: they are not operands (getline is one: getline / 2
// divides its result).
var awkKeywords = map[string]bool{"print": true, "printf": true, "return": true, "in": true, "if": true,
	"while": true, "for": true, "do": true, "else": true, "delete": true, "exit": true, "next": true,
	"nextfile": true, "function": true, "BEGIN": true, "END": true}

// awkAmbiguous are the names gawk reads as keywords and mawk as variables
// (so a '/' after one starts a regular expression in one awk and divides
// in the other): a '/' after one asks.
var awkAmbiguous = map[string]bool{"func": true, "BEGINFILE": true, "ENDFILE": true, "case": true,
	"switch": true, "default": true}

// awkSkip returns the index of the quote that closes a string ('"') or a
// regular expression ('/') whose text starts at i in src, or -1 when it is
// not closed. Backslash escapes a character; in a regular expression a
// bracket expression may hold a '/' ([/], []/], [^]/]).
func awkSkip(src string, i int, quote byte) int {
	for ; i < len(src); i++ {
		switch c := src[i]; {
		case c == '\\':
			i++
		case c == '\n':
			return -1
		case c == quote:
			return i
		case c == '[' && quote == '/':
			j := i + 1
			if j < len(src) && src[j] == '^' {
				j++
			}
			if j < len(src) && src[j] == ']' {
				j++
			}
			for j < len(src) && src[j] != ']' {
				if src[j] == '[' && j+1 < len(src) && strings.IndexByte(":.=", src[j+1]) >= 0 {
					// [:alpha:], [.x.], [=x=]: a ']' inside is theirs.
					end := strings.Index(src[j+2:], string(src[j+1])+"]")
					if end < 0 {
						return -1
					}
					j += 2 + end + 2
					continue
				}
				if src[j] == '\\' {
					j++
				}
				if j >= len(src) || src[j] == '\n' {
					return -1
				}
				j++
			}
			if j >= len(src) {
				return -1
			}
			i = j
		}
	}
	return -1
}

func isAwkIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// AnalyzeWith is Analyze with the policy's program table, through
// the table's cache. The result may be shared: it must not be modified.
func AnalyzeWith(src string, progs *Programs) Analysis {
	if progs != nil && progs.shells != nil {
		return progs.shells.analyze(src, func(src string) Analysis { return analyzeShellUncached(src, progs) })
	}
	return analyzeShellUncached(src, progs)
}

func analyzeShellUncached(src string, progs *Programs) Analysis {
	var budget shBudget
	a := shAnalyze(src, syntax.LangBash, 0, progs, &budget)
	res := a.res
	a.release()
	return res
}

// placeUnder resolves the relative paths the command reads and writes
// against the directory its chdir option names (git -C /etc … --output=x
// writes /etc/x). A directory that is not a literal makes them unknown:
// the command asks.
func (u *progUse) placeUnder(dir shWord) {
	relative := func(w shWord) bool {
		x, home := globs.ExpandHome(w.text, "")
		return !home && !path.IsAbs(x) && !w.shellCwd
	}
	move := func(ws []shWord) {
		for i, w := range ws {
			if !relative(w) {
				continue
			}
			if !dir.lit || !w.lit {
				u.setAsk(u.spec.name + " works in " + dir.text + ", so " + w.text + " may be anywhere")
				continue
			}
			ws[i] = shWord{text: joinPath(dir.text, w.text), lit: true}
		}
	}
	move(u.reads)
	move(u.writes)
	move(u.prefixes)
	move(u.dirs)
}

// gitContentSubs are the git sub-commands that print the content of the
// paths they are given: in the working tree (git diff .env, git diff
// --no-index ~/.ssh/id_rsa /dev/null), or as committed (git show
// HEAD:.env, git log -p -- .env).
var gitContentSubs = map[string]bool{
	"show": true, "log": true, "diff": true, "blame": true, "annotate": true, "grep": true,
	"whatchanged": true, "cat-file": true, "archive": true, "diff-files": true, "diff-index": true,
	"diff-tree": true, "format-patch": true, "shortlog": false,
	// Not printing, but pointing a name at what REV:PATH names (git tag
	// v1 HEAD:key, git notes add -C HEAD:key), which show -s and log
	// then print.
	"tag": true, "notes": true, "update-ref": true,
}

// gitContentVerbs are the git sub-commands that print what files hold
// (or copy it where it is printed) beside those of gitContentSubs, and
// gitContentOptions the options that make a sub-command that otherwise
// prints names print the changes of the files it names too (red team
// AO F1, F2: git status -vv -- .env printed the staged and the work
// tree's diff of .env, judged as a listing of names). Each is a
// content reader as git diff is: its pathspecs are reads, and with none
// it reads the tree.
var (
	gitContentVerbs = map[string]bool{"merge-tree": true, "fast-export": true, "unpack-file": true,
		"range-diff": true, "request-pull": true, "bundle": true, "rerere": true}
	gitContentOptions = map[string][]string{
		"status":   {"-v", "--verbose"},
		"commit":   {"-v", "--verbose", "-p", "--patch", "--interactive"},
		"stash":    {"-p", "--patch"},
		"add":      {"-p", "--patch", "-i", "--interactive", "-e", "--edit"},
		"reset":    {"-p", "--patch"},
		"checkout": {"-p", "--patch"},
		"restore":  {"-p", "--patch"},
		"am":       {"--show-current-patch"},
		"rebase":   {"--show-current-patch"},
	}
)

// gitPrintsContent reports a git sub-command that prints what files hold
// with these words: a content sub-command, or one of gitContentOptions'
// (a short option bundled with others, -sv, counts; a word the policy
// cannot read may be any of them).
func (u *progUse) gitPrintsContent(sub string, args []shWord) bool {
	if gitContentSubs[sub] || gitContentVerbs[sub] {
		return true
	}
	opts := gitContentOptions[sub]
	if opts == nil {
		return false
	}
	for _, t := range args {
		if !t.lit {
			return true
		}
		if t.text == "--" {
			break
		}
		for _, o := range opts {
			if u.gitOptionIs(t.text, o) {
				return true
			}
		}
	}
	return false
}

// gitOptionIs reports whether the option word w may be git's option o:
// o itself, o=VALUE, a short o bundled with others (-sv), or any prefix of
// a long o (git takes a unique prefix: --verb is --verbose, red team AQ
// F1), counted whether or not it is unique — but for a word that is an
// option of its own (--color is not --color-words).
func (u *progUse) gitOptionIs(w, o string) bool {
	name, _, _ := strings.Cut(w, "=")
	switch {
	case w == o:
		return true
	case strings.HasPrefix(o, "--"):
		return len(name) > 2 && strings.HasPrefix(o, name) && (name == o || u.option(name) == nil && u.option(name+"=") == nil)
	case len(o) == 2 && len(w) > 2 && w[0] == '-' && w[1] != '-':
		return strings.ContainsRune(w[1:], rune(o[1]))
	}
	return false
}

// gitWholeDiff reports git words after which the changes printed are not
// limited to the pathspec: status -v and commit -v print every staged
// change whatever paths they are given (git status -vv -- proj printed
// the home's key, red team AQ F2), log --full-diff every file of the
// commits the paths select (AQ F15).
func (u *progUse) gitWholeDiff(sub string, args []shWord) bool {
	switch sub {
	case "status", "commit":
		return u.gitPrintsContent(sub, args)
	case "log", "whatchanged", "show":
		for _, t := range args {
			if !t.lit || t.text == "--" {
				return !t.lit
			}
			if u.gitOptionIs(t.text, "--full-diff") {
				return true
			}
		}
	}
	return false
}

// gitPaths records the paths a content-printing git sub-command reads:
// every operand that looks like a path (gitLooksLikePath; all of them
// under diff --no-index), the PATH of REV:PATH, and everything after --.
// git grep's first operand is its pattern unless -e or -f gave one.
func (u *progUse) gitPaths(w []shWord) {
	if u.global >= len(w) || !w[u.global].lit || !u.gitPrintsContent(w[u.global].text, w[u.global+1:]) {
		return
	}
	sub := w[u.global].text
	// git grep's first operand is its pattern; stash's, bundle's and
	// rerere's their verb (git stash show -p).
	patternFirst := sub == "grep" || sub == "stash" || sub == "bundle" || sub == "rerere"
	before, tree := len(u.reads), u.gitPrintsTree(sub, w[u.global+1:])
	dashes, noIndex := false, sub == "diff" && gitDiffNoIndex(w[u.global+1:])
	// diff --no-index compares directories too, reading every file under
	// them: its operands are trees, as for diff -r.
	u.recursive = u.recursive || noIndex
	for i := u.global + 1; i < len(w); i++ {
		t := w[i]
		if !dashes && t.lit && t.text == "--" {
			dashes = true
			continue
		}
		if !dashes && t.lit && sub == "grep" && len(t.text) > 1 && t.text[0] == '-' {
			var gave bool
			i, gave = u.gitGrepOption(w, i)
			patternFirst = patternFirst && !gave
			continue
		}
		if !dashes && t.lit && u.gitTakesNext(t.text) && !strings.HasPrefix(t.text, "-L") {
			i++ // git log -n 20: the option's value, not an operand
			continue
		}
		if !dashes && t.lit && strings.HasPrefix(t.text, "-") {
			if strings.HasPrefix(t.text, "-L") && (sub == "log" || sub == "blame" || sub == "annotate") {
				i = u.gitLineRange(w, i)
			}
			continue
		}
		if patternFirst && !dashes {
			patternFirst = false
			continue
		}
		if !dashes && !t.lit && t.g != nil && shLiteralGlob(t.g) {
			// "$(git rev-parse HEAD:deploy/key)" is judged as its REV.
			t = shWord{text: t.g.String(), lit: true}
		}
		if !dashes && t.lit && gitPathspecMagic(t.text) == "" && u.gitRevPath(t.text, t.glob) {
			continue
		}
		if sub == "tag" || sub == "notes" || sub == "update-ref" {
			continue // names and revisions (git tag -l 'v1.*'): only REV:PATH reads
		}
		switch {
		case noIndex && !dashes:
			u.reads = append(u.reads, t) // diff --no-index: files, not pathspecs
		case dashes || t.lit && (gitLooksLikePath(t.text) || gitPathspecMagic(t.text) != "" || strings.ContainsAny(t.text, "*?[")):
			u.gitPathspec(t, tree)
		case t.lit && (strings.HasPrefix(t.text, "~") || strings.Contains(t.text, "/")):
			// Not a path by its look (~/.ssh/id_rsa, x/../.env,
			// origin/main): git takes it for a path when no revision of
			// that name resolves, and git diff A B with a path outside
			// the repository compares the files (no-index). A literal is
			// never dropped: it is a read too.
			u.recursive = u.recursive || sub == "diff"
			u.reads = append(u.reads, t)
		case !t.lit && !gitLooksLikeRevision(t):
			u.reads = append(u.reads, t)
		case t.lit && !gitRevisionName(t.text):
			// git log -p deploy: a word that is not a revision's syntax
			// is a path whenever no revision of that name resolves; a
			// read costs nothing where no rule names it (git log main).
			u.reads = append(u.reads, t)
		}
	}
	u.gitTreeRead(sub, w, before, tree)
}

// gitTreeRead finishes gitPaths: a content sub-command that prints the
// tree (tree) with no path among the reads from before on reads "."; and
// every read is a tree.
func (u *progUse) gitTreeRead(sub string, w []shWord, before int, tree bool) {
	if tree && (!slices.ContainsFunc(u.reads[before:], func(r shWord) bool { return !r.vanish }) ||
		(sub == "show" || sub == "cat-file") && !gitOnlyHeads(w[u.global+1:]) || u.gitWholeDiff(sub, w[u.global+1:])) {
		// git show v1: a name may be a tag of any object, a blob too.
		// No path (git log -p, git diff, git show HEAD~2, git grep X) or
		// only exclusions (git log -p -- ':!src'): the whole tree's
		// content, as for grep -r X.
		u.reads = append(u.reads, shWord{text: ".", lit: true})
	}
	if len(u.reads) > 0 {
		// A pathspec names everything under a directory (git log -p --
		// deploy prints every file there): the reads are trees.
		u.recursive = true
	}
}

// gitDiffNoIndex reports whether git diff's words before -- hold
// --no-index: its operands are then files, not pathspecs.
func gitDiffNoIndex(words []shWord) bool {
	for _, t := range words {
		if t.lit && t.text == "--" {
			break
		}
		if t.lit && t.text == "--no-index" {
			return true
		}
	}
	return false
}

// gitGrepOption reads the option word w[i] of git grep, by its entry
// (-A 3, --max-depth 2, clusters such as -ne PATTERN or -eKEY): it
// returns the index of the last word the option used, and whether it gave
// the pattern (-e, -f; the scan recorded -f's file as a read), so that the
// first operand is then a pathspec, not the pattern.
func (u *progUse) gitGrepOption(w []shWord, i int) (int, bool) {
	s := w[i].text
	if strings.HasPrefix(s, "--") {
		name, _, hasVal := strings.Cut(s, "=")
		o := u.longOption(name)
		if o != nil && !hasVal && o.value == valRequired {
			i++
		}
		return i, false
	}
	for j := 1; j < len(s); j++ {
		o := u.option("-" + s[j:j+1])
		if o == nil || o.value == valNone {
			continue
		}
		if j+1 == len(s) && o.value == valRequired {
			i++
		}
		return i, s[j] == 'e' || s[j] == 'f'
	}
	return i, false
}

// gitRevPath records the read of PATH in an operand REV:PATH (HEAD:.env,
// :0:.env, :.env, origin/main:.env): the blob at PATH. It reports whether
// the operand is wholly that; dir/a:b may also be a path of its own.
func (u *progUse) gitRevPath(s string, pattern bool) bool {
	rev, _, ok := strings.Cut(s, ":")
	if !ok {
		return false
	}
	// Every ":" may be the one git splits at: a revision may hold one
	// (HEAD^{/fix: x}:deploy/key), so each suffix is a PATH read.
	for i := 0; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		if p := strings.TrimPrefix(strings.TrimPrefix(s[i+1:], "0:"), "/"); p != "" {
			u.gitRootRead(p, pattern)
		}
	}
	return !strings.Contains(rev, "/")
}

// gitFileOnly are the file readers (gitFileReaders) that take no
// revision: every operand is a file, a..b included.
var gitFileOnly = map[string]bool{"hash-object": true, "interpret-trailers": true, "merge-file": true,
	"apply": true, "add": true, "update-index": true, "stage": true}

// gitTopOperands are the sub-commands whose file operands git opens from
// the work tree's top, unprefixed (red team AN F5: git interpret-trailers
// ../.npmrc in a sub-directory printed the file beside the repository):
// each is read under every directory up, as gitTopReadings reads an
// option's.
var gitTopOperands = map[string]bool{"interpret-trailers": true}

// gitTopWriters are the sub-commands whose file operands git writes from
// the work tree's top, unprefixed: git pack-objects ../x in a
// sub-directory writes x-SHA.pack beside the repository, not beside the
// sub-directory (the table's write of the operand stays; each operand is
// also written under every directory up, as gitTopReadings reads).
var gitTopWriters = map[string]bool{"pack-objects": true}

// gitTreeWriters are the git sub-commands that write the work tree: the
// paths they are given (git mv x .env, git checkout REV -- .env, git rm
// .env) and, for those that may touch any tracked file (checkout BRANCH,
// reset --hard, stash pop, merge…), the working directory. mv, rm and
// restore write only what they name.
var gitTreeWriters = map[string]bool{
	"checkout": true, "switch": true, "restore": true, "reset": true, "mv": true, "rm": true,
	"clean": true, "stash": true, "apply": true, "am": true, "merge": true, "rebase": true,
	"cherry-pick": true, "revert": true, "pull": true, "worktree": true, "sparse-checkout": true,
	"read-tree": true, "checkout-index": true, "submodule": true, "bisect": true,
}

// gitMovers are the tree writers that only remove or move files the work
// tree holds already (git mv, git rm, git clean): what they write was
// judged when it was written. Every other tree writer fills the paths it
// writes with the files of a commit, the index, a stash or a patch — any
// names and contents, which the policy cannot see: a branch fetched from
// a stranger, or a commit git hash-object and commit-tree made without
// writing a file, may hold .claude/settings.json or a HEAD.
var gitMovers = map[string]bool{"mv": true, "rm": true, "clean": true}

// gitQuietVerbs are the words after git stash, worktree, sparse-checkout,
// submodule and bisect that write no file of the work tree (git stash
// list, git worktree prune, git bisect log).
var gitQuietVerbs = map[string]map[string]bool{
	"stash":           {"list": true, "show": true, "drop": true, "clear": true, "create": true, "store": true},
	"worktree":        {"list": true, "prune": true, "lock": true, "unlock": true, "repair": true},
	"sparse-checkout": {"list": true, "check-rules": true},
	"submodule":       {"status": true, "summary": true, "init": true, "deinit": true, "sync": true, "set-branch": true, "set-url": true, "absorbgitdirs": true, "foreach": true},
	// git bisect start, good, bad, skip, reset and replay check out
	// commits (red team AH F5); these only print.
	"bisect": {"log": true, "visualize": true, "view": true, "terms": true, "help": true},
}

// gitBranchCreation are the options of checkout and switch that make a
// branch; without another operand the new branch starts where HEAD is
// and the work tree stays as it is (git checkout -b feat).
var gitBranchCreation = []string{"-b", "-B", "-c", "-C", "--create", "--force-create", "--orphan"}

// gitFileReaders are the git sub-commands whose operands are files they
// read into the repository or send (git hash-object -w ~/.aws/credentials,
// then git cat-file -p prints it).
var gitFileReaders = map[string]bool{"hash-object": true, "send-email": true, "apply": true, "am": true,
	"merge-file": true, "interpret-trailers": true, "add": true, "update-index": true, "stage": true}

// gitWrites records what a git sub-command writes in the work tree and
// the files it reads into the repository (gitTreeWriters,
// gitFileReaders). An operand after -- is a path; before it, a literal
// that is not a revision by its syntax (gitRevisionName) may be one.
func (u *progUse) gitWrites(w []shWord) {
	if u.global >= len(w) || !w[u.global].lit {
		return
	}
	sub := w[u.global].text
	if sub == "config" {
		u.gitConfig(w)
		return
	}
	if gitTopWriters[sub] {
		u.gitTopWrites(w)
	}
	writes, reads, target := gitTreeWriters[sub], gitFileReaders[sub], gitTargetWriters[sub]
	if !writes && !reads && target == 0 {
		return
	}
	// A writer's word that looks like a revision may be a path too (git
	// restore x/../.env, git clone URL DIR: a URL has a ':'): only the
	// readers drop them.
	// The readers that take no revision read every operand as a file:
	// sub/../../.npmrc is a path, not a range (red team AN F4).
	ops := u.gitOperands(w, (reads || !writes && sub != "clone" && sub != "init") && !gitFileOnly[sub])
	if slices.ContainsFunc(ops.opts, func(o string) bool { return strings.HasPrefix(o, "--pathspec-from-file") }) {
		// git restore --pathspec-from-file=.env: the paths come from a
		// file (and its lines are echoed in errors).
		u.setAsk("git " + sub + " --pathspec-from-file reads its paths from a file the policy cannot see")
	}
	if writes && !u.gitTreeTargets(sub, &ops) {
		return // git reset HEAD~1, git stash list: the index or the repository only
	}
	named := sub == "checkout" && ops.paths < len(ops.words)
	if named {
		// git checkout HEAD -- src: before --, the commit; after, the
		// paths it writes, and nothing else.
		ops.words, ops.paths = ops.words[ops.paths:], 0
	}
	// git restore --staged --worktree writes both.
	cached := (slices.Contains(ops.opts, "--cached") || slices.Contains(ops.opts, "--staged")) &&
		!slices.Contains(ops.opts, "--worktree") && !slices.ContainsFunc(ops.opts, func(o string) bool {
		return len(o) > 1 && o[1] != '-' && strings.ContainsRune(o, 'W')
	})
	stdout := slices.Contains(ops.opts, "-p") || slices.Contains(ops.opts, "--stdout")
	u.recursive = u.recursive || gitMovesTrees(sub, ops.opts)
	for _, t := range ops.words {
		if t.lit && strings.ContainsAny(t.text, "*?[") && writes {
			// git checkout HEAD -- '.e*': git matches the pathspec
			// itself, quoted or not; what it writes is not the text.
			u.setAsk("git " + sub + " writes what the pathspec " + t.text + " matches")
		}
		if reads {
			u.reads = append(u.reads, t)
			if gitTopOperands[sub] {
				u.reads = append(u.reads, gitTopReadings(t)...)
			}
		}
		if writes && !reads {
			u.writes = append(u.writes, t)
		}
	}
	switch {
	case cached && (sub == "rm" || sub == "restore"):
		u.writes = nil // the index only: the files stay as they are
	case writes && (len(ops.words) == 0 || !gitMovers[sub] && sub != "restore" && !named):
		// The work tree first: a reason names it, not a branch's name
		// that may also be a path (git checkout main).
		u.writes = slices.Insert(u.writes, 0, shWord{text: ".", lit: true})
	case target > 0 || sub == "clone":
		u.gitTargetWrite(sub, ops.words, target, stdout)
	}
	// What a checkout writes under the paths, a clone under its
	// directory, are a commit's files (gitMovers); a patch's (git apply,
	// am) are not a commit's yet.
	if len(u.writes) > 0 && (writes && !gitMovers[sub] || sub == "clone") {
		u.opaque, u.commit = true, sub != "apply" && sub != "am"
	}
}

// gitMovesTrees reports a sub-command that moves or removes whole trees:
// git mv DIR NEW moves every file under DIR, and git rm -r DIR removes
// them, as mv's and rm -r's operands are trees (red team AO F11: git mv
// config x took config/prod.key out from under its rule; git mv hooksrc
// .githooks made the hooks).
func gitMovesTrees(sub string, opts []string) bool {
	return sub == "mv" || sub == "rm" && slices.ContainsFunc(opts, func(o string) bool {
		return o == "-r" || len(o) > 1 && o[1] != '-' && strings.ContainsRune(o, 'r')
	})
}

// gitTopWrites records the writes of a gitTopWriters sub-command's
// operands under every directory from the working directory up.
func (u *progUse) gitTopWrites(w []shWord) {
	for _, t := range u.gitOperands(w, false).words {
		u.writes = append(u.writes, gitTopReadings(t)...)
	}
}

// gitTargetWrite records the one file or directory a target writer
// writes (gitTargetWriters): git merge-file CURRENT BASE OTHER rewrites
// CURRENT (unless -p, stdout); git clone URL DIR, git init DIR and git
// bundle create FILE write theirs.
func (u *progUse) gitTargetWrite(sub string, words []shWord, target int, stdout bool) {
	switch {
	case len(words) >= target && target > 0 && !(sub == "merge-file" && stdout):
		t := words[len(words)-1]
		switch {
		case sub == "merge-file":
			t = words[0]
		case sub == "bundle" && words[0].text == "create":
			t = words[1] // git bundle create FILE REV…
		}
		u.writes = append(u.writes, t)
		u.recursive = u.recursive || sub == "clone" // the tree under DIR
	case sub == "clone" && len(words) == 1:
		// git clone URL writes the directory git names after the URL
		// (its "humanish" part), here or under -C DIR.
		u.writes = append(u.writes, gitCloneDir(words[0]))
		u.recursive = true
	case sub == "init" && len(words) == 0:
		u.writes = append(u.writes, shWord{text: ".git", lit: true}) // git init: ./.git
	}
}

// gitTreeTargets narrows the operands of a tree writer to the paths it
// writes, and reports whether it writes the work tree at all: git reset
// without --hard, --merge or --keep and git read-tree without -u write
// the index only; git checkout -b NAME moves nothing; the verbs of stash,
// worktree, sparse-checkout and submodule that list or tidy
// (gitQuietVerbs) write no file; a read-tree's operands are trees, a
// verb's first word is the verb, git worktree add's second a revision.
func (u *progUse) gitTreeTargets(sub string, ops *gitArgs) bool {
	has := func(opts ...string) bool {
		return slices.ContainsFunc(ops.opts, func(o string) bool {
			name, _, _ := strings.Cut(o, "=")
			if len(name) > 2 && name[1] != '-' {
				// A cluster of short flags (git read-tree -mu): any of
				// its letters, a value's too — the stricter reading.
				return slices.ContainsFunc(opts, func(want string) bool {
					return len(want) == 2 && strings.Contains(name[1:], want[1:])
				})
			}
			return slices.Contains(opts, name)
		})
	}
	switch sub {
	case "reset":
		return has("--hard", "--merge", "--keep")
	case "read-tree":
		ops.words = nil // tree-ish operands: the whole tree
		return has("-u")
	case "checkout", "switch":
		// git checkout -b NAME moves nothing; with -f or -m it makes the
		// tree the index's (after git reset FETCH_HEAD, a stranger's),
		// and git checkout -b NAME - starts at the previous branch.
		return len(ops.words) > 0 || !has(gitBranchCreation...) ||
			has("-f", "--force", "--discard-changes", "-m", "--merge") || slices.Contains(ops.opts, "-")
	}
	verbs := gitQuietVerbs[sub]
	if verbs == nil {
		return true
	}
	if len(ops.words) == 0 {
		return sub != "worktree" && sub != "submodule" // git stash: push
	}
	verb := ops.words[0]
	if !verb.lit || ops.paths == 0 {
		return true // a computed verb: any of them; git stash -- list: a path
	}
	if verbs[verb.text] {
		return false
	}
	ops.words = ops.words[1:]
	switch {
	case sub == "worktree" && verb.text == "add" && len(ops.words) > 1:
		ops.words = ops.words[:1] // git worktree add PATH REV
	case sub == "submodule" && verb.text == "add" && len(ops.words) > 0:
		ops.words = ops.words[1:] // git submodule add URL [PATH]
	case sub == "stash" && (verb.text == "pop" || verb.text == "apply" || verb.text == "branch"):
		ops.words = nil // a stash's name, a branch's: the whole tree
	}
	return true
}

// gitCloneDir is the directory git clone URL makes: the URL's last path
// component without a trailing /.git or .git (git clone
// https://h/x/repo.git makes repo); any name here when the URL is not
// literal.
func gitCloneDir(url shWord) shWord {
	if !url.lit {
		return shWord{text: "*", lit: true, glob: true, g: globs.Glob{globs.AnyRun}}
	}
	s := strings.TrimRight(url.text, "/")
	s = strings.TrimSuffix(strings.TrimSuffix(s, "/.git"), ".git")
	s = strings.TrimRight(s, "/")
	if i := strings.LastIndexAny(s, "/:"); i >= 0 {
		s = s[i+1:]
	}
	if s == "" || s == "." || s == ".." {
		return shWord{text: "*", lit: true, glob: true, g: globs.Glob{globs.AnyRun}}
	}
	return shWord{text: s, lit: true}
}

// gitSourceRepository records the read of a local repository that git
// clone, fetch, pull, ls-remote or submodule add take objects from: its
// whole tree, as committed there (git clone ~/.password-store x, git fetch
// ~/.aws then git show FETCH_HEAD:credentials). A URL with a scheme other
// than file://, or host:path, is another machine's.
func (u *progUse) gitSourceRepository(w []shWord) {
	if u.global >= len(w) || !w[u.global].lit {
		return
	}
	sub := w[u.global].text
	switch sub {
	case "clone", "fetch", "pull", "ls-remote", "submodule":
	default:
		return
	}
	ops := u.gitOperands(w, false)
	words := ops.words
	if sub == "submodule" {
		if len(words) == 0 || !words[0].lit || words[0].text != "add" {
			return
		}
		words = words[1:]
	}
	if len(words) == 0 {
		return
	}
	src := words[0]
	text, local := gitLocalRepository(src)
	if !local {
		return
	}
	u.recursive = true
	if text != src.text {
		src = shWord{text: text, lit: true}
	}
	u.reads = append(u.reads, src)
}

// gitLocalRepository reports whether a repository operand of git may be
// a local path, and the path: a file:// URL's, or the word (a path, or a
// remote's name, which may also be a directory's); not a URL with another
// scheme or a host:path.
func gitLocalRepository(w shWord) (string, bool) {
	if !w.lit {
		return w.text, true
	}
	if p, ok := strings.CutPrefix(w.text, "file://"); ok {
		return p, p != ""
	}
	if strings.Contains(w.text, "://") {
		return "", false
	}
	if i := strings.IndexByte(w.text, ':'); i > 0 && !strings.Contains(w.text[:i], "/") {
		return "", false // host:path
	}
	return w.text, true
}

// gitNotesMessage records what git notes -C/-c OBJECT reads: the blob it
// reuses as the note's message, which git notes show then prints — the
// PATH of a REV:PATH, or, for any other name (a hex name may be any
// blob's), the working directory's tree.
func (u *progUse) gitNotesMessage(w []shWord) {
	if u.global >= len(w) || !w[u.global].lit || w[u.global].text != "notes" {
		return
	}
	for i := u.global + 1; i < len(w); i++ {
		t := w[i]
		if t.lit && t.text == "--" {
			break
		}
		var v shWord
		switch {
		case !t.lit:
			continue
		case t.text == "-C" || t.text == "-c" || t.text == "--reuse-message" || t.text == "--reedit-message":
			if i+1 >= len(w) {
				return
			}
			i++
			v = w[i]
		case strings.HasPrefix(t.text, "--reuse-message=") || strings.HasPrefix(t.text, "--reedit-message="):
			_, val, _ := strings.Cut(t.text, "=")
			v = shWord{text: val, lit: true}
		case len(t.text) > 2 && (strings.HasPrefix(t.text, "-C") || strings.HasPrefix(t.text, "-c")):
			v = shWord{text: t.text[2:], lit: true}
		default:
			continue
		}
		if v.lit && u.gitRevPath(v.text, v.glob) {
			continue
		}
		if !v.lit || !gitOnlyHeads([]shWord{v}) {
			u.recursive = true
			u.reads = append(u.reads, shWord{text: ".", lit: true})
		}
	}
}

// gitFormatPatch records what git format-patch writes without an option
// that names it (-o DIR, --output FILE, --stdout): NNNN-SUBJECT.patch files
// in the working directory, here or under -C DIR. Its --suffix is joined
// to each name as it is, so a suffix holding a / writes anywhere
// (--suffix=/../../.bashrc): it asks.
func (u *progUse) gitFormatPatch(w []shWord) {
	if u.global >= len(w) || !w[u.global].lit || w[u.global].text != "format-patch" {
		return
	}
	named := false
	for i := u.global + 1; i < len(w); i++ {
		t := w[i]
		if t.lit && t.text == "--" {
			break
		}
		v, isSuffix := strings.CutPrefix(t.text, "--suffix")
		switch {
		case isSuffix && (v == "" || v[0] == '='):
			val := strings.TrimPrefix(v, "=")
			if v == "" && i+1 < len(w) {
				val = w[i+1].text
			}
			if !t.lit || strings.Contains(val, "/") || v == "" && (i+1 >= len(w) || !w[i+1].lit) {
				u.setAsk("git format-patch --suffix " + shQuoteShort(val) + " is joined to each file's name, which it may move anywhere")
			}
		case t.lit && (t.text == "--stdout" || t.text == "-o" || strings.HasPrefix(t.text, "-o") ||
			strings.HasPrefix(t.text, "--output-directory") || strings.HasPrefix(t.text, "--output")):
			named = true
		}
	}
	if !named {
		// Names that start with digits, the subject's / made -: not a
		// name a rule holds, but a write of the directory they go to.
		u.writes = append(u.writes, shWord{text: ".", lit: true})
	}
}

// gitConfigSets are git config's options and sub-commands (git 2.46+)
// that change the file; any other form with a key and a value sets it.
var gitConfigSets = map[string]bool{"--add": true, "--replace-all": true, "--unset": true, "--unset-all": true,
	"--rename-section": true, "--remove-section": true, "-e": true, "--edit": true,
	"set": true, "unset": true, "rename-section": true, "remove-section": true, "edit": true}

// gitConfigFlags are git config's other options, spelled in full: git
// takes any unique prefix of a long option (--fil=F is --file=F), which a
// closed reading does not guess at — an option not spelled as listed asks.
var gitConfigFlags = map[string]bool{"--global": true, "--system": true, "--local": true, "--worktree": true,
	"--get": true, "--get-all": true, "--get-regexp": true, "--get-urlmatch": true, "--get-color": true,
	"--get-colorbool": true, "-l": true, "--list": true, "--type": true, "--bool": true, "--int": true,
	"--bool-or-int": true, "--path": true, "--expiry-date": true, "-z": true, "--null": true,
	"--name-only": true, "--show-origin": true, "--show-scope": true, "--default": true,
	"--fixed-value": true, "--no-includes": true, "--no-type": true, "get": true, "list": true}

// gitConfig judges git config: the file it reads or writes (-f FILE, a
// blob's REV:PATH) is a read; a form that changes a file writes it
// (.git/config; ~/.gitconfig with --global, /etc/gitconfig with
// --system, FILE with -f) and, for a key and value, is judged as git -c
// KEY=VALUE is — a key that may name a program (core.fsmonitor,
// core.pager, alias.x=!cmd) asks, since a later git runs it.
func (u *progUse) gitConfig(w []shWord) {
	file, set := shWord{text: ".git/config", lit: true}, false
	var ops []shWord
	for i := u.global + 1; i < len(w); i++ {
		t := w[i]
		name, val, hasVal := strings.Cut(t.text, "=")
		switch {
		case name == "-f" || name == "--file" || name == "--blob":
			v := shWord{text: val, lit: t.lit}
			switch {
			case !hasVal && i+1 < len(w):
				i++
				v = w[i] // the word itself, expansions and all
			case !hasVal || !t.lit:
				// --file=$(…): a value the analysis cannot read.
				u.setAsk("git config " + name + " takes " + shQuoteShort(t.text) + ", a file the policy cannot read from the command")
				continue
			}
			if v.text == "" {
				u.setAsk("git config " + name + " without a value")
				continue
			}
			if name == "--blob" && v.lit {
				u.gitRevPath(v.text, v.glob)
			} else if name == "--blob" {
				u.setAsk("git config --blob takes " + shQuoteShort(v.text) + ", a blob the policy cannot read from the command")
			} else {
				u.reads = append(u.reads, v)
				file = v
			}
		case !t.lit && strings.HasPrefix(t.text, "-"):
			u.setAsk(notUnderstood("git config", "option", t.text))
		case !t.lit:
			ops = append(ops, t)
		case t.text == "--global":
			file = shWord{text: "~/.gitconfig", lit: true}
		case t.text == "--system":
			file = shWord{text: "/etc/gitconfig", lit: true}
		case gitConfigSets[t.text] && (strings.HasPrefix(t.text, "-") || len(ops) == 0):
			set = true
		case strings.HasPrefix(t.text, "-") && !gitConfigFlags[name]:
			u.setAsk(notUnderstood("git config", "option", t.text))
		case strings.HasPrefix(t.text, "-") || gitConfigFlags[t.text] && len(ops) == 0:
		default:
			ops = append(ops, t)
		}
	}
	if !set && len(ops) < 2 {
		return
	}
	u.writes = append(u.writes, file)
	if c := u.spec.options["-c"]; c != nil && len(ops) >= 2 {
		kv := shWord{text: ops[0].text + "=" + ops[1].text, lit: ops[0].lit && ops[1].lit}
		u.apply(c, &kv)
	} else if len(ops) < 2 || !ops[0].lit {
		u.setAsk("git config changes configuration the policy cannot read from the command")
	}
}

// gitTargetWriters are the git sub-commands that write one file or
// directory among their operands, by how many operands they need for it:
// merge-file its first (unless -p), clone its last of two, init and
// bundle their last.
var gitTargetWriters = map[string]int{"merge-file": 3, "clone": 2, "init": 1, "bundle": 2}

// gitArgs are the operands of a git sub-command and the options given it.
type gitArgs struct {
	words []shWord
	opts  []string
	// paths is the index in words of the first word after --, len(words)
	// when there is none: words from there are paths, never a verb.
	paths int
}

// gitOperands returns the operands of the git sub-command in w — every
// word after --, and before it those that are neither options, option
// values (gitTakesNext) nor, with revisions, revisions by their syntax —
// and the option words.
func (u *progUse) gitOperands(w []shWord, revisions bool) (a gitArgs) {
	dashes := false
	a.paths = -1
	defer func() {
		if a.paths < 0 {
			a.paths = len(a.words)
		}
	}()
	for i := u.global + 1; i < len(w); i++ {
		t := w[i]
		switch {
		case !dashes && t.lit && t.text == "--":
			dashes = true
			a.paths = len(a.words)
			continue
		case !dashes && t.lit && u.gitTakesNext(t.text):
			a.opts = append(a.opts, u.gitOptionName(t.text))
			i++ // git checkout -b feat, restore --source REV: a value
			continue
		case !dashes && t.lit && strings.HasPrefix(t.text, "-"):
			a.opts = append(a.opts, u.gitOptionName(t.text))
			continue
		case revisions && !dashes && t.lit && gitRevisionName(t.text):
			continue
		}
		a.words = append(a.words, t)
	}
	return a
}

// gitConfiguredTool asks for git difftool and git mergetool without a
// command of their own (-x, --extcmd: judged as the command they hold):
// they run the tool the configuration names (diff.tool and
// difftool.<tool>.cmd, merge.tool), a program the policy does not see,
// as git --ext-diff runs the configured external diff. --tool-help only
// lists the tools.
func (u *progUse) gitConfiguredTool(w []shWord) {
	if u.global >= len(w) || !w[u.global].lit {
		return
	}
	sub := w[u.global].text
	if sub != "difftool" && sub != "mergetool" {
		return
	}
	ops := u.gitOperands(w, true)
	for _, o := range ops.opts {
		if o == "--tool-help" || strings.HasPrefix(o, "--extcmd") ||
			!strings.HasPrefix(o, "--") && strings.ContainsRune(o[1:], 'x') {
			return
		}
	}
	u.setAsk("git " + sub + " runs the tool the git configuration names, a program the policy does not see")
}

// gitOptionName is the option word s with its long option's name in
// full: git takes an unambiguous prefix (git reset --har is --hard), which
// the checks of what a sub-command writes compare whole.
func (u *progUse) gitOptionName(s string) string {
	name, val, hasVal := strings.Cut(s, "=")
	if !strings.HasPrefix(name, "--") {
		return s
	}
	o := u.longOption(name)
	if o == nil || o.name == name {
		return s
	}
	if hasVal {
		return o.name + "=" + val
	}
	return o.name
}

// gitTakesNext reports whether the git option word s takes the next word
// as its value (git log -n 20, --author NAME): an option the table gives
// a required value, spelled without it attached.
func (u *progUse) gitTakesNext(s string) bool {
	if len(s) < 2 || s[0] != '-' || strings.Contains(s, "=") {
		return false
	}
	var o *progOption
	if s[1] == '-' {
		o = u.longOption(s)
	} else if len(s) == 2 {
		o = u.option(s)
	}
	return o != nil && o.value == valRequired
}

// gitRevisionName reports a word that only a revision can be by its
// syntax (HEAD~1, a^, @{u}, a..b, x:y) or that names one by convention
// (HEAD, FETCH_HEAD, a hexadecimal object id of 7 or more digits); any
// other word (main, deploy) may be a path.
func gitRevisionName(s string) bool {
	if strings.ContainsAny(s, "^@:") || strings.Contains(s, "~") && !strings.HasPrefix(s, "~") ||
		strings.Contains(strings.TrimPrefix(s, "../"), "..") || strings.HasSuffix(s, "HEAD") {
		return true
	}
	if len(s) < 7 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune("0123456789abcdef", rune(s[i])) {
			return false
		}
	}
	return true
}

// gitLineRange records the file of git log's and blame's -L range (-L1,5:.env,
// -L:func:.env, -L 1,5:.env): the part after the last ':'. It returns the
// index of the last word it used.
func (u *progUse) gitLineRange(w []shWord, i int) int {
	v := w[i]
	v.text = strings.TrimPrefix(v.text, "-L")
	if v.text == "" {
		if i+1 >= len(w) {
			return i
		}
		i++
		v = w[i]
	}
	if !v.lit {
		u.reads = append(u.reads, v)
		return i
	}
	if k := strings.LastIndexByte(v.text, ':'); k >= 0 && k+1 < len(v.text) {
		u.reads = append(u.reads, shWord{text: v.text[k+1:], lit: true})
	}
	return i
}

// gitRootDepth bounds the ancestors of the working directory a
// repository's root is looked for in (gitRootRead).
const gitRootDepth = 16

// gitRootRead records the read of PATH in REV:PATH: from the top of the
// work tree unless it starts with ./ or ../, and the analysis does not
// know where that is — the working directory or any of its ancestors
// (git show HEAD:deploy/prod.key from a package of a monorepo).
func (u *progUse) gitRootRead(p string, pattern bool) {
	read := func(t string) {
		if pattern && strings.ContainsAny(t, "*?[") {
			// HEAD:secre[t]s/key: bash expands the word first, to a
			// name it finds here (a decoy), which git then reads: any
			// path the pattern matches.
			u.reads = append(u.reads, shWord{text: t, glob: true, g: globs.FromPathText(t)})
			return
		}
		u.reads = append(u.reads, shWord{text: t, lit: true})
	}
	read(p)
	if strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || p == "." || p == ".." {
		return
	}
	up := ""
	for k := 0; k < gitRootDepth; k++ {
		up += "../"
		read(up + p)
	}
}

// gitPathspec records the read of one pathspec operand. git matches a
// pathspec as a pattern of its own (fnmatch: *, ? and [...] even when the
// shell quoted them, * crossing /), after its magic (:(glob), :(icase),
// :!, :/…; gitPathspecMagic): '.e?v' and ':(icase).E?V' read .env. A
// pattern is judged as every path it can name; an exclusion reads
// nothing; magic the policy cannot place (:/ and :(top), from the
// repository's top; :(attr:…); any it does not know) asks. With tree set
// (the sub-command prints content), a pattern also reads the tree of the
// directory its literal start spells.
func (u *progUse) gitPathspec(t shWord, tree bool) {
	if !t.lit || t.g != nil {
		u.reads = append(u.reads, t)
		return
	}
	magic, rest := gitPathspecMagic(t.text), t.text
	if magic != "" {
		rest = t.text[len(magic):]
	}
	literal := false
	for _, m := range gitMagicWords(magic) {
		switch {
		case m == "exclude":
			return
		case m == "literal":
			literal = true
		case m == "glob" || m == "icase":
		default:
			u.setAsk("git pathspec " + strconv.Quote(t.text) + " has the magic " + strconv.Quote(m) + ", whose paths the policy cannot place")
			return
		}
	}
	if literal || !strings.ContainsAny(rest, "*?[\\") {
		if rest != "" {
			u.reads = append(u.reads, shWord{text: rest, lit: true})
		}
		return
	}
	u.reads = append(u.reads, shWord{text: rest, glob: true, g: globs.FromShellPattern(rest)})
	if tree {
		// git's * crosses '/' ('*.key' names deploy/prod.key): the
		// pattern is also a search of the tree its literal directory
		// spells, as grep -r --include='*.key' X . is.
		u.reads = append(u.reads, shWord{text: patternDir(rest), lit: true})
	}
}

// patternDir returns the directory a pattern's literal start spells:
// its text up to the last '/' before the first wildcard, "." when none.
func patternDir(p string) string {
	i := strings.IndexAny(p, "*?[\\")
	if i < 0 {
		i = len(p)
	}
	j := strings.LastIndexByte(p[:i], '/')
	if j <= 0 {
		if j == 0 {
			return "/"
		}
		return "."
	}
	return p[:j]
}

// gitPrintsTree reports whether git SUB with the option words opts and no
// path prints the content of files anywhere in the tree: grep, archive and
// format-patch always; diff and show unless an option shows only names
// or counts (--stat, --name-only…) and none asks for patches; log and the
// other revision walkers when an option asks for patches (-p, -U3, --cc,
// --word-diff…).
func (u *progUse) gitPrintsTree(sub string, opts []shWord) bool {
	switch sub {
	case "grep", "archive", "format-patch":
		return true
	case "show":
		// git show -s BLOB prints the blob: names and counts only for
		// commits it can tell by their names (HEAD, HEAD~2, @^).
		return u.gitHasPatch(opts) || !gitHasOption(opts, gitNoPatchOptions) || !gitOnlyHeads(opts)
	case "diff", "diff-files", "diff-index", "diff-tree":
		return u.gitHasPatch(opts) || !gitHasOption(opts, gitNoPatchOptions)
	case "log", "whatchanged":
		return u.gitHasPatch(opts)
	case "cat-file":
		// git cat-file -p NAME prints any object: a hex name, a tag or a
		// branch may be a blob's. -t, -s and -e print its type, size or
		// existence; HEAD's object is a commit.
		return !gitHasOption(opts, []string{"-t", "-s", "-e"}) && !gitOnlyHeads(opts)
	case "unpack-file":
		return false // REV:PATH only
	}
	// gitContentVerbs, and gitContentOptions' verbs with one of them:
	// with no pathspec, the changes of every file.
	return gitContentVerbs[sub] || gitContentOptions[sub] != nil
}

// gitHasPatch reports an option that makes git print changes
// (gitPatchOptions), a long one's abbreviation included (--pat is
// --patch: red team AQ F1); the options that turn patches off are
// matched as written only (gitHasOption), so a prefix never hides one.
func (u *progUse) gitHasPatch(words []shWord) bool {
	if gitHasOption(words, gitPatchOptions) {
		return true
	}
	for _, t := range words {
		if t.lit && t.text == "--" {
			break
		}
		for _, p := range gitPatchOptions {
			if t.lit && strings.HasPrefix(p, "--") && u.gitOptionIs(t.text, p) {
				return true
			}
		}
	}
	return false
}

// gitHasOption reports whether an option word before "--" is one of set
// (a short option with its value glued: -U3; a long one with =VALUE), or
// is a word the policy cannot read, which may be any of them.
func gitHasOption(words []shWord, set []string) bool {
	for _, t := range words {
		if !t.lit {
			return true
		}
		if t.text == "--" {
			break
		}
		for _, p := range set {
			if t.text == p || strings.HasPrefix(t.text, p) && (strings.HasPrefix(p, "--") && t.text[len(p)] == '=' || !strings.HasPrefix(p, "--")) {
				return true
			}
		}
	}
	return false
}

// gitNoPatchOptions are the diff options that print names or counts
// instead of patches (not --check: it prints the lines it faults).
var gitNoPatchOptions = []string{
	"--stat", "--numstat", "--shortstat", "--dirstat", "--name-only", "--name-status",
	"--summary", "--raw", "--quiet", "--exit-code", "--no-patch", "-s",
}

// gitOnlyHeads reports whether every operand before "--" of git show's
// words is HEAD or @ with ~ and ^ steps: commits, whose -s or --stat
// print no file's content (a hex name may be a blob's).
func gitOnlyHeads(words []shWord) bool {
	for _, t := range words {
		if !t.lit {
			return false
		}
		if t.text == "--" {
			break
		}
		if strings.HasPrefix(t.text, "-") || strings.Contains(t.text, ":") {
			continue // REV:PATH: its path is read
		}
		r := strings.TrimLeft(strings.TrimPrefix(strings.TrimPrefix(t.text, "HEAD"), "@"), "~^0123456789")
		if r != "" || !strings.HasPrefix(t.text, "HEAD") && !strings.HasPrefix(t.text, "@") {
			return false
		}
	}
	return true
}

// gitPatchOptions are the options of git log that make it print patches:
// the diff options' patch formats and the merge diffs that imply -p.
var gitPatchOptions = []string{
	"-p", "-u", "-U", "-W", "-c", "-m", "--patch", "--unified", "--function-context",
	"--word-diff", "--color-words", "--cc", "--dd", "--remerge-diff", "--diff-merges",
	"--patch-with-stat", "--patch-with-raw", "--full-diff", "--ext-diff", "--textconv", "--binary",
	// The pickaxe searches every changed blob's content: its answer (a
	// commit listed or not) tells what a file holds.
	"-G", "-S", "--find-object", "--pickaxe-regex",
	// So do the lines a change is judged by (git diff --stat -I REGEX
	// counts a file only if a changed line does not match) and the lines
	// --check prints (git log --check).
	"-I", "--ignore-matching-lines", "--check",
}

// gitPathspecMagic returns the magic prefix of a pathspec ("" when none):
// the long form ":(glob,icase)" or the short form ":" followed by the
// magic signs / ! ^ and an optional ":". A pathspec of the form REV:PATH
// has no leading colon and is read by gitPaths before.
func gitPathspecMagic(s string) string {
	if !strings.HasPrefix(s, ":") || len(s) > 1 && strings.IndexByte("(/!^", s[1]) < 0 {
		return "" // :PATH is the index's blob at PATH (REV:PATH)
	}
	if strings.HasPrefix(s, ":(") {
		if end := strings.IndexByte(s, ')'); end > 0 {
			return s[:end+1]
		}
		return s // unterminated: all of it is magic the policy does not know
	}
	i := 1
	for i < len(s) && strings.IndexByte("/!^", s[i]) >= 0 {
		i++
	}
	if i < len(s) && s[i] == ':' {
		i++
	}
	return s[:i]
}

// gitMagicWords lists the magic words of a magic prefix: the long form's
// words, the short form's signs by name (/ top, ! and ^ exclude).
func gitMagicWords(magic string) []string {
	if magic == "" {
		return nil
	}
	if strings.HasPrefix(magic, ":(") {
		inner := strings.TrimSuffix(strings.TrimPrefix(magic, ":("), ")")
		if !strings.HasSuffix(magic, ")") {
			return []string{magic}
		}
		var out []string
		for _, w := range strings.Split(inner, ",") {
			if w = strings.TrimSpace(w); w != "" {
				out = append(out, w)
			}
		}
		if len(out) == 0 {
			return []string{magic}
		}
		return out
	}
	var out []string
	for _, c := range strings.TrimSuffix(strings.TrimPrefix(magic, ":"), ":") {
		switch c {
		case '/':
			out = append(out, "top")
		default:
			out = append(out, "exclude")
		}
	}
	return out
}

// gitLooksLikePath tells a git operand that names a file (.env,
// config/x.yaml, ../x) from a revision (HEAD~1, main, a1b2c3, a..b, @{u}),
// so that revisions are not listed as reads. A path without a dot or a
// slash passes for a revision: git diff id_rsa in ~/.ssh is judged only by
// its command rules.
func gitLooksLikePath(s string) bool {
	if s == "" || strings.ContainsAny(s, "~^@") || strings.Contains(s, "..") && !strings.HasPrefix(s, "../") {
		return false
	}
	return strings.ContainsAny(s, "./")
}

// gitLooksLikeRevision tells a git operand built with an expansion that is
// a revision expression by its literal text, as gitLooksLikePath does for
// a literal one: "$(git rev-parse HEAD~5)..HEAD" and "$BASE...HEAD" are
// ranges, "$REV^" and "$REV~2" ancestors, "$B@{u}" an upstream. Whatever
// the expansion gives, git reads the word as a revision (a path only when
// no revision resolves and a file of that whole name exists, as for a..b).
func gitLooksLikeRevision(w shWord) bool {
	var lit strings.Builder
	for i, t := range w.g {
		switch {
		case t.Lit():
			if t.R == '~' && i == 0 {
				return false // ~/x: the home directory
			}
			lit.WriteRune(t.R)
		default:
			lit.WriteByte(0)
		}
	}
	s := lit.String()
	return strings.Contains(strings.ReplaceAll(s, "../", ""), "..") || strings.ContainsAny(s, "^") ||
		strings.Contains(s, "@{") || strings.Contains(s[min(1, len(s)):], "~")
}

// jqFiles records the files jq's two-word options read: --rawfile NAME
// FILE, --slurpfile NAME FILE and --argfile NAME FILE (the table's grammar gives an option one
// value, so the scan took FILE for an operand).
//
// A jq program may read files itself: import and include load modules
// and data (import "P" as $x {search: DIR} reads DIR/P.json), and
// modulemeta reads a module; a word that spells one of them asks, as jq
// -L does, and so does a filter the analysis cannot read.
func (u *progUse) jqFiles(w []shWord) {
	if f := jqFilter(w); f != nil && !f.lit {
		// jq -n "import \"config\" as \$c {search: \"$D\"}; \$c": text
		// an expansion gives may hold import or include, as awk's and
		// sed's programs may hold their commands.
		u.setAsk("jq program is not a literal: " + f.text)
	}
	for _, t := range w[1:] {
		if !t.lit {
			continue
		}
		for _, kw := range []string{"import", "include", "modulemeta", "get_search_list"} {
			if jqHasWord(t.text, kw) {
				u.setAsk("jq " + kw + " loads modules or data from files the policy cannot see")
				break
			}
		}
	}
	for i := 1; i+2 < len(w); i++ {
		if !w[i].lit {
			continue
		}
		switch w[i].text {
		case "--":
			return
		case "--rawfile", "--slurpfile", "--argfile":
			u.reads = append(u.reads, w[i+2])
			i += 2
		}
	}
}

// jqTwoWords are jq's options that take two words (NAME and VALUE).
var jqTwoWords = map[string]bool{"--arg": true, "--argjson": true, "--slurpfile": true, "--rawfile": true,
	"--argfile": true}

// jqFilter returns jq's program word: the first word that is neither an
// option nor an option's value (the word after --), or nil when there is
// none or -f/--from-file gives the program from a file.
func jqFilter(w []shWord) *shWord {
	for i := 1; i < len(w); i++ {
		t := w[i]
		switch {
		case t.lit && t.text == "--":
			if i+1 < len(w) {
				return &w[i+1]
			}
			return nil
		case !t.lit || len(t.text) < 2 || t.text[0] != '-':
			return &w[i]
		case t.text == "-f" || strings.HasPrefix(t.text, "--from-file") || strings.HasPrefix(t.text, "-f") ||
			len(t.text) > 2 && t.text[1] != '-' && strings.ContainsRune(t.text, 'f'):
			return nil
		case jqTwoWords[t.text]:
			i += 2
		case t.text == "-L" || t.text == "--indent" || t.text == "--run-tests":
			i++
		}
	}
	return nil
}

// jqHasWord reports whether kw stands in s as a whole identifier (not
// next to a letter, digit, _ or $), wherever it is: inside a string
// too, which can only make jq ask more.
func jqHasWord(s, kw string) bool {
	return shCountIdent(strings.ReplaceAll(s, "$"+kw, ""), kw) > 0
}

// patchOperands judges Codex's apply_patch run as a command
// (["apply_patch", "*** Begin Patch…"]): every path of the patch is a
// write; a patch read from standard input (a here-document) cannot be seen.
func (u *progUse) patchOperands() {
	if len(u.operands) == 0 {
		u.setAsk("apply_patch reads its patch from standard input, which the policy cannot see")
		return
	}
	for _, op := range u.operands {
		if !op.lit {
			u.setAsk("apply_patch's patch is not a literal")
			continue
		}
		files, bad := PatchPaths(op.text)
		if bad != "" {
			u.setAsk(bad)
		}
		for _, f := range files {
			u.writes = append(u.writes, shWord{text: f.Path, lit: true})
			if f.Read {
				u.reads = append(u.reads, shWord{text: f.Path, lit: true})
			}
		}
	}
}

// envInertAll are the environment variables every program reads without
// changing what it runs, reads or writes: locale, time zone, terminal and
// colour settings.
var envInertAll = map[string]bool{
	"LANG": true, "LANGUAGE": true, "TZ": true, "TERM": true, "COLUMNS": true, "LINES": true,
	"NO_COLOR": true, "FORCE_COLOR": true, "CLICOLOR": true, "CLICOLOR_FORCE": true, "COLORTERM": true,
	"CI": true,
	// How loud a program's own logging is, and the language runtimes'
	// plain switches (output buffering, bytecode caches, a stack trace on
	// panic): none names a file or a program.
	"RUST_LOG": true, "RUST_BACKTRACE": true, "LOG_LEVEL": true, "NODE_ENV": true,
	"PYTHONUNBUFFERED": true, "PYTHONDONTWRITEBYTECODE": true,
}

// judgeEnv is the closed model of the environment for a program the table
// has an entry for: a variable set for the command (FOO=x prog, env FOO=x
// prog) that neither every program nor the entry's env_inert classifies
// as inert is not understood — the table does not know what the program
// does with it — so the command asks, naming it. Variables that make any
// program run code (PATH, LD_PRELOAD, the table's env:) already make the
// command unanalysable. An entry that is not complete is no exception
// (red team AO F9: MAVEN_OPTS=-XX:OnOutOfMemoryError=… mvn -v ran a
// command, RUSTUP_TOOLCHAIN=DIR cargo tree ran DIR/bin/cargo, and
// TF_CLI_ARGS_plan=-var-file=.env terraform plan printed .env); the
// variables named as its options (optionVarOf: ZIPOPT for zip) are read
// as its options where they can be (envOptionWords).
func (u *progUse) judgeEnv(spec *progSpec, fr shFrame) {
	for _, w := range fr.wrappers {
		name, ok := envAssignedName(w)
		_, val, _ := strings.Cut(w, "=")
		switch {
		case !ok:
		case localeCharset[name] && !safeLocale(val):
			u.setAsk(foreignCharset(name, val))
			return
		case !u.complete() && (optionVarOf(u.progName(), name) || optionVarOf(spec.name, name)):
			// The program's own are read as its options (envOptionWords),
			// but for a sub-command's entry, which that does not do.
			if u.sub != nil && optionVarOf(u.progName(), name) {
				u.setAsk(optionVarReason(u.progName(), name))
				return
			}
		case !envInertFor(spec, name):
			u.setAsk(notUnderstood(u.progName(), "environment variable", name))
			return
		}
	}
}

// localeCharset are the variables that choose the character set programs
// read bytes in.
var localeCharset = map[string]bool{"LANG": true, "LC_ALL": true, "LC_CTYPE": true}

// safeLocale reports a locale whose character set reads the bytes of a
// script as the analysis does: C, POSIX, none, UTF-8, or one in which no
// ASCII byte is part of another character (ISO-8859-*, KOI8-*, EUC-*,
// the CP125x pages). GBK, GB18030, Big5, Shift_JIS and the rest are not:
// there a byte \ can end a character.
func safeLocale(v string) bool {
	v = strings.ToLower(v)
	if v == "" || v == "c" || v == "posix" {
		return true
	}
	_, cs, ok := strings.Cut(v, ".")
	if !ok {
		return false // a language's default character set: any
	}
	cs, _, _ = strings.Cut(cs, "@")
	cs = strings.ReplaceAll(cs, "-", "")
	for _, p := range []string{"utf8", "iso8859", "koi8", "euc", "cp125", "ascii", "ansi_x3.41968"} {
		if strings.HasPrefix(cs, p) {
			return true
		}
	}
	return false
}

// foreignCharset is why a locale with another character set asks: in
// GBK or Big5 a byte \ can end a character (中\ is one), so bash reads
// quotes and escapes where the analysis reads none.
func foreignCharset(name, val string) string {
	return name + "=" + val + " chooses a character set other than UTF-8, in which a shell may read the script's bytes differently (a \\ can end a character)"
}

// envAssignedName returns the name a wrapper word assigns (NAME=value,
// NAME+=value), if it is one.
func envAssignedName(w string) (string, bool) {
	name, ok := shIsAssignment(shWord{text: strings.TrimPrefix(w, "+"), lit: true})
	if !ok {
		if n, _, plus := strings.Cut(w, "+="); plus {
			name, ok = shIsAssignment(shWord{text: n + "=", lit: true})
		}
	}
	return name, ok
}

// lnTargets judges ln's targets as read too (reading the link reads its
// target), and adds, for a symbolic link (ln -s), the reading of each
// relative target the kernel uses: from the directory the link is made
// in, not the working directory (ln -s ../../.ssh/id_rsa sub/key links
// sub/key to ~/.ssh/id_rsa two levels above sub, not above the working
// directory). With two operands the last is the link or a directory to
// make it in, so both readings are written; a link whose directory the
// policy cannot read, with a relative target, asks.
func (u *progUse) lnTargets(w []shWord) {
	symbolic, dir := false, (*shWord)(nil)
	for i := 1; i < len(w); i++ {
		t := w[i]
		if !t.lit || t.text == "--" {
			break
		}
		switch {
		case strings.HasPrefix(t.text, "--sy"), t.text == "-s":
			symbolic = true
		case t.text == "-t" && i+1 < len(w), strings.HasPrefix(t.text, "--t") && !strings.Contains(t.text, "=") && i+1 < len(w):
			dir = &w[i+1]
			i++
		case strings.HasPrefix(t.text, "--t") && strings.Contains(t.text, "="):
			dir = &shWord{text: t.text[strings.IndexByte(t.text, '=')+1:], lit: true}
		case len(t.text) > 1 && t.text[0] == '-' && t.text[1] != '-':
			for k := 1; k < len(t.text); k++ {
				c := t.text[k]
				if c == 's' {
					symbolic = true
				}
				if c == 'S' || c == 't' {
					if c == 't' {
						if k+1 < len(t.text) {
							dir = &shWord{text: t.text[k+1:], lit: true}
						} else if i+1 < len(w) {
							dir = &w[i+1]
							i++
						}
					}
					break
				}
			}
		}
	}
	ops := u.operands
	// Whatever reads the link reads its target (ln -sf .env.local k &&
	// cat k): the targets are reads as well as writes.
	if dir == nil && len(ops) > 1 {
		u.reads = append(u.reads, ops[:len(ops)-1]...)
	} else {
		u.reads = append(u.reads, ops...)
	}
	if !symbolic {
		return
	}
	u.symlink = true
	var targets []shWord
	var dirs []shWord
	switch {
	case dir != nil:
		targets, dirs = ops, []shWord{*dir}
	case len(ops) == 2:
		targets = ops[:1]
		dirs = []shWord{ops[1], {text: path.Dir(ops[1].text), lit: ops[1].lit}}
	case len(ops) > 2:
		targets, dirs = ops[:len(ops)-1], ops[len(ops)-1:]
	default:
		return // ln -s T: the link is made in the working directory
	}
	for _, t := range targets {
		if !t.lit || strings.HasPrefix(t.text, "/") {
			continue // an absolute target is itself; a computed one meets every rule
		}
		for _, d := range dirs {
			if !d.lit {
				u.setAsk("ln -s makes a link to " + strconv.Quote(t.text) + " from a directory the policy cannot read (" + d.text + ")")
				return
			}
			// Not cleaned: the engine walks ".." as the kernel does.
			p := shWord{text: strings.TrimSuffix(d.text, "/") + "/" + t.text, lit: true}
			u.writes = append(u.writes, p)
			u.reads = append(u.reads, p)
		}
	}
}

// installDirs are the directories a sub-command installs programs into
// without naming them (GOBIN and GOPATH set for the command ask as go's
// variables; set in the host's environment they are not seen).
var installDirs = map[string]string{"go install": "~/go/bin"}

// copyPrograms copy or link their operands to the last one, which may be
// a directory they put each under its own name.
var copyPrograms = map[string]bool{"cp": true, "mv": true, "install": true, "ln": true, "rsync": true, "scp": true}

// kernelLinkSources makes a copy of one of the kernel's links to other
// files ask (cp -P /proc/self/root r makes r a link to /, through which
// every later path is judged as the project's): /proc/PID/root, cwd, exe
// and fd/N, copied as links by cp -P, -d, -a, rsync -l, tar, ln.
func (u *progUse) kernelLinkSources() {
	for _, op := range u.operands {
		if !op.lit {
			continue
		}
		p := strings.Split(strings.Trim(path.Clean(op.text), "/"), "/")
		if len(p) >= 3 && p[0] == "proc" && (len(p) == 3 && (p[2] == "root" || p[2] == "cwd" || p[2] == "exe") ||
			len(p) == 4 && (p[2] == "fd" || p[2] == "map_files")) {
			u.setAsk(u.spec.name + " " + op.text + " copies or links one of the kernel's links to other files, whose target the policy cannot see")
			return
		}
	}
}

// intoDirectory adds, for a program that copies its operands to the last
// one or to the directory -t names, the write of each source's name under
// it: cp a/HEAD x/ and cp -t x a/HEAD write
// x/HEAD, which a rule on HEAD names and a write of the directory x does
// not meet.
func (u *progUse) intoDirectory(name string) {
	if !copyPrograms[name] {
		return
	}
	srcs, into := u.operands, u.targetDir // cp -t DIR SRC…
	if into == nil {
		n := len(u.operands)
		if n < 2 {
			return
		}
		srcs, into = u.operands[:n-1], &u.operands[n-1] // cp SRC… DIR
	}
	if !into.lit || into.g != nil {
		return
	}
	dir := strings.TrimSuffix(into.text, "/")
	whole := slices.ContainsFunc(u.seen, func(s seenOption) bool {
		return s.opt.name == "--parents" || name == "rsync" && (s.opt.name == "-R" || s.opt.name == "--relative")
	})
	for _, src := range srcs {
		if !src.lit || src.g != nil {
			continue // a pattern's or expansion's names: the tree write stands
		}
		text := src.text
		if i := strings.IndexByte(text, ':'); i > 0 && (name == "scp" || name == "rsync") && !strings.Contains(text[:i], "/") {
			text = text[i+1:] // scp host:.env . writes ./.env
		}
		if whole {
			// cp --parents a/.git/config d, rsync -R: d/a/.git/config
			// (rsync's /./ starts the kept part: the whole path is the
			// larger claim).
			u.writes = append(u.writes, shWord{text: dir + "/" + text, lit: true})
			continue
		}
		if b := path.Base(strings.TrimSuffix(text, "/")); b != "." && b != ".." && b != "/" && b != "" {
			u.writes = append(u.writes, shWord{text: dir + "/" + b, lit: true})
		}
	}
}

// finishLinks makes a script that creates a symbolic link ask when a path
// of it climbs with "..": the kernel resolves ".." from the link's
// target, not from the name (ln -s /etc x/y/L && cat x/y/L/../../z), which
// the analysis cleans as text.
func (a *shAnalyzer) finishLinks() {
	if !a.madeLink {
		return
	}
	for i := range a.res.Commands {
		c := &a.res.Commands[i]
		if c.Name == "ln" || slices.Contains(a.linkOwn, i) {
			continue // its own targets: judged where they point (lnTargets)
		}
		paths := c.Reads
		if c.Redirect {
			paths = []string{c.Target}
		}
		for _, p := range paths {
			if p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "/..") {
				a.setUnanalysable("the script makes a symbolic link, and " + strconv.Quote(p) +
					" climbs with .., which the kernel resolves from where a link points")
				return
			}
		}
	}
}

// writePrefix records the writes of the files whose names start with w
// (split PREFIX writes PREFIXaa, PREFIXab…, and PREFIXt after nineteen
// others: split -a 1 x ~/.bashr writes ~/.bashrc): every name that
// starts with it, judged as the paths a feeder yields are. A prefix that
// is not a plain literal is judged as a write target that is not.
func (a *shAnalyzer) writePrefix(w shWord, fr shFrame, tails []globs.Glob) {
	if !w.lit || w.g != nil {
		a.writeTarget(w, fr)
		return
	}
	for _, t := range tails {
		g := append(globs.Literal(nil, w.text), t...)
		a.writeFed(shWord{text: w.text + "*", lit: true, g: g}, fr, false)
	}
}

// csplitNames completes csplit's writes: without -f its pieces are xx00,
// xx01… in the working directory, and a -b format is printed after the
// prefix as it is, so one with a '/' (or not a literal) names a path
// anywhere (red team U7: -b '/../.git/config%.0d').
func (u *progUse) csplitNames() {
	prefixed := false
	for _, s := range u.seen {
		switch s.opt.name {
		case "-f", "--prefix":
			prefixed = true
		case "-b", "--suffix-format":
			if s.value != nil && (!s.value.lit || strings.Contains(s.value.text, "/")) {
				u.setAsk("csplit " + s.opt.name + " " + s.value.text + " is printed into the names it writes, which may then be a path anywhere")
			}
		}
	}
	if !prefixed {
		u.prefixes = append(u.prefixes, shWord{text: "xx", lit: true})
	}
}

// splitSuffixes are what may follow the prefix in the names a program
// with a write-prefix writes: any characters but '/' for most; for split,
// its suffixes — letters or digits (hex with -x), exactly -a N of them,
// as many as -n N chunks need, else 2 and then, past zz, 4, 6… (GNU split
// lengthens them: yz, zaaa) —
// and the --additional-suffix after them. split -b 10M db.sql db.sql.
// cannot write db.sql.env; split -a 3 can, and .e with two letters
// writes .env.
func splitSuffixes(name string, words []shWord) []globs.Glob {
	anyTail := []globs.Glob{{{Star: true, Any: true, NoSlash: true}}}
	if name != "split" {
		return anyTail
	}
	length, extra, chunks := -1, globs.Glob(nil), false
	value := func(i int, t, opt string) (string, bool) {
		if v, ok := strings.CutPrefix(t, opt+"="); ok {
			return v, true
		}
		if t == opt && i+1 < len(words) && words[i+1].lit {
			return words[i+1].text, true
		}
		return "", false
	}
	for i := 1; i < len(words); i++ {
		w := words[i]
		t := w.text
		switch {
		case !w.lit:
			return anyTail
		case t == "--":
			i = len(words)
		case strings.HasPrefix(t, "--ad"):
			v, ok := value(i, t, "--additional-suffix")
			if !ok || strings.ContainsAny(v, "*?[") {
				return anyTail
			}
			extra = globs.Literal(nil, v)
		case t == "-a" || strings.HasPrefix(t, "--suffix-length"):
			v, ok := value(i, t, t[:min(len(t), len("--suffix-length"))])
			if t == "-a" && i+1 < len(words) {
				v, ok = words[i+1].text, true
			}
			n, err := strconv.Atoi(v)
			if !ok || err != nil || n < 1 || n > 16 {
				return anyTail
			}
			length = n
		case strings.HasPrefix(t, "-a"):
			n, err := strconv.Atoi(t[2:])
			if err != nil || n < 1 || n > 16 {
				return anyTail
			}
			length = n
		case strings.HasPrefix(t, "--su") || len(t) > 2 && t[0] == '-' && t[1] != '-' && strings.ContainsRune(t, 'a'):
			return anyTail // an abbreviation or a cluster with -a: its length unread
		case strings.HasPrefix(t, "-n") || strings.HasPrefix(t, "--nu"):
			chunks = true // -n N: as long as N chunks need (3 for 1000)
		}
	}
	char := globs.Tok{Class: "[a-z0-9]"}
	run := func(n int, more bool) globs.Glob {
		g := make(globs.Glob, 0, n+1+len(extra))
		for range n {
			g = append(g, char)
		}
		if more {
			g = append(g, globs.Tok{Star: true, Class: "[a-z0-9]"})
		}
		return append(g, extra...)
	}
	switch {
	case length > 0:
		return []globs.Glob{run(length, false)}
	case chunks:
		return []globs.Glob{run(1, true)}
	}
	return []globs.Glob{run(2, false), run(4, true)}
}

// findDeletes records what find -delete removes: what it would hand
// -exec, the roots and under them what the name filters of a plain
// conjunction match (find . -name .env -delete writes ./**/.env); with no
// filter, or one it cannot read (-regex), the trees under the roots, as
// rm -r's are (a removal plants nothing).
func (a *shAnalyzer) findDeletes(u *progUse, spec *progSpec, words []shWord, fr shFrame) {
	paths := a.findFeed(spec, words).paths
	if !slices.ContainsFunc(paths, func(p shWord) bool { return p.tree || p.computed }) {
		for _, p := range paths {
			a.writeFed(p, fr, false)
		}
		return
	}
	for _, r := range u.roots {
		n := len(a.res.Commands)
		a.writeTarget(r, fr)
		for i := n; i < len(a.res.Commands); i++ {
			a.res.Commands[i].Recursive = true
		}
	}
}

// npmSettingKeys are the npm, pnpm and yarn settings that name where the
// program sends the tokens it reads (~/.npmrc), a program or code it runs,
// or a file of more settings. Not prefix (--prefix, -C, PREFIX): it moves
// npm into a directory whose .npmrc and etc/npmrc it reads, which the
// built-in policy guards as it guards the working directory's.
var npmSettingKeys = []string{"registry", "proxy", "https-proxy", "noproxy", "userconfig", "globalconfig",
	"script-shell", "node-options", "git", "shell", "editor", "browser", "viewer", "strict-ssl", "cafile", "ca",
	"cert", "key", "use-yarnrc", "yarn-path", "pnpmfile", "global-pnpmfile", "init-module", "onload-script",
	"node-gyp", "npm-path", "config", "logs-dir", "cache"}

// npmInertSettings are settings whose names begin one of npmSettingKeys
// (--global, not --globalconfig).
var npmInertSettings = map[string]bool{"global": true}

// npmSettings asks for an option that sets one of npmSettingKeys: every
// npm setting is also an option, with one dash or two, abbreviated to any
// prefix that names one setting (-reg is --registry), negated with no-,
// scoped (--@acme:registry, --//host/:_authToken) or, in pnpm, as
// --config.KEY (red team AM F3, F4, F7).
func (u *progUse) npmSettings(words []shWord) {
	for _, w := range words[1:] {
		if !w.lit {
			continue // an expansion that may be an option is judged as one elsewhere
		}
		if w.text == "--" {
			return
		}
		if len(w.text) < 2 || w.text[0] != '-' {
			continue
		}
		name, _, _ := strings.Cut(strings.ToLower(strings.TrimLeft(w.text, "-")), "=")
		name = strings.TrimPrefix(name, "no-")
		switch {
		case strings.HasPrefix(name, "@") || strings.HasPrefix(name, "//") || strings.HasPrefix(name, "config."):
			u.setAsk(u.spec.name + " " + w.text + " sets where " + u.spec.name + " sends its tokens, or what it runs")
			return
		case len(name) < 2 || npmInertSettings[name]:
			continue // a one-letter shorthand (-g, -w, -D), or a setting of its own
		}
		for _, k := range npmSettingKeys {
			if strings.HasPrefix(k, name) {
				u.setAsk(u.spec.name + " " + w.text + " sets " + k + ", which names where " + u.spec.name +
					" sends its tokens, a program or code it runs, a file of more settings, or a directory it writes")
				return
			}
		}
	}
}

// kubectlConfigSet judges the fields kubectl config set and unset change:
// PROPERTY names any field of the kubeconfig, and most of them decide
// what kubectl runs or where it sends the credentials (users.NAME.exec.
// command, users.NAME.auth-provider, clusters.NAME.server, proxy-url,
// insecure-skip-tls-verify…: kubectl config set users.x.exec.command
// /tmp/evil makes the next kubectl get run /tmp/evil). The closed model:
// the fields that only choose among what the kubeconfig already holds —
// the current context, and a context's namespace, cluster and user — are
// understood; any other, a computed one, or options among the words
// (whose values the policy would have to tell from the operands) ask.
func (u *progUse) kubectlConfigSet(words []shWord) {
	if u.global+1 >= len(words) || words[u.global].text != "config" || !words[u.global].lit {
		return
	}
	verb := words[u.global+1]
	if !verb.lit || verb.text != "set" && verb.text != "unset" {
		return
	}
	form, want := "kubectl config unset PROPERTY", 1
	if verb.text == "set" {
		form, want = "kubectl config set PROPERTY VALUE", 2
	}
	var ops []shWord
	for _, w := range words[u.global+2:] {
		if !w.lit || w.g != nil || strings.HasPrefix(w.text, "-") {
			u.setAsk("kubectl config " + verb.text + " " + w.text + ": the policy reads only " + form + ", with literal words")
			return
		}
		ops = append(ops, w)
	}
	if len(ops) != want {
		u.setAsk(form + " takes " + strconv.Itoa(want) + " operands, not " + strconv.Itoa(len(ops)))
		return
	}
	if !kubectlChoosingField(ops[0].text, verb.text == "unset") {
		u.setAsk("kubectl config " + verb.text + " " + ops[0].text + " changes a field of the kubeconfig that may name a program kubectl runs or where it sends the credentials")
	}
}

// kubectlChoosingField reports a kubeconfig field that only chooses among
// what the kubeconfig holds: current-context, contexts.NAME.namespace,
// .cluster and .user (and, to unset, a context whole). NAME holds no dot,
// which kubectl's property paths could read either way.
func kubectlChoosingField(p string, unset bool) bool {
	if p == "current-context" {
		return true
	}
	rest, ok := strings.CutPrefix(p, "contexts.")
	if !ok {
		return false
	}
	name, field, _ := strings.Cut(rest, ".")
	if name == "" || strings.ContainsAny(name, "[]{}") {
		return false
	}
	switch field {
	case "namespace", "cluster", "user":
		return true
	case "":
		return unset
	}
	return false
}

// settingsVerbs are a program's sub-commands that persist settings, or
// what a project's manifest holds, for every later command: the files
// each writes (as the user it runs as, in the home or the project), so
// that the write rules judge them as they judge an editor's write of the
// same file. npm config set script-shell X, or pip config set
// global.index-url URL, otherwise passed under a rule for the verb while
// the built-in policy asks before a write of ~/.npmrc or ~/.config.
//
// The model is closed: the verbs after the sub-command that only read
// are listed (readers: npm config get, helm repo list); any other verb —
// one the table does not know, one the analysis cannot read, a verb an
// option's value hides (npm config --location project set …) — is taken
// for one that writes. always: the sub-command itself writes (npm set).
// operands > 0: the sub-command has no verb, and sets something when it
// has that many operands (poetry config KEY VALUE; KEY alone prints) or
// one of setters is among the words (--unset). With no operand at all the
// sub-command lists. global names the options that move the write to a
// system-wide file, which asks.
type settingsVerbs struct {
	readers  []string
	always   bool
	operands int
	setters  []string
	files    []string
	global   []string
}

var (
	npmSettingsFiles = []string{"~/.npmrc", ".npmrc"}
	npmGlobal        = []string{"-g", "--global", "--location=global"}
	npmSettingsWrite = settingsVerbs{readers: []string{"get", "list", "ls"}, files: npmSettingsFiles, global: npmGlobal}
	pipSettingsWrite = settingsVerbs{readers: []string{"list", "get", "debug"},
		files: []string{"~/.config/pip/pip.conf", "~/.pip/pip.conf"}, global: []string{"--global", "--site"}}
	pnpmSettingsFiles = []string{"~/.config/pnpm/rc", "~/.npmrc", ".npmrc"}
)

var settingsWriters = map[string]map[string]settingsVerbs{
	"npm": {"config": npmSettingsWrite, "c": npmSettingsWrite,
		"set": {always: true, files: npmSettingsFiles, global: npmGlobal},
		"pkg": {readers: []string{"get"}, files: []string{"package.json"}}},
	"pnpm": {"config": {readers: []string{"get", "list"}, files: pnpmSettingsFiles, global: npmGlobal},
		"set": {always: true, files: pnpmSettingsFiles}},
	"yarn": {"config": {readers: []string{"get", "list"}, files: []string{".yarnrc.yml", "~/.yarnrc.yml", "~/.yarnrc"}}},
	"pip":  {"config": pipSettingsWrite},
	"pip3": {"config": pipSettingsWrite},
	"helm": {"repo": {readers: []string{"list", "ls"},
		files: []string{"~/.config/helm/repositories.yaml", "~/.config/helm/repositories.lock", "~/.cache/helm/repository"}}},
	"docker": {"context": {readers: []string{"ls", "list", "inspect", "show"},
		files: []string{"~/.docker/config.json", "~/.docker/contexts"}}},
	"poetry": {"config": {operands: 2, setters: []string{"--unset"}, files: []string{"~/.config/pypoetry/config.toml", "poetry.toml"}},
		"source": {readers: []string{"show"}, files: []string{"pyproject.toml"}}},
	// bundle config set KEY VALUE, and the older bundle config KEY VALUE.
	"bundle": {"config": {operands: 2, setters: []string{"--delete"}, readers: []string{"get", "list"},
		files: []string{"~/.bundle/config", ".bundle/config"}, global: []string{"--global"}}},
}

// settingsWrites records the settings files a sub-command that persists
// settings writes (settingsWriters).
func (u *progUse) settingsWrites(words []shWord) {
	subs := settingsWriters[u.spec.name]
	if subs == nil || u.global >= len(words) || !words[u.global].lit {
		return
	}
	sv, ok := subs[words[u.global].text]
	if !ok {
		return
	}
	rest := words[u.global+1:]
	operand := func(w shWord) bool { return !w.lit || !strings.HasPrefix(w.text, "-") }
	first := slices.IndexFunc(rest, operand)
	switch {
	case sv.always:
	case first < 0:
		return // npm config, helm repo: usage or a listing
	case rest[first].lit && slices.Contains(sv.readers, rest[first].text):
		return // npm config get, helm repo list: they only read
	case sv.operands > 0:
		n, set := 0, false
		for _, w := range rest {
			if operand(w) {
				n++
			}
			set = set || !w.lit || slices.Contains(sv.setters, w.text)
		}
		if n < sv.operands && !set {
			return // poetry config KEY prints it
		}
	}
	for _, w := range rest {
		if w.lit && slices.Contains(sv.global, w.text) {
			u.setAsk(u.spec.name + " " + words[u.global].text + " " + w.text + " changes the settings of every user of the machine")
			return
		}
	}
	for _, f := range sv.files {
		u.writes = append(u.writes, shWord{text: f, lit: true})
	}
}

// runsFiles reports whether what files say decides what the command does
// (Command.RunsFiles): the table says the program runs code or hooks, it
// is an interpreter, or the table does not know every effect of a
// sub-command (npm test, cargo build, terraform apply: a partial entry of
// a program with sub-commands).
func (u *progUse) runsFiles() bool {
	spec := u.spec
	return spec.runsCode || u.sub != nil && (u.sub.runsCode || u.sub.runsHooks) || spec.hook == "interpreter" ||
		!u.complete() && len(spec.subs) > 0
}

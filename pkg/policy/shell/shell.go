package shell

import (
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

// shMaxDepth bounds how deeply scripts given to sh -c (and the other
// wrappers that run a script string) may nest before the analysis gives up.
const shMaxDepth = 8

// shMaxBraceWords bounds the words one brace expansion may produce, and
// shMaxCallWords the words of one command after expansion; {1..1000000} is
// not something a policy needs to enumerate.
const (
	shMaxBraceWords = 256
	shMaxCallWords  = 4096
)

// shMaxCommands bounds the commands one analysis records, which keeps the
// structural checks (pipelines, fork bombs) cheap on hostile input. No
// agent needs a thousand commands in one tool call.
const shMaxCommands = 1000

// Parsers are reused: a *syntax.Parser is not safe for concurrent use, but
// the syntax tree it returns does not alias parser memory (Parse resets its
// allocation batches), so a parser goes back to the pool as soon as Parse
// returns.
type shParser struct {
	p *syntax.Parser
	r strings.Reader
}

var (
	shBashParsers = sync.Pool{New: func() any {
		return &shParser{p: syntax.NewParser(syntax.Variant(syntax.LangBash))}
	}}
	shZshParsers = sync.Pool{New: func() any {
		return &shParser{p: syntax.NewParser(syntax.Variant(syntax.LangZsh))}
	}}
	shPOSIXParsers = sync.Pool{New: func() any {
		return &shParser{p: syntax.NewParser(syntax.Variant(syntax.LangPOSIX))}
	}}
	// shAnalyzers holds the scratch state of finished analyses.
	shAnalyzers = sync.Pool{New: func() any { return new(shAnalyzer) }}
)

// shParse parses src in the given dialect.
func shParse(src string, lang syntax.LangVariant) (*syntax.File, error) {
	pool := &shBashParsers
	switch lang {
	case syntax.LangZsh:
		pool = &shZshParsers
	case syntax.LangPOSIX:
		pool = &shPOSIXParsers
	}
	sp := pool.Get().(*shParser)
	sp.r.Reset(src)
	f, err := sp.p.Parse(&sp.r, "")
	sp.r.Reset("")
	pool.Put(sp)
	return f, err
}

// Analyze parses src as a bash script and returns every simple command
// and write redirection it contains, anywhere in the tree, with wrappers
// (env, sudo, timeout, xargs, find -exec, sh -c…) seen through, quotes
// removed, and the critical patterns found. It never splits strings itself:
// the script is parsed with mvdan.cc/sh.
//
// The result is what the policy judges: see [Analysis] for the meaning
// of each field. A script that cannot be parsed, is empty, or runs something
// the analysis cannot see (eval, a non-literal command name, a background
// job…) has a non-empty Unanalysable reason, and is never allowed.
//
// Analyze is safe for concurrent use.
func Analyze(src string) Analysis {
	var budget shBudget
	a := shAnalyze(src, syntax.LangBash, 0, BuiltinPrograms(), &budget)
	res := a.res
	a.release()
	return res
}

// shAnalyze parses and analyses one script at the given nesting depth. The
// caller releases the analyzer once it has read res and info.
func shAnalyze(src string, lang syntax.LangVariant, depth int, progs *Programs, budget *shBudget) *shAnalyzer {
	return shAnalyzeIn(src, lang, depth, progs, budget, false)
}

// shAnalyzeIn is shAnalyze for a script that runs in the shell of the
// script around it (eval, trap) when inShared is set.
func shAnalyzeIn(src string, lang syntax.LangVariant, depth int, progs *Programs, budget *shBudget, inShared bool) *shAnalyzer {
	a := shAnalyzers.Get().(*shAnalyzer)
	a.src, a.depth, a.progs, a.budget, a.inShared = src, depth, progs, budget, inShared
	a.extractedAt = -1
	a.posix = lang == syntax.LangPOSIX
	if r := shScreenInput(src); r != "" {
		a.res.Unanalysable, a.res.Unprefixable = r, r
		return a
	}
	if r := budget.prescreen(src); r != "" {
		a.res.Unanalysable, a.res.Unprefixable = r, r
		return a
	}
	f, err := shParse(src, lang)
	if err != nil && lang == syntax.LangPOSIX {
		// Not POSIX sh (dash refuses it too): still unanalysable, but the
		// bash reading finds the safety patterns and deny rules' commands.
		if bf, berr := shParse(src, syntax.LangBash); berr == nil {
			a.run(bf)
			a.res.Unanalysable = "cannot parse shell command as POSIX sh: " + err.Error()
			return a
		}
	}
	if err != nil {
		a.res.Unanalysable = "cannot parse shell command: " + err.Error()
		return a
	}
	a.run(f)
	r := shScreenTree(f, src)
	if r == "" && lang == syntax.LangPOSIX && (strings.Contains(src, "$'") || strings.Contains(src, "$\"")) {
		// dash reads $'…' as $ and a quoted string; bash, which is sh on
		// macOS, Fedora and Arch, decodes it (sh -c 'cat ~/$'\''.npmrc'\''').
		r = "the sh script holds $'…' or $\"…\", which bash as sh decodes and dash does not"
	}
	if r != "" {
		// The commands found still meet the deny rules (r\⏎m -rf x is
		// rm -rf x for both readers); what bash reads besides, nobody saw.
		a.res.Unanalysable, a.res.Unprefixable = r, r
		a.file = f
		return a
	}
	if depth == 0 && lang == syntax.LangBash && a.res.Unanalysable == "" {
		// The host's shell runs a top-level script, and it may be zsh
		// (shell_zsh.go).
		if r := zshDiffers(src, f); r != "" {
			a.res.Unanalysable, a.res.Unprefixable = r, r
		}
	}
	a.file = f
	return a
}

// release returns the analyzer's scratch slices to the pool; the result
// (res, and the words arena it points into) is the caller's.
func (a *shAnalyzer) release() {
	if cap(a.stack) > shPoolLimit || cap(a.info) > shPoolLimit || cap(a.substs) > shPoolLimit ||
		cap(a.pipes) > shPoolLimit || cap(a.funcs) > shPoolLimit || cap(a.scratch) > shPoolLimit {
		return // hostile input grew it: let the garbage collector have it
	}
	clear(a.stack[:cap(a.stack)])
	clear(a.pipes[:cap(a.pipes)])
	clear(a.funcs[:cap(a.funcs)])
	clear(a.scratch[:cap(a.scratch)])
	*a = shAnalyzer{ // file too is dropped: the tree is the caller's no longer
		info:    a.info[:0],
		stack:   a.stack[:0],
		substs:  a.substs[:0],
		pipes:   a.pipes[:0],
		funcs:   a.funcs[:0],
		scratch: a.scratch[:0],
	}
	shAnalyzers.Put(a)
}

// shPoolLimit is the largest scratch slice kept for reuse.
const shPoolLimit = 1024

// shSpan is a byte range of the analysed source.
type shSpan struct{ start, end uint }

func shSpanOf(n syntax.Node) shSpan {
	return shSpan{n.Pos().Offset(), n.End().Offset()}
}

func (s shSpan) contains(o shSpan) bool { return s.start <= o.start && o.end <= s.end }

// shCmdInfo is what the structural checks (pipelines, fork bombs) need to
// know about an emitted command; it parallels Analysis.Commands.
type shCmdInfo struct {
	// span is the statement the command came from. Commands of a nested
	// script (sh -c '…') carry the span of the statement that ran it.
	span shSpan
	// stdinProgram: the command runs a program it reads from standard
	// input (sh with no script, python -).
	stdinProgram bool
	// executor: the command runs code given to it as an argument, a file
	// or a substitution (shells, eval, source, interpreters).
	executor bool
	// piped: the command runs as a stage of a pipeline or in the
	// background.
	piped bool
	// env is the complete entry whose env_inert judges the variables the
	// script exports for this command, envProg its name for messages
	// (shell_env.go); nil when the entry is not complete. For a program
	// whose entry is not complete, or that has none, env is nil and
	// envProg names it: only its option variables are judged
	// (optionVarOf).
	env     *progSpec
	envProg string
}

// shAnalyzer walks one parsed script.
type shAnalyzer struct {
	// moves caches movesDir by loop: a script of many cds in subshells of
	// one loop walks the loop once.
	moves map[syntax.Node]bool
	src   string
	depth int
	// opened are the indexes in res.Commands of the files redirections
	// open on a descriptor, which /dev/fd/N can reopen the other way
	// (finishDescriptors).
	opened []int
	// madeLink: a command of the script makes a symbolic link
	// (finishLinks).
	madeLink bool
	linkOwn  []int // the writes of those commands, in res.Commands
	// fdSink: a redirection or a program's write named a descriptor's
	// path (/dev/fd/N, /dev/stdout…), which finishDescriptors reads as
	// reopening the files the script's redirections opened.
	fdSink bool
	// nullglob: whether the script may make a pattern that matches
	// nothing vanish (shMentionsNullglob), once a pattern asks: 0 not yet
	// known, 1 no, 2 yes.
	nullglob uint8
	progs    *Programs // the program table (programs.go)
	// posix is set for scripts of sh, dash and the like, parsed as POSIX
	// sh: dash leaves braces literal where bash (and bash as sh) expands
	// them, so both readings are judged (shPosixBraces).
	posix bool
	res   Analysis
	info  []shCmdInfo
	// file is the parsed script, once parsed: what the zsh reading of a
	// nested script is checked against (shell_zsh.go).
	file *syntax.File

	stack   []syntax.Node // the nodes being visited, outermost first
	piping  int           // pipelines and background statements on the stack
	cur     shSpan        // the statement of the call being resolved
	substs  []shSpan      // command and process substitutions
	pipes   []*syntax.BinaryCmd
	funcs   []*syntax.FuncDecl
	scratch []shWord // the words of the call being resolved

	// arena backs the Words of emitted commands: one allocation serves
	// several commands. It belongs to the result, never to the pool.
	arena []string

	// budget is the work left to the whole analysis, nested scripts
	// included (shell_input.go).
	budget *shBudget

	// What the script tells about its variables (shell_code.go).
	safeAt  map[string]uint // first offset of a numeric assignment
	tainted map[string]bool // assigned a value the analysis does not know
	// loops are the for loops over literal words whose variable nothing
	// else in the script sets (shell_code.go).
	loops []shLoop
	// loopPatterns are the pattern items of loops (loopPattern).
	loopPatterns []shWord
	// varVals are the literal values plain assignments of the script give
	// each variable (f=~/.ssh/id_rsa), for the reads of "$f".
	varVals map[string][]shWord
	// unknownVals are the variables the script gives a value varVals does
	// not hold (f=$(…), read f, an array): reads of them can be any path.
	unknownVals map[string]bool
	// sharedVars: the script runs code in its own shell that the walk
	// does not order (eval, trap, a zsh TRAP function), which may set any
	// of its variables at any time; inShared: this is such code, whose
	// variables the enclosing script may have set (shell_reads.go).
	sharedVars, inShared bool
	intVars              map[string]bool // declared -i
	// arrays are the names the script has made arrays so far (a=(…),
	// a[i]=…); assocAssigns the a=(…) of a declare -A, whose keys are
	// strings, not arithmetic.
	arrays       map[string]bool
	assocAssigns map[*syntax.Assign]bool
	// namesHidden: the script runs a builtin that sets variables named by
	// its arguments (shSetsNamesBuiltin).
	namesHidden, namesChecked bool
	// extractedAt is the index of the first command after the script's
	// first archive extraction, or -1 (finishExtracts).
	extractFrom, extractedAt int
	arithUses                []shArithUse
	// cds are the directory changes of the script (shell_paths.go).
	cds []shCd
	// exported are the names the script exports, allexport whether set
	// -a exports every name it assigns (shell_env.go).
	exported  []string
	allexport bool
}

// shWord is one word of a command after quote removal.
type shWord struct {
	// text is the word after quote removal when lit, else its source text.
	text string
	// lit is true when the word has no expansion: no $var, $(…), $((…)),
	// <(…) or extended glob.
	lit bool
	// glob is true when an unquoted *, ? or [...] makes the shell expand
	// the word as a pathname pattern.
	glob bool
	// g describes the strings the word can stand for when it is not a
	// plain literal (an expansion, a pattern, ~user); nil otherwise.
	g globs.Glob
	// splits: the word holds an unquoted expansion, which bash splits
	// into several words (-n$x with x='5 ~/.npmrc' is -n5 and a file).
	splits bool
	// vanish: the word may expand to no word at all (an unquoted $x that
	// is empty, "$@").
	vanish bool
	// computed: the word's value is computed by the script whatever its
	// variables hold (a substitution, an expansion with an operator);
	// vars are the variables it expands plainly ($f, ${f}).
	computed bool
	vars     []string
	// tree: with g, every path under a directory a feeder walks without
	// a name filter (find . -exec): a write of it can be any name.
	tree bool
	// alts are the literal values the word takes, when it is the variable
	// of an enclosing for loop over literal words (for f in a b; do wc
	// "$f"; done): the command is judged once per value.
	alts []string
	// shellCwd: the word is a path under the script's working directory
	// as bash sees it ("$PWD/x", read as ./x); a program's own directory
	// option (git -C sub) does not move it.
	shellCwd bool
	// src is the source text of a pattern with quoted parts ("a b"*,
	// '~/'*), which reads back as written; "" otherwise.
	src string
	// input: the word is, or starts with, input the analysis cannot see
	// (what xargs reads: echo --fromfile ~/.kube/config | xargs tree), which
	// may be an option.
	input bool
	// lead says how the word's value begins, from its parsed parts, for
	// a word that is not a literal (shLead); leadUnset elsewhere.
	lead shLeadKind
	// number: the word is one arithmetic expansion ($((…)), quoted or
	// not), whose value is a number (zsh's Inf and NaN are constants in
	// math, not names).
	number bool
	// quotedHome: the text begins with ~ or $HOME only because of quoting
	// (shQuotedHome): as a path it is relative (pathText).
	quotedHome bool
}

// pathText is the word's text as a path: a quoted ~ or $HOME at its start
// is a directory of that name here, not the home.
func (w shWord) pathText() string {
	if w.quotedHome {
		return "./" + w.text
	}
	return w.text
}

// shLeadKind is how a word's value begins: what decides whether it may
// be an option.
type shLeadKind uint8

const (
	leadUnset     shLeadKind = iota // not worked out: judge by the source text
	leadEmpty                       // the word may be empty text only
	leadText                        // text that is not '-'
	leadDash                        // a literal '-' (an option, its value expanded)
	leadExpansion                   // an expansion, brace or $'…' that may begin with '-'
)

// shLead works out how a word made of parts begins. Parts that may be
// empty (an empty quoted string, single or double, an empty literal) are
// passed over: ""$x begins with $x, which may be --file=… (red team AH
// F1); a brace ({,}$x) may make anything, and so may $'\x2d' and $"…".
func shLead(parts []syntax.WordPart) shLeadKind {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if v == "" {
				continue
			}
			c := v[0]
			if c == '\\' && len(v) > 1 {
				c = v[1]
			}
			switch c {
			case '-':
				return leadDash
			case '{':
				return leadExpansion
			}
			return leadText
		case *syntax.SglQuoted:
			switch {
			case p.Dollar:
				return leadExpansion
			case p.Value == "":
				continue
			case p.Value[0] == '-':
				return leadDash
			}
			return leadText
		case *syntax.DblQuoted:
			if p.Dollar {
				return leadExpansion
			}
			if k := shLead(p.Parts); k != leadEmpty {
				return k
			}
		default:
			return leadExpansion
		}
	}
	return leadEmpty
}

// shFrame is the context a command is resolved in: the wrappers already
// seen through and what they imply.
type shFrame struct {
	wrappers []string
	elevated bool
	// unanalysable is inherited by the command finally run (an
	// assignment to PATH makes whatever runs next unknowable).
	unanalysable string
	// placeholder is the text xargs -I or find -exec replaces with input
	// the policy cannot see ("{}"); "" when there is none.
	placeholder string
	// feeder names what replaces placeholder ("xargs", "find").
	feeder string
	// feed is what the operands that hold the placeholder stand for (a
	// read or write of {} under find -exec is a read or write of what
	// find yields); nil outside a feeder (shell_feed.go).
	feed *shFeed
}

// withWrapper returns a copy of fr with name appended to its wrappers; the
// copy never shares its backing array with fr, so sibling branches (two
// find -exec clauses) cannot overwrite each other.
func (fr shFrame) withWrapper(name string) shFrame {
	w := make([]string, len(fr.wrappers), len(fr.wrappers)+1)
	copy(w, fr.wrappers)
	fr.wrappers = append(w, name)
	return fr
}

func (a *shAnalyzer) run(f *syntax.File) {
	if len(f.Stmts) == 0 {
		a.res.Unanalysable = "empty command"
		a.res.Unprefixable = "empty command"
		return
	}
	a.res.Commands = make([]Command, 0, 4)
	a.sharedVars = a.inShared || shRunsSharedCode(f)
	a.file = f // setsNames reads it during the walk
	a.noteConsts(f)
	syntax.Walk(f, a.visit)
	if a.budget.spent() {
		a.setUnanalysable(shTooComplex)
		a.setUnprefixable(shTooComplex)
		return
	}
	a.finishFuncs()
	a.finishDescriptors()
	a.finishLinks()
	a.finishExtracts()
	a.finishCode()
	a.finishReads()
	a.finishExports()
	a.finishCds()
	for i := range a.res.Commands {
		if c := &a.res.Commands[i]; !c.Redirect && len(c.Words) > 0 {
			c.Text, c.ShortText = CommandTexts(c)
		}
	}
	a.checkForkBombs()
	a.checkFetchExecute()
}

func (a *shAnalyzer) visit(n syntax.Node) bool {
	if !a.budget.take(1) {
		return false
	}
	if n == nil {
		if shPiping(a.stack[len(a.stack)-1]) {
			a.piping--
		}
		a.stack = a.stack[:len(a.stack)-1]
		return true
	}
	switch n := n.(type) {
	case *syntax.Lit, *syntax.SglQuoted:
		// Leaves that hold no command: skipping them (and plain words made
		// of them) spares the walk half its calls. Returning false here
		// means Walk sends no closing nil, so nothing is pushed.
		return false
	case *syntax.Word:
		if shPlainWord(n) {
			return false
		}
	}
	a.stack = append(a.stack, n)
	if shPiping(n) {
		a.piping++
	}
	switch n := n.(type) {
	case *syntax.Stmt:
		if n.Background || n.Coprocess || n.Disown {
			a.setBackground("runs a command in the background")
		}
	case *syntax.CallExpr:
		a.call(n)
	case *syntax.DeclClause:
		a.decl(n)
		a.codeNode(n)
	case *syntax.CoprocClause:
		a.setBackground("runs a coprocess in the background")
	case *syntax.CmdSubst:
		a.substs = append(a.substs, shSpanOf(n))
		if n.Backquotes {
			a.setUnprefixable("backtick command substitution runs a command the prefix check cannot vet")
		} else {
			a.setUnprefixable("command substitution $(…) runs a command the prefix check cannot vet")
		}
	case *syntax.ProcSubst:
		a.substs = append(a.substs, shSpanOf(n))
		a.setUnprefixable("process substitution <(…) or >(…) runs a command the prefix check cannot vet")
	case *syntax.BinaryCmd:
		if n.Op == syntax.Pipe || n.Op == syntax.PipeAll {
			a.pipes = append(a.pipes, n)
		}
	case *syntax.FuncDecl:
		a.funcs = append(a.funcs, n)
	case *syntax.Redirect:
		a.namedDescriptor(n)
		a.redirect(n)
	case *syntax.ArithmExp, *syntax.ArithmCmd, *syntax.LetClause, *syntax.CStyleLoop,
		*syntax.ParamExp, *syntax.Assign, *syntax.UnaryTest, *syntax.BinaryTest:
		a.codeNode(n)
	case *syntax.ForClause:
		a.codeNode(n)
	}
	return true
}

// shPlainWord reports whether w is made only of literal text, plain or
// single-quoted: a word with nothing inside for the walk to find.
func shPlainWord(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p.(type) {
		case *syntax.Lit, *syntax.SglQuoted:
		default:
			return false
		}
	}
	return true
}

// shPiping reports the nodes whose commands run concurrently with others:
// pipelines and background statements.
func shPiping(n syntax.Node) bool {
	switch n := n.(type) {
	case *syntax.BinaryCmd:
		return n.Op == syntax.Pipe || n.Op == syntax.PipeAll
	case *syntax.Stmt:
		return n.Background || n.Coprocess || n.Disown
	}
	return false
}

// full reports whether the analysis holds as many commands as it may; it
// then marks the script unanalysable.
func (a *shAnalyzer) full() bool {
	if len(a.res.Commands) < shMaxCommands {
		return false
	}
	a.setUnanalysable("the script has too many commands to analyse")
	return true
}

func (a *shAnalyzer) setUnprefixable(reason string) {
	if a.res.Unprefixable == "" {
		a.res.Unprefixable = reason
	}
}

func (a *shAnalyzer) setUnanalysable(reason string) {
	if a.res.Unanalysable == "" {
		a.res.Unanalysable = reason
	}
}

func (a *shAnalyzer) setBackground(reason string) {
	a.setUnanalysable(reason)
	a.setUnprefixable(reason)
}

func (a *shAnalyzer) addSafety(reason string) {
	for _, s := range a.res.Safety {
		if s == reason {
			return
		}
	}
	a.res.Safety = append(a.res.Safety, reason)
}

// enclosingStmt returns the statement holding the node on top of the stack.
func (a *shAnalyzer) enclosingStmt() *syntax.Stmt {
	for i := len(a.stack) - 1; i >= 0; i-- {
		if s, ok := a.stack[i].(*syntax.Stmt); ok {
			return s
		}
	}
	return nil
}

// source returns the source text of n, or "" when its positions fall
// outside the source (nodes made up by SplitBraces).
func (a *shAnalyzer) source(n syntax.Node) string {
	s, e := n.Pos().Offset(), n.End().Offset()
	if s > e || e > uint(len(a.src)) {
		return ""
	}
	return a.src[s:e]
}

func (a *shAnalyzer) call(c *syntax.CallExpr) {
	if st := a.enclosingStmt(); st != nil {
		a.cur = shSpanOf(st)
	}
	if len(c.Args) == 0 {
		// FOO=1 alone only sets a shell variable; only variables that
		// change what later commands run matter.
		for _, as := range c.Assigns {
			if as.Name != nil && shExecVar(as.Name.Value) {
				text := a.source(as)
				a.emit([]shWord{{text: text, lit: true}}, shFrame{},
					shExecVarReason(as.Name.Value), shCmdInfo{})
			}
		}
		return
	}
	words, ok := a.words(c.Args)
	var fr shFrame
	// The time keyword: TimeClause → Stmt → CallExpr on the stack.
	if n := len(a.stack); n >= 3 {
		if _, ok := a.stack[n-3].(*syntax.TimeClause); ok {
			fr.wrappers = append(fr.wrappers, "time")
			if len(words) > 0 && words[0].lit && words[0].text == "--" {
				// time -- CMD: bash's time keyword ends its options there
				// (the parser keeps "--" as the command's name).
				words = words[1:]
			}
		}
	}
	for _, as := range c.Assigns {
		fr.wrappers = append(fr.wrappers, a.source(as))
		if as.Name != nil && as.Name.Value == "IFS" && len(words) > 0 && words[0].lit && shSplitsOnly[words[0].text] {
			continue // while IFS= read -r line: only read's own splitting
		}
		if as.Name != nil && shExecVar(as.Name.Value) && fr.unanalysable == "" {
			fr.unanalysable = shExecVarReason(as.Name.Value)
		}
	}
	litFr := fr
	litFr.wrappers = slices.Clone(fr.wrappers)
	switch {
	case !ok:
		a.emit(words, fr, "brace expansion is too large to analyse, runs through characters bash reads again ({Z..a}), or numbers its terms differently in bash and zsh ({+1..3}, {-0..2}, {1..9..02})", shCmdInfo{})
	case slices.ContainsFunc(words, func(w shWord) bool { return w.alts != nil }):
		a.resolveEachValue(words, fr)
	default:
		a.resolve(words, fr)
	}
	if slices.ContainsFunc(c.Args, func(w *syntax.Word) bool { return shZeroDirVariants(w) != nil }) {
		// ~/**/.kube/config: zsh, and bash with globstar, read ** as any
		// number of directories, none included, so the command is also
		// cat ~/.kube/config (red team U2; X1: grep -r . ~/**/ is also
		// grep -r . ~/), judged as a command of its own; the reading
		// with directories is the word itself, a * component.
		a.zeroDirReadings(c.Args, litFr)
	}
	if a.posix && slices.ContainsFunc(c.Args, shHasBraces) {
		// dash runs the words with their braces where bash, and bash
		// as sh, expands them: the literal reading is judged too, as a
		// command of its own (words and frame of its own: resolve keeps
		// them).
		lit := make([]shWord, 0, len(c.Args))
		for _, w := range c.Args {
			lit = append(lit, a.word(w))
		}
		a.resolve(lit, litFr)
	}
}

// decl handles declare, export, local, readonly, typeset and nameref: like
// plain assignments they run nothing, so they only produce a command when
// they set a variable that changes what later commands run.
func (a *shAnalyzer) decl(d *syntax.DeclClause) {
	if st := a.enclosingStmt(); st != nil {
		a.cur = shSpanOf(st)
	}
	a.noteDeclExports(d)
	for _, as := range d.Args {
		if as.Name == nil || as.Naked || !shExecVar(as.Name.Value) {
			continue
		}
		words := []shWord{{text: d.Variant.Value, lit: true}, {text: a.source(as), lit: true}}
		a.emit(words, shFrame{}, shExecVarReason(as.Name.Value), shCmdInfo{})
	}
}

// words returns the words of args after quote removal and brace expansion.
// ok is false when a brace expansion is too large to enumerate; words then
// holds the unexpanded words.
func (a *shAnalyzer) words(args []*syntax.Word) (words []shWord, ok bool) {
	words = slices.Grow(a.scratch[:0], len(args))
	defer func() { a.scratch = words[:0] }()
	ok = true
	for _, w := range args {
		if shHasBraces(w) && ok {
			exp, fine := a.expandBraces(w)
			if fine && len(words)+len(exp) <= shMaxCallWords {
				words = append(words, exp...)
				continue
			}
			ok = false
		}
		words = append(words, a.word(w))
	}
	return words, ok
}

// shProcSubstPath is what a process substitution expands to: bash's
// /dev/fd/N, zsh's /proc/self/fd/N.
// Words share it: its capacity is its length, so an append copies.
var shProcSubstPath = slices.Clip(append(globs.Literal(globs.Glob{globs.AnyRun}, "/fd/"), globs.AnyRun))

// word returns w after quote removal.
func (a *shAnalyzer) word(w *syntax.Word) shWord {
	if len(a.loops) > 0 {
		if vals := a.loopValues(w); vals != nil {
			return shWord{text: a.source(w), g: globs.Glob{globs.AnyRun}, alts: vals}
		}
	}
	if len(w.Parts) == 1 {
		if _, ok := w.Parts[0].(*syntax.ProcSubst); ok {
			// <(cmd) and >(cmd) are a pipe to or from cmd, judged as a
			// command of its own: …/fd/N, which spells no file a rule
			// names (diff <(sort a) <(sort b)).
			return shWord{text: a.source(w), g: shProcSubstPath}
		}
		if l, ok := w.Parts[0].(*syntax.Lit); ok && !strings.ContainsRune(l.Value, '\\') && !shTildeUser(l.Value) {
			sw := shWord{text: l.Value, lit: true, glob: shHasGlob(l.Value)}
			if sw.glob {
				sw.g = a.shGlobOfWord(w)
				sw.vanish = a.patternsMayVanish()
			}
			return sw
		}
	}
	var b strings.Builder
	sw := shWord{lit: true}
	if !shUnquoteParts(&b, w.Parts, false, &sw.glob) || shTildeUserWord(w) {
		out := shWord{text: a.source(w), g: a.shGlobOfWord(w), vanish: shMayVanish(w), splits: shMaySplit(w), lead: shLead(w.Parts),
			glob: shPartsGlob(w.Parts)}
		out.computed, out.vars = shWordSources(w.Parts, nil)
		out.number = shArithOnly(w.Parts)
		// ~NAME is user NAME's home in bash and, in zsh, the value of
		// the parameter NAME (x=~/.ssh; cat ~x/id_rsa), or what the
		// function zsh_directory_name says for ~[…]: any directory.
		out.computed = out.computed || shTildeUserWord(w)
		if !out.computed && (slices.Equal(out.vars, []string{"HOME"}) || slices.Equal(out.vars, []string{"PWD"})) &&
			shLiteralGlob(out.g) {
			// "$HOME/.aws": the home directory and literal text, judged
			// as ~/.aws is; "$PWD/x" as ./x (shPlaceParam).
			return shWord{text: out.g.String(), lit: true, shellCwd: out.vars[0] == "PWD"}
		}
		return out
	}
	sw.text = b.String()
	// '~/x', \~/x, '$HOME/x': the shell expands none of them; as a path
	// they name a directory called ~ (or $HOME) here, which the file
	// tools can make (red team AN F8: cat '~/../../.npmrc' read ~/.npmrc
	// through a directory named ~ in the project). The word's text stays
	// as written; pathText gives the path.
	sw.quotedHome = shQuotedHome(w.Parts, sw.text)
	if sw.glob {
		sw.g = a.shGlobOfWord(w)
		sw.vanish = a.patternsMayVanish()
		sw.src = a.source(w)
	}
	return sw
}

// shQuotedHome reports a word whose text begins as a home directory does
// (~, $HOME, ${HOME}) only because of quoting: its first part is quoted
// or begins with an escaped tilde.
func shQuotedHome(parts []syntax.WordPart, text string) bool {
	if len(parts) == 0 || !(strings.HasPrefix(text, "~") || strings.HasPrefix(text, "$HOME") || strings.HasPrefix(text, "${HOME}")) {
		return false
	}
	switch p := parts[0].(type) {
	case *syntax.SglQuoted, *syntax.DblQuoted:
		return true
	case *syntax.Lit:
		return strings.HasPrefix(p.Value, `\`)
	}
	return false
}

// shArithOnly reports parts that are one arithmetic expansion, alone or
// alone in double quotes.
func shArithOnly(parts []syntax.WordPart) bool {
	if len(parts) != 1 {
		return false
	}
	if dq, ok := parts[0].(*syntax.DblQuoted); ok {
		parts = dq.Parts
		if len(parts) != 1 {
			return false
		}
	}
	_, ok := parts[0].(*syntax.ArithmExp)
	return ok
}

// patternsMayVanish reports whether the script may make a pattern that
// matches nothing vanish, reading its text the first time it is asked.
func (a *shAnalyzer) patternsMayVanish() bool {
	if a.nullglob == 0 {
		a.nullglob = 1
		if shMentionsNullglob(a.src) {
			a.nullglob = 2
		}
	}
	return a.nullglob == 2
}

// shSplitsOnly are the builtins an IFS=… prefix changes nothing else of
// than how they split what they read: it is theirs alone (not a special
// builtin's, which would keep it).
var shSplitsOnly = map[string]bool{"read": true, "mapfile": true, "readarray": true}

// shMentionsNullglob reports a script that may make a pattern matching
// nothing vanish: bash's nullglob, zsh's NULL_GLOB (any spelling) or
// glob qualifier (N).
func shMentionsNullglob(src string) bool {
	return strings.Contains(src, "ullglob") || strings.Contains(src, "ULLGLOB") ||
		strings.Contains(src, "ull_glob") || strings.Contains(src, "ULL_GLOB") || strings.Contains(src, "(N")
}

// shLiteralGlob reports a glob of literal characters only.
func shLiteralGlob(g globs.Glob) bool {
	for _, t := range g {
		if !t.Lit() {
			return false
		}
	}
	return len(g) > 0
}

// shTildeUser reports an unquoted literal starting with ~user, ~+ or ~-:
// a directory the analysis cannot know (~ and ~/ are the home directory).
func shTildeUser(v string) bool {
	return len(v) > 1 && v[0] == '~' && v[1] != '/'
}

func shTildeUserWord(w *syntax.Word) bool {
	if len(w.Parts) == 0 {
		return false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	return ok && shTildeUser(l.Value)
}

// shUnquoteParts appends the quote-removed text of parts to b; it returns
// false as soon as a part is not literal. glob is set when an unquoted
// literal holds a pathname pattern.
func shUnquoteParts(b *strings.Builder, parts []syntax.WordPart, inDouble bool, glob *bool) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if inDouble {
				shUnescapeDouble(b, p.Value)
			} else {
				if !*glob && shHasGlob(p.Value) {
					*glob = true
				}
				shUnescape(b, p.Value)
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				shDecodeANSIC(b, p.Value)
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			// $"…" is translated by gettext under TEXTDOMAIN and
			// TEXTDOMAINDIR, which the script may point at a catalog
			// it wrote: not the text it spells.
			if p.Dollar || !shUnquoteParts(b, p.Parts, true, glob) {
				return false
			}
		case *syntax.CmdSubst:
			out, ok := shKnownOutput(p)
			if !ok || !inDouble {
				return false
			}
			b.WriteString(out)
		default:
			return false
		}
	}
	if !inDouble && !*glob && shBracketAcrossParts(parts) {
		*glob = true
	}
	return true
}

// shPartsGlob reports a word whose unquoted text holds a pathname
// pattern, wherever its expansions stand: *"$y" is a pattern whose
// matches are the directory's names (a file named --pre=sh among them),
// as * is (red team AI F1).
func shPartsGlob(parts []syntax.WordPart) bool {
	open := false
	for _, p := range parts {
		if l, ok := p.(*syntax.Lit); ok && shScanGlob(l.Value, &open, true) {
			return true
		}
	}
	return false
}

// shBracketAcrossParts reports an unquoted '[' in one literal part closed
// by an unquoted ']' in a later one: bash reads .["e"]nv and .[e"x"]nv as
// pathname patterns (the quoted characters are literal members of the
// bracket expression), as globs.AppendWord does.
func shBracketAcrossParts(parts []syntax.WordPart) bool {
	open := false
	for _, p := range parts {
		if l, ok := p.(*syntax.Lit); ok && shScanGlob(l.Value, &open, false) {
			return true
		}
	}
	return false
}

// shKnownOutput returns what a command substitution prints when the
// analysis knows it from the text alone: "$(cat <<'EOF' … EOF)" prints the
// here-document (Claude Code's commit-message idiom), with the trailing
// newlines a substitution drops. Only a lone cat with no operands reading
// a here-document whose delimiter is quoted (so nothing in it expands)
// qualifies; the cat is judged as a command all the same.
func shKnownOutput(cs *syntax.CmdSubst) (string, bool) {
	if len(cs.Stmts) != 1 || len(cs.Last) > 0 {
		return "", false
	}
	st := cs.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || len(call.Assigns) > 0 || len(call.Args) != 1 ||
		len(st.Redirs) != 1 || st.Redirs[0].Op != syntax.Hdoc || st.Redirs[0].Hdoc == nil {
		return "", false
	}
	if name, ok := shLitWord(call.Args[0]); !ok || name != "cat" {
		return "", false
	}
	r := st.Redirs[0]
	quoted := false // bash expands the body unless the delimiter is quoted
	for _, part := range r.Word.Parts {
		switch part := part.(type) {
		case *syntax.SglQuoted, *syntax.DblQuoted:
			quoted = true
		case *syntax.Lit:
			quoted = quoted || strings.ContainsRune(part.Value, '\\')
		}
	}
	if !quoted {
		return "", false
	}
	var body strings.Builder
	for _, part := range r.Hdoc.Parts {
		l, ok := part.(*syntax.Lit)
		if !ok {
			return "", false
		}
		body.WriteString(l.Value)
	}
	return strings.TrimRight(body.String(), "\n"), true
}

// shLitWord returns the text of a word that is one plain literal.
func shLitWord(w *syntax.Word) (string, bool) {
	if len(w.Parts) != 1 {
		return "", false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok || strings.ContainsAny(l.Value, "\\*?[") {
		return "", false
	}
	return l.Value, true
}

// shUnescape removes the backslashes of an unquoted literal: \x is x.
func shUnescape(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
}

// shUnescapeDouble removes the backslashes that quote removal removes
// inside double quotes: before $, `, ", \ and newline only.
func shUnescapeDouble(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case '$', '`', '"', '\\':
				i++
			case '\n':
				i++
				continue
			}
		}
		b.WriteByte(s[i])
	}
}

// shHasGlob reports whether an unquoted literal holds an unescaped
// pathname pattern: *, ?, or [ with a closing ].
func shHasGlob(s string) bool {
	open := false
	return shScanGlob(s, &open, true)
}

// shScanGlob scans s for an unquoted bracket expression ('[' then ']',
// open carrying a '[' seen before s) and, with stars, a '*' or '?'.
// A backslash quotes the next character.
func shScanGlob(s string, open *bool, stars bool) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?':
			if stars {
				return true
			}
		case '[':
			*open = true
		case ']':
			if *open {
				return true
			}
		}
	}
	return false
}

// shDecodeANSIC decodes the body of a $'…' string as bash does.
func shDecodeANSIC(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'e', 'E':
			b.WriteByte(0x1b)
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			} else {
				b.WriteString(`\c`)
			}
		case 'x', 'u', 'U':
			maxDigits := 2
			switch e {
			case 'u':
				maxDigits = 4
			case 'U':
				maxDigits = 8
			}
			j := i + 1
			for j < len(s) && j-i-1 < maxDigits && shIsHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			v, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(v))
			i = j - 1
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
}

func shIsHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// shHasBraces is the cheap test before brace expansion: an unquoted
// literal part holding '{'.
func shHasBraces(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.IndexByte(l.Value, '{') >= 0 {
			return true
		}
	}
	return false
}

// shBraceSplits reports whether brace expansion makes w other words than
// its text ({a,b}, x{1..3}; not a lone {} or {x}).
func shBraceSplits(w *syntax.Word) bool {
	if !shHasBraces(w) {
		return false
	}
	cp := *w
	return syntax.SplitBraces(&cp)
}

// expandBraces performs bash brace expansion on w ({a,b}, {1..3}), which
// the parser leaves as literal text, so that `{rm,-rf,/}` is seen as the
// three words bash runs. ok is false when the expansion would exceed
// shMaxBraceWords.
func (a *shAnalyzer) expandBraces(w *syntax.Word) (words []shWord, ok bool) {
	cp := *w
	if !syntax.SplitBraces(&cp) {
		return []shWord{a.word(w)}, true
	}
	alts, ok := shExpandParts(cp.Parts)
	if !ok {
		return nil, false
	}
	words = make([]shWord, 0, len(alts))
	for _, parts := range alts {
		var b strings.Builder
		sw := shWord{lit: true}
		if !shUnquoteParts(&b, parts, false, &sw.glob) {
			// The alternative holds a $var or $(…): a word of its own
			// ({x,"$HOME"}/.aws is x/.aws and "$HOME"/.aws).
			words = append(words, a.word(&syntax.Word{Parts: parts}))
			continue
		}
		sw.text = b.String()
		if sw.text == "" {
			continue // bash drops words that expand to nothing
		}
		if alt := (&syntax.Word{Parts: parts}); sw.glob || shTildeUserWord(alt) {
			sw.g = a.shGlobOfWord(alt)
			sw.lit = !shTildeUserWord(alt)
		}
		words = append(words, sw)
	}
	if len(words) == 0 {
		return []shWord{{text: "", lit: true}}, true
	}
	return words, true
}

// shExpandParts returns every alternative sequence of parts that the brace
// expansions in parts produce.
func shExpandParts(parts []syntax.WordPart) ([][]syntax.WordPart, bool) {
	alts := [][]syntax.WordPart{nil}
	for _, p := range parts {
		be, ok := p.(*syntax.BraceExp)
		if !ok {
			for i := range alts {
				alts[i] = append(alts[i], p)
			}
			continue
		}
		var opts [][]syntax.WordPart
		if be.Sequence {
			seq, ok := shBraceSequence(be)
			if !ok {
				return nil, false
			}
			for _, s := range seq {
				opts = append(opts, []syntax.WordPart{&syntax.Lit{Value: s}})
			}
		} else {
			for _, e := range be.Elems {
				sub, ok := shExpandParts(e.Parts)
				if !ok {
					return nil, false
				}
				opts = append(opts, sub...)
			}
		}
		if len(alts)*len(opts) > shMaxBraceWords {
			return nil, false
		}
		next := make([][]syntax.WordPart, 0, len(alts)*len(opts))
		for _, a := range alts {
			for _, o := range opts {
				n := make([]syntax.WordPart, 0, len(a)+len(o))
				n = append(append(n, a...), o...)
				next = append(next, n)
			}
		}
		alts = next
	}
	return alts, true
}

// shBraceSequence expands {x..y[..step]} over integers or single letters.
func shBraceSequence(be *syntax.BraceExp) ([]string, bool) {
	if len(be.Elems) < 2 || len(be.Elems) > 3 {
		return nil, false
	}
	lit := func(i int) string { return be.Elems[i].Lit() }
	from, to := lit(0), lit(1)
	step := 1
	if len(be.Elems) == 3 {
		if shSeqPadded(lit(2)) || strings.HasPrefix(lit(2), "+") {
			return nil, false // zsh pads by the step's width, bash does not
		}
		s, err := strconv.Atoi(lit(2))
		if err != nil {
			return nil, false
		}
		if s < 0 {
			s = -s
		}
		if s != 0 {
			step = s
		}
	}
	if x, err1 := strconv.Atoi(from); err1 == nil {
		y, err2 := strconv.Atoi(to)
		// Bounds keep max(x, y)-min(x, y) from overflowing.
		if err2 != nil || x < -1e9 || x > 1e9 || y < -1e9 || y > 1e9 {
			return nil, false
		}
		n := (max(x, y) - min(x, y)) / step
		if n >= shMaxBraceWords {
			return nil, false
		}
		// A bound written with a leading zero pads every term to the
		// wider bound's width ({01..10} is 01 02 … 10). Signed bounds
		// with zeros ({-0..2}, {0..-02}) pad differently in bash and
		// zsh, and a plus sign ({+1..3}) is a sequence only in bash:
		// neither is enumerated.
		width := 0
		if shSeqPadded(from) || shSeqPadded(to) {
			if !shSeqDigits(from) || !shSeqDigits(to) {
				return nil, false
			}
			width = max(len(from), len(to))
		} else if shSeqSignedZero(from) || shSeqSignedZero(to) {
			return nil, false
		}
		out := make([]string, 0, n+1)
		for i := 0; i <= n; i++ {
			v := x + i*step
			if y < x {
				v = x - i*step
			}
			t := strconv.Itoa(v)
			if len(t) < width {
				t = strings.Repeat("0", width-len(t)) + t
			}
			out = append(out, t)
		}
		return out, true
	}
	if utf8.RuneCountInString(from) == 1 && utf8.RuneCountInString(to) == 1 && len(from) == 1 && len(to) == 1 {
		x, y := int(from[0]), int(to[0])
		if !shSeqLetter(from[0]) || !shSeqLetter(to[0]) || (x <= 'Z') != (y <= 'Z') {
			// {Z..a} runs through [ \ ] ^ _ and a backquote, which bash
			// reads again as quotes and substitutions (red team AJ F2):
			// not enumerated.
			return nil, false
		}
		var out []string
		for i := 0; i <= (max(x, y)-min(x, y))/step; i++ {
			v := x + i*step
			if y < x {
				v = x - i*step
			}
			out = append(out, string(rune(v)))
		}
		return out, true
	}
	return nil, false
}

// shSeqPadded reports a sequence bound or step whose digits, after any
// sign, start with a zero and go on: the shells pad the terms.
func shSeqPadded(s string) bool {
	s = strings.TrimLeft(s, "+-")
	return len(s) > 1 && s[0] == '0'
}

// shSeqSignedZero reports a bound with a plus sign or a minus before a
// zero, which bash and zsh read differently.
func shSeqSignedZero(s string) bool {
	return strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-0")
}

// shSeqDigits reports a bound written with digits only, no sign.
func shSeqDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// shSeqLetter reports an ASCII letter, the characters a brace sequence
// over letters may run between.
func shSeqLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// emit records the command words run in the frame fr. reason, when not
// empty, makes the command unanalysable.
func (a *shAnalyzer) emit(words []shWord, fr shFrame, reason string, info shCmdInfo) {
	if a.full() {
		return
	}
	c := Command{
		Words:    a.allocWords(len(words)),
		Elevated: fr.elevated,
	}
	for i, w := range words {
		c.Words[i] = w.text
	}
	if len(fr.wrappers) > 0 {
		c.Wrappers = append([]string(nil), fr.wrappers...)
	}
	name := words[0]
	switch {
	case !name.lit:
		c.Name = name.text
		c.Unanalysable = "command name is not a literal: " + name.text
	case name.glob:
		c.Name = name.text
		c.Unanalysable = "command name is a pathname pattern the shell expands: " + name.text
	case name.text == "":
		c.Unanalysable = "command name is empty"
	case strings.ContainsAny(name.text, " \t\n"):
		// Patterns match words joined by spaces: a name with a space in it
		// would pass for a command and its arguments.
		c.Name = name.text
		c.Unanalysable = "command name contains whitespace: " + strconv.Quote(name.text)
	default:
		c.Name = path.Base(name.text)
		c.PathQualified = strings.Contains(name.text, "/")
	}
	if c.Unanalysable == "" {
		c.Unanalysable = reason
	}
	if c.Unanalysable == "" {
		c.Unanalysable = fr.unanalysable
	}
	if c.Unanalysable == "" && fr.placeholder != "" && strings.Contains(name.text, fr.placeholder) {
		c.Unanalysable = "command name comes from the input of " + fr.feeder + ": " + name.text
	}
	if c.Unanalysable == "" {
		c.Unanalysable = shBuiltinUnanalysable(c.Words)
	}
	c.Foreign = reason != "" && c.Unanalysable == reason && ForeignShells[c.Name]
	c.Globs, c.BaseGlobs = shCommandGlobs(words, fr, c.PathQualified, c.Name)
	if c.Globs != nil {
		c.Shown = shShownWords(words)
	}
	if info.executor && shRunsUnknownCode(reason) {
		// bash -c "$CMD", eval "$x": the code is a value the agent chose;
		// it could be any command, so every deny and ask rule could match.
		c.Globs, c.BaseGlobs, c.UnknownCode = []globs.Glob{{globs.AnyRun}}, nil, true
	}
	info.span = a.cur
	info.piped = a.piping > 0
	c.Repeats = a.repeats()
	a.res.Commands = append(a.res.Commands, c)
	a.info = append(a.info, info)
	a.commandSafety(&a.res.Commands[len(a.res.Commands)-1], words)
	a.programEffects(len(a.res.Commands)-1, words, fr)
	a.builtinCode(words)
	a.noteEnvBuiltin(words)
}

// shShownWords returns the words of a command that is shown as written
// (one with an expansion or a pattern: CommandTexts) in a form that reads
// back as what runs, or nil when each word's text already does: an
// expansion and an unquoted pattern are their source, a pattern with
// quoted parts its source too, and a literal word is quoted when the
// shell would take it apart or expand it.
func shShownWords(words []shWord) []string {
	var shown []string
	for i, w := range words {
		s := w.text
		switch {
		case w.src != "":
			s = w.src
		case w.lit && !w.glob && (w.quotedHome || !shTildeExpands(w.text)):
			// (~/x unquoted is the home as written.)
			s = QuoteWord(w.text)
		}
		if shown == nil && s != w.text {
			shown = make([]string, i, len(words))
			for j := range i {
				shown[j] = words[j].text
			}
		}
		if shown != nil {
			shown = append(shown, s)
		}
	}
	return shown
}

// allocWords returns a slice of n strings carved from the arena.
func (a *shAnalyzer) allocWords(n int) []string {
	if cap(a.arena)-len(a.arena) < n {
		a.arena = make([]string, 0, max(16, n))
	}
	l := len(a.arena)
	a.arena = a.arena[:l+n]
	return a.arena[l : l+n : l+n]
}

// writeTarget records a write of the file named by w (a redirection, a tee
// operand, find -fprint…) as a Redirect entry, unless w names a sink that
// is not a file (/dev/null, /dev/stderr, /dev/fd/2…).
func (a *shAnalyzer) writeTarget(w shWord, fr shFrame) {
	if a.full() {
		return
	}
	c := Command{Redirect: true, Target: w.pathText(), Elevated: fr.elevated}
	if len(fr.wrappers) > 0 {
		c.Wrappers = append([]string(nil), fr.wrappers...)
	}
	c.Globs = a.targetGlobs(w)
	if !w.lit {
		c.Unanalysable = "redirect target is not a literal: " + w.text
	} else if w.g != nil {
		// bash expands a pattern in a redirection when it names exactly
		// one file: which file is not known.
		c.Unanalysable = "redirect target is a pathname pattern: " + w.text
	} else if w.text == "" {
		// bash refuses it ("ambiguous redirect"); there is no path to judge.
		a.setUnanalysable("redirect target is empty")
		c.Unanalysable = "redirect target is empty"
	} else {
		clean := path.Clean(w.text)
		if shHarmlessSink(clean) {
			a.fdSink = a.fdSink || shDescriptorPath(clean)
			return
		}
		if r := shProtectedWrite(clean); r != "" {
			a.addSafety(r)
		} else if strings.HasPrefix(clean, "/dev/") {
			a.addSafety("writes to the device " + clean)
		}
	}
	if w.g != nil {
		if r := shProtectedWriteGlob(w.g); r != "" {
			a.addSafety(r)
		}
	}
	a.res.Commands = append(a.res.Commands, c)
	a.info = append(a.info, shCmdInfo{span: a.cur})
}

// redirect records a redirection that writes or reads a file, noting the
// files it opens on a descriptor (opened).
func (a *shAnalyzer) redirect(r *syntax.Redirect) {
	n := len(a.res.Commands)
	a.redirectFile(r)
	for i := n; i < len(a.res.Commands); i++ {
		a.opened = append(a.opened, i)
	}
}

func (a *shAnalyzer) redirectFile(r *syntax.Redirect) {
	switch r.Op {
	case syntax.RdrIn:
		if st := a.enclosingStmt(); st != nil {
			a.cur = shSpanOf(st)
		}
		for _, w := range a.targetWords(r.Word) {
			a.readTarget(w)
		}
		return
	case syntax.DplIn:
		if l := r.Word.Lit(); l == "-" || shAllDigits(l) {
			return
		}
		if st := a.enclosingStmt(); st != nil {
			a.cur = shSpanOf(st)
		}
		for _, w := range a.targetWords(r.Word) {
			a.readTarget(w)
		}
		return
	case syntax.RdrInOut:
		if st := a.enclosingStmt(); st != nil {
			a.cur = shSpanOf(st)
		}
		for _, w := range a.targetWords(r.Word) {
			a.readTarget(w)
		}
	case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob,
		syntax.RdrAll, syntax.RdrAllClob, syntax.AppAll, syntax.AppAllClob:
	case syntax.DplOut:
		// >&2 and >&- duplicate or close a descriptor; >&file (bash) is
		// &>file.
		if l := r.Word.Lit(); l == "-" || shAllDigits(l) {
			return
		}
	default:
		return
	}
	if st := a.enclosingStmt(); st != nil {
		a.cur = shSpanOf(st)
	}
	for _, w := range a.targetWords(r.Word) {
		a.writeTarget(w, shFrame{})
	}
}

// targetWords returns the words a redirection target expands to: bash
// brace-expands it (> .e{n..n}v writes .env; two words or more are an
// "ambiguous redirect" it refuses, judged all the same).
//
// In a POSIX sh script the literal target is added: dash opens the name
// with its braces, bash as sh the expansion.
func (a *shAnalyzer) targetWords(w *syntax.Word) []shWord {
	var out []shWord
	for _, z := range shZeroDirVariants(w) {
		out = append(out, a.targetWordsOf(z)...)
	}
	return append(out, a.targetWordsOf(w)...)
}

// targetWordsOf is targetWords without the ** readings.
func (a *shAnalyzer) targetWordsOf(w *syntax.Word) []shWord {
	if shHasBraces(w) {
		if exp, ok := a.expandBraces(w); ok {
			out := slices.Clone(exp)
			if a.posix {
				out = append(out, a.word(w))
			}
			return out
		}
		return []shWord{{text: a.source(w), g: globs.Glob{globs.AnyRun}}}
	}
	tw := a.word(w)
	if tw.alts != nil {
		// for f in a b; do echo > "$f.s"; done writes a.s and b.s.
		out := make([]shWord, len(tw.alts))
		for i, v := range tw.alts {
			out[i] = a.loopValueWord(v)
		}
		return out
	}
	return []shWord{tw}
}

func shAllDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// finishDescriptors judges each file a redirection opened the other way
// too when the script may name a descriptor's path: on Linux /dev/fd/N,
// /dev/stdin, /dev/stdout and /dev/stderr are links to the file open on
// the descriptor, and opening one opens that file afresh, with the new
// flags. echo x 3<~/.bashrc >>/dev/fd/3 appends to ~/.bashrc, which
// the script only opened for reading; cat /dev/fd/3 3>>.env.local reads
// a file it only opened for appending.
func (a *shAnalyzer) finishDescriptors() {
	if len(a.opened) == 0 || !a.fdSink && !shMayNameDescriptor(a.src) && !a.readsDescriptor() {
		return
	}
	for _, i := range a.opened {
		c := a.res.Commands[i]
		if c.Unanalysable != "" || c.Target == "" {
			continue // asks already
		}
		w := shWord{text: c.Target, lit: true}
		if len(c.Globs) > 0 {
			w.g = c.Globs[0]
		}
		a.cur = a.info[i].span
		if c.Read {
			a.writeTarget(w, shFrame{})
		} else {
			a.readTarget(w)
		}
	}
}

// shDescriptorPath reports a cleaned path to a descriptor of the process:
// /dev/fd/N, /dev/stdin, /dev/stdout, /dev/stderr (not /dev/null or
// /dev/tty), or anything under /proc.
func shDescriptorPath(p string) bool {
	return strings.HasPrefix(p, "/dev/fd") || strings.HasPrefix(p, "/dev/std") || strings.HasPrefix(p, "/proc/")
}

// readsDescriptor reports a command whose reads name a descriptor's path
// by their value (f=/dev/fd/3; cat $f).
func (a *shAnalyzer) readsDescriptor() bool {
	for i := range a.res.Commands {
		c := &a.res.Commands[i]
		for _, r := range c.Reads {
			if shDescriptorPath(path.Clean(r)) {
				return true
			}
		}
		if c.Redirect && shDescriptorPath(path.Clean(c.Target)) {
			return true
		}
	}
	return false
}

// shMayNameDescriptor reports whether a script's text may name a path to
// one of its descriptors: it spells one of the words such a path holds
// (dev, fd, std…, proc, self), spells letters in ways the text does not
// show (a backslash, $'…', $"…"), or has a pathname pattern and a '/'
// (/d?v/f?/3). /dev/null and /dev/tty do not count. A value the script
// computes is judged where it is used (a redirection to it asks; a read
// of it meets every read rule). Checked word by word.
func shMayNameDescriptor(src string) bool {
	s := strings.NewReplacer("/dev/null", "", "/dev/tty", "").Replace(src)
	for _, tok := range strings.Fields(s) {
		if strings.Contains(tok, "$'") || strings.Contains(tok, `$"`) {
			return true
		}
		t := shUnquoteLetters.Replace(tok)
		for _, k := range []string{"dev", "fd", "std", "proc", "self"} {
			if strings.Contains(t, k) {
				return true
			}
		}
		if strings.ContainsAny(t, "*?[{$`") && strings.Contains(t, "/") {
			return true // /d?v/f?/3, /{d..d}ev/fd/3, /$a$b/f$c/3
		}
	}
	return false
}

// shUnquoteLetters drops the quoting that can split a word's letters
// (/de"v"/f\d/3).
var shUnquoteLetters = strings.NewReplacer("\\", "", "'", "", `"`, "")

// shHarmlessSink reports the cleaned redirect targets that are not files.
func shHarmlessSink(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return true
	}
	rest, ok := strings.CutPrefix(p, "/dev/fd/")
	return ok && shAllDigits(rest)
}

// nested analyses script, a literal script that the command in frame fr
// runs (sh -c, su -c, trap, watch…), and appends its commands as if they
// were run through wrapper. lang is the dialect to parse it in.
func (a *shAnalyzer) nested(script string, lang syntax.LangVariant, fr shFrame, wrapper string) {
	if a.depth+1 > shMaxDepth {
		a.setUnanalysable("scripts are nested too deeply to analyse")
		return
	}
	if fr.placeholder != "" && strings.Contains(script, fr.placeholder) {
		// xargs -I{} sh -c 'echo {}': the input becomes script text.
		a.setUnanalysable("the " + wrapper + " script contains " + fr.placeholder +
			", which " + fr.feeder + " replaces with input the policy cannot see")
	}
	for _, w := range fr.wrappers {
		// env LC_ALL=zh_CN.GBK bash -c '…': the shell reads the script
		// in the character set the environment it gets names.
		if name, ok := envAssignedName(w); ok && localeCharset[name] {
			if _, val, _ := strings.Cut(w, "="); !safeLocale(val) {
				a.setUnanalysable(foreignCharset(name, val))
			}
		}
	}
	if shSameShell[wrapper] && a.posix {
		// eval and trap run their script in this shell: in sh, it is
		// read as sh (dash opens > {a,b} with its braces; FuzzShellOracle).
		lang = syntax.LangPOSIX
	}
	in := shAnalyzeIn(script, lang, a.depth+1, a.progs, a.budget, shSameShell[wrapper])
	defer in.release()
	label := wrapper + " script: "
	if in.res.Unanalysable == "" && lang == syntax.LangBash && !shNamedBash[wrapper] && in.file != nil {
		// Not a named bash: eval and trap run their script in the
		// shell running this one, flock, script and su in $SHELL or the
		// user's shell — any of which may be zsh (shell_zsh.go).
		if r := zshDiffers(script, in.file); r != "" {
			a.setUnanalysable(label + r)
		}
	}
	if in.res.Unanalysable != "" {
		a.setUnanalysable(label + in.res.Unanalysable)
	}
	if in.res.Unprefixable != "" {
		a.setUnprefixable(label + in.res.Unprefixable)
	}
	for _, s := range in.res.Safety {
		a.addSafety(s)
	}
	for i, c := range in.res.Commands {
		w := make([]string, 0, len(fr.wrappers)+1+len(c.Wrappers))
		w = append(append(append(w, fr.wrappers...), wrapper), c.Wrappers...)
		c.Wrappers = w
		c.Elevated = c.Elevated || fr.elevated
		if c.Unanalysable == "" {
			c.Unanalysable = fr.unanalysable
		}
		if a.full() {
			return
		}
		info := in.info[i]
		info.span = a.cur
		info.piped = info.piped || a.piping > 0
		a.res.Commands = append(a.res.Commands, c)
		a.info = append(a.info, info)
	}
	// What the nested script exports is in the environment of the
	// script's other programs too (a name counts for every program).
	a.exported = append(a.exported, in.envNames()...)
}

// shMayVanish reports whether an expanded word may become no word at all:
// it holds no literal text and every expansion in it is unquoted or "$@".
// shMaySplit reports a word holding an unquoted parameter expansion or
// command substitution, or "$@" (which is several words quoted).
func shMaySplit(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.ParamExp, *syntax.CmdSubst:
			return true
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if pe, ok := q.(*syntax.ParamExp); ok && pe.Param != nil && (pe.Param.Value == "@" || shIsAllIndex(pe.Index)) {
					return true
				}
			}
		}
	}
	return false
}

func shMayVanish(w *syntax.Word) bool {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if p.Value != "" {
				return false
			}
		case *syntax.SglQuoted:
			return false
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				pe, ok := q.(*syntax.ParamExp)
				if !ok || pe.Param == nil || !(pe.Param.Value == "@" || shIsAllIndex(pe.Index)) {
					return false
				}
			}
		case *syntax.ArithmExp:
			return false // always a number
		}
	}
	return true
}

// shRunsUnknownCode reports the reasons of a command that runs code given
// as a value the analysis does not know (a non-literal -c script, eval of
// an expansion, a non-literal trap action or env -S string).
func shRunsUnknownCode(reason string) bool {
	return strings.HasPrefix(reason, "runs a script that is not a literal") ||
		strings.HasPrefix(reason, "eval runs") || strings.HasPrefix(reason, "trap action is not a literal")
}

// shZeroDirs returns w with its first ** component standing for no
// directory at all (a "." in its place), as zsh and bash with globstar
// read it then:
// ~/**/.kube/config is also ~/.kube/config, and ~/**/ and ~/** are also
// ~/, the home itself (red team U2; X1: a reading that dropped the home
// let grep -r . ~/**/ read ~/.ssh). has is false when w has no such
// component in an unquoted literal part: a ** between slashes, or at the
// start or end of the word.
func shZeroDirs(w *syntax.Word) (*syntax.Word, bool) {
	for i, p := range w.Parts {
		l, ok := p.(*syntax.Lit)
		if !ok || !strings.Contains(l.Value, "**") {
			continue
		}
		v := l.Value
		for j := strings.Index(v, "**"); j >= 0; {
			end := j
			for end < len(v) && v[end] == '*' {
				end++
			}
			// The characters beside the run may be in the parts beside
			// this one: "$HOME/"**/x, ~/**"/".kube (red team Z1).
			before := j > 0 && v[j-1] == '/' || j == 0 && (i == 0 || shPartEdge(w.Parts[i-1], true) == '/')
			after := end < len(v) && v[end] == '/' || end == len(v) && (i == len(w.Parts)-1 || shPartEdge(w.Parts[i+1], false) == '/')
			if before && after {
				if len(w.Parts) == 1 && v == v[j:end] {
					return nil, false // ** alone: the files under ., no directory of its own
				}
				// The run becomes ".", no directory: ~/./.kube is
				// ~/.kube, **/x is ./x, ~/** is ~/. (the home itself).
				parts := slices.Clone(w.Parts)
				parts[i] = &syntax.Lit{ValuePos: l.ValuePos, ValueEnd: l.ValueEnd, Value: v[:j] + "." + v[end:]}
				return &syntax.Word{Parts: parts}, true
			}
			k := strings.Index(v[end:], "**")
			if k < 0 {
				break
			}
			j = end + k
		}
	}
	return nil, false
}

// shPartEdge is the last (or first) character of a word part when it is a
// literal one — plain, quoted or in double quotes — else 0.
func shPartEdge(p syntax.WordPart, last bool) byte {
	var s string
	switch p := p.(type) {
	case *syntax.Lit:
		s = p.Value
	case *syntax.SglQuoted:
		s = p.Value
	case *syntax.DblQuoted:
		if len(p.Parts) == 0 {
			return 0
		}
		q := p.Parts[0]
		if last {
			q = p.Parts[len(p.Parts)-1]
		}
		return shPartEdge(q, last)
	}
	if s == "" {
		return 0
	}
	if last {
		return s[len(s)-1]
	}
	return s[0]
}

// shZeroDirVariants returns the words w also stands for when its **
// components stand for no directory (shZeroDirs), each one taken out or
// kept: at most 7, past three such components.
func shZeroDirVariants(w *syntax.Word) []*syntax.Word {
	z, ok := shZeroDirs(w)
	if !ok {
		return nil
	}
	out := []*syntax.Word{z}
	for i := 0; i < len(out) && len(out) < 7; i++ {
		if zz, ok := shZeroDirs(out[i]); ok {
			out = append(out, zz)
		}
	}
	return out
}

// zeroDirReadings judges the command of args again with its ** components
// standing for no directory: the k-th reading takes each word's k-th
// variant (shZeroDirVariants), or its last.
func (a *shAnalyzer) zeroDirReadings(args []*syntax.Word, fr shFrame) {
	variants := make([][]*syntax.Word, len(args))
	n := 0
	for i, w := range args {
		variants[i] = shZeroDirVariants(w)
		n = max(n, len(variants[i]))
	}
	for k := range n {
		alt := make([]*syntax.Word, len(args))
		for i, w := range args {
			alt[i] = w
			if vs := variants[i]; len(vs) > 0 {
				alt[i] = vs[min(k, len(vs)-1)]
			}
		}
		words, ok := a.words(alt)
		f := fr
		f.wrappers = slices.Clone(fr.wrappers)
		if !ok {
			a.emit(words, f, "brace expansion is too large to analyse, runs through characters bash reads again ({Z..a}), or numbers its terms differently in bash and zsh ({+1..3}, {-0..2}, {1..9..02})", shCmdInfo{})
			continue
		}
		a.resolve(slices.Clone(words), f)
	}
}

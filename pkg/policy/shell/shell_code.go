package shell

import (
	"slices"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
	"mvdan.cc/sh/v3/syntax"
)

// Places where bash evaluates data as code (issue 12, class 2). The walk
// sees the commands of the script, but bash also runs code hidden in the
// values of variables and in arguments it treats as names:
//
//   - arithmetic ($((…)), ((…)), let, for ((…)), array subscripts, the
//     offsets of ${x:i:n}, the operands of [[ a -eq b ]], assignments to a
//     declare -i variable) evaluates the value of every variable it names,
//     recursively, and the subscripts in that value run command
//     substitutions: x='a[$(rm -rf ~)]'; echo $((x)).
//   - arguments that name a variable (read, printf -v, mapfile, getopts,
//     wait -p, unset, declare, export, local, test -v, [[ -v ]], declare -n)
//     evaluate a subscript written in the name: read 'a[$(id)]'.
//   - ${!x} (indirection) and ${x@P} (prompt expansion) expand the value of
//     x as a name or as a prompt string, which runs substitutions.
//   - builtins that take code or change what runs later: mapfile -C,
//     complete/compgen -C/-F/-W, bind -x, fc, shopt -s expand_aliases and
//     the other shopt options that change how words are read.
//
// A variable's value is known to be a plain number when every assignment
// of the script gives it one (x=3, ((x=y+1)), for ((i=0;…))) and one comes
// before the use in the source; the special parameters ($#, $?, $$, $!)
// and ${#x} are numbers too. Anything else is unknown, and an unknown
// value where bash evaluates code makes the script unanalysable with a
// reason naming the construct.

// shArithUse is a variable whose value an arithmetic context evaluates.
type shArithUse struct {
	name string
	off  uint
	ctx  string
}

// shNumericSpecials are parameters whose value bash keeps a number.
var shNumericSpecials = map[string]bool{
	"#": true, "?": true, "$": true, "!": true, "RANDOM": true, "SRANDOM": true,
	"SECONDS": true, "LINENO": true, "BASHPID": true, "PPID": true, "UID": true,
	"EUID": true, "EPOCHSECONDS": true, "OPTIND": true,
}

// noteSafeAssign records a numeric assignment of name at off.
func (a *shAnalyzer) noteSafeAssign(name string, off uint) {
	if a.safeAt == nil {
		a.safeAt = map[string]uint{}
	}
	if prev, ok := a.safeAt[name]; !ok || off < prev {
		a.safeAt[name] = off
	}
}

// setVar is the one path of every construct that sets, exports or unsets
// a variable other than a plain assignment word (which judges the command
// it prefixes on its own): for and select variables, arithmetic
// assignment (let, ((…)), $((…))), read, mapfile, printf -v, getopts,
// declare/typeset/local/export/readonly, the target of a nameref, unset.
// A variable that changes what later programs run or read (HOME before
// git, PATH, LD_*, BASH_ENV, the table's env: lists) makes the script
// unanalysable, as the option it stands for would; any other becomes a
// value the analysis does not know.
func (a *shAnalyzer) setVar(name, what string) {
	if localeCharset[name] {
		a.codeUnknown(what + " sets " + name + " to a value the analysis does not know, which may choose a character set a shell reads the script's bytes in differently")
	}
	if shExecVar(name) {
		a.codeUnknown(what + " changes " + name + ", which changes what later commands run or read")
	}
	a.taint(name)
	if what != "for" && what != "select" { // a loop's literal items are recorded as its values
		a.valueUnknown(name)
	}
}

// namedDescriptor handles a redirection to a named descriptor, {NAME}>file
// or {NAME}<file (bash, zsh): the shell opens a descriptor and assigns its
// number to NAME, which stays set after the command — an assignment like
// any other (red team U1: {HOME}</dev/null before git status, {IFS} and
// {GLOBIGNORE} before a read). A name with a subscript, {a[x]}, has it
// evaluated as arithmetic, which may run code.
func (a *shAnalyzer) namedDescriptor(r *syntax.Redirect) {
	if r.N == nil || !strings.HasPrefix(r.N.Value, "{") {
		return
	}
	name := strings.TrimSuffix(strings.TrimPrefix(r.N.Value, "{"), "}")
	if strings.ContainsRune(name, '[') {
		a.codeUnknown("the named descriptor " + r.N.Value + " has a subscript, which bash evaluates as arithmetic (it may run code)")
		return
	}
	a.setVar(name, "the redirection "+r.N.Value)
}

// valueUnknown records that the script gives name a value the analysis
// does not record in varVals: a read of it can be any path
// (shell_reads.go).
func (a *shAnalyzer) valueUnknown(name string) {
	if a.unknownVals == nil {
		a.unknownVals = map[string]bool{}
	}
	a.unknownVals[name] = true
}

// taint records that name may hold any value.
func (a *shAnalyzer) taint(name string) {
	if a.tainted == nil {
		a.tainted = map[string]bool{}
	}
	a.tainted[name] = true
}

// codeUnknown marks the script unanalysable because bash evaluates code
// the analysis cannot know.
func (a *shAnalyzer) codeUnknown(reason string) {
	a.setUnanalysable(reason)
	a.setUnprefixable(reason)
}

// codeNode handles the syntax nodes where bash evaluates data as code; it
// is called by visit for every node pushed on the stack.
func (a *shAnalyzer) codeNode(n syntax.Node) {
	switch n := n.(type) {
	case *syntax.ArithmExp:
		a.arith(n.X, "$((…))")
	case *syntax.ArithmCmd:
		a.arith(n.X, "((…))")
	case *syntax.LetClause:
		for _, x := range n.Exprs {
			a.arith(x, "let")
		}
	case *syntax.CStyleLoop:
		a.arith(n.Init, "for ((…))")
		a.arith(n.Cond, "for ((…))")
		a.arith(n.Post, "for ((…))")
	case *syntax.ParamExp:
		a.paramExp(n)
	case *syntax.Assign:
		a.assign(n)
	case *syntax.ForClause:
		if wi, ok := n.Loop.(*syntax.WordIter); ok && wi.Name != nil {
			what := "for"
			if n.Select {
				what = "select"
			}
			a.setVar(wi.Name.Value, what)
			if shShellSets(wi.Name.Value) {
				a.valueUnknown(wi.Name.Value)
			}
			a.noteLoop(n, wi)
			if len(wi.Items) == 0 && !wi.InPos.IsValid() {
				// for f; do …: over "$@", the script's or a function's
				// arguments.
				a.taint(wi.Name.Value)
				a.valueUnknown(wi.Name.Value)
			}
			// for f in .env x; do cat "$f"; done: each literal item (or
			// pattern) is a value a read of "$f" names.
			for _, item := range wi.Items {
				ws, ok := a.itemWords(item)
				if !ok {
					a.valueUnknown(wi.Name.Value)
				}
				for _, w := range ws {
					if w.lit && len(a.varVals) < shMaxVarVals {
						if a.varVals == nil {
							a.varVals = map[string][]shWord{}
						}
						a.varVals[wi.Name.Value] = append(a.varVals[wi.Name.Value], w)
					} else {
						a.valueUnknown(wi.Name.Value)
					}
				}
			}
		}
	case *syntax.UnaryTest:
		if n.Op == syntax.TsVarSet || n.Op == syntax.TsRefVar {
			if w, ok := n.X.(*syntax.Word); ok {
				a.nameArgOf(a.word(w), "[[ -v ]]", false)
			}
		}
	case *syntax.BinaryTest:
		switch n.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, x := range [...]syntax.TestExpr{n.X, n.Y} {
				if w, ok := x.(*syntax.Word); ok {
					a.arithOperand(w, "[[ "+n.Op.String()+" ]]")
				}
			}
		}
	case *syntax.DeclClause:
		a.declCode(n)
	}
}

// arith checks an arithmetic expression.
func (a *shAnalyzer) arith(x syntax.ArithmExpr, ctx string) {
	switch x := x.(type) {
	case nil:
	case *syntax.BinaryArithm:
		if shArithAssignOp(x.Op) {
			if name := shArithName(x.X); name != "" {
				// The result of an arithmetic assignment is a number, but
				// a number can be a path: ((HOME=1)) before git reads
				// 1/.gitconfig.
				if shExecVar(name) {
					a.codeUnknown(ctx + " changes " + name + ", which changes what later commands run or read")
				}
				a.noteSafeAssign(name, x.X.Pos().Offset())
				if x.Op != syntax.Assgn {
					a.arithUse(name, x.X.Pos().Offset(), ctx)
				}
			} else {
				a.arith(x.X, ctx)
			}
			a.arith(x.Y, ctx)
			return
		}
		a.arith(x.X, ctx)
		a.arith(x.Y, ctx)
	case *syntax.UnaryArithm:
		if x.Op == syntax.Inc || x.Op == syntax.Dec {
			if name := shArithName(x.X); name != "" {
				if shExecVar(name) {
					a.codeUnknown(ctx + " changes " + name + ", which changes what later commands run or read")
				}
				a.arithUse(name, x.X.Pos().Offset(), ctx)
				a.noteSafeAssign(name, x.X.Pos().Offset()+1)
				return
			}
		}
		a.arith(x.X, ctx)
	case *syntax.ParenArithm:
		a.arith(x.X, ctx)
	case *syntax.Word:
		a.arithOperand(x, ctx)
	default:
		a.codeUnknown(ctx + " holds an expression the analysis does not know")
	}
}

// shArithName returns the variable an arithmetic operand names without a
// subscript, or "".
func shArithName(x syntax.ArithmExpr) string {
	w, ok := x.(*syntax.Word)
	if !ok || len(w.Parts) != 1 {
		return ""
	}
	if l, ok := w.Parts[0].(*syntax.Lit); ok && shIsIdent(l.Value) {
		return l.Value
	}
	return ""
}

// arithOperand checks one operand: its text (after expansion) is itself
// evaluated as an arithmetic expression.
func (a *shAnalyzer) arithOperand(w *syntax.Word, ctx string) {
	if len(w.Parts) == 1 {
		switch p := w.Parts[0].(type) {
		case *syntax.ParamExp:
			a.arithParam(p, ctx)
			return
		case *syntax.DblQuoted:
			if len(p.Parts) == 1 {
				if pe, ok := p.Parts[0].(*syntax.ParamExp); ok {
					a.arithParam(pe, ctx)
					return
				}
			}
		}
	}
	sw := a.word(w)
	if !sw.lit {
		a.codeUnknown(ctx + " evaluates the expansion " + sw.text + " as code; its value is unknown")
		return
	}
	a.arithText(sw.text, w.Pos().Offset(), ctx)
}

// arithText checks the literal text of an operand.
func (a *shAnalyzer) arithText(s string, off uint, ctx string) {
	s = strings.TrimSpace(s)
	switch {
	case s == "" || s == "@" || s == "*" || shIsArithNumber(s):
	case shIsIdent(s):
		a.arithUse(s, off, ctx)
	default:
		a.codeUnknown(ctx + " evaluates " + shQuoteShort(s) + " as an expression the analysis does not follow")
	}
}

// arithParam checks $x, ${x}, ${#x}, a[i] used as an arithmetic operand.
func (a *shAnalyzer) arithParam(p *syntax.ParamExp, ctx string) {
	if p.Param == nil {
		a.codeUnknown(ctx + " evaluates an expansion the analysis does not know")
		return
	}
	name := p.Param.Value
	switch {
	case p.Length && p.Index == nil:
		return // ${#x} is a number
	case p.Index != nil:
		a.codeUnknown(ctx + " evaluates the array element " + name + "[…], whose value is unknown")
		return
	case p.Excl || p.Slice != nil || p.Repl != nil || p.Exp != nil || p.Names != 0:
		a.codeUnknown(ctx + " evaluates the expansion of " + name + " as code; its value is unknown")
		return
	}
	a.arithUse(name, p.Pos().Offset(), ctx)
}

// arithUse records that ctx evaluates the value of name at off; the
// decision waits for the whole script (finishCode).
func (a *shAnalyzer) arithUse(name string, off uint, ctx string) {
	if shNumericSpecials[name] && !a.tainted[name] {
		return
	}
	a.arithUses = append(a.arithUses, shArithUse{name: name, off: off, ctx: ctx})
}

// finishCode decides the arithmetic uses once every assignment is known.
func (a *shAnalyzer) finishCode() {
	for _, u := range a.arithUses {
		at, ok := a.safeAt[u.name]
		if ok && at < u.off && !a.tainted[u.name] && !shNumericSpecials[u.name] {
			continue
		}
		if shNumericSpecials[u.name] && !a.tainted[u.name] {
			continue
		}
		a.codeUnknown(u.ctx + " evaluates the value of " + u.name +
			" as code, and the script does not set it to a number first (a value like a[$(cmd)] runs cmd)")
		return
	}
	for name := range shIntSpecials {
		if a.tainted[name] {
			a.codeUnknown(name + " is an integer variable of bash, which evaluates every value assigned to it as arithmetic" +
				", and the script assigns it a value the analysis does not know (a value like b[$(cmd)] runs cmd)")
			return
		}
	}
	for name := range a.intVars {
		if a.tainted[name] {
			a.codeUnknown("declare -i " + name + " evaluates every value assigned to " + name +
				" as arithmetic, and the script assigns it a value the analysis does not know")
			return
		}
	}
}

// paramExp checks ${!x}, ${x@P} and the arithmetic of subscripts and
// slices.
func (a *shAnalyzer) paramExp(p *syntax.ParamExp) {
	name := ""
	if p.Param != nil {
		name = p.Param.Value
	}
	if p.Excl && p.Names == 0 && !shIsAllIndex(p.Index) {
		a.codeUnknown("${!" + name + "} expands the value of " + name + " as a variable name, which may hold code")
	}
	if p.Exp != nil && p.Exp.Op == syntax.OtherParamOps && p.Exp.Word != nil && strings.Contains(p.Exp.Word.Lit(), "P") {
		a.codeUnknown("${" + name + "@P} expands the value of " + name + " as a prompt, which runs command substitutions")
	}
	if p.Index != nil && !shIsAllIndex(p.Index) {
		a.arith(p.Index, "the subscript of "+name+"[…]")
	}
	if p.Slice != nil {
		a.arith(p.Slice.Offset, "the offset of ${"+name+":…}")
		a.arith(p.Slice.Length, "the length of ${"+name+":…}")
	}
	if p.Exp != nil && p.Param != nil {
		switch p.Exp.Op {
		case syntax.AssignUnset, syntax.AssignUnsetOrNull:
			// ${x:=value} assigns x: one path with the others (echo
			// ${GLOBIGNORE=x} turns on dotglob, ${CDPATH=~} moves cd).
			a.setVar(name, "${"+name+"="+"…}")
		}
	}
}

// shIntSpecials are the variables bash gives the integer attribute
// itself (declare -i -p in a fresh bash): an assignment to one is
// evaluated as arithmetic, as to a declare -i variable.
var shIntSpecials = map[string]bool{"RANDOM": true, "SRANDOM": true, "OPTIND": true, "HISTCMD": true, "MAILCHECK": true}

// shBashArrays are the arrays bash sets itself: declare NAME='(…)' on one
// re-parses the value as an array assignment.
var shBashArrays = map[string]bool{"BASH_ARGV": true, "BASH_ARGC": true, "BASH_LINENO": true, "BASH_SOURCE": true,
	"BASH_REMATCH": true, "BASH_VERSINFO": true, "DIRSTACK": true, "FUNCNAME": true, "GROUPS": true, "PIPESTATUS": true,
	"COMP_WORDS": true, "COPROC": true, "BASH_ALIASES": true, "BASH_CMDS": true}

// shMakesArrays reports whether a script may make some variable an array
// other than by a=(…) or a[i]=… (declare -a, read -a, mapfile…): then any
// name may be one when a declare reads its value again.
func shMakesArrays(src string) bool {
	for _, m := range []string{"-a", "-A", "mapfile", "readarray", "=(", "zparseopts", "set -A", "read -", "vared"} {
		if strings.Contains(src, m) {
			return true
		}
	}
	return false
}

// shIsAllIndex reports the subscripts @ and * (every element).
func shIsAllIndex(x syntax.ArithmExpr) bool {
	w, ok := x.(*syntax.Word)
	if !ok {
		return false
	}
	l := w.Lit()
	return l == "@" || l == "*"
}

// assign records what an assignment tells about its variable, and checks
// its subscript.
func (a *shAnalyzer) assign(as *syntax.Assign) {
	if as.Name == nil {
		return
	}
	name := as.Name.Value
	if as.Index != nil || as.Array != nil {
		if a.arrays == nil {
			a.arrays = map[string]bool{}
		}
		a.arrays[name] = true
	}
	if as.Index != nil {
		a.arith(as.Index, "the subscript of "+name+"[…]")
		a.taint(name)
		a.valueUnknown(name)
		return
	}
	switch {
	case as.Naked:
	case as.Array != nil:
		// a=([k]=v): bash evaluates each subscript of an indexed array
		// as arithmetic, and with it the values of the variables it
		// names (x='b[$(cmd)]'; a=([x]=1) runs cmd). An associative
		// array's keys are strings (declare -A on the same clause).
		if !a.assocAssigns[as] {
			for _, e := range as.Array.Elems {
				if e.Index != nil {
					a.arith(e.Index, "the subscript of an element of "+name+"=(…)")
				}
			}
		}
		a.taint(name)
		a.valueUnknown(name)
	case as.Value == nil:
		if !as.Append {
			a.noteSafeAssign(name, as.Pos().Offset()) // x= is empty: 0
		}
	default:
		w := a.word(as.Value)
		if localeCharset[name] && (!w.lit || !safeLocale(w.text)) {
			a.codeUnknown(foreignCharset(name, w.text))
		}
		if w.lit && !as.Append && shIsArithNumber(w.text) {
			a.noteSafeAssign(name, as.Pos().Offset())
		} else {
			a.taint(name)
		}
		if w.lit && !as.Append && len(a.varVals) < shMaxVarVals {
			// f=~/.ssh/id_rsa; cat "$f": the value a read of "$f" names.
			if a.varVals == nil {
				a.varVals = map[string][]shWord{}
			}
			a.varVals[name] = append(a.varVals[name], w)
		} else {
			a.valueUnknown(name)
		}
	}
}

// shMaxVarVals bounds the variables whose literal values are kept.
const shMaxVarVals = 64

// varOfWord returns NAME when the source text of a word is one whole
// expansion of it: $NAME, ${NAME}, "$NAME" or "${NAME}".
func varOfWord(text string) string {
	t := strings.TrimSuffix(strings.TrimPrefix(text, `"`), `"`)
	if len(t) != len(text)-2 && t != text {
		return ""
	}
	if !strings.HasPrefix(t, "$") {
		return ""
	}
	t = t[1:]
	if strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
		t = t[1 : len(t)-1]
	}
	if !shIsIdent(t) {
		return ""
	}
	return t
}

// declCode checks declare, local, typeset, export, readonly: -i makes
// later assignments arithmetic, -n makes the value a name, and a naked
// argument is a name whose subscript is evaluated.
func (a *shAnalyzer) declCode(d *syntax.DeclClause) {
	integer, nameref, array, assoc := false, false, false, false
	for _, as := range d.Args {
		if as.Naked && as.Name == nil && as.Value != nil {
			if w := a.word(as.Value); w.lit && strings.HasPrefix(w.text, "-") {
				array = array || strings.ContainsAny(w.text, "aA")
				assoc = assoc || strings.ContainsRune(w.text, 'A')
			}
		}
	}
	for _, as := range d.Args {
		if as.Value != nil && shBraceSplits(as.Value) {
			// declare {f,g}=.env, local f=.{x,env}: bash expands the
			// braces of the argument first, into several assignments
			// whose names and values are not the text's.
			a.codeUnknown(d.Variant.Value + " takes an argument that brace expansion makes several words (" +
				shQuoteShort(a.source(as)) + "), which may assign any variable any value")
			continue
		}
		if as.Name != nil && as.Array != nil && assoc {
			if a.assocAssigns == nil {
				a.assocAssigns = map[*syntax.Assign]bool{}
			}
			a.assocAssigns[as] = true
		}
		if as.Name != nil && as.Value != nil && as.Index == nil {
			a.declReparsed(d, as, array)
		}
		if as.Naked && as.Name == nil && as.Value != nil {
			w := a.word(as.Value)
			switch {
			case !w.lit:
				a.codeUnknown(d.Variant.Value + " takes an argument that is not a literal (" + w.text +
					"), which may assign any variable")
			case strings.HasPrefix(w.text, "-") || strings.HasPrefix(w.text, "+"):
				if strings.HasPrefix(w.text, "-") {
					integer = integer || strings.ContainsRune(w.text, 'i')
					nameref = nameref || strings.ContainsRune(w.text, 'n')
				}
			default:
				// A quoted name=value or name[sub] the parser left whole.
				n, _, _ := strings.Cut(w.text, "=")
				a.nameArg(shWord{text: n, lit: true}, d.Variant.Value)
				if shExecVar(strings.TrimSuffix(n, "+")) {
					a.codeUnknown(d.Variant.Value + " assigns " + n + ", which changes what the command runs")
				}
			}
			continue
		}
		if as.Name == nil {
			continue
		}
		if integer {
			if a.intVars == nil {
				a.intVars = map[string]bool{}
			}
			a.intVars[as.Name.Value] = true
			if as.Value != nil {
				a.arithOperand(as.Value, d.Variant.Value+" -i "+as.Name.Value)
			}
		}
		if nameref {
			a.declNameref(d.Variant.Value, as)
		}
	}
}

// declNameref records declare -n NAME[=TARGET] (typeset, local): $NAME is
// TARGET's value, which any later assignment sets, and an assignment to
// NAME sets TARGET.
func (a *shAnalyzer) declNameref(how string, as *syntax.Assign) {
	// declare -n g=h; h=.env; cat $g: not the text g was given.
	a.valueUnknown(as.Name.Value)
	if as.Value == nil {
		// declare -n r: the first assignment to r (r=…, read r, for r
		// in …) names its target, which may be a subscript bash
		// evaluates (r='a[$(id)]'; echo "$r"), or IFS, PATH.
		a.codeUnknown(how + " -n " + as.Name.Value + " has no target yet: whatever is assigned to it next becomes the variable it names")
		return
	}
	if w := a.word(as.Value); !w.lit || !shIsIdent(w.text) {
		a.codeUnknown(how + " -n " + as.Name.Value + " refers to " + w.text + ", which is not a plain variable name")
	} else {
		// declare -n r=HOME; r=x sets HOME.
		a.setVar(w.text, how+" -n "+as.Name.Value)
	}
}

// declReparsed checks the value of declaration d's assignment as:
// declare -a a='(x $(cmd))' re-parses a quoted value as a compound
// assignment and expands it again: eval of data. bash does so for -a, -A
// (array), +=, and a name already an array.
func (a *shAnalyzer) declReparsed(d *syntax.DeclClause, as *syntax.Assign, array bool) {
	w := a.word(as.Value)
	reparsed := array || as.Append || a.arrays[as.Name.Value] || shBashArrays[as.Name.Value] ||
		shMakesArrays(a.src)
	if w.lit && strings.HasPrefix(w.text, "(") || !w.lit && reparsed {
		a.codeUnknown(d.Variant.Value + " " + as.Name.Value + "=" + shQuoteShort(w.text) +
			" may be read again as an array assignment, whose words bash expands as code")
	}
}

// nameArg checks an argument that bash reads as a variable name: a
// subscript in it is evaluated as arithmetic. Unless the builtin only
// tests the name (test -v), the variable is assigned.
func (a *shAnalyzer) nameArg(w shWord, what string) {
	a.nameArgOf(w, what, true)
}

func (a *shAnalyzer) nameArgOf(w shWord, what string, assigns bool) {
	if !w.lit {
		a.codeUnknown(what + " takes the variable name " + w.text + ", which is not a literal")
		return
	}
	if w.glob {
		// read x*: the names are the directory's, and a file named
		// x[$(cmd)] is one (red team AI F2, F3).
		a.codeUnknown(what + " takes the variable names the pattern " + w.text + " matches, which may hold a subscript that runs code")
		return
	}
	name, sub, hasSub := strings.Cut(w.text, "[")
	if hasSub {
		sub = strings.TrimSuffix(sub, "]")
		if !shAllDigits(sub) && sub != "@" && sub != "*" {
			a.codeUnknown(what + " evaluates the subscript of " + shQuoteShort(w.text) + " as arithmetic, which may run code")
			return
		}
	}
	if !assigns {
		return
	}
	a.setVar(name, what)
	if a.intVars[name] || shIntSpecials[name] {
		a.codeUnknown(what + " assigns the declare -i variable " + name + ", whose value bash evaluates as arithmetic")
	}
}

// builtinCode checks a command that bash runs as a builtin taking names
// or code. words are the command's words after wrappers.
func (a *shAnalyzer) builtinCode(words []shWord) {
	if len(words) == 0 || !words[0].lit {
		return
	}
	name, args := words[0].text, words[1:]
	switch name {
	case "declare", "typeset", "local", "export", "readonly":
		a.declareBuiltin(name, args)
	case "cd", "pushd", "popd":
		a.noteCd(args)
	default:
		// nameBuiltin and codeBuiltin each ignore the other's builtins.
		a.nameBuiltin(name, args)
		a.codeBuiltin(name, args)
		a.mathBuiltin(name, args)
	}
}

// mathBuiltin checks the arguments zsh evaluates as math expressions
// (bash reads them as plain numbers): exit, logout, return, break,
// continue and shift's counts, read -t and -n, and the numbers of
// printf's (and print -f's) numeric conversions. A subscript in such an
// expression runs its command substitution, so zsh's exit "$x" with
// x='path[$(cmd)]' runs cmd: a value the script does not set to a number
// first is code. (A literal argument is checked by its text,
// shBuiltinUnanalysable.)
func (a *shAnalyzer) mathBuiltin(name string, args []shWord) {
	switch name {
	case "exit", "logout", "return", "break", "continue", "shift":
		for _, w := range args {
			a.mathArg(w, "zsh's "+name)
		}
	case "read":
		shBuiltinOperands(args, func(o byte, v *shWord) bool {
			switch o {
			case 't', 'n':
				if v != nil {
					a.mathArg(*v, "zsh's read -"+string(o))
				}
				return true
			case 'a', 'd', 'i', 'N', 'p', 'u':
				return true
			}
			return false
		})
	case "printf", "print":
		valued := "v" // the options that take a value
		if name == "print" {
			valued = "CfuvxX"
		}
		var format *shWord
		ops := shBuiltinOperands(args, func(o byte, v *shWord) bool {
			if o == 'f' && name == "print" {
				format = v
			}
			return strings.IndexByte(valued, o) >= 0
		})
		if name == "printf" && len(ops) > 0 {
			format, ops = &ops[0], ops[1:]
		}
		if format == nil || len(ops) == 0 {
			return
		}
		if !format.lit {
			for _, w := range ops {
				a.mathArg(w, "zsh's "+name+" with a format that is not a literal")
			}
			return
		}
		// The format is used again while arguments are left, each
		// conversion taking the next one.
		kinds := shFormatArgs(format.text)
		if !slices.Contains(kinds, true) {
			return
		}
		for i, w := range ops {
			if kinds[i%len(kinds)] {
				a.mathArg(w, "zsh's "+name+" "+format.text)
			}
		}
	}
}

// mathArg checks one argument zsh evaluates as a math expression. A
// literal is one too: a name in it is a variable whose value zsh
// evaluates again (read v < f; exit v runs the $(…) f holds: red team AH
// F4), so only numbers and names the script sets to numbers pass.
func (a *shAnalyzer) mathArg(w shWord, ctx string) {
	switch {
	case w.glob:
		// exit *: the names the pattern matches, path[$(cmd)] among them
		// (red team AJ F4).
		a.codeUnknown(ctx + " evaluates the names the pattern " + w.text + " matches as a math expression, whose subscript runs code")
		return
	case w.lit:
		a.arithText(w.text, a.cur.start, ctx)
		return
	case len(w.alts) > 0:
		for _, v := range w.alts {
			if shSubscriptCode(v) {
				a.codeUnknown(ctx + " evaluates " + shQuoteShort(v) + " as a math expression, whose subscript runs a command")
				return
			}
		}
		return
	case w.number:
		// exit "$((n+1))": a number; the expansion's own expression is
		// judged where it is expanded.
		return
	case w.computed || len(w.vars) == 0:
		a.codeUnknown(ctx + " evaluates " + w.text + " as a math expression, and its value is unknown (a value like a[$(cmd)] runs cmd)")
		return
	}
	for _, v := range w.vars {
		a.arithUse(v, a.cur.start, ctx)
	}
}

// shFormatArgs lists, for each argument a printf format takes in turn,
// whether the conversion takes a number (%d, %x, %f… and a * width or
// precision), whose argument zsh evaluates as math; empty for a format
// that takes none.
func shFormatArgs(f string) []bool {
	var kinds []bool
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(f) && strings.IndexByte("-+ #0'123456789.*$", f[j]) >= 0 {
			if f[j] == '*' {
				kinds = append(kinds, true)
			}
			j++
		}
		for j < len(f) && strings.IndexByte("hlLqjzt", f[j]) >= 0 {
			j++
		}
		if j < len(f) && f[j] != '%' {
			kinds = append(kinds, strings.IndexByte("diouxXeEfFgGaA", f[j]) >= 0)
		}
		i = j
	}
	return kinds
}

// nameBuiltin checks read, mapfile, printf, getopts, wait, unset and
// test, the builtins that assign or test the variables their arguments name
// (and mapfile's callback); it ignores other commands.
func (a *shAnalyzer) nameBuiltin(name string, args []shWord) {
	switch name {
	case "read":
		ops := shBuiltinOperands(args, func(o byte, v *shWord) bool {
			switch o {
			case 'a':
				if v != nil {
					a.nameArg(*v, "read -a")
				}
				return true
			case 'd', 'i', 'n', 'N', 'p', 't', 'u':
				return true
			}
			return false
		})
		for _, w := range ops {
			a.nameArg(w, "read")
		}
	case "mapfile", "readarray":
		ops := shBuiltinOperands(args, func(o byte, v *shWord) bool {
			switch o {
			case 'C':
				a.codeUnknown(name + " -C runs a callback the analysis does not follow")
				return true
			case 'd', 'n', 'O', 's', 'u', 'c':
				return true
			}
			return false
		})
		for _, w := range ops {
			a.nameArg(w, name)
		}
	case "printf":
		shBuiltinOperands(args, func(o byte, v *shWord) bool {
			if o == 'v' {
				if v != nil {
					a.nameArg(*v, "printf -v")
				}
				return true
			}
			return false
		})
	case "getopts":
		if len(args) >= 2 {
			a.nameArg(args[1], "getopts")
		}
	case "wait":
		shBuiltinOperands(args, func(o byte, v *shWord) bool {
			if o == 'p' {
				if v != nil {
					a.nameArg(*v, "wait -p")
				}
				return true
			}
			return false
		})
	case "unset":
		for _, w := range shBuiltinOperands(args, func(byte, *shWord) bool { return false }) {
			a.nameArg(w, "unset")
		}
	case "test", "[":
		a.testBuiltin(name, args)
	}
}

// testBuiltin checks the words of test and [ that may name a variable
// for -v or -R, which evaluate its subscript (test -v 'a[$(id)]' runs
// id). test picks its grammar by the number of its words and their
// values: a word whose value the analysis does not know may be -v
// itself, so the word after it is checked as a name too
// (read a b <<< '-v a[$(id)]'; [ "$a" "$b" ]), and an unquoted expansion
// may split into both (x='-v a[$(id)]'; [ $x ]).
func (a *shAnalyzer) testBuiltin(name string, args []shWord) {
	if name == "[" && len(args) > 0 && args[len(args)-1].lit && args[len(args)-1].text == "]" {
		args = args[:len(args)-1]
	}
	for i, w := range args {
		if i > 0 && args[i-1].lit && shTestUnary[args[i-1].text] && !w.glob && !w.splits {
			continue // [ -n "$a" ]: the operand of -n, whatever its value
		}
		maybe := false // w is not -v itself but may be
		switch {
		case w.glob && w.g != nil && (globs.Intersects(w.g, shDashV) || globs.Intersects(w.g, shDashR)):
			// [ * ], [ [-x]* ]: a pattern may match a file named -v and
			// one named x[$(cmd)] (red team AI F2).
			a.codeUnknown(name + " may read the names the pattern " + w.text + " matches as -v and a variable name, whose subscript runs code")
			return
		case w.lit:
			if w.text == "-t" && i+1 < len(args) {
				// zsh evaluates test -t's descriptor as math (red team
				// AJ F5: [ -t x ] with x from a file ran its subscript).
				a.mathArg(args[i+1], "zsh's "+name+" -t")
			}
			if w.text != "-v" && w.text != "-R" {
				continue
			}
		case len(w.alts) > 0:
			if !slices.Contains(w.alts, "-v") && !slices.Contains(w.alts, "-R") {
				continue
			}
		case w.splits && !shNumericWord(w):
			a.codeUnknown(name + " may read the words " + w.text + " splits into as -v and a variable name, whose subscript runs code (x='-v a[$(cmd)]'; [ $x ] runs cmd)")
			return
		case shNumericWord(w):
			continue
		default:
			maybe = true
		}
		if i+1 >= len(args) {
			continue
		}
		if maybe && args[i+1].lit && shTestBinary[args[i+1].text] {
			continue // [ "$a" = "$b" ]: an operand, compared
		}
		what := name + " -v"
		if maybe {
			what = name + " (" + w.text + " may be -v)"
			a.mathArg(args[i+1], "zsh's "+name+" ("+w.text+" may be -t)")
		}
		a.nameArgOf(args[i+1], what, false)
	}
}

// shTestBinary are test's binary operators: a word before one is its
// left operand, whatever its value.
var shTestBinary = map[string]bool{"=": true, "==": true, "!=": true, "<": true, ">": true, "-eq": true, "-ne": true,
	"-lt": true, "-le": true, "-gt": true, "-ge": true, "-nt": true, "-ot": true, "-ef": true, "=~": true}

// shTestUnary are test's unary operators that are never binary (-a and
// -o are both): the word after one is its operand.
var shTestUnary = map[string]bool{"-b": true, "-c": true, "-d": true, "-e": true, "-f": true, "-g": true,
	"-h": true, "-k": true, "-p": true, "-r": true, "-s": true, "-u": true, "-w": true, "-x": true, "-G": true,
	"-L": true, "-N": true, "-O": true, "-S": true, "-z": true, "-n": true}

// shDashV and shDashR are the operators of test that evaluate a name.
var (
	shDashV = globs.Literal(nil, "-v")
	shDashR = globs.Literal(nil, "-R")
)

// shNumericWord reports a word that is a plain expansion of parameters
// bash keeps a number ($#, $?), which no value can turn into an option.
func shNumericWord(w shWord) bool {
	if w.lit || w.computed || len(w.vars) == 0 {
		return false
	}
	for _, v := range w.vars {
		if !shNumericSpecials[v] {
			return false
		}
	}
	return true
}

// declareBuiltin checks the operands of declare, typeset, local, export
// and readonly: variable names, and with -i values bash evaluates as
// arithmetic.
func (a *shAnalyzer) declareBuiltin(name string, args []shWord) {
	integer := false
	for _, w := range shBuiltinOperands(args, func(o byte, _ *shWord) bool { integer = integer || o == 'i'; return false }) {
		n, val, hasVal := strings.Cut(w.text, "=")
		a.nameArg(shWord{text: n, lit: w.lit}, name)
		if integer && hasVal && w.lit {
			a.arithText(val, 0, name+" -i")
		}
	}
}

// codeBuiltin checks let, complete, compgen, bind, fc, history, shopt and
// set, the builtins that run code, queue it, or change how bash reads later
// commands; it ignores other commands.
func (a *shAnalyzer) codeBuiltin(name string, args []shWord) {
	switch name {
	case "let":
		for _, w := range args {
			if w.lit {
				a.codeUnknown("let evaluates " + shQuoteShort(w.text) + " as arithmetic the analysis does not parse")
			} else {
				a.codeUnknown("let evaluates the expansion " + w.text + " as arithmetic")
			}
			return
		}
	case "complete", "compgen":
		shBuiltinOperands(args, func(o byte, v *shWord) bool {
			switch o {
			case 'C', 'F':
				a.codeUnknown(name + " -" + string(o) + " runs a command or function the analysis does not follow")
				return true
			case 'W':
				a.codeUnknown(name + " -W expands its word list, which may run command substitutions")
				return true
			case 'A', 'G', 'P', 'S', 'X', 'o':
				return true
			}
			return false
		})
	case "bind":
		for _, w := range args {
			if strings.HasPrefix(w.text, "-") && strings.ContainsAny(w.text[1:], "xf") {
				a.codeUnknown("bind -" + w.text[1:] + " binds a key to a command or reads bindings from a file")
			}
		}
	case "fc":
		a.codeUnknown("fc runs commands from the shell's history, which the analysis does not see")
	case "history":
		for i, w := range args {
			if w.lit && (w.text == "-s") {
				a.codeUnknown("history -s adds a command to the history, which fc and history expansion run")
			}
			if w.lit && len(w.text) == 2 && strings.ContainsAny(w.text[1:], "awrn") && w.text[0] == '-' && i+1 < len(args) {
				a.writeTarget(args[i+1], shFrame{})
			}
		}
	case "shopt":
		set := false
		for _, w := range args {
			switch {
			case !w.lit:
				a.codeUnknown("shopt takes an option that is not a literal: " + w.text)
			case strings.HasPrefix(w.text, "-"):
				set = set || strings.ContainsRune(w.text, 's')
			case set && !shHarmlessShopt[w.text]:
				a.codeUnknown("shopt -s " + w.text + " changes how bash reads or runs later commands")
			}
		}
	case "set":
		for i, w := range args {
			if w.text == "--" || !w.lit || !strings.HasPrefix(w.text, "-") && !strings.HasPrefix(w.text, "+") {
				// set -- x y, set x: the positional parameters are values
				// reads of $1… cannot know (shell_reads.go).
				a.valueUnknown("@")
				break
			}
			if (w.text == "-o" || w.text == "+o") && i+1 < len(args) && args[i+1].text == "posix" {
				a.codeUnknown("set -o posix changes how bash reads later commands")
			}
		}
	}
}

// shBuiltinOperands returns the operands of a builtin's arguments args,
// those after its options, scanned getopt-style: each is called on every
// option letter with the value it would take (nil when there is none) and
// reports whether the option takes it.
func shBuiltinOperands(args []shWord, each func(opt byte, val *shWord) bool) []shWord {
	for i := 0; i < len(args); i++ {
		s := args[i].text
		if !args[i].lit || s == "--" || len(s) < 2 || s[0] != '-' {
			if s == "--" && args[i].lit {
				return args[i+1:]
			}
			return args[i:]
		}
		for j := 1; j < len(s); j++ {
			var val *shWord
			if j+1 < len(s) {
				val = &shWord{text: s[j+1:], lit: true}
			} else if i+1 < len(args) {
				val = &args[i+1]
			}
			if each(s[j], val) {
				if j+1 >= len(s) {
					i++
				}
				break
			}
		}
	}
	return nil
}

// shHarmlessShopt are the shopt options that do not change which programs
// run or which files a word can name beyond what the analysis assumes.
// dotglob is not one: the read rules take it that * and ? do not match a
// leading dot (cat ~/*/id_rsa would read ~/.ssh/id_rsa).
var shHarmlessShopt = map[string]bool{
	"nullglob": true, "failglob": true, "globstar": true, "extglob": true,
	"checkwinsize": true, "cmdhist": true, "lithist": true, "histappend": true,
	"inherit_errexit": true, "lastpipe": true, "progcomp": true, "promptvars": false,
	"checkjobs": true, "huponexit": true, "globasciiranges": true,
}

// shIsIdent reports a valid shell variable name.
func shIsIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return false
	}
	return true
}

// shIsArithNumber reports an integer constant as bash reads it in
// arithmetic: decimal, 0x hex, octal, or base#digits; with an optional
// sign.
func shIsArithNumber(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	if b, digits, ok := strings.Cut(s, "#"); ok {
		if !shAllDigits(b) || digits == "" {
			return false
		}
		for i := 0; i < len(digits); i++ {
			c := digits[i]
			if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '@' || c == '_') {
				return false
			}
		}
		return true
	}
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		for i := 2; i < len(s); i++ {
			if !shIsHex(s[i]) {
				return false
			}
		}
		return true
	}
	return shAllDigits(s)
}

// shQuoteShort quotes s for a reason, cut to a readable length.
func shQuoteShort(s string) string {
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return "'" + s + "'"
}

// shArithAssignOp reports the assignment operators of arithmetic.
func shArithAssignOp(op syntax.BinAritOperator) bool {
	switch op {
	case syntax.Assgn, syntax.AddAssgn, syntax.SubAssgn, syntax.MulAssgn, syntax.QuoAssgn,
		syntax.RemAssgn, syntax.AndAssgn, syntax.OrAssgn, syntax.XorAssgn, syntax.ShlAssgn,
		syntax.ShrAssgn, syntax.AndBoolAssgn, syntax.OrBoolAssgn, syntax.XorBoolAssgn, syntax.PowAssgn:
		return true
	}
	return false
}

// shLoop is a for loop over literal words whose variable nothing else in
// the script sets: inside its body, "$name" is one of the words.
type shLoop struct {
	name   string
	values []string
	body   shSpan
}

// shMaxLoopValues bounds the values of a loop variable the analysis
// follows, and the commands one command becomes.
const shMaxLoopValues = 16

// shLoopPattern begins a loop value that stands for the files a pattern
// item matches: the rest is its index in shAnalyzer.loopPatterns.
const shLoopPattern = "\x00pattern:"

// loopPattern records a pattern item of a for loop and returns the value
// that stands for it.
func (a *shAnalyzer) loopPattern(w shWord) string {
	a.loopPatterns = append(a.loopPatterns, w)
	return shLoopPattern + strconv.Itoa(len(a.loopPatterns)-1)
}

// loopValueWord is the word a loop value stands for: the literal, or the
// pattern item whose matches it takes.
func (a *shAnalyzer) loopValueWord(v string) shWord {
	if rest, ok := strings.CutPrefix(v, shLoopPattern); ok {
		if i, err := strconv.Atoi(rest); err == nil && i < len(a.loopPatterns) {
			return a.loopPatterns[i]
		}
	}
	return shWord{text: v, lit: true}
}

// noteLoop records a for loop whose variable's values are known: every
// item a literal that word splitting and pathname expansion leave alone,
// or a pattern ("$name" quoted is then one of its matches),
// and the variable's name nowhere else in the script but in "$name" and
// "${name}" (no other assignment, read, declare, nameref, function…).
func (a *shAnalyzer) noteLoop(n *syntax.ForClause, wi *syntax.WordIter) {
	if n.Select || len(wi.Items) == 0 || len(wi.Items) > shMaxLoopValues || a.posix || a.setsNames() {
		return
	}
	vals := make([]string, 0, len(wi.Items))
	for _, item := range wi.Items {
		ws, ok := a.itemWords(item)
		if !ok || len(vals)+len(ws) > shMaxLoopValues {
			return
		}
		for _, w := range ws {
			switch {
			case w.lit && w.glob && w.g != nil && !w.vanish && !strings.ContainsAny(w.text, " \t\n"):
				// for f in data/*.gz: each value is a file the pattern
				// matches ("$f" stands for the pattern: loopValueWord).
				vals = append(vals, a.loopPattern(w))
			case !w.lit || w.glob || w.text == "" || strings.ContainsAny(w.text, " \t\n*?["):
				return
			default:
				vals = append(vals, w.text)
			}
		}
	}
	name := wi.Name.Value
	if shShellSets(name) || a.sharedVars {
		return // the shell sets it too; eval or trap may set it unseen
	}
	// The loop's own items are literals (checked above): a name they
	// spell (for pkg in ./pkg/a) assigns nothing.
	src := []byte(a.src)
	for _, item := range wi.Items {
		for k := int(item.Pos().Offset()); k < int(item.End().Offset()) && k < len(src); k++ {
			src[k] = ' '
		}
	}
	rest := strings.NewReplacer("${"+name+"}", "", "$"+name, "$").Replace(string(src))
	if n := shCountIdent(rest, name); n != 1 {
		return // the loop's own "for name" is the only other mention
	}
	a.loops = append(a.loops, shLoop{name: name, values: vals,
		body: shSpan{start: n.DoPos.Offset(), end: n.DonePos.Offset()}})
}

// itemWords returns the words a for or select item stands for: bash and
// zsh expand its braces (for f in .{x,env} is .x, then .env), dash does
// not, so a POSIX script keeps the literal reading too. ok is false when
// the expansion is too large to enumerate.
func (a *shAnalyzer) itemWords(item *syntax.Word) (_ []shWord, ok bool) {
	if zs := shZeroDirVariants(item); zs != nil {
		// for f in ~/**/.ssh/*: ** may stand for no directory.
		var out []shWord
		for _, z := range append(zs, item) {
			if !shHasBraces(z) {
				out = append(out, a.word(z))
				continue
			}
			exp, ok := a.expandBraces(z)
			if !ok {
				return nil, false
			}
			out = append(out, exp...)
		}
		return out, true
	}
	if !shHasBraces(item) {
		return []shWord{a.word(item)}, true
	}
	exp, ok := a.expandBraces(item)
	if !ok {
		return nil, false
	}
	if a.posix {
		exp = append(slices.Clone(exp), a.word(item))
	}
	return exp, true
}

// noteConsts records the variables the script sets once, to a literal, in
// a plain assignment statement at its top level (d=out; cat "$d/x") or at
// the head of a top-level && list (d=out && cat "$d/x"): after that
// statement, "$d" is that literal, as a loop variable is one of its words
// inside its body (noteLoop), so the command is judged with the value in
// place. The name must appear nowhere else in the script but in "$d" and
// "${d}" (no second assignment, read, unset, declare, for, nameref,
// local…), so nothing can change it; a value with blanks, a pattern or a
// ~ is left to the general model, and so is every variable of a script
// that runs code of its own shell unseen (eval, trap) or is POSIX sh.
func (a *shAnalyzer) noteConsts(f *syntax.File) {
	if a.posix || a.sharedVars {
		return
	}
	for _, st := range f.Stmts {
		if st.Background || st.Coprocess || st.Negated {
			continue // & runs even the head of a list in a subshell
		}
		head := st
		for {
			b, ok := head.Cmd.(*syntax.BinaryCmd)
			if !ok || b.Op != syntax.AndStmt {
				break
			}
			head = b.X
		}
		a.noteConst(head, uint(len(a.src)))
	}
}

// shNameBuiltins are the builtins that assign a variable named by an
// argument, which quoting can spell without the name's text (read d”ir,
// declare "d"ir=…, printf -v d\ir).
var shNameBuiltins = map[string]bool{"read": true, "mapfile": true, "readarray": true, "declare": true,
	"typeset": true, "local": true, "readonly": true, "export": true, "getopts": true, "unset": true,
	"let": true, "eval": true, "source": true, ".": true, "wait": true, "integer": true, "float": true,
	"vared": true, "zparseopts": true, "getln": true, "read -A": true, "private": true}

// shSetsNamesBuiltin reports whether f runs a builtin that assigns a
// variable its arguments name, or printf -v, or declares (declare, local,
// export…): the names it sets are words after quote removal, so the
// script's text is no guide to which variables it sets, and the variables
// the analysis follows by their text (noteConsts, noteLoop) are not
// followed in it.
func shSetsNamesBuiltin(f *syntax.File) bool {
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.DeclClause:
			// declare NAME=… names NAME plainly; a name word the parser
			// did not read as one ("d"ir=…, $n) is hidden.
			for _, as := range n.Args {
				if as.Naked && as.Name == nil && as.Value != nil {
					if v, ok := shLitWord(as.Value); !ok || !strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "+") {
						found = true
					}
				}
			}
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				if _, ok := shLitWord(n.Args[0]); !ok {
					// c=read; $c d""ir: the command may be any builtin.
					found = true
					break
				}
			}
			builtin, printf, nameNext := false, false, false
			for k, w := range n.Args {
				v, plain := shLitWord(w)
				if !plain {
					var b strings.Builder
					glob := false
					if !shUnquoteParts(&b, w.Parts, false, &glob) {
						// An expansion may be -v or a name.
						found = found || builtin || printf && k > 0
						continue
					}
					v = b.String()
				}
				switch {
				case shNameBuiltins[v]:
					builtin = true
				case v == "printf":
					printf = true
				case printf:
					// printf -v NAME: only the name, and a -v itself
					// spelled with quotes, can hide it.
					found = found || nameNext && !plain || strings.HasPrefix(v, "-v") && !plain
					nameNext = v == "-v"
				default:
					// An argument of such a builtin that is not a plain
					// word may spell a name (read d''ir).
					found = found || builtin && !plain
				}
			}
		}
		return !found
	})
	return found
}

// setsNames is shSetsNamesBuiltin of the script, computed once when a
// variable is about to be followed by its text.
func (a *shAnalyzer) setsNames() bool {
	if !a.namesChecked {
		a.namesChecked = true
		a.namesHidden = a.file != nil && shSetsNamesBuiltin(a.file)
	}
	return a.namesHidden
}

// noteConst records the assignments of st (d=out), a statement that runs
// before every byte of the script after it, up to end.
func (a *shAnalyzer) noteConst(st *syntax.Stmt, end uint) {
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) > 0 || st.Background || st.Coprocess || st.Negated {
		return
	}
	for _, as := range call.Assigns {
		if as.Append || as.Naked || as.Index != nil || as.Array != nil || as.Value == nil || as.Name == nil {
			continue
		}
		name := as.Name.Value
		if shShellSets(name) || shExecVar(name) {
			continue
		}
		w := a.word(as.Value)
		if !w.lit || w.glob || w.text == "" || strings.ContainsAny(w.text, " \t\n*?[~") {
			continue
		}
		rest := strings.NewReplacer("${"+name+"}", "", "$"+name, "$").Replace(a.src)
		if shCountIdent(rest, name) != 1 || a.setsNames() {
			continue // the assignment is the only other mention
		}
		a.loops = append(a.loops, shLoop{name: name, values: []string{w.text},
			body: shSpan{start: st.End().Offset(), end: end}})
	}
}

// shCountIdent counts the occurrences of name in src as a whole word (not
// next to an identifier character; "$name" was replaced by "$" before).
func shCountIdent(src, name string) int {
	n := 0
	for i := 0; ; {
		j := strings.Index(src[i:], name)
		if j < 0 {
			return n
		}
		j += i
		end := j + len(name)
		if (j == 0 || !shIsIdentByte(src[j-1])) && (end == len(src) || !shIsIdentByte(src[end])) {
			n++
		}
		i = end
	}
}

func shIsIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// loopValues returns the strings w can be when it holds "$name" or $name
// (or ${name}) of a loop noteLoop recorded, inside that loop's body — as
// the whole word or within a longer one ("$p/doc.go", src/$f.go) — else
// nil. The rest of the word must be literal text that pathname expansion
// and tilde expansion leave alone, so each value makes one known string;
// a word with several loop variables ("$p/$f") is each combination, up to
// shMaxLoopValues.
func (a *shAnalyzer) loopValues(w *syntax.Word) []string {
	alts := []string{""}
	found := false
	add := func(s string) {
		for i := range alts {
			alts[i] += s
		}
	}
	var part func(p syntax.WordPart, quoted bool) bool
	part = func(p syntax.WordPart, quoted bool) bool {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if quoted {
				if strings.ContainsRune(v, '\\') {
					return false
				}
			} else if strings.ContainsAny(v, "*?[\\~") {
				return false
			}
			add(v)
		case *syntax.SglQuoted:
			if p.Dollar {
				return false
			}
			add(p.Value)
		case *syntax.DblQuoted:
			if quoted {
				return false
			}
			for _, q := range p.Parts {
				if !part(q, true) {
					return false
				}
			}
		case *syntax.ParamExp:
			vals := a.loopVarValues(p, w.Pos().Offset())
			if vals == nil || len(alts)*len(vals) > shMaxLoopValues {
				return false
			}
			found = true
			next := make([]string, 0, len(alts)*len(vals))
			for _, x := range alts {
				for _, v := range vals {
					next = append(next, x+v)
				}
			}
			alts = next
		default:
			return false
		}
		return true
	}
	for _, p := range w.Parts {
		if !part(p, false) {
			return nil
		}
	}
	if !found {
		return nil
	}
	for _, v := range alts {
		// A pattern's match is the value only as the whole word, in
		// double quotes ("$f"): joined to other text, or split and
		// globbed again unquoted, it is not one of its matches.
		if strings.Contains(v, shLoopPattern) && !(len(w.Parts) == 1 && shQuotedParam(w.Parts[0]) && strings.HasPrefix(v, shLoopPattern)) {
			return nil
		}
	}
	return alts
}

// shQuotedParam reports a double-quoted plain parameter expansion alone
// ("$f", "${f}").
func shQuotedParam(p syntax.WordPart) bool {
	dq, ok := p.(*syntax.DblQuoted)
	if !ok || dq.Dollar || len(dq.Parts) != 1 {
		return false
	}
	_, ok = dq.Parts[0].(*syntax.ParamExp)
	return ok
}

// loopVarValues returns the values of the plain parameter expansion pe
// when it names the variable of a loop noteLoop recorded whose body holds
// offset off, else nil.
func (a *shAnalyzer) loopVarValues(pe *syntax.ParamExp, off uint) []string {
	if pe.Param == nil || pe.Excl || pe.Length || pe.Width || pe.Index != nil || pe.Slice != nil ||
		pe.Repl != nil || pe.Exp != nil || pe.Names != 0 || pe.NestedParam != nil {
		return nil
	}
	var vals []string
	for _, l := range a.loops {
		if l.name == pe.Param.Value && l.body.start <= off && off < l.body.end {
			vals = l.values // the innermost loop is the last recorded
		}
	}
	return vals
}

// resolveEachValue judges a command whose words include a loop variable
// once per combination of the variables' values (for f in a b; do wc
// "$f"; done runs wc a and wc b), up to shMaxLoopValues commands; beyond,
// the variable is an unknown word.
func (a *shAnalyzer) resolveEachValue(words []shWord, fr shFrame) {
	total := 1
	for _, w := range words {
		if w.alts != nil {
			total *= len(w.alts)
		}
	}
	if total > shMaxLoopValues {
		plain := slices.Clone(words)
		for i := range plain {
			plain[i].alts = nil
		}
		a.resolve(plain, fr)
		return
	}
	for k := 0; k < total; k++ {
		one := slices.Clone(words)
		rem := k
		for i := range one {
			if alts := one[i].alts; alts != nil {
				one[i] = a.loopValueWord(alts[rem%len(alts)])
				rem /= len(alts)
			}
		}
		f := fr
		f.wrappers = slices.Clone(fr.wrappers)
		a.resolve(one, f)
	}
}

package shell

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// The zsh reading (issue 24, item 7). A shell tool's script does not
// always run in bash: Claude Code runs its Bash tool in the user's login
// shell, zsh on macOS (`zsh -c '… setopt NO_EXTENDED_GLOB … eval <cmd>'`),
// and a request does not say which shell will run it. So a top-level
// script is judged as bash reads it and must also read the same in zsh;
// where the two readings may differ, the script is unanalysable (it asks,
// in every mode). So is a nested script whose shell is not named: eval
// and trap run theirs in the shell that runs the script, flock -c and
// script -c in $SHELL, su -c in the user's shell. Scripts of a named bash
// or POSIX sh (`bash -c '…'`, `sh -c '…'`) are read in that shell only.
//
// The check is closed: a difference the parsers see is a difference, and
// so is every construct on the list below whose tree is the same in both
// dialects but whose meaning is not. The list comes from zsh 5.9's own
// tables (`${(k)builtins}`, `${(k)reswords}`, the special parameters) and
// is held to the real shells by the oracle (TestZshReadingOracle), which
// runs each script in bash and in zsh and compares what they ran, read and
// wrote. What zsh does with extended_glob on (`^x`, `x#`, `x~y` as
// patterns) is out of scope: Claude Code turns it off before the command.

// shNamedBash are the shells whose scripts the analysis reads in their own
// grammar only (bash -c '…', sh -c '…'): named, they are not zsh.
var shNamedBash = map[string]bool{"bash": true, "rbash": true, "sh": true, "dash": true, "ash": true, "posh": true}

// zshDiffers returns why zsh would read the top-level script src, whose
// bash tree is bf, differently from bash, or "".
func zshDiffers(src string, bf *syntax.File) string {
	if zshSameGrammar(src) {
		// Both parsers build the same tree: only the meanings differ.
		var why string
		syntax.Walk(bf, func(n syntax.Node) bool {
			if why == "" && n != nil {
				why = zshMeaningDiffers(n, src, nil)
			}
			return why == ""
		})
		return why
	}
	zf, err := shParse(src, syntax.LangZsh)
	if err != nil {
		return "zsh, which may run this command (Claude Code's Bash tool on macOS), cannot read it as bash does: " + err.Error()
	}
	sh := zshShapes.Get().(*zshShapePair)
	defer func() {
		if cap(sh.b) <= shPoolLimit*4 && cap(sh.z) <= shPoolLimit*4 {
			zshShapes.Put(sh) // a hostile script's shapes go to the garbage collector
		}
	}()
	var why string
	var fileRead *syntax.Stmt // $(< file): bash and zsh read the file, running nothing
	sh.b = zshShape(sh.b[:0], bf, func(n syntax.Node) {
		if why == "" {
			why = zshMeaningDiffers(n, src, &fileRead)
		}
	})
	sh.z = zshShape(sh.z[:0], zf, nil)
	if at, ok := zshSameShape(sh.b, sh.z); !ok {
		return fmt.Sprintf("bash and zsh read %q differently (zsh may run this command: Claude Code's Bash tool on macOS)", zshSnippet(src, at))
	}
	return why
}

// zshMeaningDiffers judges one node of the bash tree for what zsh gives
// another meaning with the same tree. fileRead, when not nil, remembers a
// $(< file) seen, whose statement is a redirection alone that runs
// nothing (a script of the same grammar in both has none: see
// zshSameGrammar).
func zshMeaningDiffers(n syntax.Node, src string, fileRead **syntax.Stmt) string {
	switch n := n.(type) {
	case *syntax.CmdSubst:
		if fileRead != nil && len(n.Stmts) == 1 && n.Stmts[0].Cmd == nil && len(n.Stmts[0].Redirs) == 1 && n.Stmts[0].Redirs[0].Op == syntax.RdrIn {
			*fileRead = n.Stmts[0]
		}
	case *syntax.Stmt:
		if n.Cmd == nil && len(n.Redirs) > 0 && (fileRead == nil || n != *fileRead) {
			return "in zsh, which may run this command (Claude Code's Bash tool on macOS), a redirection alone runs a program ($NULLCMD, $READNULLCMD)"
		}
	case *syntax.CallExpr:
		return zshCallDiffers(n)
	case *syntax.Word:
		return zshWordDiffers(n, src)
	case *syntax.DblQuoted:
		return zshPartsDiffer(n.Parts, src)
	}
	return ""
}

// zshGrammarBytes are the bytes of scripts that bash and zsh parse into
// the same tree (with the two rules of zshSameGrammar): no parentheses,
// backquotes, braces, brackets, #, ! or tab, nothing outside ASCII.
var zshGrammarBytes = func() (t [256]bool) {
	for _, c := range "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 -_./,:@%+=|;&'\"$*?~^<>\\\n" {
		t[c] = true
	}
	return t
}()

// zshSameGrammar reports whether src is made only of what bash's and
// zsh's parsers read alike, so that the zsh parse can be skipped: the
// bytes of zshGrammarBytes, every $ followed by a letter, digit or _ (zsh
// reads $~x, $^x, $=x, $+x, $#x as flags), no < followed by a digit or
// - (<1-5> and <-> are zsh's numeric globs), no line continuation (a \
// before a newline joins what the letter runs below see apart: cop\↵roc
// is coproc), and no reserved word of either shell as a run of letters
// (zshKeywords). It is a closed list, held to
// the two parsers by TestZshSameGrammarParsesAlike and FuzzZshSameGrammar:
// whatever is not on it takes the second parse and the comparison of the
// trees. What zsh gives another meaning with the same tree is judged on
// the bash tree either way (zshMeaningDiffers).
func zshSameGrammar(src string) bool {
	word := -1 // start of the run of letters being read
	for i := 0; i < len(src); i++ {
		c := src[i]
		if !zshGrammarBytes[c] {
			return false
		}
		if letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'; letter && word < 0 {
			word = i
		} else if !letter && word >= 0 {
			if zshKeywords[src[word:i]] {
				return false
			}
			word = -1
		}
		var next byte
		if i+1 < len(src) {
			next = src[i+1]
		}
		switch {
		case c == '$' && !(next >= 'a' && next <= 'z' || next >= 'A' && next <= 'Z' || next >= '0' && next <= '9' || next == '_'):
			return false
		case c == '<' && (next == '-' || next >= '0' && next <= '9'):
			return false
		case c == '\\' && next == '\n':
			// Both shells join the lines before they read words: the
			// runs of letters seen here would not be the words read.
			return false
		}
	}
	return word < 0 || !zshKeywords[src[word:]]
}

// zshKeywords are the reserved words of bash and zsh 5.9 (`compgen -k`,
// `${(k)reswords}`) and the declaration builtins zsh parses as reserved
// words, spelled with letters only: a script that has one of them as a
// run of letters anywhere, even inside a longer word, is parsed twice.
var zshKeywords = map[string]bool{
	"case": true, "coproc": true, "do": true, "done": true, "elif": true, "else": true, "esac": true,
	"fi": true, "for": true, "function": true, "if": true, "in": true, "select": true, "then": true,
	"time": true, "until": true, "while": true, "repeat": true, "foreach": true, "end": true,
	"nocorrect": true, "noglob": true, "always": true, "declare": true, "export": true, "float": true,
	"integer": true, "local": true, "readonly": true, "typeset": true,
}

// zshShapePair holds the shapes of the two readings between uses.
type zshShapePair struct{ b, z []zshNode }

var zshShapes = sync.Pool{New: func() any { return new(zshShapePair) }}

// zshSameShape reports whether the two trees have the same nodes at the
// same places; when not, the offset of the first difference.
func zshSameShape(b, z []zshNode) (uint, bool) {
	for i := range min(len(b), len(z)) {
		if b[i] != z[i] {
			return min(b[i].start, z[i].start), false
		}
	}
	switch {
	case len(b) < len(z):
		return z[len(b)].start, false
	case len(z) < len(b):
		return b[len(z)].start, false
	}
	return 0, true
}

// zshNode is one node of a tree, by its kind and place.
type zshNode struct {
	kind       reflect.Type
	start, end uint
	op         uint32 // an operator; for a parameter expansion, its form
	lit        string // a literal's text
}

// zshShape appends the nodes of f to out, calling visit (when not nil) on
// each.
func zshShape(out []zshNode, f *syntax.File, visit func(syntax.Node)) []zshNode {
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			return true
		}
		if visit != nil {
			visit(n)
		}
		x := zshNode{kind: reflect.TypeOf(n), start: n.Pos().Offset(), end: n.End().Offset()}
		switch n := n.(type) {
		case *syntax.Lit:
			x.lit = n.Value
		case *syntax.Redirect:
			x.op = uint32(n.Op)
		case *syntax.BinaryCmd:
			x.op = uint32(n.Op)
		case *syntax.ProcSubst:
			x.op = uint32(n.Op)
		case *syntax.ParamExp:
			for i, b := range []bool{n.Short, n.Excl, n.Length, n.Width, n.Flags != nil, n.Index != nil, n.Slice != nil, n.Repl != nil, n.Exp != nil} {
				if b {
					x.op |= 1 << i
				}
			}
		}
		out = append(out, x)
		return true
	})
	return out
}

func zshSnippet(src string, at uint) string {
	at = min(at, uint(len(src)))
	end := min(at+24, uint(len(src)))
	if i := strings.IndexByte(src[at:end], '\n'); i >= 0 {
		end = at + uint(i)
	}
	return src[at:end]
}

// zshOnly are zsh's builtins and reserved words that bash does not have
// (zsh 5.9, `${(k)builtins}` and `${(k)reswords}` less bash's `compgen -bk`),
// and why each is not understood. A name zsh treats this way is a command
// in bash (usually not found); in zsh it changes options, loads code,
// defines functions, aliases or variables, or runs its operands.
var zshOnly = map[string]string{
	"-": "precommand modifier", "noglob": "precommand modifier", "nocorrect": "precommand modifier",
	"repeat": "runs its body repeatedly", "foreach": "a loop bash does not have", "end": "ends a zsh loop",
	"autoload": "loads functions", "zmodload": "loads modules", "zcompile": "compiles functions",
	"emulate": "changes the shell's options", "setopt": "changes the shell's options", "unsetopt": "changes the shell's options",
	"functions": "defines functions", "unfunction": "removes functions", "sched": "runs commands later",
	"bindkey": "line editor", "zle": "line editor", "vared": "edits a variable", "zstyle": "style table",
	"zparseopts": "sets variables from its arguments", "zformat": "sets variables", "zregexparse": "sets variables",
	"getln": "sets variables", "pushln": "editor buffer", "print": "prints, or pushes onto the editor buffer (-z) and history (-s)",
	"float": "declares variables", "integer": "declares variables", "private": "declares variables",
	"chdir": "changes directory", "r": "runs a command from history", "limit": "resource limits", "unlimit": "resource limits",
	"disable": "disables builtins and aliases", "rehash": "rebuilds the command table", "unhash": "edits the command table",
	"whence": "", "where": "", "which": "", "bye": "", "log": "", "ttyctl": "", "echotc": "", "echoti": "",
	"compadd": "completion", "comparguments": "completion", "compcall": "completion", "compctl": "completion",
	"compdescribe": "completion", "compfiles": "completion", "compgroups": "completion", "compquote": "completion",
	"compset": "completion", "comptags": "completion", "comptry": "completion", "compvalues": "completion",
}

// zshCallDiffers judges a simple command's name as zsh reads it.
func zshCallDiffers(c *syntax.CallExpr) string {
	for _, as := range c.Assigns {
		if as.Value != nil {
			if r := zshEquals(as.Value); r != "" {
				return r
			}
		}
	}
	if len(c.Args) == 0 {
		return ""
	}
	name, ok := zshLiteral(c.Args[0])
	if !ok {
		return ""
	}
	if name == "builtin" && len(c.Args) > 1 {
		name, ok = zshLiteral(c.Args[1])
		if !ok {
			return ""
		}
	}
	if why, only := zshOnly[name]; only && why != "" {
		return "in zsh, which may run this command (Claude Code's Bash tool on macOS), " + name + " is a builtin (" + why + ") the analysis does not follow"
	}
	return ""
}

// zshWordDiffers judges one word as zsh expands it: a leading = names a
// program's path (=rm runs rm; =(…) is a substitution).
func zshWordDiffers(w *syntax.Word, src string) string {
	if r := zshEquals(w); r != "" {
		return r
	}
	if off := int(w.Pos().Offset()); len(w.Parts) > 0 && off < len(src) {
		if _, ok := w.Parts[0].(*syntax.Lit); ok && strings.HasPrefix(src[off:], "~[") {
			// ~[x] is the directory a function of the script names
			// (zsh_directory_name), not the home and a pattern.
			return fmt.Sprintf("in zsh, which may run this command (Claude Code's Bash tool on macOS), %q is a dynamic named directory, which a function of the script names", zshSnippet(src, w.Pos().Offset()))
		}
	}
	if r := zshBraceExpansion(w, src); r != "" {
		return r
	}
	if r := zshCharSequence(w, src); r != "" {
		return r
	}
	return zshPartsDiffer(w.Parts, src)
}

// zshCharSequence: zsh expands {X..Y} over any two characters (the code
// points between them), also quoted ones, bash only over two unquoted
// letters or numbers: {-..-}-pre=sh is --pre=sh in zsh and text in bash,
// .ssh{.../}id_rsa and .ssh{..."/"}id_rsa are .ssh/id_rsa (red teams AI
// F4, AJ F1). The word's parts are read joined, each character marked
// quoted or not.
func zshCharSequence(w *syntax.Word, src string) string {
	if a, b := int(w.Pos().Offset()), int(w.End().Offset()); a >= 0 && b <= len(src) && a <= b {
		if t := src[a:b]; !strings.Contains(t, "..") || !strings.Contains(t, "{") {
			return "" // the cheap test: most words hold neither
		}
	}
	var text []byte
	var quoted []bool
	add := func(s string, q bool) {
		for i := 0; i < len(s); i++ {
			if !q && s[i] == '\\' && i+1 < len(s) {
				i++
				text, quoted = append(text, s[i]), append(quoted, true)
				continue
			}
			text, quoted = append(text, s[i]), append(quoted, q)
		}
	}
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			add(p.Value, false)
		case *syntax.SglQuoted:
			add(p.Value, true)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok {
					add(l.Value, true)
				} else {
					add("\x00", true) // an expansion: zshBraceExpansion's
				}
			}
		default:
			add("\x00", true)
		}
	}
	if !bytes.Contains(text, []byte("..")) {
		return ""
	}
	for i := 0; i < len(text); i++ {
		if text[i] != '{' || quoted[i] {
			continue
		}
		j := i + 1
		for j < len(text) && !(text[j] == '}' && !quoted[j]) && !(text[j] == ',' && !quoted[j]) && !(text[j] == '{' && !quoted[j]) {
			j++
		}
		if j >= len(text) || text[j] != '}' {
			continue
		}
		ends := strings.Split(string(text[i+1:j]), "..")
		if len(ends) < 2 || len(ends) > 3 {
			continue
		}
		if anyQuoted(quoted[i+1:j]) || !zshSameClass(ends[0], ends[1]) {
			return fmt.Sprintf("in zsh, which may run this command (Claude Code's Bash tool on macOS), %q is a sequence of characters ({%s}), which bash leaves as text", zshSnippet(src, w.Pos().Offset()), text[i+1:j])
		}
	}
	return ""
}

func anyQuoted(q []bool) bool { return slices.Contains(q, true) }

// zshSameClass reports two ends bash and zsh both expand alike: two ASCII
// letters of one case (bash runs from Z to a through [ \ ] ^ _ and a
// backquote, which it reads again: red team AJ F2), or two integers.
func zshSameClass(x, y string) bool {
	lower := func(s string) bool { return len(s) == 1 && s[0] >= 'a' && s[0] <= 'z' }
	upper := func(s string) bool { return len(s) == 1 && s[0] >= 'A' && s[0] <= 'Z' }
	_, ex := strconv.Atoi(x)
	_, ey := strconv.Atoi(y)
	return lower(x) && lower(y) || upper(x) && upper(y) || ex == nil && ey == nil
}

// zshBraceExpansion: zsh expands parameters and substitutions before
// braces, so {$a..$b} is a sequence in zsh and text in bash (and {$x,y}
// is read over the value). A word with an unquoted { before an expansion
// and a } after it asks.
func zshBraceExpansion(w *syntax.Word, src string) string {
	open, exp := false, false
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if open && exp && strings.Contains(p.Value, "}") {
				return fmt.Sprintf("in zsh, which may run this command (Claude Code's Bash tool on macOS), %q is a brace expansion over the value of an expansion", zshSnippet(src, w.Pos().Offset()))
			}
			if i := strings.LastIndexByte(p.Value, '{'); i >= 0 && !strings.Contains(p.Value[i:], "}") {
				open, exp = true, false
			}
		case *syntax.ParamExp, *syntax.CmdSubst, *syntax.ArithmExp:
			exp = exp || open
		}
	}
	return ""
}

// zshEquals: with zsh's equals option (on by default) an unquoted word
// =name is replaced by the path of the program name; a word of = alone
// (or ==, as in [ a == b ], which zsh refuses) runs nothing.
func zshEquals(w *syntax.Word) string {
	if len(w.Parts) == 0 {
		return ""
	}
	lit, ok := w.Parts[0].(*syntax.Lit)
	if !ok || !strings.HasPrefix(lit.Value, "=") || strings.Trim(lit.Value, "=") == "" && len(w.Parts) == 1 {
		return ""
	}
	return "in zsh, which may run this command (Claude Code's Bash tool on macOS), the word " + strings.TrimSpace(lit.Value) + "… is the path of a program (equals expansion)"
}

// zshModifier reports a character that may start one of zsh's
// history-style modifiers, which zsh applies to an unbraced $name:x (in
// double quotes too): "$f:h" is dirname, "$sha:a" an absolute path,
// "$f:fs/X/n/" a substitution. Every letter counts, not only the ones zsh
// 5.9 documents: what is not a modifier today may be one tomorrow.
func zshModifier(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '&'
}

// zshPartsDiffer finds $name followed by :x where x is a modifier, and a
// positional parameter followed by a digit: bash reads $10 as ${1}0, zsh
// as ${10}.
func zshPartsDiffer(parts []syntax.WordPart, src string) string {
	for i, p := range parts {
		pe, ok := p.(*syntax.ParamExp)
		if !ok || !pe.Short || i+1 >= len(parts) {
			continue
		}
		next, ok := parts[i+1].(*syntax.Lit)
		if ok && pe.Param != nil && len(pe.Param.Value) == 1 && pe.Param.Value[0] >= '0' && pe.Param.Value[0] <= '9' &&
			next.Value != "" && next.Value[0] >= '0' && next.Value[0] <= '9' {
			return fmt.Sprintf("in zsh, which may run this command (Claude Code's Bash tool on macOS), %q is the parameter $%s%c, in bash $%s then %c", zshSnippet(src, pe.Pos().Offset()), pe.Param.Value, next.Value[0], pe.Param.Value, next.Value[0])
		}
		if !ok || len(next.Value) < 2 || next.Value[0] != ':' || !zshModifier(next.Value[1]) {
			continue
		}
		return fmt.Sprintf("in zsh, which may run this command (Claude Code's Bash tool on macOS), %q applies the modifier :%c to $%s", zshSnippet(src, pe.Pos().Offset()), next.Value[1], pe.Param.Value)
	}
	return ""
}

// zshLiteral returns w's text when it is one plain literal.
func zshLiteral(w *syntax.Word) (string, bool) {
	if len(w.Parts) != 1 {
		return "", false
	}
	l, ok := w.Parts[0].(*syntax.Lit)
	if !ok {
		return "", false
	}
	return l.Value, true
}

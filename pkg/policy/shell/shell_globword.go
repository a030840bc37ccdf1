package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
)

// shGlobOfWord describes w as a glob over the strings it can stand for.
// Its parts are compiled together (globs.AppendWord): a bracket
// expression may span them (.["e"]nv, .[$x]nv).
func (a *shAnalyzer) shGlobOfWord(w *syntax.Word) globs.Glob {
	parts := make([]globs.WordPart, 0, len(w.Parts)+2)
	unknown := func(t globs.Tok, quoted bool) {
		parts = append(parts, globs.WordPart{Unknown: true, Tok: t, Quoted: quoted})
	}
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") {
				user, _, _ := strings.Cut(v[1:], "/")
				if user != "" {
					// ~user, ~+, ~-: a directory the analysis cannot know
					// (not a pattern: tilde expansion is not globbed).
					unknown(globs.AnyRun, true)
					v = v[1+len(user):]
				}
			}
			parts = append(parts, globs.WordPart{Text: v})
		case *syntax.SglQuoted:
			if p.Dollar {
				var b strings.Builder
				shDecodeANSIC(&b, p.Value)
				parts = append(parts, globs.WordPart{Text: b.String(), Quoted: true})
			} else {
				parts = append(parts, globs.WordPart{Text: p.Value, Quoted: true})
			}
		case *syntax.DblQuoted:
			if p.Dollar {
				unknown(globs.AnyRun, true) // $"…": a translation
				continue
			}
			for k, q := range p.Parts {
				if place := shPlaceParam(q); i == 0 && k == 0 && place != "" {
					parts = append(parts, globs.WordPart{Text: place}) // "$HOME/x": ~/x
					continue
				}
				if l, ok := q.(*syntax.Lit); ok {
					var b strings.Builder
					shUnescapeDouble(&b, l.Value)
					parts = append(parts, globs.WordPart{Text: b.String(), Quoted: true})
				} else if cs, ok := q.(*syntax.CmdSubst); ok && shRevisionOutput(cs) != "" {
					parts = append(parts, shRevisionPart(cs))
				} else {
					unknown(globs.AnyRun, true)
				}
			}
		default:
			if place := shPlaceParam(p); i == 0 && place != "" {
				// $HOME/.aws/credentials is ~/.aws/credentials, $PWD/x is
				// ./x: a script that sets HOME or PWD is not analysed
				// (shExecVars).
				parts = append(parts, globs.WordPart{Text: place})
				continue
			}
			if cs, ok := p.(*syntax.CmdSubst); ok && shUnquotedRevision(cs) {
				// git diff $(git merge-base main HEAD): an object name
				// splits and globs into nothing but itself.
				parts = append(parts, shRevisionPart(cs))
				continue
			}
			// An expansion (or a brace expansion SplitBraces left): its
			// value is pattern text.
			unknown(globs.AnyRun, false)
		}
	}
	g := globs.AppendWord(make(globs.Glob, 0, 16), parts)
	if len(g) > gMaxWord {
		return globs.Glob{globs.AnyRun} // could be anything: the strict reading
	}
	return g
}

// shRevisionPart is the output of "$(git rev-parse REV)" or "$(git
// merge-base A B)" as a part of a word: rev-parse prints REV itself when
// REV names a file (git rev-parse ../.aws), judged as REV; its other
// output, hex, spells nothing a rule names.
func shRevisionPart(cs *syntax.CmdSubst) globs.WordPart {
	if rev := shRevParseEcho(cs); rev != "" {
		return globs.WordPart{Text: rev, Quoted: true}
	}
	return globs.WordPart{Unknown: true, Tok: globs.Tok{Star: true, Class: shRevisionOutput(cs)}, Quoted: true}
}

// shPlaceParam returns the place a plain $HOME or ${HOME} stands for,
// "~" (the home directory, which the policy knows as it knows ~), and a
// plain $PWD, "." (the working directory, which the analysis follows
// through cd as it does relative paths); "" for any other part.
func shPlaceParam(p syntax.WordPart) string {
	pe, ok := p.(*syntax.ParamExp)
	if !ok || pe.Param == nil || pe.Excl || pe.Length || pe.Width || pe.Index != nil || pe.Slice != nil ||
		pe.Repl != nil || pe.Exp != nil || pe.Names != 0 || pe.NestedParam != nil || pe.Flags != nil {
		return ""
	}
	switch pe.Param.Value {
	case "HOME":
		return "~"
	case "PWD":
		return "."
	}
	return ""
}

// gMaxWord bounds the tokens of one word's glob; a longer word is taken
// as unknown.
const gMaxWord = 1024

// shRevisionOutput describes what "$(git rev-parse REV)" and "$(git
// merge-base A B)" print, as a bracket expression their output is a run
// of: an object name in hex, or, when rev-parse cannot resolve REV, REV
// itself (it echoes it). "" when the substitution is not one of these
// with literal arguments. Git log "$(git rev-parse HEAD~5)"..HEAD is then
// judged by what the word can be, not as any string: it cannot start with
// '-' (an option) nor spell "credentials".
func shRevisionOutput(cs *syntax.CmdSubst) string {
	args := shRevisionArgs(cs)
	if args == nil {
		return ""
	}
	return shRevisionClass(args)
}

// shRevParseEcho returns REV of "$(git rev-parse REV)" without --verify
// (which prints an object name or nothing): rev-parse echoes REV when it
// is not a revision, and a path that exists is not one.
func shRevParseEcho(cs *syntax.CmdSubst) string {
	args := shRevisionArgs(cs)
	if args == nil || args[1] != "rev-parse" || shRevisionClass(args) == "" {
		return ""
	}
	rev := ""
	for _, a := range args[2:] {
		if a == "--verify" {
			return ""
		}
		if a[0] != '-' {
			rev = a
		}
	}
	return rev
}

// shRevisionArgs returns the literal words of a substitution that is one
// plain git command of at least three words, else nil.
func shRevisionArgs(cs *syntax.CmdSubst) []string {
	if len(cs.Stmts) != 1 || len(cs.Last) > 0 {
		return nil
	}
	st := cs.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || st.Coprocess || len(call.Assigns) > 0 || len(st.Redirs) > 0 ||
		len(call.Args) < 3 {
		return nil
	}
	args := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		v, ok := shLitWord(w)
		if !ok {
			return nil
		}
		args = append(args, v)
	}
	if args[0] != "git" {
		return nil
	}
	return args
}

// shUnquotedRevision reports a revision substitution whose output, left
// unquoted, is one word as it is: no blank to split at, no pattern
// character (the class of what it can print has none).
func shUnquotedRevision(cs *syntax.CmdSubst) bool {
	c := shRevisionOutput(cs)
	return c != "" && !strings.ContainsAny(c[1:len(c)-1], " \t\n*?[]")
}

// shRevisionClass is shRevisionOutput of the words args.
func shRevisionClass(args []string) string {
	var revs []string
	for _, a := range args[2:] {
		switch {
		case a == "--verify" || a == "-q" || a == "--quiet" || a == "--short":
		case a == "" || a[0] == '-' || strings.ContainsAny(a, "[]\\!"):
			return ""
		default:
			revs = append(revs, a)
		}
	}
	switch {
	case args[1] == "merge-base" && len(revs) == 2:
		return "[0-9a-f]" // an object name, or nothing
	case args[1] != "rev-parse" || len(revs) != 1:
		return ""
	}
	var b strings.Builder
	b.WriteString("[0-9a-f")
	dash := false
	for _, r := range revs[0] {
		switch {
		case r == '-':
			dash = true
		case !strings.ContainsRune(b.String()[1:], r):
			b.WriteRune(r)
		}
	}
	if dash {
		b.WriteByte('-')
	}
	b.WriteByte(']')
	return b.String()
}

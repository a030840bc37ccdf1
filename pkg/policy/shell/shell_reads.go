package shell

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Reads of values the script computes. An operand's pattern written by
// the agent (cat *.go) names files that exist and is met by the read
// rules anchored: only where it spells part of a rule's name. A value
// the script computes — "$(echo .env)", ${f:-.env}, a variable set by
// read, printf -v, an array or f=$(…) — is a string the agent chose, so it
// can spell any name: such a read is met by every read rule it could
// match (Command.ReadAny). A plain variable the script does not set
// ("$FILE" from the environment) stays anchored; one it sets to literal
// values is read as those values (varVals).

// shWordSources reports whether parts hold a value the script computes
// whatever its variables hold, and appends to vars the variables they
// expand plainly.
func shWordSources(parts []syntax.WordPart, vars []string) (computed bool, _ []string) {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.DblQuoted:
			var c bool
			c, vars = shWordSources(p.Parts, vars)
			computed = computed || c || p.Dollar // $"…": a translation
		case *syntax.CmdSubst:
			computed = computed || shRevisionOutput(p) == ""
		case *syntax.ProcSubst, *syntax.ArithmExp, *syntax.ExtGlob, *syntax.BraceExp:
			computed = true
		case *syntax.ParamExp:
			if p.Param == nil || p.Excl || p.Length || p.Width || p.Index != nil || p.Slice != nil ||
				p.Repl != nil || p.Exp != nil || p.Names != 0 || p.NestedParam != nil || p.Flags != nil {
				computed = true
				continue
			}
			vars = append(vars, p.Param.Value)
		}
	}
	return computed, vars
}

// finishReads marks the reads of variables the script sets in a way the
// analysis does not follow, anywhere in it (a loop may set one after the
// read runs once).
func (a *shAnalyzer) finishReads() {
	for i := range a.res.Commands {
		c := &a.res.Commands[i]
		for j, vars := range c.readVars {
			for _, v := range vars {
				partial := strings.HasPrefix(v, "~")
				v = strings.TrimPrefix(v, "~")
				if a.unknownVals[v] || a.inShared || a.sharedVars || partial && a.varVals[v] != nil ||
					shShellSets(v) || shPositional(v) && a.unknownVals["@"] {
					c.ReadAny[j] = true
				}
			}
		}
		c.readVars = nil
	}
}

// shPositional reports $1…, $@, $*: the values set -- gives (set -- .env;
// cat "$1"). Elsewhere they are the script's arguments: none for an agent's
// command, the caller's words for a nested sh -c script (judged there).
func shPositional(name string) bool {
	return name != "" && (name[0] >= '0' && name[0] <= '9' || name == "@" || name == "*")
}

// shSameShell are the wrappers whose script runs in the shell of the
// script around it, sharing its variables.
var shSameShell = map[string]bool{"eval": true, "trap": true}

// shRunsSharedCode reports whether f runs code in its own shell that the
// walk does not put in order: eval and trap (also after builtin or
// command), and zsh's TRAP* functions, which run on signals and between
// commands.
func shRunsSharedCode(f *syntax.File) bool {
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			for _, w := range n.Args {
				name, ok := zshLiteral(w)
				if !ok || name != "builtin" && name != "command" {
					found = found || ok && shSameShell[name]
					break
				}
			}
		case *syntax.FuncDecl:
			found = found || n.Name != nil && strings.HasPrefix(n.Name.Value, "TRAP")
		}
		return !found
	})
	return found
}

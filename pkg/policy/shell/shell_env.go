package shell

import (
	"maps"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// The environment a script gives its programs (issue 24, item 3). A
// variable set for one command (FOO=x prog, env FOO=x prog) is judged with
// that command (judgeEnv). A variable the script exports — export,
// declare/typeset/local -x, or any assignment after set -a — is in the
// environment of the programs that run after it; so is any variable it
// assigns that the agent's environment may already hold (envNames); and,
// in a loop or a
// function called later, of programs written before it: the analysis does
// not order them, so an exported name counts for every program of the
// script, nested scripts included. For a program whose entry is complete
// it is judged as that program's option: a name neither every program nor
// the entry's env_inert lists is not understood, and the command asks,
// naming it. Names that change what any program runs (PATH, LD_*, the
// table's env: lists) already make the script unanalysable where they are
// set (shExecVar).

// shKeywordReason is why set -k (set -o keyword, bash -k) makes a script
// unanalysable: every argument that looks like an assignment (git diff
// GIT_EXTERNAL_DIFF=x) goes into the command's environment, not its
// arguments.
const shKeywordReason = "set -k puts every argument that looks like an assignment into the command's environment, which the analysis does not follow"

// envInertFor reports whether the program of spec reads the variable name
// without it changing anything the policy judges.
func envInertFor(spec *progSpec, name string) bool {
	return envInertAll[name] || strings.HasPrefix(name, "LC_") || spec != nil && slices.Contains(spec.envInert, name)
}

// noteDeclExports records the names a declaration clause exports: every
// name of export (but export -f, which exports functions), the names of
// declare, typeset and local with -x.
func (a *shAnalyzer) noteDeclExports(d *syntax.DeclClause) {
	variant := d.Variant.Value
	exporting := variant == "export"
	var names []string
	for _, as := range d.Args {
		switch {
		case as.Name != nil:
			names = append(names, as.Name.Value)
		case as.Naked && as.Value != nil:
			w := a.word(as.Value)
			if w.lit && strings.HasPrefix(w.text, "-") {
				exporting = exporting || variant != "readonly" && strings.ContainsRune(w.text, 'x')
				exporting = exporting && !(variant == "export" && strings.ContainsRune(w.text, 'f'))
			} else if w.lit && !strings.HasPrefix(w.text, "+") {
				n, _, _ := strings.Cut(w.text, "=")
				names = append(names, n)
			}
		}
	}
	if exporting {
		a.exported = append(a.exported, names...)
	}
}

// noteEnvBuiltin records what the builtins the walk sees as commands do to
// the environment: set -a (and set -o allexport) exports every variable
// the script assigns; export, declare -x… run through builtin or command
// export their names, and a name that changes what programs run makes the
// script unanalysable as an assignment would.
func (a *shAnalyzer) noteEnvBuiltin(words []shWord) {
	if len(words) < 2 || !words[0].lit {
		return
	}
	args := words[1:]
	switch words[0].text {
	case "set":
		for i, w := range args {
			switch {
			case w.lit && w.text == "--":
				return
			case !w.lit, strings.HasPrefix(w.text, "-") && strings.ContainsRune(w.text, 'k'),
				w.text == "-o" && i+1 < len(args) && (args[i+1].text == "keyword" || !args[i+1].lit):
				a.codeUnknown(shKeywordReason)
			}
			switch {
			case !w.lit, strings.HasPrefix(w.text, "-") && strings.ContainsRune(w.text, 'a'),
				w.text == "-o" && i+1 < len(args) && (args[i+1].text == "allexport" || !args[i+1].lit):
				a.allexport = true
			}
		}
	case "export", "declare", "typeset", "local":
		exporting := words[0].text == "export"
		var names []string
		for _, w := range args {
			if w.lit && strings.HasPrefix(w.text, "-") {
				exporting = exporting || strings.ContainsRune(w.text, 'x')
				continue
			}
			if w.lit && strings.HasPrefix(w.text, "+") {
				continue
			}
			n, _, _ := strings.Cut(w.text, "=")
			if shExecVar(n) {
				a.codeUnknown(words[0].text + " assigns " + n + ", which changes what later commands run or read")
			}
			names = append(names, n)
		}
		if exporting {
			a.exported = append(a.exported, names...)
		}
	}
}

// envNames returns the names in the environment of the script's programs:
// those exported by name, every name it assigns after set -a, and every
// assigned name the agent's environment may already hold (mayBeInherited):
// assigning a variable the shell inherited changes what its children see,
// export or not (XDG_CONFIG_HOME=x; git status), and the analysis cannot
// know which names are inherited.
func (a *shAnalyzer) envNames() []string {
	names := slices.Clone(a.exported)
	assigned := slices.Collect(maps.Keys(a.tainted))
	assigned = slices.AppendSeq(assigned, maps.Keys(a.safeAt))
	assigned = slices.AppendSeq(assigned, maps.Keys(a.varVals))
	for _, n := range assigned {
		if a.allexport || mayBeInherited(n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// lowerEnvVars are the lower-case names programs read from the
// environment (curl, wget, git and most HTTP clients honour them).
var lowerEnvVars = map[string]bool{
	"http_proxy": true, "https_proxy": true, "ftp_proxy": true, "all_proxy": true, "no_proxy": true,
	"rsync_proxy": true, "socks_proxy": true,
}

// mayBeInherited reports whether name has the shape of a variable the
// agent's environment may hold and programs read: upper case with an
// underscore (XDG_CONFIG_HOME, TAR_OPTIONS, GIT_TRACE2_EVENT), or one of
// the lower-case names programs read (https_proxy). POSIX leaves names
// with lower-case letters to applications; the programs' own variables
// without an underscore (MANOPT, KUBECONFIG, GOFLAGS) are the table's
// env: lists, which make any assignment unanalysable (shExecVar). A
// script's own short variables (for f in …; D=src; N=3) are not taken for
// inherited ones unless it exports them.
func mayBeInherited(name string) bool {
	if lowerEnvVars[name] {
		return true
	}
	if !strings.Contains(name, "_") {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c >= 'a' && c <= 'z' {
			return false
		}
	}
	return true
}

// finishExports judges every command of a program (programEffects records
// its entry, if any, in info.env) by the names the script exports: one the
// entry does not know as inert, or, for a program the table does not
// know, one that is not inert for every program, makes the command not
// understood (red team AO F9: export MAVEN_OPTS=…; mvn -v ran a command).
func (a *shAnalyzer) finishExports() {
	// The names every program may get are dropped first: each command
	// then stops at the first name its entry does not list, so the work
	// is bounded by the entries' env_inert lists, not by the names.
	names := slices.DeleteFunc(a.envNames(), func(n string) bool {
		return envInertAll[n] || strings.HasPrefix(n, "LC_")
	})
	if len(names) == 0 {
		return
	}
	for i := range a.res.Commands {
		c, in := &a.res.Commands[i], &a.info[i]
		if c.Unanalysable == "" && slices.Contains(c.Wrappers, "parallel") {
			// parallel reads its environment (shParallel): what the script
			// exports reaches it.
			c.Unanalysable = "parallel reads " + names[0] + " from its environment (PARALLEL_ENV runs code before every job, XDG_CONFIG_HOME holds its configuration), which the script sets"
			c.Inert = false
			continue
		}
		if in.envProg != "" && c.Unanalysable == "" {
			for _, n := range names {
				if optionVarOf(in.envProg, n) || optionVarOf(c.Name, n) {
					c.Unanalysable = optionVarReason(c.Name, n) + " (the script sets it, and its programs see it)"
					c.Inert = false
					break
				}
			}
		}
		if in.envProg == "" || c.Unanalysable != "" {
			continue
		}
		for _, n := range names {
			if !envInertFor(in.env, n) {
				c.Unanalysable = notUnderstood(in.envProg, "environment variable", n) + ", which the script sets (a variable its environment may hold: its programs see the new value)"
				c.Inert = false
				break
			}
		}
	}
}

// optionVarSuffixes are the endings of the variables a program reads as
// options or arguments of its own, after its name in upper case (and an
// optional underscore): ZIPOPT, UNZIP, XZ_OPT, XZ_DEFAULTS, GZIP, LESS,
// GREP_OPTIONS, PYTEST_ADDOPTS, GRADLE_OPTS.
var optionVarSuffixes = []string{"", "OPT", "OPTS", "OPTION", "OPTIONS", "FLAGS", "ARGS", "ADDOPTS", "DEFAULTS"}

// optionVarOf reports whether name is, by its shape, a variable the
// program prog reads as options: its name in upper case ('-' and '.'
// as '_') followed by one of optionVarSuffixes.
func optionVarOf(prog, name string) bool {
	if prog == "" || name == "" || name[0] < 'A' || name[0] > 'Z' {
		return false
	}
	up := strings.ToUpper(strings.NewReplacer("-", "_", ".", "_", "+", "_").Replace(prog))
	rest, ok := strings.CutPrefix(name, up)
	if !ok {
		return false
	}
	return slices.Contains(optionVarSuffixes, strings.TrimPrefix(rest, "_"))
}

// optionVarReason is why a command asks when a variable it reads as
// options is set.
func optionVarReason(prog, name string) string {
	return "sets " + name + ", which " + prog + " reads as options the policy does not judge (an option that runs or writes something may hide there)"
}

// programUseIn reads a command's words with its program's entry, in the
// environment its frame gives it: the words of the program's option
// variables set for it (envOptionWords), then the variables (judgeEnv).
func programUseIn(spec *progSpec, words []shWord, fr shFrame) progUse {
	words, ask := envOptionWords(spec, words, fr)
	u := programUse(spec, words)
	if ask != "" {
		u.setAsk(ask)
	}
	u.judgeEnv(spec, fr)
	return u
}

// envOptionWords returns the words of a command whose entry is not
// complete with the values of the program's option variables set for it
// put after the program's name, where the program reads them
// (ZIPOPT=-q zip a.zip f is judged as zip -q a.zip f, LESS=-o/x less f
// writes /x), and why the command asks when one cannot be read so: a
// value that is not one plain word (blanks, quotes, expansions: the
// policy does not split it as the program does), += , or an entry with
// sub-commands. A complete entry judges every variable (judgeEnv).
func envOptionWords(spec *progSpec, words []shWord, fr shFrame) ([]shWord, string) {
	if spec.complete || len(fr.wrappers) == 0 {
		return words, ""
	}
	var extra []shWord
	for _, w := range fr.wrappers {
		name, ok := envAssignedName(w)
		if !ok || !optionVarOf(spec.name, name) {
			continue
		}
		_, val, _ := strings.Cut(w, "=")
		if spec.subs != nil || strings.Contains(w, "+=") || !plainOptionValue(val) {
			return words, optionVarReason(spec.name, name)
		}
		if val != "" {
			extra = append(extra, shWord{text: val, lit: true})
		}
	}
	if extra == nil {
		return words, ""
	}
	return slices.Concat(words[:1], extra, words[1:]), ""
}

// plainOptionValue reports a variable's value that reads the same as
// source text and as a value: letters, digits and - _ . , : / = + @ %.
func plainOptionValue(v string) bool {
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.,:/=+@%", c) >= 0) {
			return false
		}
	}
	return true
}

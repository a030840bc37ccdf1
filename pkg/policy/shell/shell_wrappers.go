package shell

import (
	"errors"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Wrappers are commands that run another command: the policy judges the
// command they run, not the wrapper. The program table (programs.yaml)
// says which programs are wrappers: most are described there alone
// (wrapper: how many operands come before the command, whether it runs
// elevated, which option holds a script), a few by a named hook below
// (env, sudo, su, timeout, nice, time, xargs, find, flock, busybox,
// watch, trap, eval, source, the shells, parallel), with their options
// still read from the table. A wrapper with nothing after its options
// (`sudo`, `timeout 5`, `sudo -l`) is judged as itself; an option the
// table does not list makes it unanalysable, since the policy can no
// longer tell where the wrapped command starts.
//
// xargs without -I appends arguments it reads from its input: the wrapped
// command gets a "{}" word standing for them, as find -exec has. With -I R
// (and for find -exec, with {}) the input replaces R: a command name or an
// sh -c script holding R runs input the policy cannot see, which makes it
// unanalysable.

// shWrapped is what a wrapper handler found.
type shWrapped struct {
	// rest are the words of the wrapped command; empty means the wrapper
	// runs nothing and is judged as itself.
	rest []shWord
	// assigns are VAR=value operands (env, sudo), recorded as wrappers
	// after the wrapper's own name.
	assigns []string
	// reason makes the wrapper itself the judged command, unanalysable.
	reason string
	// info describes the wrapper when it is judged as itself.
	info shCmdInfo
	// done means the handler emitted every command itself.
	done bool
}

// shHook is a wrapper procedure the table refers to by name (hook:).
type shHook func(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped

var shHooks map[string]shHook

func init() {
	shHooks = map[string]shHook{
		"env":      shEnv,
		"sudo":     shSudo,
		"su":       shSu,
		"timeout":  shTimeout,
		"nice":     shNice,
		"time":     shTime,
		"xargs":    shXargs,
		"find":     shFind,
		"fd":       shFd,
		"flock":    shFlock,
		"busybox":  shBusybox,
		"watch":    shWatch,
		"trap":     shTrap,
		"eval":     shEval,
		"source":   shSource,
		"shell":    shShell,
		"parallel": shParallel,
	}
}

// resolve sees through the wrappers at the start of w and emits the
// command that finally runs.
func (a *shAnalyzer) resolve(w []shWord, fr shFrame) {
	for len(w) > 0 {
		if !w[0].lit || w[0].glob || w[0].text == "" {
			a.emit(w, fr, "", shCmdInfo{})
			return
		}
		name := path.Base(w[0].text)
		if len(fr.wrappers) >= shMaxWrappers || !a.budget.takeWrapper(len(w)) {
			// A chain of wrappers (env env env …) costs each handler a scan
			// of the rest: bounded, so the analysis stays linear.
			a.emit(w, fr, shTooComplex+": more than "+strconv.Itoa(shMaxWrappers)+" wrappers", shCmdInfo{})
			return
		}
		spec := a.progs.lookup(name)
		var r shWrapped
		switch {
		case ForeignShells[name] && (spec == nil || spec.hook != "shell"):
			// Another shell's grammar (pwsh, nu, elvish…), whether or not
			// the program table lists it.
			r = shShell(a, w, &fr, spec)
		case spec == nil:
			a.emit(w, fr, "", shCmdInfo{})
			return
		case shHooks[spec.hook] != nil:
			r = shHooks[spec.hook](a, w, &fr, spec)
		case spec.wrapper != nil:
			r = shTableWrapper(a, w, &fr, spec)
		case spec.runner(w) != nil:
			r = shSubWrapper(a, w, &fr, spec)
		case spec.optionHidesRunner(w):
			// npm -s exec cat x: an option the table does not list before
			// the sub-command hides which sub-command runs, and exec runs
			// a command.
			a.emit(w, fr, name+" has an option the policy does not know before its sub-command, and "+name+
				"'s sub-commands include runners: which command runs is not known", shCmdInfo{})
			return
		default:
			info, reason := shCmdInfo{}, ""
			if spec.hook == "interpreter" {
				info = shInterpreterInfo(spec, w)
				if info.stdinProgram {
					// python3 - <<EOF, echo … | node, ruby <<< …: the program
					// is data on standard input, code nobody can see.
					reason = name + " reads its program from standard input (a pipe, a here-document, a here-string or the terminal): code the policy cannot see"
				}
			}
			a.emit(w, fr, reason, info)
			return
		}
		if r.done {
			return
		}
		if len(r.rest) == 0 || r.reason != "" {
			a.emit(w, fr, r.reason, r.info)
			return
		}
		fr = fr.withWrapper(name)
		fr.wrappers = append(fr.wrappers, r.assigns...)
		w = r.rest
	}
}

// shTableWrapper runs a wrapper the table describes: its options (strict:
// an unknown option makes it unanalysable), then wrapper.operands
// operands, then the command, or the script of an option with effect
// script (sg -c, script -c).
func shTableWrapper(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped {
	ws := spec.wrapper
	var st wrapState
	next, stop, bad := spec.sh.skip(w, 1, a.wrapperOption(spec, fr, &st))
	if stop || bad != "" {
		return shWrapped{reason: shWrapperBad(w, bad)}
	}
	if st.reason != "" {
		return shWrapped{reason: st.reason}
	}
	if (ws.elevated || spec.elevated) && !st.unelevate {
		fr.elevated = true
	}
	if st.script != nil {
		if !st.script.lit {
			return shWrapped{reason: "runs a script that is not a literal: " + st.script.text, info: shCmdInfo{executor: true}}
		}
		// The wrapper is judged as itself too: its operands (script's log
		// file) are its own effects.
		a.emit(w, *fr, "", shCmdInfo{})
		a.nested(st.script.text, syntax.LangBash, *fr, path.Base(w[0].text))
		return shWrapped{done: true}
	}
	if next+ws.operands > len(w) {
		return shWrapped{}
	}
	rest := w[next+ws.operands:]
	if spec.name == "systemd-run" && len(rest) > 0 && !systemdRunHere(w[1:next]) {
		// A service starts in / (--user: the home) unless -d or --scope
		// keeps the caller's directory: relative paths may be anywhere.
		a.cds = append(a.cds, shCd{})
	}
	if ws.joined && len(rest) > 0 && rest[0].lit && rest[0].text == "-c" {
		rest = rest[1:] // sg GROUP -c CMD
	}
	if (ws.joined || st.joined) && len(rest) > 0 {
		if ws.packages {
			a.emit(w, *fr, "", shCmdInfo{})
		}
		return shJoined(a, rest, fr, path.Base(w[0].text))
	}
	if ws.packages && len(rest) > 0 {
		// npx -p PKG cat: cat is PKG's, not the system's.
		a.emit(w, *fr, "", shCmdInfo{})
	}
	return shWrapped{rest: rest}
}

// runner returns the sub-command entry of w when it runs its operands as a
// command (uv run, npm exec, kubectl exec, docker exec), after the
// program's global options (kubectl -n NS exec).
func (s *progSpec) runner(w []shWord) *progSpec {
	if s.subs == nil {
		return nil
	}
	g := s.globalEnd(w)
	if g >= len(w) || !w[g].lit {
		return nil
	}
	sub := s.subs[w[g].text]
	if sub == nil || sub.wrapper == nil {
		return nil
	}
	if v := sub.wrapper.verb; v != "" {
		// git bisect run CMD: a runner only with its verb; a word that
		// may be the verb ("$X") or an option the entry does not know
		// before it is judged by shSubWrapper, which asks.
		next, _, bad := sub.sh.skip(w, g+1, nil)
		if bad == "" && (next >= len(w) || w[next].lit && w[next].text != v) {
			return nil
		}
	}
	return sub
}

// optionHidesRunner reports a program with runner sub-commands (npm exec,
// poetry run) whose first word after its global options is an option or
// a word the policy cannot read: the sub-command cannot be placed.
func (s *progSpec) optionHidesRunner(w []shWord) bool {
	if len(s.global) > 0 || !slices.ContainsFunc(slices.Collect(maps.Values(s.subs)), func(sub *progSpec) bool { return sub.wrapper != nil }) {
		return false // no runner; git: its global options are listed, the rest asks
	}
	g := s.globalEnd(w)
	if g >= len(w) || w[g].lit && (w[g].text == "" || w[g].text[0] != '-') {
		return false
	}
	// A runner's name, or a word the policy cannot read, after the
	// leading options (npm -s exec cat x; not npm --version, npm --prefix
	// /x run build).
	return slices.ContainsFunc(w[g:], func(t shWord) bool {
		if !t.lit {
			return true
		}
		sub := s.subs[t.text]
		return sub != nil && sub.wrapper != nil
	})
}

// shSubWrapper runs a sub-command that runs a command (uv run CMD,
// kubectl exec POD -- CMD), as shTableWrapper runs a wrapper: the
// program's global options and the sub-command's options are read
// strictly (an unknown one makes the command unanalysable), then the
// wrapper's operands, then the command.
func shSubWrapper(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped {
	sub := spec.runner(w)
	g := spec.globalEnd(w)
	var st wrapState
	if _, _, bad := spec.sh.skip(w[:g], 1, a.wrapperOption(spec, fr, &st)); bad != "" {
		return shWrapped{reason: shWrapperBad(w, bad)}
	}
	next, stop, bad := sub.sh.skip(w, g+1, a.wrapperOption(sub, fr, &st))
	if stop || bad != "" {
		return shWrapped{reason: shWrapperBad(w, bad)}
	}
	if st.reason != "" {
		return shWrapped{reason: st.reason}
	}
	if st.script != nil {
		// npm exec -c 'CMD': the runner runs a script of its own.
		if !st.script.lit {
			return shWrapped{reason: "runs a script that is not a literal: " + st.script.text, info: shCmdInfo{executor: true}}
		}
		a.emit(w, *fr, "", shCmdInfo{})
		a.nested(st.script.text, syntax.LangBash, *fr, sub.name)
		return shWrapped{done: true}
	}
	if sub.wrapper.afterDashes {
		i := slices.IndexFunc(w[g+1:], func(x shWord) bool { return x.lit && x.text == "--" })
		if i < 0 {
			return shWrapped{reason: sub.name + " runs a command that is not after --"}
		}
		return shWrapped{rest: w[g+1+i+1:]}
	}
	if v := sub.wrapper.verb; v != "" {
		if !w[next].lit {
			return shWrapped{reason: sub.name + ": the word " + w[next].text + " may be " + v + ", which runs a command"}
		}
		if next, stop, bad = sub.sh.skip(w, next+1, a.wrapperOption(sub, fr, &st)); stop || bad != "" {
			return shWrapped{reason: shWrapperBad(w, bad)}
		}
	}
	if next+sub.wrapper.operands > len(w) {
		return shWrapped{}
	}
	rest := w[next+sub.wrapper.operands:]
	if len(rest) > 0 && rest[0].lit && rest[0].text == "--" {
		rest = rest[1:] // npm exec -- eslint .
	}
	if (st.elsewhere || sub.wrapper.elsewhere) && len(rest) > 0 {
		// pnpm exec -r cat ../x, git submodule foreach: in each package's
		// or submodule's directory, a cd the analysis cannot follow, so
		// relative paths are judged as under any directory.
		a.cds = append(a.cds, shCd{})
	}
	if (sub.wrapper.joined || st.joined) && len(rest) > 0 {
		if sub.wrapper.packages {
			// pnpm exec -c 'ls': the script's programs are looked up in
			// the package bin directories first.
			a.emit(w, *fr, "", shCmdInfo{})
		}
		return shJoined(a, rest, fr, sub.name)
	}
	if sub.wrapper.packages && len(rest) > 0 {
		// uv run cat: cat may be .venv/bin/cat.
		a.emit(w, *fr, "", shCmdInfo{})
	}
	return shWrapped{rest: rest}
}

// shJoined runs words joined by spaces as one shell script (sg GROUP
// CMD…, watch without -x).
func shJoined(a *shAnalyzer, words []shWord, fr *shFrame, wrapper string) shWrapped {
	var b strings.Builder
	for i, x := range words {
		if !x.lit {
			return shWrapped{reason: "runs a script that is not a literal: " + x.text, info: shCmdInfo{executor: true}}
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x.text)
	}
	a.nested(b.String(), syntax.LangBash, *fr, wrapper)
	return shWrapped{done: true}
}

// wrapState collects what a wrapper's options say while they are read.
type wrapState struct {
	script    *shWord // the script an option with effect script gives
	joined    bool    // an option makes the command words one shell script
	elsewhere bool    // an option runs the command in unknown directories
	unelevate bool    // an option runs the command as the calling user
	reason    string  // an option runs something the policy cannot see
}

// wrapperOption returns the callback that applies the table's effects of
// a wrapper's options as they are read: files it writes (strace -o) are
// recorded at once, the rest goes into st.
func (a *shAnalyzer) wrapperOption(spec *progSpec, fr *shFrame, st *wrapState) func(string, *shWord) {
	return func(opt string, v *shWord) {
		name := "--" + opt
		if len(opt) == 1 {
			name = "-" + opt
		}
		o := spec.options[name]
		if o == nil {
			return
		}
		if v != nil && v.lit && !o.appliesTo(v.text) {
			return
		}
		switch o.effect {
		case effWrite:
			if v != nil && o.pipes && pipedTarget(*v) && st.reason == "" {
				st.reason = spec.name + " " + name + " " + v.text + " may pipe into a command"
			}
			if v != nil {
				a.writeTarget(*v, *fr)
			}
		case effRead:
			if v != nil {
				a.readTarget(*v)
			}
		case effScript:
			st.script = v
		case effUnelevate:
			st.unelevate = true
		case effJoined:
			st.joined = true
		case effElsewhere:
			st.elsewhere = true
		case effChdir:
			if st.reason == "" {
				st.reason = spec.name + " " + name + " moves the command to another directory, so its relative paths are not where they look"
			}
		case effList:
			if v != nil && !(v.lit && v.text == "-") {
				a.readTarget(*v)
			}
			if st.reason == "" {
				st.reason = spec.name + " " + name + " works on the files a list names, which the policy cannot see"
			}
		case effCode, effAsk, effRun:
			if st.reason == "" {
				st.reason = o.reason
				if st.reason == "" {
					st.reason = spec.name + " " + name + " runs something the policy cannot see"
				}
			}
		}
	}
}

// shOpts describes the options of a wrapper, getopt style: short options
// cluster (-iv), an option argument is attached (-uroot) or the next word
// (-u root), long options take theirs after '=' or as the next word.
type shOpts struct {
	arg      string // short options with an argument
	optArg   string // short options whose argument can only be attached (xargs -i[R])
	flag     string // short options without argument
	stop     string // short options after which the wrapper runs no command (sudo -l)
	longArg  []string
	longOpt  []string // long options with an optional "=value"
	longFlag []string
	longStop []string
}

// skip scans the options of w from index i. It calls on (when not nil)
// for every option it recognises, with its argument if it has one. next is
// the index of the first word after the options; stop reports an option
// after which no command runs; bad is the reason when an option is not
// understood.
func (o *shOpts) skip(w []shWord, i int, on func(opt string, val *shWord)) (next int, stop bool, bad string) {
	for i < len(w) {
		t := &w[i]
		s := t.text
		if !t.lit {
			if strings.HasPrefix(s, "-") {
				return i, false, "option is not a literal: " + s
			}
			return i, false, ""
		}
		if s == "--" {
			return i + 1, false, ""
		}
		if len(s) < 2 || s[0] != '-' {
			return i, false, ""
		}
		if s[1] == '-' {
			i, stop, bad = o.longOption(w, i, on)
		} else {
			i, stop, bad = o.shortOptions(w, i, on)
		}
		if stop || bad != "" {
			return i, stop, bad
		}
	}
	return i, false, ""
}

// longOption reads the long option w[i] (--name, --name=value) as skip
// does: next is the index of the word after it and its argument (len(w)
// when the argument is missing); with stop or bad, next is i.
func (o *shOpts) longOption(w []shWord, i int, on func(opt string, val *shWord)) (next int, stop bool, bad string) {
	s := w[i].text
	name, val, hasVal := strings.Cut(s[2:], "=")
	switch {
	case slices.Contains(o.longStop, name):
		return i, true, ""
	case slices.Contains(o.longFlag, name) && !hasVal:
		if on != nil {
			on(name, nil)
		}
	case slices.Contains(o.longOpt, name):
		if on != nil {
			var v *shWord
			if hasVal {
				v = &shWord{text: val, lit: true}
			}
			on(name, v)
		}
	case slices.Contains(o.longArg, name):
		v := &shWord{text: val, lit: true}
		if !hasVal {
			if i+1 >= len(w) {
				return len(w), false, ""
			}
			i++
			v = &w[i]
		}
		if on != nil {
			on(name, v)
		}
	default:
		return i, false, "unrecognised option " + s
	}
	return i + 1, false, ""
}

// shortOptions reads the cluster of short options w[i] (-iv, -uroot) as
// skip does: next is the index of the word after it and its last option's
// argument (len(w) when the argument is missing); with stop or bad, next
// is i.
func (o *shOpts) shortOptions(w []shWord, i int, on func(opt string, val *shWord)) (next int, stop bool, bad string) {
	s := w[i].text
	for j := 1; j < len(s); j++ {
		c, opt := s[j], s[j:j+1]
		switch {
		case strings.IndexByte(o.stop, c) >= 0:
			return i, true, ""
		case strings.IndexByte(o.flag, c) >= 0:
			if on != nil {
				on(opt, nil)
			}
		case strings.IndexByte(o.optArg, c) >= 0:
			if on != nil {
				var v *shWord
				if j+1 < len(s) {
					v = &shWord{text: s[j+1:], lit: true}
				}
				on(opt, v)
			}
			j = len(s)
		case strings.IndexByte(o.arg, c) >= 0:
			var v *shWord
			if j+1 < len(s) {
				v = &shWord{text: s[j+1:], lit: true}
			} else {
				if i+1 >= len(w) {
					return len(w), false, ""
				}
				i++
				v = &w[i]
			}
			if on != nil {
				on(opt, v)
			}
			j = len(s)
		default:
			return i, false, "unrecognised option -" + opt + " in " + s
		}
	}
	return i + 1, false, ""
}

// shWrapperBad prefixes a reason with the wrapper's name.
func shWrapperBad(w []shWord, bad string) string {
	if bad == "" {
		return ""
	}
	return path.Base(w[0].text) + ": " + bad
}

// shIsAssignment reports a NAME=value word.
func shIsAssignment(w shWord) (name string, ok bool) {
	name, _, ok = strings.Cut(w.text, "=")
	if !ok || name == "" {
		return "", false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9' {
			continue
		}
		return "", false
	}
	return name, true
}

// assignments consumes the NAME=value words at the start of w[i:].
func (r *shWrapped) assignments(w []shWord, i int, fr *shFrame) int {
	for ; i < len(w); i++ {
		name, ok := shIsAssignment(w[i])
		if !ok {
			break
		}
		r.assigns = append(r.assigns, w[i].text)
		if shExecVar(name) && fr.unanalysable == "" {
			fr.unanalysable = shExecVarReason(name)
		}
	}
	return i
}

func shEnv(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped {
	var split *shWord
	var r shWrapped
	next, stop, bad := spec.sh.skip(w, 1, func(opt string, v *shWord) {
		switch opt {
		case "S", "split-string":
			split = v
		case "P":
			if fr.unanalysable == "" {
				fr.unanalysable = "env -P changes where the command is looked up"
			}
		case "C", "chdir":
			if fr.unanalysable == "" {
				fr.unanalysable = "env -C moves the command to another directory, so its relative paths are not where they look"
			}
		}
	})
	if stop || bad != "" {
		return shWrapped{reason: shWrapperBad(w, bad)}
	}
	if next < len(w) && w[next].lit && w[next].text == "-" {
		next++ // "env -" is "env -i"
	}
	next = r.assignments(w, next, fr)
	r.rest = w[next:]
	if split != nil {
		if !split.lit {
			return shWrapped{reason: "env -S string is not a literal: " + split.text}
		}
		if strings.ContainsAny(split.text, "\\$") {
			// env's own escapes are not the shell's: \_ separates words
			// and \c ends the string, ${V} expands: read as bash, the
			// words would not be the ones env runs.
			return shWrapped{reason: "env -S string has a backslash or $, which env reads by its own rules: " + split.text}
		}
		words, ok := a.splitString(split.text)
		if !ok {
			return shWrapped{reason: "env -S string is not a simple command: " + split.text}
		}
		r.rest = append(words, r.rest...)
		if len(r.rest) > 0 {
			// env -S 'A=1 cmd': the split words may start with assignments.
			k := r.assignments(r.rest, 0, fr)
			r.rest = r.rest[k:]
		}
	}
	return r
}

// splitString splits s into words as env -S does, by parsing it as one
// simple command with literal words.
func (a *shAnalyzer) splitString(s string) ([]shWord, bool) {
	f, err := shParse(s, syntax.LangBash)
	if err != nil {
		return nil, false
	}
	if len(f.Stmts) == 0 {
		return nil, true
	}
	if len(f.Stmts) != 1 {
		return nil, false
	}
	st := f.Stmts[0]
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Background || st.Negated || len(st.Redirs) > 0 {
		return nil, false
	}
	sub := shAnalyzer{src: s}
	words := make([]shWord, 0, len(c.Assigns)+len(c.Args))
	for _, as := range c.Assigns {
		// A=1 at the start of the string: the caller reads it as an
		// assignment operand of env.
		if as.Name == nil || as.Append || as.Index != nil || as.Array != nil {
			return nil, false
		}
		v := shWord{lit: true}
		if as.Value != nil {
			v = sub.word(as.Value)
		}
		words = append(words, shWord{text: as.Name.Value + "=" + v.text, lit: v.lit})
	}
	args, ok := sub.words(c.Args)
	if !ok {
		return nil, false
	}
	words = append(words, args...)
	for _, w := range words {
		if !w.lit {
			return nil, false
		}
	}
	return words, true
}

func shSudo(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped {
	fr.elevated = true
	next, stop, bad := spec.sh.skip(w, 1, func(opt string, _ *shWord) {
		switch opt {
		case "b", "background":
			a.setBackground("sudo -b runs a command in the background")
		case "D", "chdir", "R", "chroot":
			if fr.unanalysable == "" {
				fr.unanalysable = "sudo -" + opt + " moves the command to another directory, so its relative paths are not where they look"
			}
		}
	})
	if stop || bad != "" {
		return shWrapped{reason: shWrapperBad(w, bad)}
	}
	var r shWrapped
	next = r.assignments(w, next, fr)
	r.rest = w[next:]
	return r
}

// shSu handles su and runuser. `su [options] [user] -c CMD` runs CMD with
// the user's shell; `runuser -u USER [--] COMMAND…` runs COMMAND directly.
// Without a command, su opens an interactive shell: judged as itself.
func shSu(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped {
	fr.elevated = true
	var script *shWord
	userMode := false
	on := func(opt string, v *shWord) {
		switch opt {
		case "c", "command", "session-command":
			script = v
		case "u", "user":
			userMode = path.Base(w[0].text) == "runuser"
		}
	}
	for i := 1; i < len(w); {
		next, stop, bad := spec.sh.skip(w, i, on)
		if stop || bad != "" {
			return shWrapped{reason: shWrapperBad(w, bad)}
		}
		if userMode {
			return shWrapped{rest: w[next:]}
		}
		if next >= len(w) || w[next-1].lit && w[next-1].text == "--" {
			break // what follows "--" are arguments for the shell
		}
		// w[next] is "-" (su - is su --login) or the user name; options
		// may follow it.
		i = next + 1
	}
	if script == nil {
		return shWrapped{}
	}
	if !script.lit {
		return shWrapped{reason: "runs a script that is not a literal: " + script.text, info: shCmdInfo{executor: true}}
	}
	a.nested(script.text, syntax.LangBash, *fr, path.Base(w[0].text))
	return shWrapped{done: true}
}

func shTimeout(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped {
	next, stop, bad := spec.sh.skip(w, 1, nil)
	if stop || bad != "" || next >= len(w) {
		return shWrapped{reason: shWrapperBad(w, bad)}
	}
	if !shIsDuration(w[next]) {
		// GNU timeout refuses a duration it cannot read and runs nothing;
		// but the policy's reading must not be the weaker one: a word it
		// does not understand may be one timeout accepts.
		return shWrapped{reason: "timeout: cannot read the duration " + w[next].text}
	}
	return shWrapped{rest: w[next+1:]} // after the duration
}

// shIsDuration reports a duration GNU timeout accepts: a floating-point
// number as C's strtod reads it (decimal, hexadecimal 0x10, exponents,
// a leading '+', inf/infinity in any case), not negative and not NaN,
// with an optional s, m, h or d suffix.
func shIsDuration(w shWord) bool {
	s := w.text
	if !w.lit {
		return false
	}
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	if s != "" && strings.IndexByte("smhd", s[len(s)-1]) >= 0 {
		s = s[:len(s)-1]
	}
	s = strings.TrimPrefix(s, "+")
	if s == "" || s[0] == '-' || s[0] == '+' || strings.ContainsRune(s, '_') {
		return false
	}
	switch strings.ToLower(s) {
	case "inf", "infinity":
		return true
	case "nan":
		return false
	}
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		// strtod reads hexadecimal with an optional binary exponent; Go
		// wants the exponent.
		h := s
		if !strings.ContainsAny(h[2:], "pP") {
			h += "p0"
		}
		_, err := strconv.ParseFloat(h, 64)
		return err == nil
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
			return false
		}
	}
	_, err := strconv.ParseFloat(s, 64)
	return err == nil || errors.Is(err, strconv.ErrRange)
}

// shNice handles nice [-n N | -N | --adjustment=N] command.
func shNice(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped {
	i := 1
	for i < len(w) {
		t := w[i]
		s := t.text
		if !t.lit {
			if strings.HasPrefix(s, "-") {
				return shWrapped{reason: "nice: option is not a literal: " + s}
			}
			break
		}
		switch {
		case s == "--":
			return shWrapped{rest: w[i+1:]}
		case s == "-n" || s == "--adjustment":
			i += 2
		case strings.HasPrefix(s, "-n") || strings.HasPrefix(s, "--adjustment="):
			i++
		case s == "--help" || s == "--version":
			return shWrapped{}
		case len(s) > 1 && s[0] == '-' && shIsInt(s[1:]):
			i++
		case len(s) > 1 && s[0] == '-':
			return shWrapped{reason: "nice: unrecognised option " + s}
		default:
			return shWrapped{rest: w[i:]}
		}
	}
	return shWrapped{}
}

func shIsInt(s string) bool {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	return shAllDigits(s)
}

// shTime handles time run as a program (/usr/bin/time, \time): the bash
// keyword is parsed into a TimeClause instead. Its -o FILE writes FILE.
func shTime(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped {
	var st wrapState
	next, stop, bad := spec.sh.skip(w, 1, a.wrapperOption(spec, fr, &st))
	if stop || bad != "" || st.reason != "" {
		return shWrapped{reason: shWrapperBad(w, bad) + st.reason}
	}
	return shWrapped{rest: w[next:]}
}

// shXargsArgs stands for the arguments xargs reads from its input: they
// are unknown, so `ls | xargs rm` is judged as `rm {}` and matches the
// patterns of rm with arguments (`rm *`), as `find -exec rm {} ;` does.
const shXargsArgs = "{}"

func shXargs(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped {
	replace, null, file := "", false, false
	var st wrapState
	table := a.wrapperOption(spec, fr, &st)
	next, stop, bad := spec.sh.skip(w, 1, func(opt string, v *shWord) {
		table(opt, v)
		switch {
		case opt == "0" || opt == "null":
			null = true
		case opt == "a" || opt == "arg-file":
			file = true // its input is a file, not the pipe
		case opt == "I" && v != nil:
			replace = v.text
		case opt == "i" || opt == "replace":
			replace = "{}"
			if v != nil && v.text != "" {
				replace = v.text
			}
		}
	})
	if stop || bad != "" || st.reason != "" {
		return shWrapped{reason: shWrapperBad(w, bad) + st.reason}
	}
	if replace != "" {
		fr.placeholder, fr.feeder = replace, "xargs"
	}
	fr.feed = a.xargsFeed(replace, null && !file)
	rest := make([]shWord, 0, len(w)-next+2)
	rest = append(rest, w[next:]...)
	if len(rest) == 0 {
		rest = append(rest, shWord{text: "echo", lit: true}) // xargs runs echo by default
	}
	if replace == "" {
		rest = append(rest, shWord{text: shXargsArgs, lit: true})
	}
	return shWrapped{rest: fr.feed.markInput(rest)}
}

// shFlock handles `flock [options] FILE COMMAND…` and `flock [options]
// FILE -c SCRIPT`, FILE a write (flock creates it); `flock [options] FD`
// runs nothing.
func shFlock(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped {
	var script *shWord
	on := func(opt string, v *shWord) {
		if opt == "c" || opt == "command" {
			script = v
		}
	}
	next, stop, bad := spec.sh.skip(w, 1, on)
	if stop || bad != "" || next >= len(w) {
		return shWrapped{reason: shWrapperBad(w, bad)}
	}
	if lock := w[next]; !lock.lit || strings.Trim(lock.text, "0123456789") != "" {
		// flock FILE creates FILE when it is not there: a write (flock FD
		// locks an open descriptor and writes nothing).
		a.writeTarget(lock, *fr)
	}
	// Options may also follow the lock file: flock FILE -c SCRIPT.
	next, stop, bad = spec.sh.skip(w, next+1, on)
	if stop || bad != "" {
		return shWrapped{reason: shWrapperBad(w, bad)}
	}
	if script != nil {
		if !script.lit {
			return shWrapped{reason: "runs a script that is not a literal: " + script.text, info: shCmdInfo{executor: true}}
		}
		a.nested(script.text, syntax.LangBash, *fr, "flock")
		return shWrapped{done: true}
	}
	return shWrapped{rest: w[next:]}
}

// shBusybox handles `busybox APPLET args…`.
func shBusybox(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped {
	if len(w) < 2 || strings.HasPrefix(w[1].text, "-") {
		return shWrapped{}
	}
	return shWrapped{rest: w[1:]}
}

// shWatch handles watch: without -x it joins its arguments with spaces and
// runs them with sh -c, so they are parsed as a script.
func shWatch(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped {
	execMode := false
	next, stop, bad := spec.sh.skip(w, 1, func(opt string, _ *shWord) {
		if opt == "x" || opt == "exec" {
			execMode = true
		}
	})
	if stop || bad != "" || next >= len(w) {
		return shWrapped{reason: shWrapperBad(w, bad)}
	}
	if execMode {
		return shWrapped{rest: w[next:]}
	}
	var b strings.Builder
	for i, x := range w[next:] {
		if !x.lit {
			return shWrapped{reason: "runs a script that is not a literal: " + x.text, info: shCmdInfo{executor: true}}
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(x.text)
	}
	a.nested(b.String(), syntax.LangBash, *fr, "watch")
	return shWrapped{done: true}
}

// shTrap handles `trap ACTION SIGNAL…`: ACTION is a script the shell runs
// later (on EXIT, on a signal), so it is judged now.
func shTrap(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped {
	args := w[1:]
	if len(args) > 0 && args[0].lit && args[0].text == "--" {
		args = args[1:]
	}
	if len(args) < 2 || args[0].lit && (args[0].text == "" || args[0].text == "-" || strings.HasPrefix(args[0].text, "-")) {
		return shWrapped{} // trap -l, trap -p, trap - INT, trap '' INT
	}
	if !args[0].lit {
		return shWrapped{reason: "trap action is not a literal: " + args[0].text, info: shCmdInfo{executor: true}}
	}
	a.nested(args[0].text, syntax.LangBash, *fr, "trap")
	return shWrapped{done: true}
}

// shEval handles eval: its arguments, joined by spaces, are parsed and run
// as a script; with every argument literal that script is analysed.
func shEval(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped {
	args := w[1:]
	if len(args) > 0 && args[0].lit && args[0].text == "--" {
		args = args[1:]
	}
	parts := make([]string, 0, len(args))
	for _, x := range args {
		if !x.lit || x.g != nil {
			return shWrapped{reason: "eval runs a string the policy cannot see", info: shCmdInfo{executor: true}}
		}
		parts = append(parts, x.text)
	}
	if len(parts) == 0 {
		return shWrapped{}
	}
	a.nested(strings.Join(parts, " "), syntax.LangBash, *fr, "eval")
	return shWrapped{done: true}
}

func shSource(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped {
	return shWrapped{reason: w[0].text + " runs a script file the policy cannot see", info: shCmdInfo{executor: true}}
}

// shShell handles sh, bash, zsh and the other shells: with -c the script
// is parsed and judged command by command; without it the shell runs a
// file or its standard input, which the policy cannot see.
func shShell(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped {
	name := path.Base(w[0].text)
	hasC, stdin := false, false
	startup := "" // -l, -i: start-up files run first
	i := 1
scan:
	for i < len(w) {
		t := w[i]
		s := t.text
		switch {
		case !t.lit:
			break scan
		case s == "--":
			i++
			break scan
		case s == "-":
			stdin = true
			i++
			break scan
		case s == "--version" || s == "--help":
			return shWrapped{}
		case s == "--login" || s == "--rcfile" || s == "--init-file" || s == "--interactive":
			startup = shStartupReason(name, s)
			if s == "--rcfile" || s == "--init-file" {
				i++
			}
			i++
		case strings.HasPrefix(s, "--"):
			if !shInertShellLongs[s] && startup == "" {
				startup = name + " " + s + " is an option of the shell the policy does not know"
			}
			i++
		case len(s) > 1 && (s[0] == '-' || s[0] == '+'):
			i = shShellFlags(name, w, i, &hasC, &stdin, &startup) + 1
		default:
			break scan
		}
	}
	info := shCmdInfo{executor: true}
	switch {
	case hasC && i >= len(w):
		return shWrapped{reason: name + " -c has no script", info: info}
	case hasC && !w[i].lit:
		return shWrapped{reason: "runs a script that is not a literal: " + w[i].text, info: info}
	case hasC && ForeignShells[name]:
		return shWrapped{reason: shForeignReason(name), info: info}
	case hasC:
		a.nested(shScriptWithArgs(a, w[i].text, w[i+1:]), shDialect(name), *fr, name)
		if startup != "" {
			a.setUnanalysable(startup)
			a.setUnprefixable(startup)
		}
		return shWrapped{done: true}
	case stdin || i >= len(w):
		info.stdinProgram = true
		return shWrapped{reason: name + " reads its script from standard input", info: info}
	default:
		return shWrapped{reason: "runs a script file the policy cannot see: " + w[i].text, info: info}
	}
}

// shScriptWithArgs returns the script of sh -c SCRIPT ARG0 ARG1…: its
// arguments are its $0, $1…, which the analysis does not follow, so a
// script that reads them ($0, $1, ${2}, "$@", $*) with arguments given is
// not understood and asks (sh -c 'cat "$1"' _ ~/.ssh/id_rsa,
// find . -exec sh -c 'cat "$1"' _ {} \;); deny rules still apply to what
// the analysis sees.
func shScriptWithArgs(a *shAnalyzer, script string, args []shWord) string {
	if len(args) > 0 && shReadsPositional(script) {
		a.setUnanalysable("the script reads its arguments ($0, $1, $@…), which are the words after it (" +
			shQuoteShort(args[0].text) + "…), not followed by the analysis")
	}
	return script
}

// shShellFlags reads the cluster of single-letter options w[i] of a shell
// (-euo pipefail, +x, -c) and returns the index of the last word it used:
// -c and -s are noted, and an option that makes start-up files run or
// changes how the script is read sets startup (the first reason stays).
func shShellFlags(name string, w []shWord, i int, hasC, stdin *bool, startup *string) int {
	s := w[i].text
	note := func(r string) {
		if r != "" && *startup == "" {
			*startup = r
		}
	}
	for j := 1; j < len(s); j++ {
		switch c := s[j]; c {
		case 'c':
			*hasC = true
		case 's':
			*stdin = true
		case 'k':
			if s[0] == '-' {
				*startup = shKeywordReason
			}
		case 'o', 'O':
			// -o NAME is set -o NAME, -O NAME shopt -s NAME: an option
			// that changes how words are read (dotglob, cdable_vars,
			// allexport…) asks, as set and shopt do.
			if i+1 < len(w) {
				note(shInvocationOption(name, s[0], c, w[i+1]))
			}
			i++ // -o pipefail
		case 'l', 'i':
			if s[0] == '-' {
				*startup = shStartupReason(name, s)
			}
		default:
			if !strings.ContainsRune(shInertSetLetters, rune(c)) {
				note(name + " " + string(s[0]) + string(c) + " sets a shell option that changes how the script is read")
			}
		}
	}
	return i
}

// shInertSetLetters are the single-letter options of bash and sh that
// change nothing the analysis assumes: errexit, nounset, xtrace, verbose,
// noexec, noglob, noclobber, errtrace, functrace, hashall, histexpand,
// braceexpand, physical, privileged, restricted.
const shInertSetLetters = "euxvnfCETBhHPpr"

// shInertShellLongs are the long options of bash that change nothing the
// analysis assumes.
var shInertShellLongs = map[string]bool{"--norc": true, "--noprofile": true, "--noediting": true,
	"--restricted": true, "--verbose": true, "--dump-strings": true, "--dump-po-strings": true}

// shInertSetOptions are the set -o names that change nothing the analysis
// assumes.
var shInertSetOptions = map[string]bool{"errexit": true, "nounset": true, "xtrace": true, "verbose": true,
	"pipefail": true, "noexec": true, "noglob": true, "noclobber": true, "errtrace": true, "functrace": true,
	"hashall": true, "histexpand": true, "braceexpand": true, "physical": true, "privileged": true,
	"monitor": true, "notify": true, "ignoreeof": true, "nolog": true, "interactive-comments": true,
	"emacs": true, "vi": true, "history": true}

// shInvocationOption returns why a shell's -o NAME or -O NAME (sign '-'
// sets, '+' unsets) changes how its script is read, or "": keyword asks as
// -k does; a name the analysis knows as harmless, or turning one of those
// off, does not.
func shInvocationOption(shell string, sign, letter byte, v shWord) string {
	if !v.lit {
		return shell + " " + string(sign) + string(letter) + " takes an option name that is not a literal"
	}
	if v.text == "keyword" && sign == '-' {
		return shKeywordReason
	}
	if letter == 'o' && shInertSetOptions[v.text] || letter == 'O' && shHarmlessShopt[v.text] {
		return ""
	}
	return shell + " " + string(sign) + string(letter) + " " + v.text + " changes how the script is read or run"
}

// shReadsPositional reports whether a script's text may expand a
// positional parameter or $0: $N, ${N…}, $@, $*, ${@…}, ${*…}, ${#…}.
func shReadsPositional(script string) bool {
	// for f; do, select f; do, BASH_ARGV, BASH_ARGV0, getopts and shift
	// read the arguments without spelling them; a for or select without
	// in is found by its shape ("for NAME;" or "for NAME do"), loosely:
	// a false match only asks.
	for _, w := range []string{"BASH_ARGV", "BASH_ARGC", "getopts", "shift"} {
		if strings.Contains(script, w) {
			return true
		}
	}
	for _, kw := range []string{"for", "select"} {
		for rest := script; ; {
			i := strings.Index(rest, kw)
			if i < 0 {
				break
			}
			after := strings.Fields(rest[i+len(kw):])
			if len(after) > 0 && (strings.HasSuffix(after[0], ";") || len(after) > 1 && after[1] == "do") {
				return true
			}
			rest = rest[i+len(kw):]
		}
	}
	for i := 0; i+1 < len(script); i++ {
		if script[i] != '$' {
			continue
		}
		c := script[i+1]
		if c >= '0' && c <= '9' || c == '@' || c == '*' {
			return true
		}
		if c == '{' && i+2 < len(script) {
			d := script[i+2]
			if d >= '0' && d <= '9' || d == '@' || d == '*' || d == '#' || d == '!' {
				return true
			}
		}
	}
	return false
}

// shInterpreterInfo describes a command that may run a program (hook:
// interpreter): whether it reads the program from standard input (python
// with no script). Its options with effect code (python -c) give the
// program inline.
func shInterpreterInfo(spec *progSpec, w []shWord) shCmdInfo {
	info := shCmdInfo{executor: true}
	for _, x := range w[1:] {
		s := x.text
		switch {
		case s == "-":
			info.stdinProgram = true
			return info
		case strings.HasPrefix(s, "--"):
			name, _, _ := strings.Cut(s, "=")
			if o := spec.options[name]; o != nil && (o.effect == effCode || o.effect == effStop) {
				return info // inline code, or python3 --version: no program read
			}
		case len(s) > 1 && s[0] == '-':
			for j := 1; j < len(s); j++ {
				if o := spec.options["-"+s[j:j+1]]; o != nil && (o.effect == effCode || o.effect == effStop) {
					return info
				}
			}
		default:
			return info // the program is a file
		}
	}
	info.stdinProgram = true
	return info
}

// shParallel handles GNU parallel: `parallel [options] COMMAND… ::: ARGS`
// runs COMMAND (through a shell) once per argument, and without a command
// the arguments themselves are the command lines. Without ::: it reads
// them from its input, which the policy cannot see.
func shParallel(a *shAnalyzer, w []shWord, fr *shFrame, spec *progSpec) shWrapped {
	for _, x := range fr.wrappers {
		// parallel reads its environment: PARALLEL_ENV runs code before
		// every job, XDG_CONFIG_HOME holds its configuration.
		if n, ok := envAssignedName(x); ok && (!envInertAll[n] && !strings.HasPrefix(n, "LC_") || localeCharset[n] && !safeLocale(x[strings.IndexByte(x, '=')+1:])) {
			return shWrapped{reason: "parallel reads " + n + " from its environment (PARALLEL_ENV runs code before every job, XDG_CONFIG_HOME holds its configuration)"}
		}
	}
	var st wrapState
	next, stop, bad := spec.sh.skip(w, 1, a.wrapperOption(spec, fr, &st))
	if stop || bad != "" || st.reason != "" {
		return shWrapped{reason: shWrapperBad(w, bad) + st.reason}
	}
	sep := len(w)
	for i := next; i < len(w); i++ {
		if w[i].lit && strings.HasPrefix(w[i].text, ":::") && strings.Trim(w[i].text, ":+") == "" {
			sep = i
			break
		}
	}
	template := w[next:sep]
	if len(template) > 0 {
		sub := fr.withWrapper("parallel")
		sub.placeholder, sub.feeder = "{", "parallel"
		return shParallelLines(a, template, parallelArgs(w, sep), &sub)
	}
	if sep == len(w) {
		return shWrapped{reason: "parallel runs command lines it reads from its input", info: shCmdInfo{executor: true}}
	}
	for _, x := range w[sep+1:] {
		if x.lit && strings.HasPrefix(x.text, ":::") && strings.Trim(x.text, ":+") == "" {
			return shWrapped{reason: "parallel combines argument lists into command lines the policy does not build"}
		}
		if r := shJoined(a, []shWord{x}, fr, "parallel"); r.reason != "" {
			return r
		}
	}
	return shWrapped{done: true}
}

// shMaxParallelArgs bounds the command lines parallel's literal
// arguments are judged as.
const shMaxParallelArgs = 16

// parallelArgs returns the arguments of parallel's one ::: list when each
// is a plain literal word (not a pattern), else nil: its input, a file
// (::::), several lists or an expansion are not known.
func parallelArgs(w []shWord, sep int) []string {
	if sep >= len(w) || w[sep].text != ":::" || len(w)-sep-1 > shMaxParallelArgs {
		return nil
	}
	var out []string
	for _, x := range w[sep+1:] {
		if !x.lit || x.g != nil || strings.HasPrefix(x.text, ":::") {
			return nil
		}
		out = append(out, x.text)
	}
	return out
}

// shParallelLines judges the command lines parallel runs from template:
// with known arguments, one per argument, each put (shell-quoted, as
// parallel does) in place of {} or after the template; otherwise the
// template with {} appended when it has no replacement string, so that
// the input it stands for makes the line ask (nested).
func shParallelLines(a *shAnalyzer, template []shWord, args []string, fr *shFrame) shWrapped {
	if args == nil {
		for _, x := range template {
			if strings.Contains(x.text, "{") {
				return shJoined(a, template, fr, "parallel")
			}
		}
		return shJoined(a, append(slices.Clip(template), shWord{text: "{}", lit: true}), fr, "parallel")
	}
	for _, arg := range args {
		q := "'" + strings.ReplaceAll(arg, "'", `'\''`) + "'"
		line := make([]shWord, 0, len(template)+1)
		placed := false
		for _, x := range template {
			if x.lit && strings.Contains(x.text, "{}") {
				x.text, placed = strings.ReplaceAll(x.text, "{}", q), true
			}
			line = append(line, x)
		}
		if !placed {
			line = append(line, shWord{text: q, lit: true})
		}
		if r := shJoined(a, line, fr, "parallel"); r.reason != "" {
			return r
		}
	}
	return shWrapped{done: true}
}

// systemdRunHere reports whether systemd-run's options keep the command in
// the caller's directory: -d, --same-dir, or --scope (a scope runs in the
// caller's context).
func systemdRunHere(opts []shWord) bool {
	for _, o := range opts {
		switch t := o.text; {
		case !o.lit:
		case t == "--same-dir" || t == "--scope":
			return true
		case len(t) > 1 && t[0] == '-' && t[1] != '-' && strings.ContainsRune(t, 'd'):
			return true
		}
	}
	return false
}

package shell

import (
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Safety overrides: critical patterns that force a question with a reason
// even where a rule allows (DESIGN §5). They are found on the command that
// actually runs, so wrappers do not hide them (`sudo rm -rf /`,
// `bash -c 'mkfs.ext4 /dev/sda'`).
//
//   - rm -r (with or without -f, any spelling) of /, /*, a top-level system
//     directory (/usr, /etc…), ~, ~/, ~/*, $HOME, ${HOME}…
//   - fork bombs: a function calling itself in a pipe, in the background,
//     or more than once (:(){ :|:& };:)
//   - fetch-then-execute: curl, wget, fetch, aria2c, http, https or xh
//     piped into a shell or interpreter that reads its program from
//     standard input, or inside a $(…) or <(…) given to a shell, eval,
//     source or an interpreter
//   - writes to /etc/passwd, /etc/shadow, /etc/gshadow, /etc/group,
//     /etc/sudoers and /etc/sudoers.d/*: redirections, tee, cp, mv,
//     install, ln, dd of=, sed -i, perl -i, truncate, shred, time -o
//   - writes to a device under /dev (other than /dev/null, /dev/std*,
//     /dev/tty, /dev/fd/N): redirections and dd of=
//   - mkfs, mkfs.*, mke2fs, mkswap, wipefs
//   - shutdown, reboot, halt, poweroff, init 0|6, telinit 0|6,
//     systemctl/loginctl poweroff|reboot|halt|kexec|soft-reboot

// shExecVars are environment variables that change which program runs or
// make a program run code of the variable's choosing. Assigning one makes
// the commands that follow unanalysable (`PATH=/tmp/evil ls`).
var shExecVars = map[string]bool{
	"PATH": true, "BASH_ENV": true, "ENV": true, "SHELLOPTS": true, "BASHOPTS": true,
	"PROMPT_COMMAND": true, "PS0": true, "PS1": true, "PS2": true, "PS3": true, "PS4": true,
	// Variables that change how bash reads words, finds programs, or what
	// ~ and relative paths mean.
	"IFS": true, "GLOBIGNORE": true, "HOME": true, "CDPATH": true, "PWD": true, "OLDPWD": true,
	"POSIXLY_CORRECT": true, "BASH_CMDS": true, "BASH_ALIASES": true, "BASH_LOADABLES_PATH": true,
	"EXECIGNORE": true, "BASH_COMPAT": true, "BASH_ARGV0": true, "HISTFILE": true, "INPUTRC": true,
	"GIT_SSH": true, "GIT_SSH_COMMAND": true, "GIT_EXTERNAL_DIFF": true, "GIT_PAGER": true,
	"GIT_EDITOR": true, "GIT_ASKPASS": true, "GIT_EXEC_PATH": true, "GIT_PROXY_COMMAND": true,
	"GIT_SEQUENCE_EDITOR": true, "SSH_ASKPASS": true,
	"PAGER": true, "MANPAGER": true, "EDITOR": true, "VISUAL": true, "LESSOPEN": true, "LESSCLOSE": true,
	"PYTHONPATH": true, "PYTHONSTARTUP": true, "PYTHONHOME": true,
	"NODE_OPTIONS": true, "NODE_PATH": true,
	"PERL5OPT": true, "PERL5LIB": true, "PERLLIB": true, "RUBYOPT": true, "RUBYLIB": true,
	"JAVA_TOOL_OPTIONS": true, "_JAVA_OPTIONS": true, "JDK_JAVA_OPTIONS": true, "RUSTC_WRAPPER": true,
	// The C library's and the loader's: GCONV_PATH makes any program
	// that converts a character set (iconv, and every program calling
	// iconv_open) load a shared object from the directory it names, as
	// LD_PRELOAD does; getconf runs programs from GETCONF_DIR; NLSPATH
	// and LOCPATH give the message catalogues and locales (format strings
	// and tables the program trusts).
	"GCONV_PATH": true, "GETCONF_DIR": true, "NLSPATH": true, "LOCPATH": true, "GLIBC_TUNABLES": true,
	"MALLOC_CONF": true, "HOSTALIASES": true, "RESOLV_HOST_CONF": true,
	// Libraries that load code their configuration names: OpenSSL's
	// engines and providers are shared objects; SSLKEYLOGFILE makes TLS
	// clients write their keys to a file.
	"OPENSSL_CONF": true, "OPENSSL_ENGINES": true, "OPENSSL_MODULES": true, "SSLKEYLOGFILE": true,
	// Interpreters and clients that run start-up code or hooks.
	"PSQLRC": true, "TCLLIBPATH": true,
	"GUILE_LOAD_PATH": true, "DOTNET_STARTUP_HOOKS": true, "ELECTRON_RUN_AS_NODE": true,
	// The shell a wrapper runs its script with (flock -c, script -c,
	// parallel, make's recipes: $SHELL -c SCRIPT).
	"SHELL": true, "PARALLEL_SHELL": true,
}

// shExecVarPrefixes are families of such variables: npm, pnpm and yarn 1
// read every npm_config_* (any case) as configuration, where
// script-shell, userconfig and node-options run code; yarn 2+ reads
// YARN_* (YARN_YARN_PATH is the JavaScript file it runs); cargo reads
// CARGO_TARGET_<triple>_RUNNER and _LINKER, and CARGO_BUILD_RUSTC_WRAPPER.
// LUA_INIT*, LUA_PATH* and LUA_CPATH* run or load Lua code; CORECLR_
// loads .NET profilers.
var shExecVarPrefixes = []string{"LD_", "DYLD_", "BASH_FUNC_", "GIT_CONFIG",
	"CARGO_TARGET_", "CARGO_BUILD_", "LUA_INIT", "LUA_PATH",
	"LUA_CPATH", "CORECLR_"}

// shExecVarFoldedPrefixes are such families whose programs compare the
// name in any case: npm matches /^npm_config_/i (red team AN F3:
// Npm_Config_Git=./x.sh ran x.sh), yarn 2+ lower-cases YARN_* keys.
var shExecVarFoldedPrefixes = []string{"npm_config_", "yarn_"}

// shExecVarSuffixes are endings of variables that name a program a tool
// runs: a pager (GIT_PAGER, BAT_PAGER, AWS_PAGER, SYSTEMD_PAGER), an
// editor (SYSTEMD_EDITOR, GH_EDITOR), a password prompt (SUDO_ASKPASS), a
// browser (BROWSER, GH_BROWSER), a remote shell (RSYNC_RSH, CVS_RSH).
var shExecVarSuffixes = []string{"PAGER", "EDITOR", "ASKPASS", "BROWSER", "_RSH"}

// shExecVar reports whether assigning name changes what later commands run.
func shExecVar(name string) bool {
	if shExecVars[name] || zshExecParams[name] || programEnvVar(name) {
		return true
	}
	for _, p := range shExecVarPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	for _, p := range shExecVarFoldedPrefixes {
		if len(name) >= len(p) && strings.EqualFold(name[:len(p)], p) {
			return true
		}
	}
	for _, p := range shExecVarSuffixes {
		if strings.HasSuffix(name, p) {
			return true
		}
	}
	return false
}

func shExecVarReason(name string) string {
	return "sets " + name + ", which changes what the command runs"
}

// shBuiltinUnanalysable returns why a builtin changes what later commands
// run in a way the analysis cannot follow, or "".
func shBuiltinUnanalysable(words []string) string {
	args := words[1:]
	if shArithBuiltins[words[0]] {
		for _, s := range args {
			if shSubscriptCode(s) {
				// [ -v 'a[$(id)]' ], v=-v; [ $v 'a[$(id)]' ], zsh's
				// exit 'a[$(id)]': the subscript is arithmetic, whose
				// command substitution runs.
				return words[0] + " may evaluate " + strconv.Quote(s) + " as arithmetic, whose subscript runs a command"
			}
		}
	}
	switch words[0] {
	case "alias":
		for _, s := range args {
			if strings.Contains(s, "=") {
				return "alias defines a command the policy cannot follow"
			}
		}
	case "hash":
		for _, s := range args {
			if len(s) > 1 && s[0] == '-' && strings.IndexAny(s, "pd") > 0 {
				return "hash -p (bash) and hash -d (zsh) change which program a name runs or where ~name points"
			}
			if strings.Contains(s, "=") {
				return "hash name=path (zsh) changes which program a name runs"
			}
		}
	case "enable":
		for _, s := range args {
			if len(s) > 1 && s[0] == '-' && strings.IndexByte(s, 'f') > 0 {
				return "enable -f loads a builtin from a shared library"
			}
		}
	case "read", "mapfile", "readarray", "printf", "getopts":
		for _, s := range args {
			// zsh's read takes name?prompt (read 'PATH?dir: ').
			if name, _, _ := strings.Cut(s, "?"); shExecVar(s) || words[0] == "read" && shExecVar(name) {
				return words[0] + " assigns " + name + ", which changes what later commands run"
			}
		}
	}
	return ""
}

// shArithBuiltins are the builtins that evaluate an argument as
// arithmetic in bash or zsh (a number, a variable name with -v, a
// subscript): test and [ (-v, and zsh's numeric operands), exit, return,
// break, continue, shift, read (-t, -n, -u), printf (zsh's %d), ulimit,
// kill, wait, umask, fc, history.
var shArithBuiltins = map[string]bool{
	"test": true, "[": true, "exit": true, "return": true, "break": true, "continue": true,
	"shift": true, "read": true, "printf": true, "ulimit": true, "kill": true, "wait": true,
	"umask": true, "fc": true, "history": true,
}

// shSubscriptCode reports an argument holding a subscript with code in
// it: a '[' and a command or arithmetic substitution ("a[$(id)]",
// "x[`id`]").
func shSubscriptCode(s string) bool {
	return strings.Contains(s, "[") && (strings.Contains(s, "$(") || strings.Contains(s, "`"))
}

// shFetchers download content from the network.
var shFetchers = map[string]bool{
	"curl": true, "wget": true, "fetch": true, "aria2c": true, "http": true, "https": true, "xh": true,
}

// shProtectedFiles are the account and privilege files whose modification
// hands over the machine.
var shProtectedFiles = map[string]bool{
	"/etc/passwd": true, "/etc/shadow": true, "/etc/gshadow": true, "/etc/group": true, "/etc/sudoers": true,
}

// shProtectedFileList is shProtectedFiles in a fixed order, for the
// glob check that names the first one a pattern could write: a map's
// order would name a different file from one call to the next.
var shProtectedFileList = slices.Sorted(maps.Keys(shProtectedFiles))

// shProtectedWrite returns the safety reason for writing the cleaned path
// p, or "".
func shProtectedWrite(p string) string {
	if lp := strings.ToLower(p); shProtectedFiles[lp] || strings.HasPrefix(lp, "/etc/sudoers.d/") {
		return "writes to " + p
	}
	return ""
}

// shSystemDirs are the top-level directories whose recursive removal
// breaks the machine.
var shSystemDirs = map[string]bool{
	"/bin": true, "/boot": true, "/dev": true, "/etc": true, "/home": true, "/lib": true,
	"/lib32": true, "/lib64": true, "/libx32": true, "/opt": true, "/proc": true, "/root": true,
	"/run": true, "/sbin": true, "/srv": true, "/sys": true, "/usr": true, "/var": true,
	"/Users": true, "/System": true, "/Library": true, "/Applications": true, "/private": true,
}

// commandSafety adds the safety reasons of one resolved command; words
// are its words as analysed (c.Words with what quoting did to them).
func (a *shAnalyzer) commandSafety(c *Command, words []shWord) {
	name, args := c.Name, c.Words[1:]
	switch {
	case name == "rm":
		a.rmSafety(words[1:])
	case name == "mkfs" || strings.HasPrefix(name, "mkfs.") || name == "mke2fs" || name == "mkswap" || name == "wipefs":
		a.addSafety(name + " formats or wipes a filesystem")
	case name == "dd":
		for _, s := range args {
			if v, ok := strings.CutPrefix(s, "of="); ok {
				a.deviceOrProtected("dd", path.Clean(v))
			}
		}
	case name == "shutdown" || name == "reboot" || name == "halt" || name == "poweroff":
		a.addSafety(name + " shuts down or restarts the host")
	case name == "init" || name == "telinit":
		if len(args) > 0 && (args[0] == "0" || args[0] == "6") {
			a.addSafety(name + " " + args[0] + " shuts down or restarts the host")
		}
	case name == "systemctl" || name == "loginctl":
		// The verb is the first operand: systemctl --force reboot.
		for _, s := range args {
			if strings.HasPrefix(s, "-") {
				continue
			}
			switch s {
			case "poweroff", "reboot", "halt", "kexec", "soft-reboot":
				a.addSafety(name + " " + s + " shuts down or restarts the host")
			}
			return
		}
	case name == "cp" || name == "mv" || name == "install" || name == "ln":
		a.copySafety(args)
	case name == "sed" || name == "perl":
		inPlace := false
		for _, s := range args {
			if strings.HasPrefix(s, "--in-place") || len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.IndexByte(s, 'i') > 0 {
				inPlace = true
			}
		}
		if inPlace {
			a.operandsProtected(args)
		}
	case name == "truncate" || name == "shred":
		a.operandsProtected(args)
	}
}

// deviceOrProtected flags a write by cmd of the cleaned path p.
func (a *shAnalyzer) deviceOrProtected(cmd, p string) {
	if r := shProtectedWrite(p); r != "" {
		a.addSafety(r)
	} else if strings.HasPrefix(p, "/dev/") && !shHarmlessSink(p) && p != "/dev/zero" {
		a.addSafety(cmd + " writes to the device " + p)
	}
}

func (a *shAnalyzer) operandsProtected(args []string) {
	for _, s := range args {
		if !strings.HasPrefix(s, "-") {
			if r := shProtectedWrite(path.Clean(s)); r != "" {
				a.addSafety(r)
			}
		}
	}
}

// copySafety flags cp, mv, install and ln whose destination is a protected
// file, named directly or as a directory the source's name is put into.
func (a *shAnalyzer) copySafety(args []string) {
	var ops []string
	dir := ""
	opts := true
	for i := 0; i < len(args); i++ {
		s := args[i]
		switch {
		case opts && s == "--":
			opts = false
		case opts && (s == "-t" || s == "--target-directory") && i+1 < len(args):
			i++
			dir = args[i]
		case opts && strings.HasPrefix(s, "--target-directory="):
			dir = strings.TrimPrefix(s, "--target-directory=")
		case opts && strings.HasPrefix(s, "-t") && len(s) > 2:
			dir = s[2:]
		case opts && strings.HasPrefix(s, "-") && len(s) > 1:
		default:
			ops = append(ops, s)
		}
	}
	if dir == "" && len(ops) >= 2 {
		dst := path.Clean(ops[len(ops)-1])
		if r := shProtectedWrite(dst); r != "" {
			a.addSafety(r)
			return
		}
		dir, ops = dst, ops[:len(ops)-1]
	}
	if dir == "" {
		return
	}
	for _, src := range ops {
		if r := shProtectedWrite(path.Join(path.Clean(dir), path.Base(src))); r != "" {
			a.addSafety(r)
		}
	}
}

// rmSafety flags a recursive rm of the filesystem root, a system directory
// or the home directory. GNU rm takes options anywhere before "--". A
// quoted ~ is a directory of that name here (rm -rf '~'), not the home.
func (a *shAnalyzer) rmSafety(args []shWord) {
	recursive := false
	var targets []shWord
	opts := true
	for _, w := range args {
		s := w.text
		switch {
		case opts && s == "--":
			opts = false
		case opts && strings.HasPrefix(s, "--"):
			if s == "--recursive" {
				recursive = true
			}
		case opts && len(s) > 1 && s[0] == '-':
			if strings.ContainsAny(s[1:], "rR") {
				recursive = true
			}
		default:
			targets = append(targets, w)
		}
	}
	if !recursive {
		return
	}
	for _, t := range targets {
		if what := shCriticalRmTarget(t.pathText()); what != "" {
			a.addSafety("rm -r " + t.text + " deletes " + what)
		}
	}
}

// shCriticalRmTarget names what removing t destroys, or "". t is the word
// as analysed: quote-removed, or the source text of a word with an
// expansion ("$HOME", "${HOME}/").
func shCriticalRmTarget(t string) string {
	s := strings.ReplaceAll(t, `"`, "")
	for _, p := range [...]string{"${HOME}", "$HOME"} {
		if rest, ok := strings.CutPrefix(s, p); ok && (rest == "" || rest[0] == '/') {
			s = "~" + rest
			break
		}
	}
	if s == "~" || strings.HasPrefix(s, "~/") {
		switch path.Clean("/" + s[1:]) {
		case "/", "/*", "/..":
			return "the home directory"
		}
		return ""
	}
	if !strings.HasPrefix(s, "/") {
		return ""
	}
	c := path.Clean(s)
	if c == "/" || c == "/*" {
		return "the whole filesystem"
	}
	if shSystemDirs[strings.TrimSuffix(c, "/*")] {
		return "the system directory " + strings.TrimSuffix(c, "/*")
	}
	return ""
}

// checkForkBombs flags functions that call themselves in a pipe, in the
// background, or more than once.
func (a *shAnalyzer) checkForkBombs() {
	if len(a.funcs) == 0 {
		return
	}
	// Index the calls of declared names once: hostile input may declare
	// thousands of functions.
	calls := map[string][]int{}
	for _, f := range a.funcs {
		for _, n := range shFuncNames(f) {
			calls[n.Value] = nil
		}
	}
	for i, c := range a.res.Commands {
		if c.Redirect || len(c.Words) == 0 {
			continue
		}
		if list, ok := calls[c.Words[0]]; ok {
			calls[c.Words[0]] = append(list, i)
		}
	}
	flagged := map[string]bool{}
	for _, f := range a.funcs {
		body := shSpanOf(f.Body)
		for _, n := range shFuncNames(f) {
			if flagged[n.Value] {
				continue
			}
			self, risky := 0, false
			for _, i := range calls[n.Value] {
				if body.contains(a.info[i].span) {
					self++
					risky = risky || a.info[i].piped
				}
			}
			if self >= 2 || self == 1 && risky {
				flagged[n.Value] = true
				a.addSafety("fork bomb: function " + n.Value + " calls itself recursively in a pipe or in the background")
			}
		}
	}
}

// finishFuncs judges the functions a script declares. One named like a
// program the table models or a builtin (cat() { …; }, git(), find(),
// cd()) makes its calls something other than what the model says — the
// here-document cat prints, the hex git rev-parse prints, the paths find
// feeds — so the script is not understood. And a function is called with
// arguments the analysis does not bind to its body: there "$1", "$@" and
// a for loop without in (over "$@") are any value.
func (a *shAnalyzer) finishFuncs() {
	if len(a.funcs) == 0 {
		return
	}
	for _, f := range a.funcs {
		for _, n := range shFuncNames(f) {
			if a.progs.lookup(n.Value) != nil || shShadowable[n.Value] {
				a.codeUnknown("function " + n.Value + " shadows a program or builtin the policy models, so its calls are not what they seem")
				return
			}
		}
	}
	if a.unknownVals == nil {
		a.unknownVals = map[string]bool{}
	}
	a.unknownVals["@"] = true
}

// shShadowable are builtins and keywords-like commands a function may
// shadow (beyond the program table's entries).
var shShadowable = map[string]bool{"cd": true, "pwd": true, "read": true, "test": true, "[": true, "source": true,
	".": true, "eval": true, "exec": true, "command": true, "builtin": true, "type": true, "export": true,
	"declare": true, "typeset": true, "local": true, "readonly": true, "set": true, "shopt": true, "trap": true,
	"true": true, "false": true, "exit": true, "return": true, "shift": true, "wait": true, "kill": true,
	"ulimit": true, "umask": true, "alias": true, "unalias": true, "hash": true, "history": true, "printf": true,
	"echo": true, "let": true, "unset": true, "mapfile": true, "readarray": true, "getopts": true, "pushd": true,
	"popd": true, "dirs": true, "enable": true, "jobs": true, "fg": true, "bg": true, "disown": true}

// shFuncNames returns the names a function declaration declares.
func shFuncNames(f *syntax.FuncDecl) []*syntax.Lit {
	if f.Name != nil {
		return []*syntax.Lit{f.Name}
	}
	return f.Names
}

// checkFetchExecute flags downloaded content run as a program: a download
// piped into a program that reads its program from standard input, or a
// substitution holding a download given to a shell, eval, source or an
// interpreter.
func (a *shAnalyzer) checkFetchExecute() {
	var fetches, stdins []int
	for i, c := range a.res.Commands {
		if !c.Redirect && shFetchers[c.Name] {
			fetches = append(fetches, i)
		}
		if a.info[i].stdinProgram {
			stdins = append(stdins, i)
		}
	}
	if len(fetches) == 0 {
		return
	}
	// fetchIn returns the name of a download command inside sp, or "".
	fetchIn := func(sp shSpan) string {
		for _, i := range fetches {
			if sp.contains(a.info[i].span) {
				return a.res.Commands[i].Name
			}
		}
		return ""
	}
	if len(stdins) > 0 {
		for _, p := range a.pipes {
			fetch := fetchIn(shSpanOf(p.X))
			if fetch == "" {
				continue
			}
			y := shSpanOf(p.Y)
			for _, i := range stdins {
				if y.contains(a.info[i].span) {
					a.addSafety("fetch-then-execute: " + a.res.Commands[i].Name + " runs what " + fetch + " downloads")
					break
				}
			}
		}
	}
	for i, c := range a.res.Commands {
		if !a.info[i].executor {
			continue
		}
		for _, s := range a.substs {
			if !a.info[i].span.contains(s) {
				continue
			}
			if fetch := fetchIn(s); fetch != "" {
				a.addSafety("fetch-then-execute: " + c.Name + " runs what " + fetch + " downloads")
				break
			}
		}
	}
}

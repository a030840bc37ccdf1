package shell

import (
	_ "embed"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
	"github.com/signoff-dev/signoff/pkg/policy/internal/yamlconf"
)

// The program table: what the policy knows about programs beyond their
// name. It is data (programs.yaml, embedded, listed in docs/POLICY.md), and
// a policy file can extend or override it under programs:. Per program it
// says
//
//   - arity: how many leading words form the command prefix an "Always"
//     answer grants (git push → 2), per sub-command when it differs;
//   - global: the options that may come before the sub-command (git -C
//     DIR); they are skipped when rules are matched and "Always" patterns
//     built, so `git -C dir status` matches `git status *`; global_first:
//     they come only there (git, docker), while kubectl's come anywhere;
//   - options and operands with an effect: they read or write a path
//     (sort -o FILE, cp SRC DST), run a command line (rg --pre PROG, tar
//     --to-command=CMD: judged as the commands they run), run program text
//     in another language (python -c: asks), make the command ask
//     (git -c core.pager=…), or make its reads and writes recursive
//     (grep -r, cp -r);
//   - wrapper: the program runs another command (nohup, chrt, sudo…): how
//     to find it, and whether it runs elevated;
//   - hook: a named Go procedure for what a table cannot say (sed and awk
//     programs, tar's mode letters, sudo's VAR=value operands…).

//go:embed programs.yaml
var builtinProgramsYAML []byte

// effect is what an option or operand does.
type effect uint8

const (
	effNone effect = iota
	// effRead: the value is a path the program reads.
	effRead
	// effWrite: the value is a path the program writes.
	effWrite
	// effRun: the value is a command line the program runs; it is judged
	// as the commands it holds.
	effRun
	// effCode: the value is a program in a language the policy does not
	// analyse (python -c, perl -e): the command asks.
	effCode
	// effAsk: the option makes the command ask, with the entry's reason.
	effAsk
	// effRecursive: the program's reads and writes cover whole trees.
	effRecursive
	// effInPlace: the program rewrites its file operands (sed -i).
	effInPlace
	// effPattern: the option gives the pattern (grep -e), so every operand
	// is a path.
	effPattern
	// effStop: with this option the program runs no command (sudo -l,
	// taskset -p): a wrapper is judged as itself.
	effStop
	// effUnelevate: the option makes an elevating wrapper run as the
	// calling user (systemd-run --user).
	effUnelevate
	// effScript: the value is a shell script the wrapper runs (su -c,
	// script -c): judged command by command.
	effScript
	// effChdir: the value is the directory the program works in (git -C,
	// make -C): its relative paths resolve there. On a wrapper (env -C,
	// sudo -D) the wrapped command's paths can no longer be placed: ask.
	effChdir
	// effFilter: the value is a file-name pattern (find -name, rg -g, grep
	// --include): a recursive program reads the files it matches under the
	// paths it searches, judged as a read of PATH/**/PATTERN.
	effFilter
	// effList: the value (standard input when the option takes none, or
	// when it is "-") is a list of the files the program reads or writes
	// (tar -T, --files0-from, rsync --files-from, zip -@). The list is
	// read; the files it names are not on the command line, so the
	// command asks.
	effList
	// effDocument: the value is a file the program reads as a document
	// whose requests read other files (roff's .so, man FILE): it is read,
	// and the command asks.
	effDocument
	// effFilterAny: the value selects the files read by something other
	// than a name pattern the analysis reads (find -regex, rg -t TYPE
	// unless a built-in type, rg --type-add): any name, judged as a
	// computed value that meets every read rule.
	effFilterAny
	// effModule: the value names code the program runs from its search
	// path (python -m MOD): the program's options end there, and every
	// later word is an argument of that code, read as a path.
	effModule
	// effJoined: with this flag the wrapper joins the words of its
	// command by spaces and runs them as one shell script (pnpm exec -c,
	// --shell-mode): judged command by command, as watch's.
	effJoined
	// effElsewhere: with this flag the wrapper runs its command in
	// directories the policy cannot know (pnpm exec -r: in every package
	// of the workspace): its relative paths are judged as under any
	// directory, as after an unknown cd.
	effElsewhere
	// effPrefix: the value starts the names of the files the program
	// writes (split PREFIX writes PREFIXaa, PREFIXab…): a write of every
	// name that starts with it.
	effPrefix
	// effBackup: the value is the suffix of the backup copies the
	// program makes of the files it writes (cp -b -S SUFFIX, patch -z,
	// tar --suffix): each written path with it appended is written too.
	effBackup
	// effWriteDir: the value is a file the program writes or a directory
	// it writes files into (go build -o DIR/, go test -outputdir, sort -T):
	// a write of it and of the tree under it.
	effWriteDir
	// effReadDir: the value is a directory the program reads files of
	// (rsync --copy-dest, --compare-dest): a read of the tree under it.
	effReadDir
	// effTargetDir: the value is the directory the program puts its
	// operands into (cp -t DIR, mv -t, install -t, ln -t): a write of it
	// and of its tree, and every operand is a source — the last one too,
	// which the entry's last: position would otherwise take for the
	// destination.
	effTargetDir
)

var effectNames = map[string]effect{
	"none": effNone, "read": effRead, "write": effWrite, "run": effRun, "code": effCode,
	"ask": effAsk, "recursive": effRecursive, "in-place": effInPlace, "pattern": effPattern,
	"stop": effStop, "unelevate": effUnelevate, "script": effScript, "chdir": effChdir,
	"filter": effFilter, "filter-any": effFilterAny, "list": effList, "document": effDocument,
	"module": effModule, "joined": effJoined, "elsewhere": effElsewhere, "write-prefix": effPrefix,
	"backup-suffix": effBackup, "write-dir": effWriteDir, "read-dir": effReadDir,
	"target-dir": effTargetDir,
}

// operandEffects are the effects an operand position may have.
var operandEffects = []string{"none", "read", "write", "write-prefix", "run", "code", "ask", "pattern", "document"}

func (e effect) String() string {
	for n, v := range effectNames {
		if v == e {
			return n
		}
	}
	return "effect(" + strconv.Itoa(int(e)) + ")"
}

// optValue says whether an option takes a value.
type optValue uint8

const (
	valNone     optValue = iota
	valRequired          // "-o=": attached or the next word
	valOptional          // "-d=?": attached only (--color[=WHEN])
)

// progOption is one option of a program.
type progOption struct {
	name   string // as spelled: "-o", "--output", "-toolexec", "+"
	value  optValue
	effect effect
	reason string
	// when: the effect applies only when the value matches one of these
	// shell patterns; unless: it applies except when it matches one.
	// Values and patterns are compared in lower case.
	when, unless []string
	// pathAfter: the path read or written is the part of the value after
	// the first of these markers (curl -d @FILE: "@", -F NAME=@FILE and
	// NAME=<FILE: "=@", "=<"), up to the first character of pathUntil
	// (-F NAME=@FILE;type=…: ";"). A value without a marker names no
	// path.
	pathAfter []string
	pathUntil string
	// flags: the value is a list of another tool's flags (go -ldflags,
	// -gcflags: "[PATTERN=]-s -w -X a.b=c"), and these are the ones that
	// change nothing the policy judges, spelled as options ("-X=" takes
	// a value); any other flag, or a value that is not a literal, asks.
	flags map[string]optValue
	// pipes: the value, when it starts with | or !, names a command the
	// program pipes its output into instead of a file (strace -o '|cmd').
	// Only an option the table marks so is read that way: a write value
	// the analysis cannot read asks for it alone.
	pipes bool
	// appends: the program an option of effect run names is run with
	// arguments of the runner's appended (rg --pre PROG runs PROG FILE
	// for every file it searches), judged as input the policy cannot see.
	appends bool
}

// unknownFlag returns the first flag of the value v of an option with
// flags: that the list does not know ("" when it knows every one), or
// v itself when it is not a literal.
func (o *progOption) unknownFlag(v shWord) string {
	if !v.lit || v.g != nil {
		return v.text
	}
	s := v.text
	if i := strings.IndexByte(s, '='); i > 0 && !strings.HasPrefix(s, "-") && !strings.ContainsAny(s[:i], " '\"") {
		s = s[i+1:] // the package pattern: all=-N -l
	}
	if strings.ContainsAny(s, "'\"\\") {
		return s // quoted fields: split by go's rules, not followed here
	}
	fields := strings.Fields(s)
	for i := 0; i < len(fields); i++ {
		name, _, attached := strings.Cut(fields[i], "=")
		val, ok := o.flags[name]
		if !ok {
			val, ok = o.flags["-"+strings.TrimLeft(name, "-")]
		}
		if !ok || val == valNone && attached {
			return fields[i]
		}
		if val == valRequired && !attached {
			i++ // -X importpath.name=value
		}
	}
	return ""
}

// pathOf returns the path a value of the option names, and whether it
// names one.
func (o *progOption) pathOf(v string) (string, bool) {
	if o.pathAfter == nil {
		return v, true
	}
	at := -1
	var marker string
	lv := strings.ToLower(v) // programs read keys in any case (buildx's Dest=)
	for _, m := range o.pathAfter {
		if i := strings.Index(lv, strings.ToLower(m)); i >= 0 && (at < 0 || i < at) {
			at, marker = i, m
		}
	}
	if at < 0 {
		return "", false
	}
	p := v[at+len(marker):]
	if i := strings.IndexAny(p, o.pathUntil); o.pathUntil != "" && i >= 0 {
		p = p[:i]
	}
	return p, true
}

// appliesTo reports whether the option's effect applies to value v.
//
// A value is read as programs read theirs: a when pattern also meets the
// value without leading blanks (ssh skips them: ' ProxyCommand=…'), and a
// literal when value also meets its prefixes (getopt's argmatch takes a
// unique prefix: grep -d rec is -d recurse). An unless exception holds
// for the value as written only.
func (o *progOption) appliesTo(v string) bool {
	lv := strings.ToLower(v)
	if len(o.when) > 0 {
		tv := strings.TrimLeft(lv, " \t")
		if !slices.ContainsFunc(o.when, func(p string) bool {
			return globs.Match(p, lv) || globs.Match(p, tv) ||
				tv != "" && !strings.ContainsAny(p, "*?[") && strings.HasPrefix(p, tv)
		}) {
			return false
		}
	}
	return !slices.ContainsFunc(o.unless, func(p string) bool { return globs.Match(p, lv) })
}

// operand positions.
const (
	posAll   = -1 // every operand
	posFirst = -2
	posLast  = -3
	posRest  = -4 // all but the first
	posInit  = -5 // all but the last
	posKey   = -6 // KEY=value operands (dd of=FILE)
)

// progOperand is the effect of operands at a position.
type progOperand struct {
	pos    int // 1-based index, or one of the pos* constants
	key    string
	effect effect
	reason string
	// when: the effect applies only to operands matching one of these
	// shell patterns (lower case), as for options.
	when []string
}

// optStyle is how a program spells its options.
type optStyle uint8

const (
	// styleGNU: getopt_long; short options cluster (-uo FILE), long ones
	// take "=value" or the next word, and unambiguous prefixes of long
	// options are accepted (--outp=FILE).
	styleGNU optStyle = iota
	// styleSingle: every option is one word led by one or two dashes, its
	// value after '=' or in the next word (go -toolexec, find -fprint).
	styleSingle
	// styleNone: the program takes no options; every word is an operand.
	styleNone
	// styleNext: as gnu, but the program reads its short options itself:
	// each letter of a cluster that takes a value takes the next word, in
	// order, never the rest of the cluster (tree -Lo 1 FILE is -L 1 -o
	// FILE, tree -ion FILE is -i -o FILE -n).
	styleNext
)

// wrapperSpec says how a wrapper finds the command it runs.
type wrapperSpec struct {
	// operands is how many operands come before the command (chroot
	// NEWROOT, taskset MASK, chrt PRIORITY).
	operands int
	// elevated: the command runs with other privileges.
	elevated bool
	// joined: the words after the operands are joined by spaces and run
	// as one shell script (sg GROUP CMD…, watch).
	joined bool
	// afterDashes: the command is the words after "--", wherever the
	// options and operands before it end (kubectl exec POD -c C -- CMD).
	afterDashes bool
	// verb: the sub-command runs a command only after this operand, and
	// its own options (git bisect run CMD, git submodule foreach
	// --recursive CMD); with another first operand it runs none.
	verb string
	// elsewhere: the command runs in directories the policy cannot know
	// (git submodule foreach: each submodule's), so its relative paths
	// are judged as under any directory, as after an unknown cd.
	elsewhere bool
	// packages: the runner looks the command up in package and project
	// bin directories first (npx, uv run, bundle exec), and may install
	// it: the command is a program of its own, so the runner is judged
	// as a command too, besides the command it runs.
	packages bool
}

// progSpec is one program's entry.
type progSpec struct {
	name  string
	arity int // 0 = 1
	// subArity and subs: by sub-command (the first operand after the
	// global options).
	subs     map[string]*progSpec
	global   map[string]*progOption
	options  map[string]*progOption
	longs    []string // long option names of options and global, sorted
	operands []progOperand
	style    optStyle
	// optionsFirst: the first operand ends the options (python SCRIPT
	// ARGS…: the script's arguments are not python's). Wrappers always
	// read options first; other programs take options anywhere (GNU).
	optionsFirst bool
	// globalFirst: the global options come only before the sub-command;
	// after it the same spelling is the sub-command's own option (git
	// switch -c, docker run -H), not looked up among the globals.
	globalFirst bool
	wrapper     *wrapperSpec
	hook        string
	elevated    bool
	// recursive: the program always reads or writes whole trees (rg,
	// find), not only with an option.
	recursive bool
	// writeTree: the paths the program writes may be directories it
	// writes files into (cp a DIR, cp -t DIR): they are judged as trees.
	writeTree bool
	// neverAlways: an "Always" answer never grants this program by prefix
	// (interpreters, shells: `python *` would grant any program).
	neverAlways bool
	// env are variables that make the program run code of their choosing
	// (RIPGREP_CONFIG_PATH): assigning one makes later commands
	// unanalysable.
	env []string
	// envInert are the environment variables a complete entry's program
	// reads that change nothing the policy judges (GIT_AUTHOR_NAME); with
	// envInertAll, setting any other variable for the program is not
	// understood (it asks).
	envInert []string
	// sh is the getopt view of the options, for wrappers and hooks.
	sh *shOpts
	// complete: the entry lists every option the program accepts (and,
	// with subs, every sub-command): a word it does not list makes the
	// command not understood, so it asks. Checked against the installed
	// program's own help (TestCompleteTablesMatchHelp).
	complete bool
	// closed: the entry lists every sub-command (not every option) of a
	// program whose help the tests cannot read here (terraform, docker):
	// another sub-command — a plugin found on the PATH, a new version's
	// verb — is not understood and asks. With complete too (kubectl,
	// helm), every option is listed, and the operands are still read as
	// an unknown program's (progUse.openOperands).
	closed bool
	// runsCode: the program or sub-command runs the project's code or
	// writes its outputs (go test, go build): its words are understood,
	// but it is never inert, so an "Always" answer grants it only exactly.
	runsCode bool
	// runsHooks: the sub-command runs hooks whose scripts are files the
	// agent may write (git commit): its own effects are its words, but
	// what it runs besides is in files (Command.RunsFiles).
	runsHooks bool
	// writesCwd: without an option that names what it writes (-o), the
	// sub-command writes into its working directory (go build writes the
	// binary there, and go -C DIR moves it).
	writesCwd bool
}

// Programs maps program names to their entries.
type Programs struct {
	byName map[string]*progSpec
	// shells caches analyses of scripts under this table (shell_cache.go).
	shells *shellCache
}

// lookup finds a program's entry; a versioned name falls back to its
// family (python3.12 → python3, pip3.11 → pip3).
func (t *Programs) lookup(name string) *progSpec {
	if t == nil {
		return nil
	}
	if s := t.byName[name]; s != nil {
		return s
	}
	base := strings.TrimRight(name, "0123456789.")
	if base != name && base != "" && strings.Contains(name[len(base):], ".") {
		return t.byName[strings.TrimSuffix(name, name[len(base):])+strings.SplitN(name[len(base):], ".", 2)[0]]
	}
	return nil
}

// BuiltinPrograms is the embedded table; a panic at first use means the
// embedded file is broken, which the tests catch.
var BuiltinPrograms = sync.OnceValue(func() *Programs {
	d := &yamlconf.Decoder{File: "programs.yaml"}
	var doc yaml.Node
	if err := yaml.Unmarshal(builtinProgramsYAML, &doc); err != nil {
		panic("policy: built-in programs.yaml: " + err.Error())
	}
	ms, err := d.Mapping(doc.Content[0], "", []string{"programs"})
	if err != nil {
		panic("policy: built-in " + err.Error())
	}
	t, err := DecodePrograms(d, ms[0].Val, "programs", nil)
	if err != nil {
		panic("policy: built-in " + err.Error())
	}
	return t
})

// progDecoder decodes the programs: section of a policy file or of the
// built-in table.
type progDecoder struct {
	*yamlconf.Decoder
}

// DecodePrograms decodes a programs: mapping. base, when not nil, is the
// table the entries extend (the built-in one, for a policy file).
func DecodePrograms(d *yamlconf.Decoder, n *yaml.Node, where string, base *Programs) (*Programs, error) {
	t := &Programs{byName: map[string]*progSpec{}, shells: newShellCache()}
	if err := (&progDecoder{d}).programs(n, where, t, base); err != nil {
		return nil, err
	}
	return t, nil
}

// Knows reports whether the table describes the program name.
func (t *Programs) Knows(name string) bool { return t.lookup(name) != nil }

// Elevates reports whether the table marks the program name as raising
// privileges, itself or as a wrapper (sudo, doas).
func (t *Programs) Elevates(name string) bool {
	s := t.lookup(name)
	return s != nil && (s.elevated || s.wrapper != nil && s.wrapper.elevated)
}

// builtinEnvVars are the variables the built-in table's entries name under
// env:, for shExecVar.
var builtinEnvVars = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, s := range BuiltinPrograms().byName {
		for _, v := range s.env {
			m[v] = true
		}
	}
	return m
})

// programEnvVar reports a variable the program table says makes a program
// run code of its choosing.
func programEnvVar(name string) bool { return builtinEnvVars()[name] }

var progKeys = []string{"same_as", "arity", "subcommands", "global", "global_first", "options", "operands",
	"style", "options_first", "wrapper", "hook", "elevated", "never_always", "recursive", "write_tree", "writes_cwd", "env",
	"inert", "complete", "env_inert", "closed", "runs_code"}

var progHooks = map[string]bool{
	"env": true, "sudo": true, "su": true, "timeout": true, "nice": true, "time": true,
	"xargs": true, "find": true, "flock": true, "busybox": true, "watch": true, "trap": true,
	"eval": true, "source": true, "shell": true, "interpreter": true, "sed": true, "awk": true,
	"tar": true, "parallel": true, "apply_patch": true, "jq": true, "git": true, "fd": true,
	"ln": true, "make": true, "curl": true, "wget": true, "compress": true, "npm": true,
	"kubectl": true,
}

// programs decodes a programs: mapping into t. base, when not nil, is the
// table the entries extend (the built-in one, for a policy file).
func (d *progDecoder) programs(n *yaml.Node, where string, t *Programs, base *Programs) error {
	ms, err := d.Mapping(n, where, nil)
	if err != nil {
		return err
	}
	if base != nil {
		for k, v := range base.byName {
			t.byName[k] = v
		}
	}
	for _, m := range ms {
		name := m.Key
		if name == "" || strings.ContainsAny(name, " \t/") {
			return d.Errf(m.KeyNode, where, "program name %q must be a single word without '/'", name)
		}
		var prev *progSpec
		if base != nil {
			prev = base.byName[name]
		}
		s, err := d.program(m.Val, m.Location, name, prev, t)
		if err != nil {
			return err
		}
		t.byName[name] = s
	}
	return nil
}

// program decodes one entry. prev is the entry it overrides (nil for a new
// one): keys the entry sets replace prev's, options and sub-commands merge
// by name.
func (d *progDecoder) program(n *yaml.Node, where, name string, prev *progSpec, t *Programs) (*progSpec, error) {
	ms, err := d.Mapping(n, where, progKeys)
	if err != nil {
		return nil, err
	}
	s := &progSpec{name: name}
	if prev != nil {
		s = prev.clone()
	}
	if s.options == nil {
		s.options = map[string]*progOption{}
	}
	if s.global == nil {
		s.global = map[string]*progOption{}
	}
	for _, m := range ms {
		if m.Key != "same_as" {
			continue
		}
		other, err := d.Str(m.Val, m.Location)
		if err != nil {
			return nil, err
		}
		o := t.byName[other]
		if o == nil {
			return nil, d.Errf(m.Val, m.Location, "unknown program %q (same_as must name a program defined earlier)", other)
		}
		s = o.clone()
		s.name = name
	}
	for _, m := range ms {
		if err := d.programKey(s, m, name); err != nil {
			return nil, err
		}
	}
	s.finish()
	return s, nil
}

// progFlags are the boolean keys of a program entry, each with the field
// of the entry it sets.
var progFlags = map[string]func(*progSpec) *bool{
	"complete":      func(s *progSpec) *bool { return &s.complete },
	"closed":        func(s *progSpec) *bool { return &s.closed },
	"runs_code":     func(s *progSpec) *bool { return &s.runsCode },
	"options_first": func(s *progSpec) *bool { return &s.optionsFirst },
	"global_first":  func(s *progSpec) *bool { return &s.globalFirst },
	"elevated":      func(s *progSpec) *bool { return &s.elevated },
	"never_always":  func(s *progSpec) *bool { return &s.neverAlways },
	"recursive":     func(s *progSpec) *bool { return &s.recursive },
	"write_tree":    func(s *progSpec) *bool { return &s.writeTree },
	"writes_cwd":    func(s *progSpec) *bool { return &s.writesCwd },
}

// programKey decodes one key of a program entry into s.
func (d *progDecoder) programKey(s *progSpec, m yamlconf.Member, name string) error {
	if field, ok := progFlags[m.Key]; ok {
		b, err := d.Boolean(m.Val, m.Location)
		if err != nil {
			return err
		}
		*field(s) = b
		return nil
	}
	var err error
	switch m.Key {
	case "same_as":
	case "arity":
		s.arity, err = d.PositiveInt(m.Val, m.Location)
	case "subcommands":
		return d.subcommands(s, m, name)
	case "global":
		s.global = maps.Clone(s.global)
		if err := d.optionList(m.Val, m.Location, s.global); err != nil {
			return err
		}
	case "options":
		s.options = maps.Clone(s.options)
		if err := d.optionMap(m.Val, m.Location, s.options); err != nil {
			return err
		}
	case "inert":
		s.options = maps.Clone(s.options)
		if s.options == nil {
			s.options = map[string]*progOption{}
		}
		if err := d.inertList(m.Val, m.Location, s.options); err != nil {
			return err
		}
	case "operands":
		s.operands, err = d.operandMap(m.Val, m.Location)
	case "style":
		v, err := d.Str(m.Val, m.Location)
		if err != nil {
			return err
		}
		switch v {
		case "gnu":
			s.style = styleGNU
		case "single":
			s.style = styleSingle
		case "none":
			s.style = styleNone
		case "next":
			s.style = styleNext
		default:
			return d.Errf(m.Val, m.Location, "unknown option style %q (want gnu, single, none or next)", v)
		}
	case "wrapper":
		if s.wrapper, err = d.wrapperSpec(m.Val, m.Location); err != nil {
			return err
		}
	case "hook":
		h, err := d.Str(m.Val, m.Location)
		if err != nil {
			return err
		}
		if !progHooks[h] {
			return d.Errf(m.Val, m.Location, "unknown hook %q (want %s)", h, yamlconf.OrList(slices.Sorted(maps.Keys(progHooks))))
		}
		s.hook = h
	case "env_inert":
		s.envInert, err = d.envNames(m)
	case "env":
		s.env, err = d.envNames(m)
	}
	return err
}

// envNames decodes a list of environment variable names (env:,
// env_inert:).
func (d *progDecoder) envNames(m yamlconf.Member) ([]string, error) {
	items, err := d.Sequence(m.Val, m.Location)
	if err != nil {
		return nil, err
	}
	var names []string
	for i, it := range items {
		v, err := d.Str(it, fmt.Sprintf("%s[%d]", m.Location, i))
		if err != nil {
			return nil, err
		}
		if _, ok := shIsAssignment(shWord{text: v + "=", lit: true}); !ok {
			return nil, d.Errf(it, m.Location, "%q is not an environment variable name", v)
		}
		names = append(names, v)
	}
	return names, nil
}

// subcommands decodes a program's subcommands: mapping into s.
func (d *progDecoder) subcommands(s *progSpec, m yamlconf.Member, name string) error {
	subs, err := d.Mapping(m.Val, m.Location, nil)
	if err != nil {
		return err
	}
	if s.subs == nil {
		s.subs = map[string]*progSpec{}
	} else {
		s.subs = maps.Clone(s.subs)
	}
	for _, sm := range subs {
		var sub *progSpec
		if sm.Val.Kind == yaml.ScalarNode && sm.Val.Tag == "!!int" {
			ar, err := d.PositiveInt(sm.Val, sm.Location)
			if err != nil {
				return err
			}
			sub = &progSpec{name: name + " " + sm.Key, arity: ar}
			if old := s.subs[sm.Key]; old != nil {
				sub = old.clone()
				sub.arity = ar
			}
		} else {
			sub, err = d.subcommand(sm.Val, sm.Location, name+" "+sm.Key, s.subs[sm.Key])
			if err != nil {
				return err
			}
		}
		s.subs[sm.Key] = sub
	}
	return nil
}

// subcommand decodes a sub-command entry: arity, options, operands.
func (d *progDecoder) subcommand(n *yaml.Node, where, name string, prev *progSpec) (*progSpec, error) {
	ms, err := d.Mapping(n, where, []string{"arity", "options", "inert", "complete", "operands", "wrapper", "runs_code", "runs_hooks", "options_first", "writes_cwd"})
	if err != nil {
		return nil, err
	}
	s := &progSpec{name: name, options: map[string]*progOption{}}
	if prev != nil {
		s = prev.clone()
	}
	for _, m := range ms {
		switch m.Key {
		case "arity":
			if s.arity, err = d.PositiveInt(m.Val, m.Location); err != nil {
				return nil, err
			}
		case "options":
			s.options = maps.Clone(s.options)
			if s.options == nil {
				s.options = map[string]*progOption{}
			}
			if err := d.optionMap(m.Val, m.Location, s.options); err != nil {
				return nil, err
			}
		case "inert":
			s.options = maps.Clone(s.options)
			if s.options == nil {
				s.options = map[string]*progOption{}
			}
			if err := d.inertList(m.Val, m.Location, s.options); err != nil {
				return nil, err
			}
		case "complete":
			if s.complete, err = d.Boolean(m.Val, m.Location); err != nil {
				return nil, err
			}
		case "runs_code":
			if s.runsCode, err = d.Boolean(m.Val, m.Location); err != nil {
				return nil, err
			}
		case "runs_hooks":
			if s.runsHooks, err = d.Boolean(m.Val, m.Location); err != nil {
				return nil, err
			}
		case "options_first":
			if s.optionsFirst, err = d.Boolean(m.Val, m.Location); err != nil {
				return nil, err
			}
		case "writes_cwd":
			if s.writesCwd, err = d.Boolean(m.Val, m.Location); err != nil {
				return nil, err
			}
		case "operands":
			if s.operands, err = d.operandMap(m.Val, m.Location); err != nil {
				return nil, err
			}
		case "wrapper":
			if s.wrapper, err = d.wrapperSpec(m.Val, m.Location); err != nil {
				return nil, err
			}
		}
	}
	s.finish()
	return s, nil
}

// parseOptionName splits "--output=" into its name and value kind:
// "NAME" takes no value, "NAME=" takes one (attached or the next word),
// "NAME=?" takes an optional attached one.
func parseOptionName(s string) (string, optValue, error) {
	name, v := s, valNone
	switch {
	case strings.HasSuffix(s, "=?"):
		name, v = s[:len(s)-2], valOptional
	case strings.HasSuffix(s, "="):
		name, v = s[:len(s)-1], valRequired
	}
	switch {
	case name == "+":
	case len(name) < 2 || name[0] != '-' || name == "--" || strings.ContainsAny(name, " =\t"):
		return "", 0, fmt.Errorf("option %q must be spelled -x, --long or -long, with \"=\" after it when it takes a value", s)
	case name[1] != '-' && len(name) == 2 && !isOptChar(name[1]):
		return "", 0, fmt.Errorf("option %q is not a valid short option", s)
	}
	return name, v, nil
}

func isOptChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '?' || c == '#' || c == '@' || c == ':'
}

// inertList decodes inert:, a list of option spellings with no effect the
// policy judges (cat -n, grep --count). An option listed with an effect
// under options: keeps it.
func (d *progDecoder) inertList(n *yaml.Node, where string, into map[string]*progOption) error {
	items := map[string]*progOption{}
	if err := d.optionList(n, where, items); err != nil {
		return err
	}
	for name, o := range items {
		if _, ok := into[name]; !ok {
			into[name] = o
		}
	}
	return nil
}

// optionList decodes a list of option spellings without effect (global:).
func (d *progDecoder) optionList(n *yaml.Node, where string, into map[string]*progOption) error {
	return d.Strings(n, where, func(it *yaml.Node, loc, s string) error {
		name, v, err := parseOptionName(s)
		if err != nil {
			return d.Errf(it, loc, "%v", err)
		}
		into[name] = &progOption{name: name, value: v}
		return nil
	})
}

// optionMap decodes options: {SPELLING: EFFECT | {effect:, reason:, when:, unless:}}.
func (d *progDecoder) optionMap(n *yaml.Node, where string, into map[string]*progOption) error {
	ms, err := d.Mapping(n, where, nil)
	if err != nil {
		return err
	}
	for _, m := range ms {
		name, v, err := parseOptionName(m.Key)
		if err != nil {
			return d.Errf(m.KeyNode, where, "%v", err)
		}
		o := &progOption{name: name, value: v}
		if m.Val.Kind == yaml.MappingNode {
			if err := d.optionFields(m.Val, m.Location, o); err != nil {
				return err
			}
		} else if o.effect, err = d.effect(m.Val, m.Location, nil); err != nil {
			return err
		}
		if (o.when != nil || o.unless != nil) && o.value == valNone && name != "+" {
			return d.Errf(m.KeyNode, where, "option %s takes no value, so when:/unless: cannot apply (write %s= for an option with a value)", name, name)
		}
		switch o.effect {
		case effRead, effWrite, effPrefix, effBackup, effWriteDir, effReadDir, effTargetDir, effRun, effCode, effScript, effChdir:
			if o.value == valNone && name != "+" {
				return d.Errf(m.KeyNode, where, "option %s has effect %s but takes no value (write %s= for an option with a value)", name, o.effect, name)
			}
		}
		into[name] = o
	}
	return nil
}

// optionFields decodes an option's mapping form {effect, reason, when,
// unless, path_after, path_until, flags, pipes, appends} into o.
func (d *progDecoder) optionFields(n *yaml.Node, where string, o *progOption) error {
	fs, err := d.Mapping(n, where, []string{"effect", "reason", "when", "unless", "path_after", "path_until", "flags", "pipes", "appends"})
	if err != nil {
		return err
	}
	for _, f := range fs {
		switch f.Key {
		case "effect":
			if o.effect, err = d.effect(f.Val, f.Location, nil); err != nil {
				return err
			}
		case "reason":
			if o.reason, err = d.Str(f.Val, f.Location); err != nil {
				return err
			}
		case "path_after":
			items, err := d.Sequence(f.Val, f.Location)
			if err != nil {
				return err
			}
			for i, it := range items {
				m, err := d.Str(it, fmt.Sprintf("%s[%d]", f.Location, i))
				if err != nil {
					return err
				}
				o.pathAfter = append(o.pathAfter, m)
			}
		case "path_until":
			if o.pathUntil, err = d.Str(f.Val, f.Location); err != nil {
				return err
			}
		case "pipes":
			if o.pipes, err = d.Boolean(f.Val, f.Location); err != nil {
				return err
			}
		case "appends":
			if o.appends, err = d.Boolean(f.Val, f.Location); err != nil {
				return err
			}
		case "flags":
			items, err := d.Sequence(f.Val, f.Location)
			if err != nil {
				return err
			}
			o.flags = map[string]optValue{}
			for i, it := range items {
				loc := fmt.Sprintf("%s[%d]", f.Location, i)
				fl, err := d.Str(it, loc)
				if err != nil {
					return err
				}
				n, fv, err := parseOptionName(fl)
				if err != nil {
					return d.Errf(it, loc, "%v", err)
				}
				o.flags[n] = fv
			}
		case "when", "unless":
			pats, err := d.patternList(f.Val, f.Location)
			if err != nil {
				return err
			}
			if f.Key == "when" {
				o.when = pats
			} else {
				o.unless = pats
			}
		}
	}
	return nil
}

// patternList decodes a list of shell patterns, each checked like a rule's.
func (d *progDecoder) patternList(n *yaml.Node, where string) ([]string, error) {
	items, err := d.Sequence(n, where)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		loc := fmt.Sprintf("%s[%d]", where, i)
		s, err := d.Str(it, loc)
		if err != nil {
			return nil, err
		}
		if err := globs.Check(s); err != nil {
			return nil, d.Errf(it, loc, "invalid shell pattern %q: %v", s, err)
		}
		out = append(out, strings.ToLower(s))
	}
	return out, nil
}

func (d *progDecoder) effect(n *yaml.Node, where string, allowed []string) (effect, error) {
	s, err := d.Str(n, where)
	if err != nil {
		return 0, err
	}
	e, ok := effectNames[s]
	if !ok || allowed != nil && !slices.Contains(allowed, s) {
		want := allowed
		if want == nil {
			want = slices.Sorted(maps.Keys(effectNames))
		}
		return 0, d.Errf(n, where, "unknown effect %q (want %s)", s, yamlconf.OrList(want))
	}
	return e, nil
}

// operandMap decodes operands: {all|first|last|rest|init|N|KEY=: EFFECT}.
func (d *progDecoder) operandMap(n *yaml.Node, where string) ([]progOperand, error) {
	ms, err := d.Mapping(n, where, nil)
	if err != nil {
		return nil, err
	}
	out := make([]progOperand, 0, len(ms))
	for _, m := range ms {
		op := progOperand{}
		switch m.Key {
		case "all":
			op.pos = posAll
		case "first":
			op.pos = posFirst
		case "last":
			op.pos = posLast
		case "rest":
			op.pos = posRest
		case "init":
			op.pos = posInit
		default:
			if k, ok := strings.CutSuffix(m.Key, "="); ok && k != "" && !strings.ContainsAny(k, " -") {
				op.pos, op.key = posKey, m.Key
				break
			}
			i, err := strconv.Atoi(m.Key)
			if err != nil || i < 1 || i > 64 {
				return nil, d.Errf(m.KeyNode, where, "unknown operand position %q (want all, first, last, rest, init, a number from 1, or KEY= for KEY=value operands)", m.Key)
			}
			op.pos = i
		}
		if m.Val.Kind == yaml.MappingNode {
			fs, err := d.Mapping(m.Val, m.Location, []string{"effect", "reason", "when"})
			if err != nil {
				return nil, err
			}
			for _, f := range fs {
				switch f.Key {
				case "effect":
					if op.effect, err = d.effect(f.Val, f.Location, operandEffects); err != nil {
						return nil, err
					}
				case "reason":
					if op.reason, err = d.Str(f.Val, f.Location); err != nil {
						return nil, err
					}
				case "when":
					if op.when, err = d.patternList(f.Val, f.Location); err != nil {
						return nil, err
					}
				}
			}
		} else if op.effect, err = d.effect(m.Val, m.Location, operandEffects); err != nil {
			return nil, err
		}
		out = append(out, op)
	}
	return out, nil
}

func (d *progDecoder) wrapperSpec(n *yaml.Node, where string) (*wrapperSpec, error) {
	ms, err := d.Mapping(n, where, []string{"operands", "elevated", "joined", "after_dashes", "verb", "elsewhere", "packages"})
	if err != nil {
		return nil, err
	}
	w := &wrapperSpec{}
	for _, m := range ms {
		switch m.Key {
		case "operands":
			if m.Val.Kind != yaml.ScalarNode || m.Val.Tag != "!!int" {
				return nil, d.Errf(m.Val, m.Location, "want a whole number, got %s", yamlconf.NodeKind(m.Val))
			}
			v, err := strconv.Atoi(m.Val.Value)
			if err != nil || v < 0 || v > 8 {
				return nil, d.Errf(m.Val, m.Location, "must be between 0 and 8, got %s", m.Val.Value)
			}
			w.operands = v
		case "elevated":
			if w.elevated, err = d.Boolean(m.Val, m.Location); err != nil {
				return nil, err
			}
		case "joined":
			if w.joined, err = d.Boolean(m.Val, m.Location); err != nil {
				return nil, err
			}
		case "after_dashes":
			if w.afterDashes, err = d.Boolean(m.Val, m.Location); err != nil {
				return nil, err
			}
		case "elsewhere":
			if w.elsewhere, err = d.Boolean(m.Val, m.Location); err != nil {
				return nil, err
			}
		case "packages":
			if w.packages, err = d.Boolean(m.Val, m.Location); err != nil {
				return nil, err
			}
		case "verb":
			if m.Val.Kind != yaml.ScalarNode || m.Val.Tag != "!!str" || m.Val.Value == "" || m.Val.Value[0] == '-' {
				return nil, d.Errf(m.Val, m.Location, "want a sub-command word (run, foreach), got %s", yamlconf.NodeKind(m.Val))
			}
			w.verb = m.Val.Value
		}
	}
	return w, nil
}

// clone copies the entry so that an override does not change the table it
// came from; maps are shared until a decoder replaces them (maps.Clone).
func (s *progSpec) clone() *progSpec {
	c := *s
	c.operands = slices.Clone(s.operands)
	c.env = slices.Clone(s.env)
	c.envInert = slices.Clone(s.envInert)
	if s.wrapper != nil {
		w := *s.wrapper
		c.wrapper = &w
	}
	return &c
}

// finish builds the long-option list used for prefix matching.
func (s *progSpec) finish() {
	s.longs = s.longs[:0:0]
	for _, m := range []map[string]*progOption{s.options, s.global} {
		for n := range m {
			if strings.HasPrefix(n, "--") {
				s.longs = append(s.longs, n)
			}
		}
	}
	sort.Strings(s.longs)
	s.longs = slices.Compact(s.longs)
	s.sh = &shOpts{}
	for _, m := range []map[string]*progOption{s.global, s.options} {
		for n, o := range m {
			long := strings.HasPrefix(n, "--")
			if !long && (len(n) != 2 || n[0] != '-') {
				continue // -toolexec, +cmd: not getopt options
			}
			switch {
			case long && o.effect == effStop:
				s.sh.longStop = append(s.sh.longStop, n[2:])
			case long && o.value == valRequired:
				s.sh.longArg = append(s.sh.longArg, n[2:])
			case long && o.value == valOptional:
				s.sh.longOpt = append(s.sh.longOpt, n[2:])
			case long:
				s.sh.longFlag = append(s.sh.longFlag, n[2:])
			case o.effect == effStop:
				s.sh.stop += n[1:]
			case o.value == valRequired:
				s.sh.arg += n[1:]
			case o.value == valOptional:
				s.sh.optArg += n[1:]
			default:
				s.sh.flag += n[1:]
			}
		}
	}
}

// arityOf returns the command-prefix length of the words of a command
// whose global options have been removed.
func (s *progSpec) arityOf(words []string) int {
	if s == nil {
		return 1
	}
	if len(words) >= 2 && s.subs != nil {
		if sub := s.subs[words[1]]; sub != nil && sub.arity > 0 {
			return sub.arity
		}
	}
	if s.arity > 0 {
		return s.arity
	}
	return 1
}

// globalEnd returns the index of the first word after the program's global
// options (1 when it has none or none are used): `git -C dir --no-pager
// log` → 4. An option it does not know ends the scan.
func (s *progSpec) globalEnd(words []shWord) int {
	i := 1
	if s == nil || len(s.global) == 0 {
		return i
	}
	for i < len(words) {
		w := words[i].text
		if len(w) < 2 || w[0] != '-' || w == "--" {
			return i
		}
		name, _, hasVal := strings.Cut(w, "=")
		if o := s.global[name]; o != nil {
			if o.value == valRequired && !hasVal {
				i++
			}
			i++
			continue
		}
		if len(name) > 2 && name[1] != '-' {
			// -Cdir: a short option with its value attached.
			if o := s.global[name[:2]]; o != nil && o.value != valNone {
				i++
				continue
			}
		}
		return i
	}
	// A required value missing at the end (kubectl --context): the
	// program fails, and no index past the words is returned.
	return min(i, len(words))
}

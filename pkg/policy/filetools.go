package policy

import (
	"encoding/json"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
	"github.com/signoff-dev/signoff/pkg/policy/shell"
)

// Glob-valued arguments of the agents' file tools (docs/POLICY.md "File
// tools of real agents"). Claude Code's Grep hands its glob to ripgrep's
// --glob, Gemini's read_many_files reads every file its paths and include
// globs match: such an argument names the files the tool reads, not one
// file, so it is judged as a read of every path it can match under the
// directory the tool searches — met by the read rules (deny and ask by
// glob intersection, allow only when they cover it), the way the shell
// analysis judges rg -g and grep --include (shell filterReads). A glob whose
// syntax the policy cannot read exactly, and an argument of such a tool
// the policy does not know, ask.

// globRole says how a glob argument names files.
type globRole uint8

const (
	// roleFilter: a file-name filter of a search (rg --glob, include):
	// the files it matches anywhere under each searched directory are
	// read, ROOT/**/GLOB (a leading '/' anchors it at the directory).
	roleFilter globRole = iota
	// roleRooted: a path or glob relative to the searched directory, or
	// absolute (Glob's pattern, read_many_files' paths).
	roleRooted
	// roleExclude: excludes files from what the tool reads; reads nothing.
	roleExclude
	// roleType: a ripgrep file type name (Grep's type): read as the
	// globs ripgrep defines for it (shell.RgTypeGlobs).
	roleType
)

// globArg is one glob-valued argument of a tool.
type globArg struct {
	key  string // normalized: lower case, no '_' or '-'
	role globRole
	// negates: a leading '!' makes the glob exclude (ripgrep's --glob).
	negates bool
	// tree: a match may be a directory the tool reads whole.
	tree bool
	// dot: the tool's wildcards match names that start with a dot
	// (node-glob's dot: true), which bash's * and ? do not (dotVariants).
	dot bool
}

// fileToolSpec declares a file tool's arguments: its globs and the other
// arguments the policy knows (they name no file: flags, counts, a
// regular expression judged as the tool's pattern, a query).
type fileToolSpec struct {
	globs []globArg
	// underPath: the tool searches under its path arguments (the working
	// directory when it has none); otherwise under the working directory.
	underPath bool
	known     []string
}

func (sp *fileToolSpec) arg(key string) *globArg {
	for i := range sp.globs {
		if sp.globs[i].key == key {
			return &sp.globs[i]
		}
	}
	return nil
}

// fileToolSpecs are the built-in file tools with glob arguments, by lower-
// case name. Claude Code: Grep {pattern, path, glob, type, output_mode,
// -A, -B, -C, -n, -i, head_limit, offset, multiline}, Glob {pattern,
// path}; opencode: grep {pattern, path, include}, glob {pattern, path};
// Gemini CLI: glob {pattern, dir_path, case_sensitive,
// respect_git_ignore…}, search_file_content {pattern, dir_path, include},
// read_many_files {paths, include, exclude, recursive,
// useDefaultExcludes, file_filtering_options}; Cline: search_files {path,
// regex, file_pattern}; Cursor: grep_search {query, include_pattern,
// exclude_pattern, case_sensitive}, codebase_search {query,
// target_directories (globs of directories), explanation}.
var fileToolSpecs = map[string]*fileToolSpec{
	"grep": {
		underPath: true,
		globs: []globArg{
			{key: "glob", role: roleFilter, negates: true, tree: true},
			{key: "include", role: roleFilter, negates: true, tree: true},
			{key: "type", role: roleType},
		},
		known: []string{"outputmode", "a", "b", "c", "n", "i", "headlimit", "offset", "multiline", "casesensitive"},
	},
	"search_file_content": {
		underPath: true,
		globs:     []globArg{{key: "include", role: roleFilter, negates: true, tree: true}},
		known:     []string{"casesensitive"},
	},
	"search_files": {
		underPath: true,
		globs:     []globArg{{key: "filepattern", role: roleFilter, negates: true, tree: true}},
		known:     []string{"regex", "taskprogress"},
	},
	"glob": {
		underPath: true,
		globs:     []globArg{{key: "pattern", role: roleRooted}},
		known:     []string{"casesensitive", "respectgitignore", "respectgeminiignore"},
	},
	"read_many_files": {
		globs: []globArg{
			// Gemini's read_many_files globs with node-glob's dot: true
			// (packages/core/src/tools/read-many-files.ts).
			{key: "paths", role: roleRooted, tree: true, dot: true},
			{key: "include", role: roleRooted, tree: true, dot: true},
			{key: "exclude", role: roleExclude},
		},
		known: []string{"recursive", "usedefaultexcludes", "respectgitignore", "respectgeminiignore", "filefilteringoptions"},
	},
	"codebase_search": {
		globs: []globArg{{key: "targetdirectories", role: roleRooted, tree: true}},
		known: []string{"query", "explanation"},
	},
	"grep_search": {
		globs: []globArg{
			{key: "includepattern", role: roleFilter, negates: true, tree: true},
			{key: "excludepattern", role: roleExclude},
		},
		known: []string{"query", "casesensitive", "explanation"},
	},
}

// namePathArgs are the well-known path keys of a read- or write-tier tool
// judged by name (an MCP tool declared read, a tool of tools.tiers): each
// present one is judged as a path the tool reads or writes, as a tree
// (docs/POLICY.md "What a rule's pattern matches, per tool"). The ends of a
// move (source, from, to, target…) are not among them: in other tools
// they are rarely paths.
var namePathArgs = []string{
	"path", "paths", "filepath", "filepaths", "file", "files", "filename", "filenames",
	"dir", "directory", "dirpath", "directorypath", "absolutepath", "targetfile", "notebookpath",
	"relativeworkspacepath", "targetdirectories",
}

// maxGlobReads bounds the globs one argument stands for (alternatives ×
// searched directories).
const maxGlobReads = 128

// pendingGlob is a glob argument's value, judged once the searched
// directories are known.
type pendingGlob struct {
	arg  *globArg
	key  string
	text string
}

// normKey returns a JSON object key as matchKey compares it: lower case,
// without '_' and '-'.
func normKey(k string) string {
	var b strings.Builder
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case c == '_' || c == '-':
			continue
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// unknownArgs returns the floor subjects of a spec'd tool's arguments the
// policy does not know: an argument the engine does not read must not pass
// unjudged when it can name files (a string, a list, an object). Flags and
// counts (booleans, numbers, null) are ignored.
func (e *evaluation) unknownArgs(subs []subject, sp *fileToolSpec, args json.RawMessage, names []string) []subject {
	m, keys := sortedArgs(args)
	for _, k := range keys {
		nk := normKey(k)
		if why := e.argvWord(sp, nk, m[k]); why != "" {
			subs = append(subs, e.argFloor(k, why))
			continue
		}
		if slices.Contains(names, nk) || slices.Contains(sp.known, nk) || sp.arg(nk) != nil {
			continue
		}
		raw := []byte(strings.TrimSpace(string(m[k])))
		if len(raw) == 0 || raw[0] != '"' && raw[0] != '[' && raw[0] != '{' {
			continue
		}
		subs = append(subs, e.argFloor(k, "is not one the policy knows: it may name files the policy does not judge"))
	}
	return subs
}

// argvWord says why a search tool's argument value raw (of normalised key
// nk) cannot be judged as text, or "". Hosts run these tools by spawning
// rg, git grep or grep with each argument one word of the command line,
// not always after -e or -- (Gemini CLI's search_file_content, Crush's
// grep): a value that begins with '-' is then an option of that program —
// rg --pre=sh runs sh on every file searched, git grep -O<cmd> runs a
// command, -f<file> reads one — whatever key it came in (red team AS F1).
// A filter glob that begins with ':' is a git pathspec with magic to git
// grep (':(top)', ':/' climb to the repository's top: AS F1b). Either asks:
// what the program makes of the word is not the text the policy reads.
func (e *evaluation) argvWord(sp *fileToolSpec, nk string, raw json.RawMessage) string {
	var vals []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		vals = []string{one}
	} else if json.Unmarshal(raw, &vals) != nil {
		return ""
	}
	var ga *globArg
	if sp != nil {
		ga = sp.arg(nk)
	}
	filter := ga != nil && ga.role != roleRooted || ga == nil && slices.Contains(argvFilterKeys, nk)
	for _, v := range vals {
		// Any leading space a host may trim first (Unicode's, the BOM).
		t := strings.TrimLeftFunc(v, func(r rune) bool { return unicode.IsSpace(r) || r == '\ufeff' })
		switch {
		case strings.HasPrefix(t, "-"):
			return "begins with '-' (" + strconv.Quote(clipWord(t)) + "): the program the host runs for it (rg, git grep, grep) may take it for one of its options, which run programs and read files"
		case filter && strings.HasPrefix(t, ":"):
			return "begins with ':' (" + strconv.Quote(clipWord(t)) + "): git grep reads it as a pathspec with magic (:(top), :/ reach the repository's top)"
		}
	}
	return ""
}

// argvKeys are the arguments of a tool judged by name (an MCP search or
// file tool, a declared tier's) that its server may hand to a program's
// command line as they are: its path arguments and the spellings of a
// search's pattern and filters (red team AU F1: a ripgrep MCP server's
// pattern --pre=sh ran sh). argvFilterKeys are the filters among them.
var (
	argvKeys       = slices.Concat(namePathArgs, []string{"pattern", "patterns", "query", "regex", "regexp", "search", "searchterm", "term", "text", "expression"}, argvFilterKeys)
	argvFilterKeys = []string{"glob", "globs", "include", "includes", "exclude", "excludes", "filepattern", "includepattern", "excludepattern", "filter", "type"}
)

// argvArgs appends a floor for each argument of a tool judged by name, of
// a key its server may put on a command line (argvKeys), whose value a
// program may take for an option (argvWord).
func (e *evaluation) argvArgs(subs []subject, args json.RawMessage) []subject {
	m, keys := sortedArgs(args)
	for _, k := range keys {
		if nk := normKey(k); slices.Contains(argvKeys, nk) {
			if why := e.argvWord(nil, nk, m[k]); why != "" {
				subs = append(subs, e.argFloor(k, why))
			}
		}
	}
	return subs
}

// sortedArgs returns a call's arguments by key and the keys in order
// (none when they are not an object).
func sortedArgs(args json.RawMessage) (map[string]json.RawMessage, []string) {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return nil, nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return m, keys
}

// argFloor is the floor subject of argument key, asking for why.
func (e *evaluation) argFloor(key, why string) subject {
	return subject{kind: subjName, tier: e.tier, floor: "argument " + strconv.Quote(key) + " of " + e.name + " " + why,
		floorLayer: "input", ungrantable: true}
}

// clipWord is a value clipped for a reason.
func clipWord(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// unreadableGlob says why the policy cannot read a glob exactly ("" when
// it can): the syntax is that of ripgrep's and node's globs that the
// engine compiles (* ? ** [..] {a,b} \x); extended globs, brace ranges,
// unbalanced braces, POSIX bracket classes and a ".." after a wildcard are
// not.
// bracketMeetsSlash reports whether the bracket expression that may start
// at t[i] == '[' (up to the next ']' after its first character) holds a /
// or a range whose ends take / in: the shell's rule makes such a bracket
// literal text, ripgrep's (globset) a set that matches '.' too.
func bracketMeetsSlash(t string, i int) bool {
	j := i + 1
	if j < len(t) && (t[j] == '!' || t[j] == '^') {
		j++
	}
	end := strings.IndexByte(t[min(j+1, len(t)):], ']')
	if end < 0 {
		return false
	}
	body := t[j : min(j+1, len(t))+end]
	if strings.ContainsRune(body, '/') {
		return true
	}
	for k := 1; k+1 < len(body); k++ {
		if body[k] == '-' && body[k-1] <= '/' && body[k+1] >= '/' {
			return true
		}
	}
	return false
}

func unreadableGlob(t string) string {
	if strings.ContainsRune(t, 0) {
		return "it holds a NUL character"
	}
	for _, x := range []string{"@(", "!(", "+(", "?(", "*("} {
		if strings.Contains(t, x) {
			return "extended glob syntax " + x + "…) is not read"
		}
	}
	depth, commas := 0, []int{0}
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '\\':
			if i+1 < len(t) && !strings.ContainsRune("*?[]{}\\,!", rune(t[i+1])) {
				// deploy\id_rsa: an escape of a plain character here, a
				// path separator to a host that turns \ into / (Gemini's
				// read_many_files; red team AQ F16).
				return "a backslash before " + strconv.QuoteRune(rune(t[i+1])) + " is an escape to some hosts and a path separator to others"
			}
			i++
		case '[':
			if bracketMeetsSlash(t, i) {
				return "a bracket expression that holds / or a range over it ([--/]) is read differently by ripgrep and the shell"
			}
			if _, end, valid := globs.MatchClass(t, i, 'x'); valid {
				body := t[i+1 : end-1]
				for _, x := range []string{"[:", "[=", "[."} {
					if strings.Contains(body, x) {
						return "POSIX bracket expressions (" + x + "…) are not read"
					}
				}
				i = end - 1
			}
		case '{':
			depth++
			commas = append(commas, 0)
		case ',':
			if depth > 0 {
				commas[depth]++
			}
		case '}':
			if depth == 0 {
				return "its braces do not balance"
			}
			if commas[depth] == 0 {
				return "a brace group without alternatives (a range such as {1..3}) is not read"
			}
			commas = commas[:depth]
			depth--
		}
	}
	if depth != 0 {
		return "its braces do not balance"
	}
	wild := false
	for _, seg := range strings.Split(t, "/") {
		if seg == ".." && wild {
			return "a .. after a wildcard may climb anywhere"
		}
		if strings.ContainsAny(seg, "*?[{") {
			wild = true
		}
	}
	return ""
}

// hasGlobMeta reports whether a path argument may use glob syntax (an
// extended glob, @(x), included).
func hasGlobMeta(s string) bool { return strings.ContainsAny(s, "*?[{(") }

// rootGlobs returns the searched directories as literal globs: each root
// resolved as a path, and its form relative to the working directory
// (relative rule patterns match it), with the text to show.
func (e *evaluation) rootGlobs(roots []string) (out []globs.Glob, shown []string) {
	if len(roots) == 0 {
		roots = []string{"."}
	}
	for _, r := range roots {
		clean, _, rel, _ := e.resolvePath(r)
		out = append(out, globs.Literal(nil, clean))
		shown = append(shown, clean)
		if rel != "" && rel != clean {
			out = append(out, globs.Literal(nil, rel))
			shown = append(shown, "")
		}
	}
	return out, shown
}

// appendGlobSubjects appends the subjects of one glob argument value: a
// read of every path it can match under the searched directories, or a
// floor when the policy cannot read it.
func (e *evaluation) appendGlobSubjects(subs []subject, g pendingGlob, roots []string) []subject {
	floor := func(why string) []subject {
		return append(subs, subject{kind: subjName, tier: e.tier, floor: "cannot judge the files argument " + g.key + " " +
			strconv.Quote(g.text) + " of " + e.name + " names: " + why, floorLayer: "input", ungrantable: true})
	}
	texts, why := globTexts(g)
	if why != "" {
		return floor(why)
	}
	rootGl, rootShown := e.rootGlobs(roots)
	for _, t := range texts {
		if g.arg.negates && strings.HasPrefix(t, "!") {
			continue // excludes: reads nothing
		}
		if why := unreadableGlob(t); why != "" {
			return floor(why)
		}
		t, abs := e.globText(t, g.arg.role)
		if t == "" {
			continue
		}
		alts, ok := globs.PathAlternatives(t)
		if !ok {
			return floor("too many alternatives")
		}
		// With a working directory, each relative form is one of an
		// absolute glob's (rootGlobs, the cwd's prefix cut).
		s := subject{kind: subjRead, tier: TierRead, inexact: true, anchored: true, twinned: e.cwd != ""}
		add := func(w globs.Glob) {
			w = globs.CleanPath(w, e.p.home)
			s.globs = append(s.globs, w)
			if g.arg.tree {
				s.globs = append(s.globs, append(w[:len(w):len(w)], globs.Tok{R: '/'}, globs.AnyRun))
			}
			if g.arg.dot {
				s.globs = append(s.globs, dotVariants(w)...)
			}
		}
		baseOnly := g.arg.role != roleRooted && !strings.Contains(t, "/")
		for _, a := range alts {
			if baseOnly && len(a) > 1 && a[0] == globs.AnyRun && a[1] == (globs.Tok{R: '/'}) {
				continue // …/NAME: the run before NAME already stands for it
			}
			if abs {
				add(a)
				if e.cwd != "" && len(a) > len(e.cwd)+1 && globs.Covers(globs.Literal(nil, e.cwd+"/"), a[:len(e.cwd)+1]) {
					add(a[len(e.cwd)+1:]) // under the working directory: as relative rule patterns see it
				}
				continue
			}
			for _, r := range rootGl {
				w := append(slices.Clone(r), globs.Tok{R: '/'})
				if g.arg.role != roleRooted {
					w = append(w, globs.AnyRun)
				}
				add(append(w, a...))
			}
		}
		if len(s.globs) > maxGlobReads {
			return floor("too many paths to judge")
		}
		for _, w := range s.globs {
			if escapesGlob(w) {
				return floor("it climbs out of the working directory")
			}
		}
		switch {
		case abs:
			s.value = t
		case g.arg.role == roleRooted:
			s.value = rootShown[0] + "/" + t
		default:
			s.value = rootShown[0] + "/**/" + t
		}
		subs = append(subs, s)
	}
	return subs
}

// dotVariants returns the forms of w in which a part that is wholly a
// wildcard names a dot file or directory: a tool whose globs match dot
// files (globArg.dot) reads .env through "*", "**/*" and "**", and
// ~/.ssh/id_rsa through "~/*/id_rsa", which the anchored test — made for
// bash, whose * and ? do not match a leading dot — would not meet. A
// part with text after its wildcard ("*.local") is left to the anchored
// test: it would meet .env.local, but also .env.ts for every "*.ts"
// (docs/POLICY.md, limits); so is a "**" before the last part, which
// "**/*.ts" would otherwise make meet every rule on a dot directory.
func dotVariants(w globs.Glob) []globs.Glob {
	var out []globs.Glob
	start := 0
	for k := 0; k <= len(w); k++ {
		if k < len(w) && !(w[k].Lit() && w[k].R == '/') {
			continue
		}
		comp, last := w[start:k], k == len(w)
		wild := len(comp) > 0
		for _, t := range comp {
			wild = wild && t.Any && (last || t.NoSlash || !t.Star)
		}
		if wild && len(out) < 8 {
			v := append(slices.Clone(w[:start]), globs.Tok{R: '.'}, globs.AnyRun)
			if !last {
				v = append(v, w[k:]...)
			}
			out = append(out, v)
		}
		start = k + 1
	}
	return out
}

// globTexts returns the globs one value of a glob argument stands for
// (none for an exclusion), or why the policy cannot read them.
func globTexts(g pendingGlob) (texts []string, why string) {
	switch g.arg.role {
	case roleExclude:
		return nil, ""
	case roleType:
		gl := shell.RgTypeGlobs(g.text)
		if gl == nil {
			return nil, "a file type the policy does not know (it knows " + strconv.Itoa(len(shell.RgTypeNames())) + " of ripgrep's types)"
		}
		return gl, ""
	case roleFilter:
		// A host may split a filter on white space and on commas outside
		// braces (Claude Code's Grep: "*.go,.env" is two globs): each
		// part is judged too.
		var parts []string
		for _, f := range strings.Fields(g.text) {
			parts = append(parts, splitOutsideBraces(f, ',')...)
		}
		if len(parts) > 1 {
			return append([]string{g.text}, parts...), ""
		}
	}
	return []string{g.text}, ""
}

// splitOutsideBraces splits s at each sep that no {…} encloses, dropping
// empty parts.
func splitOutsideBraces(s string, sep byte) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i <= len(s); i++ {
		switch {
		case i == len(s) || s[i] == sep && depth == 0:
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		case s[i] == '{':
			depth++
		case s[i] == '}' && depth > 0:
			depth--
		}
	}
	return out
}

// globText normalises one glob: a rooted glob that is absolute (or under
// ~) is kept so (abs); a filter is anchored at the searched directory
// (ripgrep drops a leading /); leading ./ are dropped.
func (e *evaluation) globText(t string, role globRole) (string, bool) {
	abs := false
	if role == roleRooted {
		if x, home := globs.ExpandHome(t, e.p.home); home || path.IsAbs(x) {
			t, abs = x, true
		}
	} else {
		t = strings.TrimPrefix(t, "/")
	}
	for strings.HasPrefix(t, "./") {
		t = t[2:]
	}
	return t, abs
}

// escapesGlob reports a relative glob that starts by climbing out of its
// directory (../x): without a working directory, where it lands is not
// known.
func escapesGlob(w globs.Glob) bool {
	return len(w) >= 2 && w[0].Lit() && w[0].R == '.' && w[1].Lit() && w[1].R == '.' &&
		(len(w) == 2 || w[2].Lit() && w[2].R == '/')
}

// namedTool decides a call of a tool judged by name. A read- or write-tier
// one is also judged on its well-known path arguments (namePathArgs), each
// as a tree the tool reads or writes, and a built-in one with glob
// arguments (Cursor's grep_search) on the files they match: the deny and
// ask rules of the tier's file tools apply to them. The name is judged as
// before, so these subjects only ever make the call stricter.
func (e *evaluation) namedTool(args json.RawMessage) Decision {
	name := subject{kind: subjName, tier: e.tier}
	if e.p.AsksPerson(e.tool) {
		// Its permission prompt is a person's decision: no mode answers it.
		name.floor = e.name + "'s prompt is a person's decision (an answer, a plan's approval): no mode answers it; a person does, or a rule that names the tool"
		name.floorLayer, name.ungrantable, name.liftExact = "mode", true, true
	}
	sp := fileToolSpecs[e.tool]
	if e.tier != TierRead && e.tier != TierWrite {
		return e.single(&name)
	}
	names := namePathArgs
	if sp != nil {
		names = slices.Clone(namePathArgs)
		for _, g := range sp.globs {
			names = append(names, g.key)
		}
	}
	var buf [4]argValue
	vals, err := scanArgs(buf[:0], args, names)
	if err != nil {
		return e.single(&name)
	}
	subs := []subject{name}
	var pending []pendingGlob
	var strs [4]string
	for _, v := range vals {
		ga := (*globArg)(nil)
		if sp != nil {
			ga = sp.arg(v.key)
		}
		list, ok := argStrings(v.raw, strs[:0])
		if !ok {
			subs = append(subs, subject{kind: subjName, tier: e.tier,
				floor: "argument " + v.key + " is not a string or a list of strings", floorLayer: "input", ungrantable: true})
			continue
		}
		for _, str := range list {
			if str == "" {
				continue
			}
			if ga != nil && (ga.role != roleRooted || hasGlobMeta(str)) {
				pending = append(pending, pendingGlob{arg: ga, key: v.key, text: str})
				continue
			}
			// A path, or a plain path of a rooted glob argument.
			s := e.pathSubject(subjPath, e.tier, str)
			s.recursive = true
			subs = append(subs, s)
			if e.readsArg(v.key) {
				// A write-tier tool not known to write only reads what it
				// names too (an MCP edit_file answers with the file).
				subs = append(subs, readTwin(&s, false))
			}
		}
	}
	for _, g := range pending {
		subs = e.appendGlobSubjects(subs, g, nil)
	}
	if sp != nil {
		subs = e.unknownArgs(subs, sp, args, namePathArgs)
	} else {
		subs = e.argvArgs(subs, args)
	}
	if len(subs) == 1 {
		return e.single(&name)
	}
	return e.combine(subs, nil)
}

package policy

import (
	"encoding/json"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
	"github.com/signoff-dev/signoff/pkg/policy/shell"
)

// subjectKind says what part of a call a subject is.
type subjectKind uint8

const (
	// subjName: the call as a whole, judged by tool name (MCP and unknown
	// tools, or a call without a usable argument).
	subjName subjectKind = iota
	// subjPath: a path argument (path, file_path, notebook_path).
	subjPath
	// subjPattern: the pattern argument of glob/grep.
	subjPattern
	// subjCommand: one simple command of a shell script.
	subjCommand
	// subjRedirect: a write redirection of a shell script, judged as a write
	// of its target path.
	subjRedirect
	// subjRead: a path a shell command reads (cat FILE, grep -r PAT DIR,
	// an input redirection < FILE), judged by the rules of the read-tier
	// file tools.
	subjRead
)

// subject is one thing the rules judge; a call has one or more and its
// verdict is the strictest of theirs.
type subject struct {
	kind subjectKind
	tier Tier
	// value is the cleaned path, or the command's words joined by spaces.
	value string
	// base is the path's base name, or the base-name form of a
	// path-qualified command ("rm -rf x" for "/bin/rm -rf x").
	base         string
	key, baseKey string // first words of value and base (shell index)
	// rel is a path's form relative to the call's working directory (or
	// the cleaned relative path without one): relative rule patterns
	// (src/**) match it.
	rel string
	// profile is the path under the home that value names when it lies in
	// a Windows user profile (profileAlias): the home's deny and ask rules
	// meet it. "" otherwise.
	profile string
	// cwd is the call's working directory, whose ancestors relative deny
	// and ask rules are anchored at too (upRels).
	cwd string
	// short is the command without its global options (git status for
	// git -C dir status); "" when it has none.
	short string
	// joined is a command's words joined by spaces when that differs from
	// value, its words as bash reads them back (shell.CommandText): deny
	// and ask rules meet it too.
	joined    string
	qualified bool
	// recursive: the path stands for the whole tree under it (grep -r,
	// rm -r, a deleted or moved directory).
	recursive bool
	// walk: the path may be a directory an unknown program walks
	// (shell.Command.Walks): deny and ask rules anchored under it meet it
	// as they meet a tree; floating ones (**/.env) do not.
	walk bool
	// explicit subjects (grep's regular expression) are matched only by
	// rules that name their argument (match: {pattern: …}) or take any
	// arguments.
	explicit bool
	// floor is a reason that makes the subject at least ask whatever the
	// rules say; floorLayer is the Decision.Layer it reports, and
	// ungrantable marks floors no grant may lift.
	floor       string
	floorLayer  string
	ungrantable bool
	cmd         *shell.Command
	// inexact subjects stand for several strings (engine_inexact.go):
	// globs are their alternatives (a command's glob, then its base-name
	// form), unknownName says the command name itself is not known.
	inexact     bool
	unknownName bool
	// anchored: a deny or ask rule meets the subject only when the word's
	// own characters reach into every name the rule spells
	// (globs.IntersectsAnchored): a read operand that is a pattern or an
	// expansion (cat .e*, not cat *.go).
	anchored bool
	// placed: the relative globs have their forms under the working
	// directory among globs (placeGlobs): absolute rules meet only those.
	placed bool
	// twinned: every relative glob is the form under the working
	// directory of an absolute one among globs (a file tool's glob under
	// its roots): absolute rules meet only the absolute ones.
	twinned   bool
	globs     []globs.Glob
	baseGlobs []globs.Glob
	// liftKey, when set, is the shell word a rule must name (its literal
	// first word) for the floor not to apply: a zsh -c script is judged
	// by a rule that names zsh. liftAny: a rule with any arguments lifts
	// the floor (a call of the zsh tool).
	liftKey string
	liftAny bool
	// liftExact: only a static rule that names the tool exactly (no glob,
	// no group, no agent layer) lifts the floor (a tool only a person
	// answers).
	liftExact bool
}

// upRels yields the subject's path relative to each directory above the
// working directory that holds it, nearest first ("secrets/key" for
// /home/u/proj/secrets/key under the working directory /home/u/proj/sub);
// nothing for a relative path or an unknown working directory.
func (s *subject) upRels(yield func(string) bool) {
	if s.cwd == "" || !path.IsAbs(s.value) {
		return
	}
	for dir := path.Dir(s.cwd); ; dir = path.Dir(dir) {
		if dir == "/" {
			rel := s.value[1:]
			if rel == "" {
				rel = "."
			}
			yield(rel)
			return
		}
		if s.value == dir {
			if !yield(".") {
				return
			}
		} else if len(s.value) > len(dir) && s.value[len(dir)] == '/' && strings.HasPrefix(s.value, dir) && !yield(s.value[len(dir)+1:]) {
			return
		}
	}
}

// verdict is the judgement of one subject.
type verdict struct {
	action Action
	rule   *rule // nil when the mode or a floor decided
	layer  string
	reason string
}

// evaluation carries one call's context through the layers.
type evaluation struct {
	p   *Policy
	cwd string // where relative paths resolve ("" = unknown)
	// home is the call's working directory, the default workspace (a
	// shell tool's workdir argument moves cwd, not this).
	callCwd string
	// relBase prefixes relative paths when a shell tool's workdir is
	// relative and the call's working directory unknown.
	relBase string
	// cdAway is set when a script changes directory to somewhere its
	// relative paths can no longer be placed (cd /etc, cd .., cd $X).
	cdAway string
	// cdAwayRead is cdAway for reads: a literal
	// cd is placed exactly by the analysis (every directory it may lead
	// to is judged), so only unknown operands floor a read.
	cdAwayRead string
	tool       string // lower-case
	name       string // as the agent wrote it, for messages
	tier       Tier
	mode       Mode
	kind       toolKind
	agent      *ruleLayer
	// writeOnly: the call's paths are written without being read (Write,
	// delete_file, str_replace_editor's create); see toolreads.go.
	writeOnly bool
	// sub is the sub-command that set tier ("" when the tool's tier
	// stands): multi-tool rules are chosen by the tier.
	sub string
	// baseMode is the mode of the call without its agent type: the admin's
	// override, else the policy mode. The agent type is the agent's own
	// claim, so its layer and mode may restrict a call, never allow more
	// than this mode and the static rules would.
	baseMode Mode
}

// Evaluate judges one call against the policy: the agent-type layer (its
// deny is a veto), then the agent and static rules merged with the last
// match winning, then the mode by tier; shell commands are judged
// sub-command by sub-command, and safety overrides force a question. It does
// no I/O and is safe for concurrent use.
func (p *Policy) Evaluate(c Call) Decision {
	if c.Home != "" && c.Home != p.home && !p.homeSet {
		return p.evaluateForHome(c)
	}
	return p.evaluate(c)
}

// evaluateForHome judges a call whose agent's home is not the policy's
// (home.go): by the policy compiled for that home, and, when that allows
// it, by the policy as it is too — the home is the agent's word, so a
// home that is not its own (an agent that writes its own requests may
// say any) must not make the broker's ~ rules miss a path they name:
// an allow stands only where both homes allow.
func (p *Policy) evaluateForHome(c Call) Decision {
	d := p.forHome(c.Home).evaluate(c)
	if d.Action != Allow {
		return d
	}
	if own := p.evaluate(c); own.Action != Allow {
		return own
	}
	return d
}

// evaluate is Evaluate with the policy's own home.
func (p *Policy) evaluate(c Call) Decision {
	e := evaluation{p: p, tool: lower(c.Tool), name: c.Tool, agent: p.agentLayer(c.AgentType)}
	if c.Cwd != "" && path.IsAbs(c.Cwd) {
		// The broker validates cwd; a caller of the package that passes a
		// relative one gets the behaviour of an unknown directory.
		e.cwd = path.Clean(c.Cwd)
		e.callCwd = e.cwd
	}
	e.tier = p.tools.tierOf(e.tool)
	e.kind = p.tools.kindOf(e.tool)
	e.mode = c.Mode
	if e.mode == "" {
		e.mode = p.mode
		if e.agent != nil && e.agent.mode != "" {
			e.mode = e.agent.mode
		}
	}
	e.baseMode = c.Mode
	if e.baseMode == "" {
		e.baseMode = p.mode
	}
	if e.tool == "" {
		s := subject{kind: subjName, tier: e.tier, floor: "the call names no tool", floorLayer: "input", ungrantable: true}
		return e.single(&s)
	}
	var d Decision
	switch e.kind {
	case kindShell:
		d = e.shell(c.Arguments)
	case kindPath, kindPattern, kindSearch, kindPatch:
		d = e.paths(c.Arguments)
	default:
		return e.namedTool(c.Arguments)
	}
	e.applyExecArgs(&d, c.Arguments)
	return d
}

// single decides a call judged as one subject.
func (e *evaluation) single(s *subject) Decision {
	v := e.judge(s)
	d := Decision{Action: v.action, Tier: e.tier, Reason: v.reason, Layer: v.layer}
	e.fromRule(&d, v.rule)
	d.Grantable = d.Action == Ask && !s.ungrantable
	noteAsk(&d, v)
	return d
}

// noteAsk records on d what an asking verdict v demands of grants: an
// explicit ask rule without grantable: true asks every time, and a rule's
// max_age caps the grants its question makes.
func noteAsk(d *Decision, v verdict) {
	if v.action != Ask || v.rule == nil || v.rule.action != Ask {
		return
	}
	if !v.rule.grantable && d.ExplicitAsk == "" {
		d.ExplicitAsk = v.rule.text
	}
	if v.rule.stepUp && d.StepUpRule == "" {
		d.StepUpRule = v.rule.text
	}
	if m := v.rule.maxAge; m > 0 && (d.GrantMaxAge == 0 || m < d.GrantMaxAge) {
		d.GrantMaxAge = m
	}
}

func (e *evaluation) fromRule(d *Decision, r *rule) {
	if r == nil {
		return
	}
	d.Rule = r.text
	d.Route = r.route
	d.ApprovalsRequired = r.approvals
	d.TTL = r.ttl
	d.Escalation = r.escalation
}

// walkChild is the name of a file of a walked directory that no rule
// names: a rule that matches D/walkChild covers every file under D
// (**/.git/** under .git, /etc/** under /etc), whatever their names.
const walkChild = "\x00"

// judge runs one subject through the layers. A denial that only a walk
// reaches (shell.Command.Walks: the rule's directory lies under a path an
// unknown program may walk, not on the path itself) asks: that the
// program walks is the policy's guess.
func (e *evaluation) judge(s *subject) verdict {
	v := e.judgeRules(s)
	if s.walk && v.action == Deny && v.rule != nil {
		plain := *s
		plain.walk = false
		direct := false
		if plain.inexact {
			direct, _ = v.rule.matchesInexact(&plain)
		} else {
			// ag x ~/.ssh names the directory whose every file the rule
			// covers (~/.ssh/**): no guess. A rule on some files of the
			// directory (~/.npmrc for cmake ..) is met only by the walk.
			direct = v.rule.matches(&plain) || v.rule.path != nil && v.rule.path.dir == s.value &&
				v.rule.path.match(s.value+"/"+walkChild, walkChild)
		}
		if !direct {
			// The rule that meets only the walk may hide an earlier one
			// that meets the path itself (last match wins): that one's
			// denial stands.
			if pv := e.judgeRules(&plain); pv.action == Deny {
				return pv
			}
			v.action = Ask
			v.reason = "rule " + v.rule.text + " denies a path under " + strconv.Quote(s.value) +
				", which " + strconv.Quote(s.cmd.Name) + " (a program the policy does not know) may walk"
		}
	}
	return v
}

// judgeRules runs one subject through the layers.
func (e *evaluation) judgeRules(s *subject) verdict {
	if s.inexact {
		return e.judgeInexact(s)
	}
	var hit *rule
	if e.agent != nil {
		if r := e.agent.lastMatch(e, s); r != nil {
			if r.action == Deny {
				// The agent layer's deny is a veto: nothing later may lift it.
				return verdict{action: Deny, rule: r, layer: r.layer.name, reason: e.ruleReason(r, s)}
			}
			hit = r
		}
	}
	static := e.p.static.lastMatch(e, s)
	if static != nil {
		hit = static
	}
	var v verdict
	if hit != nil {
		v = verdict{action: hit.action, rule: hit, layer: hit.layer.name, reason: e.ruleReason(hit, s)}
	} else {
		v = e.modeVerdict(s)
	}
	return e.settle(s, v, hit, static)
}

// settle applies to a layer verdict what no rule may lift: an agent type
// cannot loosen the policy, and a subject's floor makes it at least ask.
func (e *evaluation) settle(s *subject, v verdict, hit, static *rule) verdict {
	if v.action == Allow && static == nil && e.agent != nil && !modeAllows(e.baseMode, s.tier) {
		// Allowed by the agent layer (a rule or its mode) where the static
		// rules say nothing and the call's mode without the agent type
		// asks: an agent cannot talk itself into more by naming a type.
		v = verdict{action: Ask, layer: "mode", reason: e.modeReason(e.baseMode, Ask, s,
			" (agent type "+e.agent.agent+" may restrict the policy, not loosen it)")}
	}
	if s.floor != "" && !s.lifted(hit) {
		switch v.action {
		case Allow:
			v = verdict{action: Ask, layer: s.floorLayer, reason: s.floor}
			if hit != nil {
				v.reason += " (rule " + hit.text + " would allow it)"
			}
		case Ask:
			v.reason += "; " + s.floor
		}
	}
	return v
}

// modeAllows is the modes × tiers table.
func modeAllows(m Mode, t Tier) bool {
	switch m {
	case ModeYolo:
		return true
	case ModeAutoEdit:
		return t == TierRead || t == TierWrite
	default: // always-ask, and anything unexpected
		return t == TierRead
	}
}

// modeLooseness orders the modes by how much they allow.
func modeLooseness(m Mode) int {
	switch m {
	case ModeYolo:
		return 2
	case ModeAutoEdit:
		return 1
	}
	return 0
}

func (e *evaluation) modeVerdict(s *subject) verdict {
	a := Ask
	if modeAllows(e.mode, s.tier) {
		a = Allow
	}
	return verdict{action: a, layer: "mode", reason: e.modeReason(e.mode, a, s, "")}
}

// modeReason says why mode m gives a to s, then note. One concatenation,
// one allocation: this is the hot path of every call no rule covers.
func (e *evaluation) modeReason(m Mode, a Action, s *subject, note string) string {
	switch s.kind {
	case subjCommand:
		return string(m) + " mode " + verb(a) + " " + string(s.tier) + `-tier command "` + quoteInner(s.value) + `"` + note
	case subjRedirect:
		return string(m) + " mode " + verb(a) + " " + string(s.tier) + `-tier redirect to "` + quoteInner(s.value) + `"` + note
	case subjRead:
		return string(m) + " mode " + verb(a) + ` read of "` + quoteInner(s.value) + `"` + note
	}
	// The mode judges paths by the tool's tier alone: naming the path
	// would suggest otherwise.
	return string(m) + " mode " + verb(a) + " " + string(s.tier) + "-tier tool " + e.name + note
}

func (e *evaluation) ruleReason(r *rule, s *subject) string {
	agent := ""
	if r.layer.agent != "" {
		agent = " (agent " + r.layer.agent + ")"
	}
	note := ""
	if r.reason != "" {
		note = ": " + r.reason
	}
	switch s.kind {
	case subjName:
		return "rule " + r.text + agent + " " + verb(r.action) + " " + e.name + note
	case subjRedirect:
		return "rule " + r.text + agent + " " + verb(r.action) + ` redirect to "` + quoteInner(s.value) + `"` + note
	case subjRead:
		return "rule " + r.text + agent + " " + verb(r.action) + ` read of "` + quoteInner(s.value) + `"` + note
	}
	return "rule " + r.text + agent + " " + verb(r.action) + ` "` + quoteInner(s.value) + `"` + note
}

// quoteInner returns s as it appears between the quotes of strconv.Quote,
// without allocating when s needs no escapes (the common case).
func quoteInner(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			q := strconv.Quote(s)
			return q[1 : len(q)-1]
		}
	}
	return s
}

func verb(a Action) string {
	switch a {
	case Allow:
		return "allows"
	case Deny:
		return "denies"
	}
	return "asks for"
}

// strictness orders actions: Deny > Ask > Allow.
func strictness(a Action) int {
	switch a {
	case Allow:
		return 0
	case Deny:
		return 2
	}
	return 1
}

// lastMatch returns the last rule of the layer that matches the subject, or
// nil. The candidate lists come from the indexes and hold rule positions in
// ascending order; merging them from the end visits candidates in reverse
// rule order, so the first match is the last matching rule of the layer.
func (l *ruleLayer) lastMatch(e *evaluation, s *subject) *rule {
	if l.paths != nil && indexablePath(s) {
		return l.lastPathMatch(e, s)
	}
	c := l.lists(e, s, false)
	return l.lastOf(&c, s)
}

// candidateLists are the lists of rule positions that may judge a subject;
// the rules of list weak (-1: none) count only when they are not allows.
type candidateLists struct {
	lists [6][]int32
	n     int
	weak  int
}

func (c *candidateLists) add(list []int32) {
	c.lists[c.n] = list
	c.n++
}

// lists returns the candidate lists of the subject; with open, each
// without the rules the path index files (pathindex.go).
func (l *ruleLayer) lists(e *evaluation, s *subject, open bool) candidateLists {
	c := candidateLists{weak: -1}
	writes, reads, byTool := l.writes, l.reads, l.byTool
	if open {
		writes, reads, byTool = l.writesOpen, l.readsOpen, l.byToolOpen
	}
	switch s.kind {
	case subjRedirect:
		c.add(writes)
		return c
	case subjRead:
		c.add(reads)
		return c
	}
	si := l.shell[e.tool]
	m := l.multiRules(e)
	if s.kind == subjCommand {
		c.add(m.cmdOpen)
		c.add(m.cmdByWord[s.key])
		if si != nil {
			c.add(si.byWord[s.key])
			c.add(si.any)
		}
		if s.qualified && s.baseKey != s.key {
			c.add(m.cmdByWord[s.baseKey])
			if si != nil {
				c.add(si.byWord[s.baseKey])
			}
		}
		return c
	}
	c.add(byTool[e.tool])
	if open {
		c.add(m.open)
	} else {
		c.add(m.all)
	}
	if si != nil {
		c.add(si.any)
		if open {
			c.lists[c.n-1] = si.anyOpen
		}
	}
	// A read or a write of a path is the same act whatever file tool does
	// it: the deny and ask rules of the tier's other file tools
	// (read_file(**/.ssh/**) for Read, write_file(**/.env) for Write) judge
	// it too, as they judge the files shell commands read and write. Their
	// allows do not.
	if s.kind == subjPath {
		switch e.tier {
		case TierRead:
			c.weak = c.n
			c.add(reads)
		case TierWrite:
			c.weak = c.n
			c.add(writes)
		}
	}
	return c
}

// lastOf returns the last rule of the candidate lists that matches the
// subject. A rule on several lists is visited once per list, first on the
// list that comes first, which is never the weak one.
func (l *ruleLayer) lastOf(c *candidateLists, s *subject) *rule {
	var pos [6]int
	for i := 0; i < c.n; i++ {
		pos[i] = len(c.lists[i])
	}
	for {
		best, bestIdx := -1, int32(-1)
		for i := 0; i < c.n; i++ {
			if pos[i] > 0 && c.lists[i][pos[i]-1] > bestIdx {
				best, bestIdx = i, c.lists[i][pos[i]-1]
			}
		}
		if best < 0 {
			return nil
		}
		pos[best]--
		if r := &l.rules[bestIdx]; r.matches(s) && (best != c.weak || r.action != Allow) {
			return r
		}
	}
}

// matches reports whether the rule's pattern matches the subject (the tool
// name has been checked by the caller).
func (r *rule) matches(s *subject) bool {
	if !r.readsArgument(s.kind) {
		return false
	}
	if r.anyArgs {
		return true
	}
	if s.explicit && r.source == srcAny {
		return false
	}
	switch s.kind {
	case subjPath, subjPattern, subjRedirect, subjRead:
		return r.matchesPath(s)
	case subjCommand:
		return r.matchesCommand(s)
	}
	return false
}

// readsArgument reports whether the rule's argument match applies to a
// subject of kind: a rule that names its argument (path:, pattern:,
// command:) applies only to subjects of that kind, and never to a subject
// with no argument to match; a rule that names none applies to any.
func (r *rule) readsArgument(kind subjectKind) bool {
	if r.source == srcAny {
		return true
	}
	switch kind {
	case subjPath, subjRedirect, subjRead:
		return r.source == srcPath
	case subjPattern:
		return r.source == srcPattern
	case subjCommand:
		return r.source == srcCommand
	}
	return false // no argument to match
}

// matchesPath reports whether the rule's path pattern matches a path
// subject as written; a deny or ask rule also meets what a walk or a
// recursive read reaches, the path under a Windows profile or under any
// directory above the working one, and the path in any case.
func (r *rule) matchesPath(s *subject) bool {
	if r.path == nil {
		return false
	}
	if s.recursive {
		if r.path.matchTree(s.value, s.base) || s.rel != "" && s.rel != s.value && !r.path.abs && r.path.matchTree(s.rel, s.base) {
			return true
		}

	} else if r.path.match(s.value, s.base) || s.rel != "" && s.rel != s.value && !r.path.abs && r.path.match(s.rel, s.base) {
		return true
	} else if s.walk && r.action != Allow && (r.path.dirUnder(s.value) || s.rel != "" && !r.path.abs && r.path.dirUnder(s.rel) ||
		r.path.match(s.value+"/"+walkChild, walkChild) || s.rel != "" && !r.path.abs && r.path.match(s.rel+"/"+walkChild, walkChild)) {
		// Anchored under the walked directory, or covering whatever
		// it holds (**/.git/** meets a walk of .git).
		return true
	}
	if r.action == Allow {
		return false
	}
	if s.recursive && (r.path.treeMeets(s.value) || r.path.fold.treeMeets(globs.Fold(s.value))) {
		// In any case too (grep -r x /mnt/c/USERS: red team AV F2).
		return true
	}
	if h := s.profile; h != "" &&
		(r.path.match(h, s.base) || s.recursive && r.path.matchTree(h, s.base) || r.path.foldedMatch(h, s.base, s.recursive)) {
		// A Windows profile seen from WSL, Git Bash or Cygwin is a
		// second home: the home's deny and ask rules meet it.
		return true
	}
	// A relative deny or ask rule names the project's paths
	// (secrets/**), and the project may be the working directory or
	// any directory above it: the agent may have moved into a
	// sub-directory (red team AK F12: after cd sub, cat
	// ../secrets/key was allowed). It meets the path's form under
	// each of them. An allow stays anchored at the working directory.
	if !r.path.abs {
		for rel := range s.upRels {
			if r.path.match(rel, s.base) || s.recursive && r.path.matchTree(rel, s.base) ||
				r.path.foldedMatch(rel, s.base, s.recursive) {
				return true
			}
		}
	}
	// A deny or ask rule meets the path in any case: a case-insensitive
	// file system opens .env for .ENV. An allow must match as written.
	return r.path.foldedMatch(s.value, s.base, s.recursive) ||
		s.rel != "" && s.rel != s.value && !r.path.abs && r.path.foldedMatch(s.rel, s.base, s.recursive)
}

// matchesCommand reports whether the rule's shell pattern matches a
// command subject: as written or without its global options, and for a
// deny or ask rule also as joined or by its base name.
func (r *rule) matchesCommand(s *subject) bool {
	if !r.shell {
		return false
	}
	if (r.shellKey == "" || r.shellKey == s.key) && globs.Match(r.shellPattern, s.value) {
		return true
	}
	// Global options are skipped: git -C dir status meets the rules of
	// git status.
	if s.short != "" && (r.shellKey == "" || r.shellKey == s.key) && globs.Match(r.shellPattern, s.short) {
		return true
	}
	if s.joined != "" && r.action != Allow && (r.shellKey == "" || r.shellKey == commandKey(s.joined)) &&
		globs.Match(r.shellPattern, s.joined) {
		return true
	}
	// A path-qualified command (/bin/rm) meets deny and ask rules in its
	// base-name form too, so a deny of rm cannot be dodged by spelling
	// the path; an allow must name the path itself.
	if s.qualified && r.action != Allow && (r.shellKey == "" || r.shellKey == s.baseKey) {
		return globs.Match(r.shellPattern, s.base)
	}
	return false
}

// paths decides a call of a path tool, glob, grep or patch: every
// path-like argument (one string or a list of them, under any of the
// spellings of pathArgs) and every path a patch touches is judged, and the
// strictest verdict wins. A file tool whose path cannot be found asks.
func (e *evaluation) paths(args json.RawMessage) Decision {
	var buf [4]argValue
	// A file tool with glob arguments (Grep's glob, read_many_files'
	// include) is judged on the files they match (filetools.go).
	sp := fileToolSpecs[e.tool]
	names := e.pathArgNames(sp)
	vals, err := scanArgs(buf[:0], args, names)
	if err != nil {
		s := subject{kind: subjName, tier: e.tier, floor: err.Error(), floorLayer: "input", ungrantable: true}
		return e.single(&s)
	}
	var sbuf [4]subject
	subs := sbuf[:0]
	if f, ok := e.pathAccess(args); ok {
		subs = append(subs, f)
	}
	// Glob, grep and the tools that read a directory's files read the
	// whole tree under their path.
	tree := treeTools[e.tool] || dirTools[e.tool] || e.kind == kindPattern || e.kind == kindSearch
	var strs [4]string
	var pending []pendingGlob
	var roots []string // the directories a search tool searches
	for _, v := range vals {
		if slices.Contains(patchArgs, v.key) {
			subs = e.appendPatchSubjects(subs, v)
			continue
		}
		list, ok := argStrings(v.raw, strs[:0])
		if !ok {
			subs = append(subs, subject{kind: subjName, tier: e.tier,
				floor: "argument " + v.key + " is not a string or a list of strings", floorLayer: "input", ungrantable: true})
			continue
		}
		var ga *globArg
		if sp != nil {
			ga = sp.arg(v.key)
		}
		for _, str := range list {
			if str == "" {
				continue
			}
			if ga != nil {
				// A glob argument is judged on the files it matches; a
				// plain path of read_many_files' paths stays a path, and
				// Glob's pattern (under its path, even when plain) is
				// matched as written by the rules of its pattern too.
				if ga.role != roleRooted || hasGlobMeta(str) || sp.underPath {
					pending = append(pending, pendingGlob{arg: ga, key: v.key, text: str})
					if v.key != "pattern" {
						continue
					}
				}
			} else if sp != nil && sp.underPath && slices.Contains(pathArgs, v.key) {
				roots = append(roots, str)
			}
			kind := subjPath
			if v.key == "pattern" {
				kind = subjPattern
			}
			s := e.pathSubject(kind, e.tier, str)
			s.explicit = kind == subjPattern && e.kind == kindSearch
			s.recursive = tree && kind == subjPath && (ga != nil || !slices.Contains(filterArgs, v.key))
			subs = append(subs, s)
			if kind == subjPath && e.readsArg(v.key) {
				subs = append(subs, readTwin(&s, slices.Contains(sourceArgs, v.key)))
			}
		}
	}
	for _, g := range pending {
		subs = e.appendGlobSubjects(subs, g, roots)
	}
	if sp != nil {
		subs = e.unknownArgs(subs, sp, args, names)
	}
	return e.pathsDecision(subs, names)
}

// pathArgNames are the arguments a path tool's paths are read from: the
// spellings of its kind's path arguments and its glob arguments.
func (e *evaluation) pathArgNames(sp *fileToolSpec) []string {
	names := pathArgs
	switch e.kind {
	case kindPattern, kindSearch:
		names = patternAndPathArgs
	case kindPatch:
		names = patchAndPathArgs
	}
	if sp != nil {
		names = slices.Clone(names)
		for _, g := range sp.globs {
			if !slices.Contains(names, g.key) {
				names = append(names, g.key)
			}
		}
	}
	return names
}

// pathsDecision combines the subjects of a path tool's call, with the
// safety overrides of a write; with none, the call asks for a file tool
// whose path was not found.
func (e *evaluation) pathsDecision(subs []subject, names []string) Decision {
	if len(subs) == 0 {
		s := subject{kind: subjName, tier: e.tier}
		if e.tier == TierRead || e.tier == TierWrite {
			// A file tool whose path is not where the policy looks must not
			// pass as a harmless call.
			s.floor, s.floorLayer = "no path argument found for "+e.name+" (looked for "+strings.Join(names, ", ")+")", "input"
		}
		return e.single(&s)
	}
	var d Decision
	if len(subs) == 1 {
		d = e.single(&subs[0])
	} else {
		d = e.combine(subs, nil)
	}
	if e.tier == TierWrite {
		var safety []string
		for i := range subs {
			if subs[i].kind == subjPath {
				if r := pathSafety(subs[i].value); r != "" && !slices.Contains(safety, r) {
					safety = append(safety, r)
				}
				if r := e.outsideWorkspace(&subs[i]); r != "" && !slices.Contains(safety, r) {
					safety = append(safety, r)
				}
			}
		}
		e.applySafety(&d, safety)
	}
	return d
}

// appendPatchSubjects appends to subs the subjects of a patch argument:
// every path the patch touches, and a floor for a patch that cannot be
// read.
func (e *evaluation) appendPatchSubjects(subs []subject, v argValue) []subject {
	text, ok := argString(v.raw)
	if !ok {
		return append(subs, subject{kind: subjName, tier: e.tier,
			floor: "argument " + v.key + " is not a string", floorLayer: "input", ungrantable: true})
	}
	files, bad := shell.PatchPaths(text)
	if bad != "" {
		subs = append(subs, subject{kind: subjName, tier: e.tier, floor: bad, floorLayer: "input", ungrantable: true})
	}
	// A file the patch updates, or a diff's source, is read as well as
	// written (the patch's context is checked against it; a moved file's
	// content goes where the agent reads it).
	for _, f := range files {
		s := e.pathSubject(subjPath, e.tier, f.Path)
		s.recursive = f.Tree
		subs = append(subs, s)
		if f.Read && e.tier != TierRead {
			subs = append(subs, readTwin(&s, false))
		}
	}
	return subs
}

// pathSubject makes the subject of a path value: home expanded, resolved
// against the call's working directory, cleaned; a relative path that
// climbs out of an unknown working directory gets a floor.
func (e *evaluation) pathSubject(kind subjectKind, tier Tier, v string) subject {
	s := subject{kind: kind, tier: tier}
	e.cdFloor(&s, v)
	var escapes bool
	s.value, s.base, s.rel, escapes = e.resolvePath(v)
	s.cwd = e.cwd
	if phys, opaque := e.kernelPathOf(v, s.value); opaque {
		if s.floor == "" {
			s.floor, s.floorLayer = "path "+strconv.Quote(v)+" goes through a link (a process's working directory or open file, or a .. from outside the working directory and the home) whose target the policy cannot see", "safety"
		}
	} else if phys != "" && phys != s.value {
		// /proc/self/root/etc/hosts is /etc/hosts.
		s.value, s.base, s.rel, _ = e.resolvePath(phys)
	}
	if s.floor == "" && e.kind != kindShell && (rawDevice(s.value) ||
		strings.HasPrefix(s.value, "/proc/") && strings.Contains(s.value+"/", "/fd/")) {
		// Read /dev/sda, Grep /dev/loop0, Read /proc/self/environ (red
		// team AO F12): a file tool reaches a device or the host's memory
		// as a command does (the shell's reads have their own floor), and
		// a descriptor of the host's is a file the policy cannot name.
		s.floor, s.floorLayer = "path "+strconv.Quote(v)+" is a device or a process's memory or open file (a disk, memory, the environment), which holds the bytes of files no rule names", "safety"
	}
	if escapes && kind != subjRead && s.floor == "" {
		what := "path "
		if kind == subjRedirect {
			what = "redirect target "
		}
		s.floor, s.floorLayer = what+strconv.Quote(v)+" escapes the working directory", "safety"
	}
	if s.floor == "" && e.kind != kindShell && strings.ContainsRune(v, '\\') {
		// deploy\id_rsa names deploy/id_rsa to a host that turns \ into
		// / (Gemini; red team AQ F16), a file of that name to another.
		s.floor, s.floorLayer = "path "+strconv.Quote(v)+" holds a backslash, which a host may read as a path separator", "safety"
	}
	if i := strings.IndexFunc(v, isControl); i >= 0 && s.floor == "" {
		// read_file {"path": "~/.npmrc\u0000x"}: the system call ends
		// the path at a NUL (where the host does not refuse it), so no
		// rule on the file's name meets the text.
		s.floor, s.floorLayer, s.ungrantable = "path "+strconv.Quote(v)+" holds a control character, where a system call may end it", "safety", true
	}
	s.profile = profileAlias(s.value, e.p.home)
	return s
}

// isControl reports the C0 controls and DEL, which no file name a person
// reads holds, and NUL, which ends a path for the kernel.
func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// kernelPath resolves the kernel's magic links in p, an absolute path not
// yet cleaned, as the kernel walks it: component by component, following
// a link before a later ".." climbs from its target — so
// /proc/self/root/../etc/x is /etc/x, and /dev/fd/../cwd is
// /proc/self/cwd (/dev/fd is /proc/self/fd), which lexical cleaning would
// make /dev/cwd. /proc/PID/root (and /proc/PID/task/TID/root) is the root
// directory. A process's cwd, an open file that is a directory
// (/proc/PID/fd/N/…, /dev/fd/N/…, /dev/stdin/…) and map_files have
// targets the policy cannot know: the path is opaque. An fd alone
// (/dev/fd/3, /dev/stdin) is not: what it reads was judged where it was
// opened — except another process's (cat /proc/1234/fd/0 while it reads
// .env), which was never judged.
//
// A ".." elsewhere climbs from a directory that may itself be a link the
// system made (/var/run is /run, /proc/net is /proc/self/net, macOS's /tmp
// is /private/tmp): it is read lexically only where it climbs from under
// one of the trusted directories (the working directory, the home) or
// from one of their ancestors, and is opaque everywhere else.
func kernelPath(p string, trusted ...string) (phys string, opaque bool) {
	stack := make([]string, 0, 8)
	comps := strings.Split(p, "/")
	for i, c := range comps {
		switch c {
		case "", ".":
			continue
		case "..":
			if len(stack) > 0 {
				if !underAnyDir("/"+strings.Join(stack, "/"), trusted) {
					return "", true
				}
				stack = stack[:len(stack)-1]
			}
			continue
		}
		stack = append(stack, c)
		// A link's target may end in another (/dev/stdin is
		// /proc/self/fd/0): step until the stack is no link.
		for link := true; link && len(stack) > 0; {
			if stack, link, opaque = kernelStep(stack, i == len(comps)-1); opaque {
				return "", true
			}
		}
	}
	return "/" + strings.Join(stack, "/"), false
}

// underAnyDir reports whether p is one of dirs or an ancestor of one: the
// working directory's path is physical, so each of its ancestors is a
// real directory whose parent its text names. A directory below one may
// be a link (node_modules/@scope/pkg, which a workspace links to
// ../../packages/pkg), from whose target the kernel climbs.
func underAnyDir(p string, dirs []string) bool {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if _, ok := underDir(d, p); ok {
			return true
		}
	}
	return false
}

// kernelStep looks at the path stack just extended by one component and
// replaces a magic link it now ends in by its target; opaque when the
// target cannot be known (last: no component follows).
func kernelStep(stack []string, last bool) (_ []string, link, opaque bool) {
	n := len(stack)
	if stack[0] == "dev" && n == 2 {
		switch stack[1] {
		case "fd":
			return append(stack[:0], "proc", "self", "fd"), true, false
		case "stdin", "stdout", "stderr":
			fd := map[string]string{"stdin": "0", "stdout": "1", "stderr": "2"}[stack[1]]
			return append(stack[:0], "proc", "self", "fd", fd), true, false
		}
		return stack, false, false
	}
	if stack[0] != "proc" || n < 2 {
		return stack, false, false
	}
	if n == 2 && stack[1] == "thread-self" {
		return append(stack[:1], "self", "task", "self"), true, false
	}
	at := 2 // the link's index: /proc/PID/LINK or /proc/PID/task/TID/LINK
	if n > 3 && stack[2] == "task" {
		at = 4
	}
	switch {
	case n == at+1:
		switch stack[at] {
		case "root":
			return stack[:0], true, false
		case "cwd", "map_files":
			return stack, false, true
		}
	case n == at+2 && (stack[at] == "fd" || stack[at] == "fdinfo"):
		return stack, false, !last || stack[1] != "self"
	case n > at+2 && (stack[at] == "fd" || stack[at] == "fdinfo"):
		return stack, false, true
	}
	return stack, false, false
}

// kernelLinkGlobs are the paths kernelLink cannot read, as globs a
// pattern or expansion is checked against (cat /proc/*/fd/*).
var kernelLinkGlobs = []globs.Glob{
	globs.FromShellPattern("/proc/*/fd"), globs.FromShellPattern("/proc/*/fd/*"),
	globs.FromShellPattern("/proc/*/fdinfo/*"), globs.FromShellPattern("/proc/*/cwd"),
	globs.FromShellPattern("/proc/*/cwd/*"), globs.FromShellPattern("/proc/*/root"),
	globs.FromShellPattern("/proc/*/root/*"), globs.FromShellPattern("/proc/*/map_files/*"),
	globs.FromShellPattern("/dev/fd/*/*"), globs.FromShellPattern("/dev/std*/*"),
}

// kernelLinkGlob reports whether an absolute path pattern may name one
// of them (/pro[c]/*/fd/0, /*/1/cwd/x); an expansion that starts the
// path ("$f") is met by the rules as any other.
func kernelLinkGlob(g globs.Glob) bool {
	if len(g) == 0 || !g[0].Lit() || g[0].R != '/' {
		return false
	}
	for _, k := range kernelLinkGlobs {
		if globs.Intersects(g, k) {
			return true
		}
	}
	return false
}

// cdFloor gives a subject of the relative path v a floor when the script
// changed directory to somewhere v can no longer be placed (cdAway).
func (e *evaluation) cdFloor(s *subject, v string) {
	away := e.cdAway
	if s.kind == subjRead {
		away = e.cdAwayRead
	}
	if away == "" || s.floor != "" {
		return
	}
	if x, _ := globs.ExpandHome(v, e.p.home); !path.IsAbs(x) {
		s.floor, s.floorLayer = "the script changes directory ("+away+"), so "+strconv.Quote(v)+" may be anywhere", "safety"
	}
}

// kernelPathOf is kernelPath of v placed as resolvePath places it, before
// any cleaning (clean, resolvePath's result, when no ".." climbs): "" when v stays relative (no working directory), unless a
// ".." follows a proc or dev component there, which makes it opaque.
func (e *evaluation) kernelPathOf(v, clean string) (phys string, opaque bool) {
	if !strings.Contains(v, "..") && !strings.Contains(e.relBase, "..") {
		// Nothing climbs: the cleaned path is the walked one.
		if clean == "/proc" || clean == "/dev" || strings.HasPrefix(clean, "/proc/") || strings.HasPrefix(clean, "/dev/") {
			return kernelPath(clean, e.trustedCwd(), e.p.home)
		}
		return "", false
	}
	raw, _ := globs.ExpandHome(v, e.p.home)
	if !path.IsAbs(raw) && e.relBase != "" {
		raw = e.relBase + "/" + raw
	}
	if !path.IsAbs(raw) && e.cwd != "" {
		raw = e.cwd + "/" + raw
	}
	if !path.IsAbs(raw) {
		return "", globs.KernelDotDot(raw)
	}
	return kernelPath(raw, e.trustedCwd(), e.p.home)
}

// systemLinks are directories that are, or lie under, links the system
// makes (/var/run is /run, /proc/net is /proc/self/net): a working
// directory there is not the directory its text names, so a .. from it is
// not read as written.
var systemLinks = []string{"/var/run", "/var/lock", "/proc", "/dev", "/etc/alternatives"}

// trustedCwd is the working directory a .. may climb from as written: the
// call's, unless it lies under one of systemLinks.
func (e *evaluation) trustedCwd() string {
	if underAnyDirOnly(e.cwd, systemLinks) {
		return ""
	}
	return e.cwd
}

// underAnyDirOnly reports whether p lies in one of dirs (or is one).
func underAnyDirOnly(p string, dirs []string) bool {
	if p == "" {
		return false
	}
	for _, d := range dirs {
		if _, ok := underDir(p, d); ok {
			return true
		}
	}
	return false
}

// resolvePath cleans v as rules see it (see cleanPath) and, when the call
// has a working directory, makes a relative v absolute under it; rel is
// the path relative to the working directory when it lies inside it (or
// the cleaned relative path when there is none), which relative rule
// patterns match.
func (e *evaluation) resolvePath(v string) (clean, base, rel string, escapes bool) {
	if e.relBase != "" {
		if x, _ := globs.ExpandHome(v, e.p.home); !path.IsAbs(x) {
			v = e.relBase + "/" + v
		}
	}
	clean, base, escapes = cleanPath(v, e.p.home)
	if e.cwd == "" {
		if !path.IsAbs(clean) {
			rel = clean
		}
		return clean, base, rel, escapes
	}
	if !path.IsAbs(clean) {
		clean = path.Join(e.cwd, clean)
		base = path.Base(clean)
	}
	if r, ok := underDir(clean, e.cwd); ok {
		rel = r
	}
	return clean, base, rel, false
}

// underDir reports whether p lies in dir (or is dir), and its path
// relative to dir ("." for dir itself).
func underDir(p, dir string) (string, bool) {
	if p == dir {
		return ".", true
	}
	if dir == "/" {
		return p[1:], true
	}
	if strings.HasPrefix(p, dir) && p[len(dir)] == '/' {
		return p[len(dir)+1:], true
	}
	return "", false
}

// outsideWorkspace returns the safety reason of a write outside the
// workspace in auto-edit mode, or "". The workspace is the policy's
// workspace: directories, "." standing for the call's working directory
// (the default). Without a working directory, "." covers relative paths
// (they land wherever the agent runs, which is its own directory) but no
// absolute or home path.
func (e *evaluation) outsideWorkspace(s *subject) string {
	if e.mode != ModeAutoEdit || s.value == "" {
		return ""
	}
	for _, w := range e.p.workspaceDirs() {
		if w == "." {
			if e.callCwd == "" && !path.IsAbs(s.value) {
				return ""
			}
			if e.callCwd != "" {
				if _, ok := underDir(s.value, e.callCwd); ok {
					return ""
				}
			}
			continue
		}
		if _, ok := underDir(s.value, w); ok {
			return ""
		}
	}
	return "writes " + s.value + ", outside the workspace"
}

var (
	patternAndPathArgs = append(append(slices.Clone(patternArgs), filterArgs...), pathArgs...)
	patchAndPathArgs   = append(slices.Clone(patchArgs), pathArgs...)
)

// combine judges every subject and keeps the strictest verdict. When
// subcommands is non-nil, each command/redirect verdict is recorded there.
func (e *evaluation) combine(subs []subject, subcommands *[]Subcommand) Decision {
	var (
		best     verdict
		grantOK  = true
		bestRank = -1
		asks     Decision // collects noteAsk over the asking subjects
	)
	for i := range subs {
		s := &subs[i]
		v := e.judge(s)
		if s.ungrantable {
			grantOK = false
		}
		noteAsk(&asks, v)
		if subcommands != nil && (s.kind == subjCommand || s.kind == subjRedirect || s.kind == subjRead) {
			sc := Subcommand{Command: s.value, Kind: "command", Action: v.action, Reason: v.reason}
			if s.kind == subjRedirect {
				sc.Kind = "redirect"
			} else if s.kind == subjRead {
				sc.Kind = "read"
			} else if s.cmd != nil {
				sc.Words = s.cmd.Words
			}
			if v.rule != nil {
				sc.Rule = v.rule.text
			}
			*subcommands = append(*subcommands, sc)
		}
		// The deciding subject is the first with the strictest action,
		// preferring one whose rule routes the question, then any rule over
		// the mode (so the operator's route, ttl and quorum apply).
		rank := strictness(v.action)*4 + ruleRank(v.rule)
		if rank > bestRank {
			best, bestRank = v, rank
		}
	}
	d := Decision{Action: best.action, Tier: e.tier, Reason: best.reason, Layer: best.layer}
	e.fromRule(&d, best.rule)
	d.Grantable = d.Action == Ask && grantOK
	if d.Action == Ask {
		d.ExplicitAsk, d.GrantMaxAge, d.StepUpRule = asks.ExplicitAsk, asks.GrantMaxAge, asks.StepUpRule
	}
	return d
}

func ruleRank(r *rule) int {
	switch {
	case r == nil:
		return 0
	case r.route != "":
		return 2
	}
	return 1
}

// applySafety turns an allow or ask into a question with a safety-override
// reason, except in yolo mode; an explicit deny stays a deny.
func (e *evaluation) applySafety(d *Decision, reasons []string) {
	if len(reasons) == 0 || e.mode == ModeYolo || d.Action == Deny {
		return
	}
	d.SafetyOverride = strings.Join(reasons, "; ")
	if d.Action == Allow {
		d.Rule, d.Route, d.ApprovalsRequired, d.TTL, d.Escalation = "", "", 0, 0, nil
	}
	d.Action = Ask
	d.Layer = "safety"
	d.Reason = "safety override: " + d.SafetyOverride
	d.Grantable = false
}

// shell decides a shell tool call: every simple command and write
// redirection of the script is a subject.
func (e *evaluation) shell(args json.RawMessage) Decision {
	var buf [4]argValue
	var obuf [4]string
	vals, others, err := scanArgsOthers(buf[:0], args, shellArgs, obuf[:0], true)
	if err != nil {
		s := subject{kind: subjName, tier: e.tier, floor: err.Error(), floorLayer: "input", ungrantable: true}
		return e.single(&s)
	}
	var sbuf, fbuf [2]string
	scripts, floors := e.shellScripts(vals, sbuf[:0], fbuf[:0])
	floors = appendUnknownShellArgs(floors, others)
	if len(scripts) == 0 {
		floor := "no command to analyse"
		if len(floors) > 0 {
			floor = floors[0]
		}
		s := subject{kind: subjName, tier: e.tier, floor: floor, floorLayer: "input", ungrantable: true}
		return e.single(&s)
	}
	if shell.ForeignShells[e.tool] {
		// The tool runs another shell's grammar: judged by name, asked
		// unless a rule for the tool takes any arguments.
		s := subject{kind: subjName, tier: e.tier, floor: "the " + e.name +
			" tool runs " + e.tool + " scripts, which the policy does not parse (only bash and POSIX sh are analysed)", floorLayer: "shell", ungrantable: true, liftAny: true}
		return e.single(&s)
	}

	analysis := shell.AnalyzeWith(scripts[0], e.p.progs)
	commands := analysis.Commands
	for _, extra := range scripts[1:] {
		a := shell.AnalyzeWith(extra, e.p.progs)
		commands = append(slices.Clip(commands), a.Commands...)
		// Clipped: a cached analysis is shared (shell_cache.go).
		analysis.Safety = append(slices.Clip(analysis.Safety), a.Safety...)
		if analysis.Unanalysable == "" {
			analysis.Unanalysable = a.Unanalysable
		}
	}
	if analysis.Unanalysable != "" {
		floors = append(floors, "cannot analyse the command: "+analysis.Unanalysable)
	}

	var climb string
	e.cdAway, e.cdAwayRead, climb = cdAway(commands)
	if e.cwd == "" && e.cdAwayRead == "" {
		// cd ..; cat .kube/config without a working directory: the read
		// is placed where the cd leads by its text, which is nowhere the
		// policy knows (red team AX F1): as a written climb, it asks.
		e.cdAwayRead = climb
	}
	var subBuf [8]subject
	subs := subBuf[:0]
	// Clipped, so that adding a path safety reason copies instead of writing
	// into the analysis.
	safety := slices.Clip(analysis.Safety)
	for i := range commands {
		c := &commands[i]
		switch {
		case c.Read:
			subs = append(subs, e.readSubject(c))
		case c.Redirect:
			if s, ok := e.redirectSubject(c, &safety); ok {
				subs = append(subs, s)
			}
		default:
			subs = e.appendCommandSubjects(subs, c)
		}
	}

	d := e.shellVerdict(subs, floors)
	e.applySafety(&d, safety)
	d.Shell = &analysis
	if len(scripts) == 1 && d.Action == Ask {
		// Only a question has an "Always" answer: allows and denies skip
		// the work (the hot path of automatic decisions).
		d.Always = shell.AlwaysPatternsWith(analysis, e.p.progs)
	}
	return d
}

// shellScripts appends to scripts the scripts a shell tool call carries and
// to floors what keeps the call from being allowed as it stands: an
// argument that is not a script, a working directory that is not usable,
// more than one command argument.
func (e *evaluation) shellScripts(vals []argValue, scripts, floors []string) ([]string, []string) {
	commandArgs := 0
	for _, v := range vals {
		if slices.Contains(workdirArgs, v.key) {
			if f := e.workdir(v); f != "" {
				floors = append(floors, f)
			}
			continue
		}
		commandArgs++
		str, ok := argString(v.raw)
		if !ok {
			// Codex's shell tool passes an argv: ["bash", "-lc", "…"].
			if argv, isList := argStrings(v.raw, nil); isList && len(argv) > 0 {
				str, ok = hostShellScript(argv), true
			}
		}
		if !ok {
			floors = append(floors, "argument "+v.key+" is not a string or a list of strings")
			continue
		}
		scripts = append(scripts, str)
	}
	if commandArgs > 1 {
		floors = append(floors, "the call carries more than one command argument")
	}
	return scripts, floors
}

// redirectSubject makes the subject of a write redirection, adding to
// safety the safety reasons of its target; false for a redirection to a
// device sink (/dev/null), which writes nothing.
func (e *evaluation) redirectSubject(c *shell.Command, safety *[]string) (subject, bool) {
	s := subject{kind: subjRedirect, tier: TierWrite, cmd: c}
	switch {
	case c.Unanalysable != "":
		s.value = c.Target
		s.floor, s.floorLayer, s.ungrantable = "cannot analyse redirect: "+c.Unanalysable, "shell", true
		e.inexactPath(&s, c)
	case c.Target == "":
		s.floor, s.floorLayer, s.ungrantable = "cannot tell where a redirect writes", "shell", true
	case c.Globs != nil:
		s.value = c.Target
		e.inexactPath(&s, c)
		s.anchored = c.Fed && !c.FedAny
		if r := e.fedOutsideWorkspace(c); r != "" && !slices.Contains(*safety, r) {
			*safety = append(*safety, r)
		}
		if r := e.placedOutsideWorkspace(&s); r != "" && !slices.Contains(*safety, r) {
			*safety = append(*safety, r)
		}
		if e.cwd == "" && escapesAll(s.globs) && s.floor == "" {
			s.floor, s.floorLayer = "redirect target "+strconv.Quote(c.Target)+" may escape the working directory", "safety"
		}
	default:
		s = e.pathSubject(subjRedirect, TierWrite, c.Target)
		s.cmd = c
		if isDeviceSink(s.value) {
			return s, false
		}
		if r := pathSafety(s.value); r != "" && !slices.Contains(*safety, r) {
			*safety = append(*safety, r)
		}
		if r := e.outsideWorkspace(&s); r != "" && !slices.Contains(*safety, r) {
			*safety = append(*safety, r)
		}
	}
	e.cdFloor(&s, c.Target)
	if c.Elevated && s.floor == "" {
		s.floor, s.floorLayer, s.ungrantable = "redirect to "+strconv.Quote(c.Target)+" runs elevated ("+e.elevator(c)+")", "shell", true
	}
	s.recursive = c.Recursive
	if c.Opaque && s.floor == "" {
		switch r := e.floatingWriteRule(c.Commit); {
		case r != nil && c.Commit:
			// git checkout REV: a commit's files, any names.
			s.floor, s.floorLayer = "writes the files of a commit under "+strconv.Quote(s.value)+
				", which the policy does not see and rule "+r.text+" may name", "safety"
		case r != nil:
			// tar xf a.tar: a member may be .git/config or .env anywhere
			// under the tree; which ones, the policy cannot see.
			s.floor, s.floorLayer = "writes files it does not name under "+strconv.Quote(s.value)+
				" (an archive's members, a copied tree, a patch), which rule "+r.text+" may name", "safety"
		}
	}
	return s, true
}

// appendCommandSubjects appends to subs the subjects of a simple command:
// the command itself, then each file it reads.
func (e *evaluation) appendCommandSubjects(subs []subject, c *shell.Command) []subject {
	s := subject{kind: subjCommand, tier: e.tier, cmd: c}
	s.value, s.short = shell.CommandTexts(c)
	if s.short == s.value {
		s.short = ""
	}
	if c.Globs == nil && strings.IndexByte(s.value, '\'') >= 0 {
		// Deny and ask rules also meet the words joined as they are: a
		// rule written without quotes (ssh -o ProxyCommand*) meets ssh -o
		// 'ProxyCommand x'.
		if j := strings.Join(c.Words, " "); j != s.value {
			s.joined = j
		}
	}
	s.key = commandKey(s.value)
	if c.PathQualified && len(c.Words) > 0 {
		s.qualified = true
		name, first := c.Name, c.Words[0]
		if c.Globs == nil {
			name, first = shell.QuoteWord(name), shell.QuoteWord(first)
		}
		s.base = name + strings.TrimPrefix(s.value, first)
		s.baseKey = commandKey(s.base)
	}
	if c.Globs != nil {
		s.inexact = true
		s.globs, s.baseGlobs = c.Globs, c.BaseGlobs
		s.unknownName = len(c.Words) > 0 && c.Name != path.Base(c.Words[0]) || c.Name == "" ||
			strings.HasPrefix(c.Unanalysable, "command name") || c.UnknownCode
		if c.BaseGlobs != nil {
			s.qualified = true
		}
	}
	switch {
	case c.Unanalysable != "":
		what := "command"
		if s.value != "" {
			what = strconv.Quote(s.value)
		}
		s.floor, s.floorLayer, s.ungrantable = "cannot analyse "+what+": "+c.Unanalysable, "shell", true
		if c.Foreign {
			s.liftKey = c.Name
		}
	case c.Elevated:
		s.floor, s.floorLayer, s.ungrantable = strconv.Quote(s.value)+" runs elevated ("+e.elevator(c)+")", "shell", true
	}
	return e.appendReadSubjects(append(subs, s), c)
}

// appendReadSubjects appends the subjects of the paths command c reads
// (each judged as a possible write too where the program is not known:
// mayWrite).
func (e *evaluation) appendReadSubjects(subs []subject, c *shell.Command) []subject {
	first := len(subs)
	for i, r := range c.Reads {
		if i < len(c.ReadGlobs) && c.ReadGlobs[i] != nil {
			rs := e.readGlobSubject(c, r, c.ReadGlobs[i], i < len(c.ReadAny) && c.ReadAny[i])
			if rs.floor == "" && slices.ContainsFunc(rs.globs, func(g globs.Glob) bool {
				// An absolute pattern (cat /dev/vd*); a computed value
				// meets every rule already.
				return len(g) > 0 && g[0].Lit() && g[0].R == '/' && !plainFilesUnder(g) &&
					slices.ContainsFunc(devicesGlobs, func(d globs.Glob) bool { return globs.Intersects(g, d) })
			}) {
				rs.floor, rs.floorLayer = "read of "+strconv.Quote(r)+" may read a device (a disk, memory), which holds the bytes of files no rule names", "safety"
			}
			if len(c.CwdReads) > 0 {
				// An unknown program's pattern or expansion may be what it
				// writes; a partial entry's (docker build --build-arg
				// SHA=$(git rev-parse HEAD)) is its project's argument.
				e.mayWrite(&rs)
			}
			subs = append(subs, rs)
			continue
		}
		rs := e.pathSubject(subjRead, TierRead, r)
		rs.recursive = c.Recursive
		rs.walk = c.Walks && !c.Recursive
		rs.cmd = c
		if rs.floor == "" && e.cwd == "" && (rs.value == ".." || strings.HasPrefix(rs.value, "../")) &&
			(slices.Contains(c.Words, r) || !slices.Contains(c.Reads, strings.TrimPrefix(r, "../"))) {
			// Without a working directory, cat ../../.kube/config (or
			// git -C .. diff --no-index .kube/config e, which the
			// analysis reads as ../.kube/config) is judged by its text
			// alone, which no rule anchored at the home meets (red team
			// AW F4, AX F1; a cd that climbs is cdAway's): a climb asks,
			// as a file tool's does. Not git show HEAD:x's, which reads
			// the repository's x and is placed under every directory up
			// (x, ../x…): no climb of the agent's.
			rs.floor, rs.floorLayer = "read of "+strconv.Quote(r)+" escapes the working directory", "safety"
		}
		if !slices.Contains(c.CwdReads, i) && !gitRevisionName(r) {
			// A word that names a git revision is no file (pnpm nx
			// affected --head=HEAD, cargo run -- diff HEAD).
			e.mayWrite(&rs)
		}
		if rs.floor == "" && (rawDevice(rs.value) || (rs.recursive || rs.walk) && rs.value == "/dev") {
			rs.floor, rs.floorLayer = "read of "+strconv.Quote(r)+" reads a device (a disk, memory), which holds the bytes of files no rule names", "safety"
		}
		if rs.recursive && rs.floor == "" && (rs.value == "/proc" || strings.HasPrefix(rs.value, "/proc/")) {
			// A tree read under /proc follows its links: cwd, root, fd.
			rs.floor, rs.floorLayer = "recursive read of "+strconv.Quote(r)+" reaches the kernel's links to other files (/proc/PID/cwd, root, fd)", "safety"
		}
		if !slices.ContainsFunc(subs[first:], func(o subject) bool {
			return o.kind == subjRead && o.value == rs.value && o.floor == rs.floor && o.recursive == rs.recursive && o.globs == nil && rs.globs == nil
		}) {
			subs = append(subs, rs) // git's REV:PATH under each ancestor meets the root more than once
		}
	}
	return subs
}

// devicesGlobs are every path under /dev, /proc/kcore, and a process's
// memory and environment (processMemory).
var devicesGlobs = []globs.Glob{globs.FromPathText("/dev/**"), globs.FromPathText("/proc/kcore"),
	globs.FromPathText("/proc/**/mem"), globs.FromPathText("/proc/**/environ")}

// processMemory reports a process's memory or environment under /proc
// (/proc/PID/mem, /proc/self/task/TID/environ): the bytes of whatever the
// process read — a credentials file, a token in its environment — which
// no rule names, as a disk holds them (red team U4).
func processMemory(p string) bool {
	rest, ok := strings.CutPrefix(p, "/proc/")
	if !ok {
		return false
	}
	base := path.Base(rest)
	return (base == "mem" || base == "environ") && rest != base
}

// plainFilesUnder reports a pattern whose literal start keeps it in a
// directory of /dev that holds plain files or the process's own streams
// (/dev/shm/*.log), which rawDevice leaves out too.
func plainFilesUnder(g globs.Glob) bool {
	var b strings.Builder
	for _, t := range g {
		if !t.Lit() {
			break
		}
		b.WriteRune(t.R)
	}
	lit := b.String()
	for _, d := range []string{"/dev/fd/", "/dev/pts/", "/dev/shm/"} {
		if strings.HasPrefix(lit, d) && !strings.Contains(lit, "..") {
			return true
		}
	}
	return false
}

// rawDevice reports whether a read of the clean path p reads a device
// that holds other files' bytes: any path under /dev but the character
// devices every program reads (null, zero, random, the terminal, the
// standard streams, /dev/fd, /dev/pts, /dev/shm's files), and the
// kernel's memory (/proc/kcore). grep -a token /dev/vda1 reads every
// file of the disk.
func rawDevice(p string) bool {
	if p == "/proc/kcore" || processMemory(p) {
		return true
	}
	rest, ok := strings.CutPrefix(p, "/dev/")
	if !ok {
		return false
	}
	switch rest {
	case "null", "zero", "random", "urandom", "full", "tty", "stdin", "stdout", "stderr", "ptmx":
		return false
	}
	for _, d := range []string{"fd/", "pts/", "shm/"} {
		if strings.HasPrefix(rest, d) {
			return false
		}
	}
	return true
}

// recursiveFlag reports a recursive option among an unknown program's
// words: --recursive, or -r/-R alone or in a run of short options (not a
// partial entry's, whose -r may be anything: pip install -r FILE).
func recursiveFlag(words []string) bool {
	for _, w := range words[min(1, len(words)):] {
		if w == "--" {
			return false
		}
		if w == "--recursive" || len(w) > 1 && w[0] == '-' && w[1] != '-' && strings.ContainsAny(w[1:], "rR") {
			return true
		}
	}
	return false
}

// gitRevisionName reports a word that names one of git's symbolic
// revisions, possibly with ~N or ^N after it (HEAD, HEAD~2, ORIG_HEAD^).
func gitRevisionName(w string) bool {
	if i := strings.IndexAny(w, "~^"); i > 0 {
		if strings.TrimLeft(w[i:], "~^0123456789") != "" {
			return false // HEAD~/../Makefile is a path
		}
		w = w[:i]
	}
	switch w {
	case "HEAD", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "AUTO_MERGE":
		return true
	}
	return false
}

// compressedExts are the extensions an unknown decompressor removes (xz
// -d F.xz writes F): the stems mayWrite judges.
var compressedExts = map[string]bool{".xz": true, ".zst": true, ".zstd": true, ".lz4": true, ".lz": true,
	".lzma": true, ".lzo": true, ".z": true, ".br": true, ".bz2": true, ".bz": true, ".gz": true, ".sz": true,
	".zz": true, ".txz": true, ".tzst": true, ".tgz": true, ".tbz": true, ".tbz2": true, ".tlz": true,
	".lzfse": true, ".lrz": true, ".rz": true, ".zpaq": true, ".7z": true, ".uu": true, ".uue": true,
	".age": true, ".gpg": true, ".pgp": true, ".asc": true, ".sig": true, ".enc": true, ".cpt": true,
	".aes": true, ".nc": true, ".vault": true, ".crypt": true, ".bfe": true}

// mayWrite judges a read of a program the table does not know, or knows
// only in part (shell.Command.Walks), as a write too: sponge FILE replaces
// FILE, a tool's unknown option may name its output, and a converter or
// decompressor writes FILE without its extension (xz -d ~/.bashrc.xz
// writes ~/.bashrc; the extensions of compressors and encryptors,
// compressedExts). A deny or ask rule on writing the path (or, as for
// the read, a path under it the program may walk), or on writing its stem,
// makes the read ask whatever the read rules say; a write the rules say
// nothing of changes nothing, so an unknown program's operands are not
// all writes outside the workspace.
func (e *evaluation) mayWrite(rs *subject) {
	c := rs.cmd
	if c == nil || !c.Walks || rs.floor != "" || rs.value == "" {
		return
	}
	ws := *rs
	ws.kind, ws.tier = subjRedirect, TierWrite
	v := e.judgeRules(&ws)
	what := "writing " + strconv.Quote(rs.value)
	if rs.walk {
		what += " (or a path under it)"
	}
	if (v.rule == nil || v.rule.action == Allow) && !rs.inexact {
		v, what = e.derivedWrites(rs, v, what)
	}
	if (v.rule == nil || v.rule.action == Allow) && rs.walk && len(c.CwdReads) > 0 && recursiveFlag(c.Words) {
		// zstd -dr DIR, pigz -r DIR: files it does not name under DIR,
		// which a floating write rule (**/Makefile, **/.git/**) may name.
		if r := e.floatingWriteRule(false); r != nil {
			rs.floor, rs.floorLayer = "rule "+r.text+" may name a file "+strconv.Quote(c.Name)+
				" (a program the policy does not know all the effects of) writes under "+strconv.Quote(rs.value)+" with a recursive option", "shell"
		}
		return
	}
	if v.rule == nil || v.rule.action == Allow {
		return
	}
	rs.floor = "rule " + v.rule.text + " " + verb(v.rule.action) + " " + what + ", which " + strconv.Quote(c.Name) +
		" (a program the policy does not know all the effects of) may write"
	rs.floorLayer, rs.ungrantable = "shell", v.rule.action == Deny
}

// derivedWrites judges the names an unknown program may derive from an
// operand it writes: the stem, the name without its last extension when
// that is a compressor's (xz -d x.env.xz writes x.env), and, when the
// program is given a suffix option (xz -d -S n .envn, xz -S v .en),
// the name without any of its ends and the name with the option's
// value after it. It returns the first verdict that is not an allow, and
// what it judged, else v and what unchanged.
func (e *evaluation) derivedWrites(rs *subject, v verdict, what string) (verdict, string) {
	dir, base := path.Split(rs.value)
	var names []string
	if i := strings.LastIndexByte(base, '.'); i > 0 && compressedExts[strings.ToLower(base[i:])] {
		names = append(names, base[:i])
	}
	if sfx, ok := suffixOption(rs.cmd.Words); ok {
		for i := len(base) - 1; i > 0 && len(names) < 64; i-- {
			names = append(names, base[:i])
		}
		if sfx != "" && !strings.Contains(sfx, "/") {
			names = append(names, base+sfx)
		}
	}
	for _, n := range names {
		stem := e.pathSubject(subjRedirect, TierWrite, dir+n)
		stem.cmd = rs.cmd
		if stem.floor != "" {
			continue
		}
		if sv := e.judgeRules(&stem); sv.rule != nil && sv.rule.action != Allow {
			return sv, "writing " + strconv.Quote(stem.value) + " (a name " + strconv.Quote(rs.cmd.Name) + " may derive from " + strconv.Quote(base) + ")"
		}
	}
	return v, what
}

// suffixOption reports a suffix option among an unknown program's words
// (-S SUFFIX, -SSUFFIX, --suffix=SUFFIX, --suffix SUFFIX, and the
// abbreviations getopt_long takes, --suf=SUFFIX: the suffix a
// compressor adds or strips, a backup suffix), and its value when it is
// the next word or attached ("" when the analysis cannot tell).
func suffixOption(words []string) (string, bool) {
	for i, w := range words[min(1, len(words)):] {
		switch {
		case w == "--":
			return "", false
		case w == "-S" || len(w) >= 4 && strings.HasPrefix("--suffix", w):
			// --suf: getopt_long takes any unambiguous prefix.
			if i+2 < len(words) {
				return words[i+2], true
			}
			return "", true
		case strings.HasPrefix(w, "--su") && strings.Contains(w, "=") && strings.HasPrefix("--suffix", w[:strings.IndexByte(w, '=')]):
			return w[strings.IndexByte(w, '=')+1:], true
		case len(w) > 2 && w[0] == '-' && w[1] != '-' && strings.Contains(w[1:], "S"):
			return w[strings.IndexByte(w, 'S')+1:], true
		}
	}
	return "", false
}

// shellVerdict decides a shell call from its subjects and floors: the
// subjects' combined decision, or the tool name's when there are none, and
// a question, not an allow, while a floor stands.
func (e *evaluation) shellVerdict(subs []subject, floors []string) Decision {
	var d Decision
	if len(subs) == 0 {
		// Nothing to judge one by one (a parse error, an empty script): the
		// call is judged by tool name, so bare rules and vetoes still apply.
		s := subject{kind: subjName, tier: e.tier}
		if len(floors) > 0 {
			s.floor, s.floorLayer, s.ungrantable = floors[0], "shell", true
			floors = floors[1:]
		}
		d = e.single(&s)
	} else {
		subcommands := make([]Subcommand, 0, len(subs))
		d = e.combine(subs, &subcommands)
		d.Subcommands = subcommands
	}
	if len(floors) > 0 && d.Action != Deny {
		if d.Action == Allow {
			d.Rule, d.Route, d.ApprovalsRequired, d.TTL, d.Escalation = "", "", 0, 0, nil
			d.Reason, d.Layer = floors[0], "shell"
		} else {
			d.Reason += "; " + floors[0]
		}
		d.Action = Ask
		d.Grantable = false
	}
	return d
}

// elevator names the privilege wrapper of an elevated command: the first
// wrapper the program table marks elevated, or the program itself
// (sudoedit).
func (e *evaluation) elevator(c *shell.Command) string {
	for _, w := range c.Wrappers {
		if e.p.progs.Elevates(w) {
			return w
		}
	}
	if c.Name != "" {
		return c.Name
	}
	return "sudo"
}

// workdirArgs are the arguments of shell tools that say where the command
// runs (Codex workdir, Gemini directory and dir_path, Zed's terminal cd).
var (
	workdirArgs = []string{"workdir", "directory", "dirpath", "cwd", "dir", "workingdirectory", "workingdir", "cd"}
	shellArgs   = append(slices.Clone(commandArgs), workdirArgs...)
)

// shellQuietArgs are the arguments hosts send with a shell tool's command
// that change nothing of what runs or where: Claude Code's description,
// timeout and run_in_background, Codex's timeout_ms, justification,
// yield_time_ms, max_output_tokens, login and prefix_rule, Gemini's
// is_background. With the command, the working directory and the
// execution arguments (execargs.go, judged there), they are every key a
// shell tool's call is understood with: any other may change how the
// command runs (a host's own option, a new version's), so it asks, and
// the reason names it.
var shellQuietArgs = []string{"description", "timeout", "timeoutms", "runinbackground", "justification",
	"yieldtimems", "maxoutputtokens", "login", "prefixrule", "isbackground"}

// appendUnknownShellArgs appends to floors a reason for each key of others
// that is neither quiet nor an execution argument.
func appendUnknownShellArgs(floors, others []string) []string {
	for _, k := range others {
		b := []byte(k)
		known := false
		for _, n := range shellQuietArgs {
			known = known || keyEqual(b, n)
		}
		for _, n := range execArgNames {
			known = known || keyEqual(b, n)
		}
		if !known {
			floors = append(floors, "argument "+strconv.Quote(k)+" of a shell tool is not one the policy knows (it may change how or where the command runs)")
		}
	}
	return floors
}

// workdir applies a shell tool's working-directory argument: relative
// paths of the command resolve against it. It returns a floor when the
// value cannot be used.
func (e *evaluation) workdir(v argValue) string {
	str, ok := argString(v.raw)
	if !ok {
		return "argument " + v.key + " is not a string"
	}
	if str == "" {
		return ""
	}
	x, _ := globs.ExpandHome(str, e.p.home)
	if raw := x; hasDotDotPart(raw) {
		// The host hands the directory to chdir as written (opencode's
		// spawn cwd, older Codex's current_dir): a .. climbs from where
		// a link below the working directory points (red team AO F5:
		// workdir node_modules/@s/pkg/../../.. was ~ with pkg a
		// workspace's link), as a path's does.
		if !path.IsAbs(raw) && e.cwd != "" {
			raw = e.cwd + "/" + raw
		}
		if _, opaque := kernelPath(raw, e.trustedCwd(), e.p.home); opaque || !path.IsAbs(raw) {
			return "the call's working directory (" + v.key + ": " + strconv.Quote(str) + ") climbs with .. out of a directory that may be a link, which the host does not resolve as its text reads"
		}
	}
	x = path.Clean(x)
	if e.cwd != "" {
		// The request says where the call runs, and so does an argument:
		// a host honours only its own key (Codex workdir, Gemini
		// directory; Claude Code's Bash none), and the policy cannot tell
		// which spelling this host reads. The call is judged where the
		// request says it runs, and asks when the argument names another
		// directory, since the host may run it there.
		to := x
		if !path.IsAbs(x) {
			to = path.Join(e.cwd, x)
		}
		if to != e.cwd {
			return "the call names its own working directory (" + v.key + ": " + strconv.Quote(str) + ", that is " +
				strconv.Quote(to) + ") besides the request's (" + strconv.Quote(e.cwd) + "): the host may run it in either"
		}
		return ""
	}
	switch {
	case path.IsAbs(x):
		e.cwd = x
	case e.cwd != "":
		e.cwd = path.Join(e.cwd, x)
	case x == ".." || strings.HasPrefix(x, "../"):
		return "the command runs in " + strconv.Quote(str) + ", outside the working directory"
	case x != ".":
		e.relBase = x
	}
	return ""
}

// cdAway returns the cd of a script after which its relative writes are
// no longer where they look (cd to an absolute or home path, out of the
// directory (..), to a word with an expansion, or popd/pushd), and the
// one after which its relative reads are not (only a cd whose operand
// the analysis cannot place: an expansion, a pattern, cd -, ~user, cd -P
// with .., pushd, popd — the analysis judges a read under every
// directory a literal cd may lead to); "" for none. climb is the first
// literal cd out of the working directory (cd .., cd ../x), which places
// reads only where there is a working directory to climb from.
func cdAway(commands []shell.Command) (write, read, climb string) {
	// cur is where the cds lead by their text, from the working
	// directory; physical: a cd -P (or set -P) left $PWD at a link's
	// target, whose parent is not the parent its name has.
	cur, physical, physAll := ".", false, false
	for i := range commands {
		c := &commands[i]
		switch c.Name {
		case "pushd", "popd":
			return c.Name, c.Name, climb
		case "set", "setopt", "unsetopt":
			physAll = physAll || setsPhysical(c.Name, c.Words[1:])
			continue
		case "cd", "chdir":
		default:
			continue
		}
		if len(c.Wrappers) > 0 {
			// eval cd ~/.ssh, trap "cd ~/.ssh" DEBUG: the cd runs where
			// the analysis of the outer script does not place reads.
			return "cd run by " + c.Wrappers[0], "cd run by " + c.Wrappers[0], climb
		}
		args := c.Words[1:]
		phys := physAll
		for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "LPe@") == "" || len(args) > 0 && args[0] == "--" {
			// -L, -P, -e, -@ and their bundles (-eP); the last of -L
			// and -P wins.
			if i := strings.LastIndexAny(args[0], "LP"); i > 0 {
				phys = args[0][i] == 'P'
			}
			args = args[1:]
		}
		if len(args) == 0 {
			if write == "" {
				write = "cd to the home directory" // placed for reads
			}
			cur, physical = "~", false
			continue
		}
		t := args[0]
		if strings.ContainsAny(t, "$`*?[{\\'\"") || t == "-" || len(args) > 1 || strings.HasPrefix(t, "+") ||
			strings.HasPrefix(t, "~") && t != "~" && !strings.HasPrefix(t, "~/") || phys && strings.Contains(t, "..") {
			return "cd " + t, "cd " + t, climb
		}
		// A pattern (cd .s*) names a directory the analysis cannot place.
		x, home := globs.ExpandHome(t, "")
		if c.Repeats && !home && !path.IsAbs(x) {
			// for i in 1 2; do cd ..; done: each run moves again.
			return "cd " + t + " in a loop or function", "cd " + t + " in a loop or function", climb
		}
		if cl := path.Clean(t); write == "" && (home || path.IsAbs(x) || cl == ".." || strings.HasPrefix(cl, "../")) {
			write = "cd " + t
		}
		// bash's cd reads a .. by its text (cd -L) only when the
		// directory that text names exists; otherwise it goes where the
		// kernel goes, from a link's target (red team AO F6: cd
		// node_modules/@s/pkg/../../../.kube reached ~/.kube with pkg a
		// workspace's link). A .. is placed by its text only when every
		// directory it climbs from is the working directory or an
		// ancestor (real directories), or when its text leads back to
		// one of them (which exists); after a cd -P nothing above the
		// link's target is (AO F4).
		next := joinCdDir(cur, x, home)
		if climb == "" && (next == ".." || strings.HasPrefix(next, "../")) {
			climb = "cd " + t
		}
		if slices.Contains(strings.Split(x, "/"), "..") &&
			(physical || (home || path.IsAbs(x) || climbsFromBelow(cur, x)) && !ancestorOnly(next)) {
			return "cd " + t, "cd " + t, climb
		}
		cur = next
		physical = physical || phys && !ancestorOnly(next)
	}
	return write, "", climb
}

// joinCdDir is where a cd to x (home: x was under ~, now without it)
// leads by its text from cur: "." is the working directory.
func joinCdDir(cur, x string, home bool) string {
	switch {
	case home:
		return path.Clean("~/" + x)
	case path.IsAbs(x):
		return path.Clean(x)
	case strings.HasPrefix(cur, "~"):
		return path.Clean(cur + "/" + x)
	}
	return path.Join(cur, x)
}

// climbsFromBelow reports whether the text cur/x has a .. after a
// component below the working directory: cur is below it (cd sub && cd
// ../x), or x climbs out of a directory it names first (cd a/../b).
func climbsFromBelow(cur, x string) bool {
	below := !ancestorOnly(cur)
	for c := range strings.SplitSeq(x, "/") {
		switch c {
		case "", ".":
		case "..":
			if below {
				return true
			}
		default:
			below = true
		}
	}
	return false
}

// ancestorOnly reports a directory that is the working directory or one
// of its ancestors by its text: ".", "..", "../..".
func ancestorOnly(d string) bool {
	return d == "." || strings.Trim(strings.ReplaceAll(d, "..", ""), "/") == "" && strings.HasPrefix(d, "..")
}

// hasDotDotPart reports a path with a .. component.
func hasDotDotPart(p string) bool {
	return slices.Contains(strings.Split(p, "/"), "..")
}

// setsPhysical reports a set, setopt or unsetopt that makes every later cd
// resolve links: bash's set -P and set -o physical, zsh's chase_links and
// chase_dots (in any case, with or without underscores; set -w; their no
// forms turned off: set +o nochaselinks, unsetopt no_chase_links), in any
// bundle of flags (set -eo physical: red team AQ F6).
func setsPhysical(name string, args []string) bool {
	norm := func(o string) string { return strings.ToLower(strings.ReplaceAll(o, "_", "")) }
	physical := func(o string) bool {
		o = norm(o)
		return o == "physical" || o == "chaselinks" || o == "chasedots"
	}
	negated := func(o string) bool {
		rest, ok := strings.CutPrefix(norm(o), "no")
		return ok && physical(rest)
	}
	for i, a := range args {
		switch name {
		case "setopt":
			if physical(a) {
				return true
			}
		case "unsetopt":
			if negated(a) {
				return true
			}
		case "set":
			if a == "--" || a == "-" || len(a) < 2 || a[0] != '-' && a[0] != '+' {
				continue
			}
			on := a[0] == '-'
			if on && strings.ContainsAny(a[1:], "Pw") {
				return true
			}
			if strings.ContainsRune(a[1:], 'o') && i+1 < len(args) &&
				(on && physical(args[i+1]) || !on && negated(args[i+1])) {
				return true
			}
		}
	}
	return false
}

// hostShellScript returns the script of an argv the host runs it in: the
// host's own wrapper ["bash", "-lc", SCRIPT] (zsh on macOS; -c, -lc, -l
// -c) is the user's login shell, as Claude Code's Bash tool runs in, not a
// command of the agent's, so SCRIPT is judged as the command. Any other
// argv is quoted as one command line (shellJoin).
func hostShellScript(argv []string) string {
	if len(argv) >= 3 {
		switch path.Base(argv[0]) {
		case "bash", "zsh":
			flags := argv[1 : len(argv)-1]
			login := slices.Equal(flags, []string{"-lc"}) || slices.Equal(flags, []string{"-l", "-c"})
			if login || slices.Equal(flags, []string{"-c"}) {
				return argv[len(argv)-1]
			}
		}
	}
	return shellJoin(argv)
}

// shellJoin quotes an argv as one shell command line.
func shellJoin(argv []string) string {
	var b strings.Builder
	for i, a := range argv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteByte('\'')
		b.WriteString(strings.ReplaceAll(a, "'", `'\''`))
		b.WriteByte('\'')
	}
	return b.String()
}

// floatingWriteRule returns a deny or ask rule on writes that names a
// path anywhere (**/.git/**, *.env): one that may meet a member of a tree
// written whose members are not named. nil when there is none. With
// writesOnly, a rule that judges reads too (@files(*.env)) is passed
// over: it guards what a file holds, which a commit's file is not
// (shell.Command.Commit), nor does one that names only paths in a .git
// directory: git checks out no path with a .git component.
func (e *evaluation) floatingWriteRule(writesOnly bool) *rule {
	layers := []*ruleLayer{e.p.static}
	if e.agent != nil {
		layers = append(layers, e.agent)
	}
	for _, l := range layers {
		for _, i := range l.writes {
			if r := &l.rules[i]; r.action != Allow && r.path != nil && r.path.dir == "" && !r.path.abs &&
				!(writesOnly && (slices.Contains(l.reads, i) || inGitDir(r.path.text))) {
				return r
			}
		}
	}
	return nil
}

// inGitDir reports whether every path the pattern matches has a .git
// component (**/.git/**, **/.git), in any case: a component of the
// pattern is .git itself.
func inGitDir(pattern string) bool {
	for c := range strings.SplitSeq(pattern, "/") {
		if strings.EqualFold(c, ".git") {
			return true
		}
	}
	return false
}

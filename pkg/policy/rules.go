package policy

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gobwas/glob"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// argSource restricts which argument of a call a rule's pattern reads.
type argSource uint8

const (
	// srcAny: the tool's usual pattern source (the Tool(pattern) form).
	srcAny argSource = iota
	// srcPath: path, file_path or notebook_path (also a redirect target).
	srcPath
	// srcPattern: the pattern argument of glob/grep (grep's only through
	// match: {pattern: …}).
	srcPattern
	// srcCommand: the sub-commands of a shell tool's command.
	srcCommand
)

// rule is one compiled policy rule.
type rule struct {
	// text is the rule as the operator wrote it: "bash(git diff *)", or the
	// equivalent shorthand of a tool/match rule.
	text  string
	layer *ruleLayer

	tool     string        // lower-case tool name, tool-name glob or @group
	toolGlob *glob.Pattern // set for a tool-name glob
	group    toolGroup     // set for a tool group (@shell, @write…)

	// anyArgs is true for a bare tool name and for the patterns "*" and
	// "**": the rule matches every call of the tool, arguments or not.
	anyArgs bool
	source  argSource
	// path is the compiled path glob (nil when the rule cannot judge a
	// path: a shell tool's rule, or anyArgs).
	path *pathPattern
	// shell is true when the pattern may be matched against shell commands;
	// shellPattern is the pattern as written, and shellKey its literal first
	// word ("" when that word has wildcards), used to index rules so that a
	// command only meets the rules that can match it.
	shell        bool
	shellPattern string
	shellKey     string

	action    Action
	route     string
	approvals int
	ttl       time.Duration
	reason    string // operator's explanation, appended to the decision reason
	// grantable lets a grant settle the questions of this ask rule
	// (grantable: true); without it an explicit ask asks every time.
	grantable bool
	// stepUp makes approving this rule's questions need a second factor
	// (step_up: true; docs/POLICY.md "Step-up").
	stepUp bool
	// maxAge caps the lifetime of grants made by answering this rule's
	// questions (max_age:, 0 = the policy's).
	maxAge time.Duration
	// escalation is the rule's own ladder (non-nil, maybe empty, when the
	// rule has escalation:); nil: the team's.
	escalation []messages.EscalationStep
}

// ruleLayer is an ordered list of rules with lookup indexes. Indexes hold
// rule positions in ascending order, so several candidate lists can be
// merged from the end to find the last matching rule.
type ruleLayer struct {
	name string // "static" or "agent:<type>"
	// agent is the agent type of an agent layer ("" for static).
	agent string
	mode  Mode // "" = inherit
	rules []rule

	byTool map[string][]int32
	globs  []int32
	// shell indexes the rules of each shell tool by their literal first word.
	shell map[string]*shellIndex
	// writes are the rules that judge write redirections: the rules of
	// write-tier path tools, by exact name or by a glob that matches one.
	writes []int32
	// reads are the rules that judge the files shell commands read: the
	// rules of read-tier file tools, by exact name or by a glob that
	// matches one.
	reads []int32

	// paths files the path rules by a literal segment (pathindex.go);
	// byToolOpen, writesOpen and readsOpen are byTool, writes and reads
	// without the rules it files. nil: no rule is filed.
	paths                 *pathIndex
	byToolOpen            map[string][]int32
	writesOpen, readsOpen []int32

	// multiFor caches, per tool name, the positions of the multi-tool rules
	// (globs, groups) that apply to it, so that a call does not test every
	// glob again. Copy-on-write: readers load the map without locking.
	multiMu  sync.Mutex
	multiFor atomic.Pointer[map[string]*multiEntry]
}

// multiEntry is the cached list of a tool's multi-tool rules, and its
// part the path index does not file. For commands, the rules with a literal
// first word (@shell(curl *)) are also filed by it: cmdOpen holds the others
// (bare rules, wildcards in the first word, rules that judge no command).
type multiEntry struct {
	all, open []int32
	cmdOpen   []int32
	cmdByWord map[string][]int32
}

// maxMultiCache bounds multiFor: tool names come from agents, and an agent
// inventing names must not grow the broker's memory without limit.
const maxMultiCache = 4096

// noMulti is the entry of a layer without multi-tool rules; read only.
var noMulti multiEntry

// multiRules returns the layer's multi-tool rules that apply to the
// evaluated tool (positions in rule order).
func (l *ruleLayer) multiRules(e *evaluation) *multiEntry {
	if len(l.globs) == 0 {
		return &noMulti
	}
	key := e.tool
	if e.sub != "" {
		// A sub-command changed the call's tier (str_replace_editor's
		// view is a read): the groups that apply are those of that tier.
		key += "\x00" + e.sub
	}
	cache := l.multiFor.Load()
	if cache != nil {
		if m, ok := (*cache)[key]; ok {
			return m
		}
	}
	m := &multiEntry{all: []int32{}, cmdOpen: []int32{}, cmdByWord: map[string][]int32{}}
	for _, i := range l.globs {
		r := &l.rules[i]
		if !r.matchesTool(e.tool, e.tier, e.kind) {
			continue
		}
		m.all = append(m.all, i)
		if r.shell && !r.anyArgs && r.shellKey != "" {
			m.cmdByWord[r.shellKey] = append(m.cmdByWord[r.shellKey], i)
		} else {
			m.cmdOpen = append(m.cmdOpen, i)
		}
	}
	m.open = l.paths.open(m.all)
	l.multiMu.Lock()
	defer l.multiMu.Unlock()
	cache = l.multiFor.Load()
	if cache == nil || len(*cache) < maxMultiCache {
		next := make(map[string]*multiEntry, 1+lenOf(cache))
		if cache != nil {
			for k, v := range *cache {
				next[k] = v
			}
		}
		next[key] = m
		l.multiFor.Store(&next)
	}
	return m
}

func lenOf(m *map[string]*multiEntry) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

type shellIndex struct {
	byWord map[string][]int32
	any    []int32 // bare rules and patterns whose first word has wildcards
	// anyOpen is any without the rules the path index files.
	anyOpen []int32
}

// toolGroup is a rule tool name that stands for a class of tools.
type toolGroup uint8

const (
	groupNone toolGroup = iota
	groupRead
	groupWrite
	groupExec
	groupMCP
	groupShell
	groupFiles
)

// toolGroups are the names of the groups as written in rules.
var toolGroups = map[string]toolGroup{
	"@read": groupRead, "@write": groupWrite, "@exec": groupExec, "@mcp": groupMCP,
	"@shell": groupShell, "@files": groupFiles,
}

// has reports whether a tool of that tier and kind belongs to the group.
func (g toolGroup) has(tier Tier, kind toolKind) bool {
	switch g {
	case groupRead:
		return tier == TierRead
	case groupWrite:
		return tier == TierWrite
	case groupExec:
		return tier == TierExec
	case groupMCP:
		return tier == TierMCP
	case groupShell:
		return kind == kindShell
	case groupFiles:
		return kind == kindPath || kind == kindPatch || kind == kindPattern || kind == kindSearch
	}
	return false
}

// multi reports whether the rule names many tools (a glob or a group); such
// rules are kept in their own list and their tool is checked per call.
func (r *rule) multi() bool { return r.toolGlob != nil || r.group != groupNone }

// matchesTool reports whether a multi-tool rule applies to the tool.
func (r *rule) matchesTool(tool string, tier Tier, kind toolKind) bool {
	if r.group != groupNone {
		return r.group.has(tier, kind)
	}
	return r.toolGlob == nil || r.toolGlob.Match(tool)
}

// parseRuleText splits "Tool(pattern)" into its tool name and pattern; a
// bare tool name (or tool-name glob) has no pattern.
func parseRuleText(s string) (tool, pattern string, hasPattern bool, err error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", "", false, errRuleEmpty
	}
	open := strings.IndexByte(s, '(')
	if open < 0 {
		if strings.IndexByte(s, ')') >= 0 {
			return "", "", false, fmt.Errorf("unbalanced parentheses in %q: ')' without '('", s)
		}
		return s, "", false, nil
	}
	if !strings.HasSuffix(s, ")") {
		return "", "", false, fmt.Errorf("unbalanced parentheses in %q: the pattern must end with ')'", s)
	}
	tool = strings.TrimSpace(s[:open])
	if tool == "" {
		return "", "", false, fmt.Errorf("missing tool name before '(' in %q", s)
	}
	pattern = s[open+1 : len(s)-1]
	depth := 0
	for _, c := range pattern {
		switch c {
		case '(':
			depth++
		case ')':
			depth--
		}
		if depth < 0 {
			return "", "", false, fmt.Errorf("unbalanced parentheses in %q", s)
		}
	}
	if depth != 0 {
		return "", "", false, fmt.Errorf("unbalanced parentheses in %q", s)
	}
	pattern = strings.TrimSpace(pattern)
	if pattern == "" {
		return "", "", false, fmt.Errorf("empty pattern in %q (write %s alone to match any arguments)", s, tool)
	}
	return tool, pattern, true, nil
}

// checkToolName rejects characters no tool name or tool-name glob has.
func checkToolName(name string) error {
	for _, c := range name {
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return fmt.Errorf("tool name %q contains whitespace", name)
		case c == '"' || c == '\'' || c == '(' || c == ')':
			return fmt.Errorf("tool name %q contains %q", name, c)
		}
	}
	return nil
}

const globMeta = "*?[]{}\\"

// isGlob reports whether s uses glob syntax.
func isGlob(s string) bool { return strings.ContainsAny(s, globMeta) }

// shellKeyOf returns the literal first word of a shell pattern, or "" when
// it has wildcards (the rule then sits in the "any" list).
func shellKeyOf(pattern string) string {
	tok := pattern
	if i := strings.IndexByte(pattern, ' '); i >= 0 {
		tok = pattern[:i]
	}
	if isGlob(tok) {
		return ""
	}
	return tok
}

// commandKey is the first word of a command string, as shellKeyOf sees a
// pattern: the text up to the first space.
func commandKey(cmd string) string {
	if i := strings.IndexByte(cmd, ' '); i >= 0 {
		return cmd[:i]
	}
	return cmd
}

// buildIndex fills the lookup indexes once all rules are compiled.
func (l *ruleLayer) buildIndex(t *toolTable) {
	l.byTool = map[string][]int32{}
	l.shell = map[string]*shellIndex{}
	for i := range l.rules {
		r := &l.rules[i]
		r.layer = l
		idx := int32(i)
		if r.multi() {
			l.globs = append(l.globs, idx)
			if slices.ContainsFunc(t.writeTools, func(w string) bool {
				return r.matchesTool(w, t.tierOf(w), t.kindOf(w))
			}) {
				l.writes = append(l.writes, idx)
			}
			if slices.ContainsFunc(t.readTools, func(w string) bool {
				return r.matchesTool(w, t.tierOf(w), t.kindOf(w))
			}) {
				l.reads = append(l.reads, idx)
			}
			continue
		}
		if k := t.kindOf(r.tool); t.tierOf(r.tool) == TierWrite && (k == kindPath || k == kindPatch) {
			l.writes = append(l.writes, idx)
		}
		if t.tierOf(r.tool) == TierRead && t.kindOf(r.tool) != kindName && t.kindOf(r.tool) != kindShell {
			l.reads = append(l.reads, idx)
		}
		if t.kindOf(r.tool) == kindShell {
			si := l.shell[r.tool]
			if si == nil {
				si = &shellIndex{byWord: map[string][]int32{}}
				l.shell[r.tool] = si
			}
			if r.anyArgs || r.shellKey == "" {
				si.any = append(si.any, idx)
			} else {
				si.byWord[r.shellKey] = append(si.byWord[r.shellKey], idx)
			}
			continue
		}
		l.byTool[r.tool] = append(l.byTool[r.tool], idx)
	}
	l.buildPathIndex()
}

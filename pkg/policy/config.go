package policy

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/gobwas/glob"
	"gopkg.in/yaml.v3"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
	"github.com/signoff-dev/signoff/pkg/policy/internal/yamlconf"
	"github.com/signoff-dev/signoff/pkg/policy/shell"
)

// MaxFileSize bounds a policy file; a larger one is rejected.
const MaxFileSize = 4 << 20

// Load reads and parses a policy file. Errors in the file are
// [*ConfigError]s; I/O errors are wrapped.
func Load(name string) (*Policy, error) {
	data, err := readPolicyFile(name)
	if err != nil {
		return nil, err
	}
	return Parse(data, name)
}

// Parse compiles a policy from YAML. filename is used in error messages and
// [Policy.File]. Every mistake is reported as a [*ConfigError] with the
// line and column of the offending value; unknown keys are mistakes too, so
// that a typo cannot silently weaken a policy.
//
// "~" and "$HOME" in path patterns expand to the home: key, or to the
// current user's home directory when the policy sets none.
func Parse(data []byte, filename string) (p *Policy, err error) {
	return parse(data, filename, "")
}

// parse is Parse with, when home is not empty, that directory as the home
// of a file that sets none (forHome).
func parse(data []byte, filename, home string) (p *Policy, err error) {
	defer func() {
		// yaml.v3 has panicked on hostile input in the past; a policy loader
		// must report, not crash the broker that is reloading it.
		if r := recover(); r != nil {
			p, err = nil, &ConfigError{File: filename, Msg: fmt.Sprintf("cannot parse: %v", r)}
		}
	}()
	if len(data) > MaxFileSize {
		return nil, &ConfigError{File: filename, Msg: fmt.Sprintf("file is larger than %d bytes", MaxFileSize)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &ConfigError{File: filename, Msg: "empty policy file"}
		}
		return nil, yamlError(filename, err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		line := extra.Line
		if err != nil {
			return nil, yamlError(filename, err)
		}
		return nil, &ConfigError{File: filename, Line: line, Msg: "more than one YAML document (---) in the policy file"}
	}
	if len(doc.Content) == 0 || yamlconf.IsNull(doc.Content[0]) {
		return nil, &ConfigError{File: filename, Msg: "empty policy file"}
	}
	sum := sha256.Sum256(data)
	d := &decoder{
		Decoder: &yamlconf.Decoder{File: filename},
		p: &Policy{
			file:    filename,
			version: hex.EncodeToString(sum[:8]),
			mode:    ModeAlwaysAsk,
			ttl:     DefaultTTL,
			maxTTL:  DefaultMaxTTL,
			tools:   newToolTable(),
			agents:  map[string]*ruleLayer{},
			teams:   map[string]Team{},
			source:  data,
			homes:   &homeVariants{},
		},
		home: home,
	}
	if err := d.root(doc.Content[0]); err != nil {
		return nil, err
	}
	return d.p, nil
}

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlError turns a yaml.v3 syntax error into a ConfigError.
func yamlError(file string, err error) *ConfigError {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &ConfigError{File: file, Line: line, Msg: "invalid YAML: " + m[2]}
	}
	return &ConfigError{File: file, Msg: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}

// decoder walks the YAML node tree; its methods return the first mistake.
type decoder struct {
	*yamlconf.Decoder
	p *Policy
	// home, when not empty, is the home of a file that sets none
	// (forHome) instead of the broker's.
	home string
}

var rootKeys = []string{"mode", "home", "ttl", "max_ttl", "rules", "agents", "teams", "tools", "programs", "workspace", "pagers",
	"session_grants", "grants", "step_up", "breakers"}

// root decodes a policy file's top-level mapping into d.p, section by
// section in the order their dependencies need: a rule reads the tools, the
// teams and the ttls decoded before it.
func (d *decoder) root(n *yaml.Node) error {
	ms, err := d.Mapping(n, "", rootKeys)
	if err != nil {
		return err
	}
	byKey := map[string]yamlconf.Member{}
	for _, m := range ms {
		byKey[m.Key] = m
	}
	p := d.p
	if err := d.baseSettings(byKey); err != nil {
		return err
	}
	if m, ok := byKey["tools"]; ok {
		if err := d.tools(m.Val, m.Location); err != nil {
			return err
		}
	}
	p.tools.finishWriteTools()
	if m, ok := byKey["workspace"]; ok {
		if err := d.workspace(m.Val, m.Location); err != nil {
			return err
		}
	}
	p.progs = shell.BuiltinPrograms()
	if m, ok := byKey["programs"]; ok {
		t, err := shell.DecodePrograms(d.Decoder, m.Val, m.Location, p.progs)
		if err != nil {
			return err
		}
		p.progs = t
	}
	if err := d.approvalSettings(byKey); err != nil {
		return err
	}
	p.static = &ruleLayer{name: "static"}
	if m, ok := byKey["rules"]; ok {
		if err := d.rules(m.Val, m.Location, p.static); err != nil {
			return err
		}
	}
	p.static.buildIndex(&p.tools)
	if m, ok := byKey["agents"]; ok {
		if err := d.agents(m.Val, m.Location); err != nil {
			return err
		}
	}
	if m, ok := byKey["breakers"]; ok {
		return d.breakers(m.Val, m.Location)
	}
	return nil
}

// baseSettings decodes the top-level mode:, home:, max_ttl: and ttl: (byKey
// holds the top-level keys), defaulting home to the user's home directory.
func (d *decoder) baseSettings(byKey map[string]yamlconf.Member) error {
	p := d.p
	var err error
	if m, ok := byKey["mode"]; ok {
		s, err := d.Str(m.Val, m.Location)
		if err != nil {
			return err
		}
		if p.mode, err = ParseMode(s); err != nil {
			return d.Errf(m.Val, m.Location, "%v", err)
		}
	}
	if m, ok := byKey["home"]; ok {
		s, err := d.Str(m.Val, m.Location)
		if err != nil {
			return err
		}
		if !path.IsAbs(s) {
			return d.Errf(m.Val, m.Location, "home must be an absolute path, got %q", s)
		}
		p.home = path.Clean(s)
		p.homeSet = true
	} else if d.home != "" {
		p.home = d.home
	} else if h, err := os.UserHomeDir(); err == nil && path.IsAbs(h) {
		p.home = path.Clean(h)
	}
	if m, ok := byKey["max_ttl"]; ok {
		if p.maxTTL, err = d.Duration(m.Val, m.Location); err != nil {
			return err
		}
	}
	if m, ok := byKey["ttl"]; ok {
		if p.ttl, err = d.Duration(m.Val, m.Location); err != nil {
			return err
		}
		if p.ttl > p.maxTTL {
			return d.Errf(m.Val, m.Location, "ttl %s exceeds max_ttl %s", p.ttl, p.maxTTL)
		}
	} else {
		p.ttl = min(p.ttl, p.maxTTL)
	}
	return nil
}

// approvalSettings decodes who answers questions and what an answer may
// do: pagers:, teams: (adding the open default team when it is not
// defined), session_grants:, grants: and step_up: (byKey holds the
// top-level keys).
func (d *decoder) approvalSettings(byKey map[string]yamlconf.Member) error {
	p := d.p
	if m, ok := byKey["pagers"]; ok {
		if err := d.pagers(m.Val, m.Location); err != nil {
			return err
		}
	}
	if m, ok := byKey["teams"]; ok {
		if err := d.teams(m.Val, m.Location); err != nil {
			return err
		}
	}
	p.grants = defaultGrantSettings()
	if m, ok := byKey["session_grants"]; ok {
		if err := d.sessionGrants(m.Val, m.Location); err != nil {
			return err
		}
	}
	if m, ok := byKey["grants"]; ok {
		if err := d.grantsConfig(m.Val, m.Location); err != nil {
			return err
		}
	}
	if _, ok := p.teams["default"]; !ok {
		p.teams["default"] = Team{Name: "default", ApprovalsRequired: 1}
	}
	p.stepUp = stepUpSettings{maxAge: DefaultStepUpMaxAge}
	if m, ok := byKey["step_up"]; ok {
		return d.stepUpConfig(m.Val, m.Location)
	}
	return nil
}

var tierNames = map[string]Tier{"read": TierRead, "write": TierWrite, "exec": TierExec, "mcp": TierMCP}

// tools decodes tools:, what the policy knows of each tool: its tier
// (tiers:), whether its calls carry shell commands (shell:) or paths
// (paths:), and the tools whose output is the human's answer (answer:).
func (d *decoder) tools(n *yaml.Node, where string) error {
	ms, err := d.Mapping(n, where, []string{"tiers", "shell", "paths", "answer"})
	if err != nil {
		return err
	}
	t := &d.p.tools
	declared := map[string]string{} // tool → the list it was declared in
	for _, m := range ms {
		switch m.Key {
		case "answer":
			// Read once every kind is known (below).
		case "tiers":
			if err := d.toolTiers(m.Val, m.Location); err != nil {
				return err
			}
		case "shell", "paths":
			kind := kindShell
			if m.Key == "paths" {
				kind = kindPath
			}
			err := d.Strings(m.Val, m.Location, func(it *yaml.Node, loc, s string) error {
				name, err := d.exactToolName(it, loc, s, m.Key)
				if err != nil {
					return err
				}
				if prev, ok := declared[name]; ok && prev != m.Key {
					return d.Errf(it, loc, "tool %q is declared both in tools.%s and tools.%s", s, prev, m.Key)
				}
				declared[name] = m.Key
				t.kinds[name] = kind
				return nil
			})
			if err != nil {
				return err
			}
		}
	}
	for _, m := range ms {
		if m.Key == "answer" {
			return d.answerTools(m.Val, m.Location)
		}
	}
	return nil
}

// exactToolName returns s, an item of the list tools.<list> at loc, in
// lower case: a tool name, not a glob.
func (d *decoder) exactToolName(it *yaml.Node, loc, s, list string) (string, error) {
	name := lower(s)
	if err := checkToolName(name); err != nil {
		return "", d.Errf(it, loc, "%v", err)
	}
	if isGlob(name) {
		return "", d.Errf(it, loc, "tool names in tools.%s must be exact names, not globs", list)
	}
	return name, nil
}

// toolTiers decodes tools.tiers: the tier of each tool name or tool-name
// glob, each named once.
func (d *decoder) toolTiers(n *yaml.Node, where string) error {
	t := &d.p.tools
	tiers, err := d.Mapping(n, where, nil)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, tm := range tiers {
		name := lower(tm.Key)
		if err := checkToolName(name); err != nil {
			return d.Errf(tm.KeyNode, where, "%v", err)
		}
		if seen[name] {
			return d.Errf(tm.KeyNode, where, "tool %q is declared twice (tool names are case-insensitive)", tm.Key)
		}
		seen[name] = true
		s, err := d.Str(tm.Val, tm.Location)
		if err != nil {
			return err
		}
		tier, ok := tierNames[s]
		if !ok {
			return d.Errf(tm.Val, tm.Location, "unknown tier %q (want read, write, exec or mcp)", s)
		}
		if isGlob(name) {
			g, err := glob.Compile(name)
			if err != nil {
				return d.Errf(tm.KeyNode, where, "invalid tool-name glob %q: %v", tm.Key, err)
			}
			t.tierGlobs = append(t.tierGlobs, tierGlob{g: g, tier: tier})
			continue
		}
		t.tiers[name] = tier
	}
	return nil
}

// validToken reports whether s can be a single NATS subject token (team
// names become subjects: signoff.v1.ask.<team>).
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch c {
		case '.', '*', '>', ' ', '\t', '\r', '\n', '\f', '\v':
			return false
		}
	}
	return true
}

func (d *decoder) teams(n *yaml.Node, where string) error {
	ms, err := d.Mapping(n, where, nil)
	if err != nil {
		return err
	}
	ladders := map[string]*pendingLadder{}
	for _, m := range ms {
		if !validToken(m.Key) {
			return d.Errf(m.KeyNode, where, "invalid team name %q (no '.', '*', '>' or whitespace: it becomes a NATS subject token)", m.Key)
		}
		team := Team{Name: m.Key, ApprovalsRequired: 1}
		fields, err := d.Mapping(m.Val, m.Location, []string{"members", "groups", "approvals_required", "escalation", "step_up"})
		if err != nil {
			return err
		}
		var approvals *yamlconf.Member
		for i, f := range fields {
			switch f.Key {
			case "members":
				err := d.Strings(f.Val, f.Location, func(it *yaml.Node, loc, id string) error {
					if slices.Contains(team.Members, id) {
						return d.Errf(it, loc, "member %q is listed twice", id)
					}
					team.Members = append(team.Members, id)
					return nil
				})
				if err != nil {
					return err
				}
			case "groups":
				if team.Groups, err = d.teamGroups(f.Val, f.Location); err != nil {
					return err
				}
			case "approvals_required":
				approvals = &fields[i]
			case "step_up":
				if team.StepUp, err = d.Boolean(f.Val, f.Location); err != nil {
					return err
				}
			case "escalation":
				if ladders[m.Key], err = d.escalation(f.Val, f.Location); err != nil {
					return err
				}
			}
		}
		if team.Open() && m.Key != "default" {
			return d.Errf(m.KeyNode, m.Location, "team %q has no members or groups (only the default team may be open to every approver)", m.Key)
		}
		if approvals != nil {
			if team.ApprovalsRequired, err = d.PositiveInt(approvals.Val, approvals.Location); err != nil {
				return err
			}
			// With groups, how many people may answer is the identity
			// provider's to say.
			if !team.Open() && len(team.Groups) == 0 && team.ApprovalsRequired > len(team.Members) {
				return d.Errf(approvals.Val, approvals.Location, "approvals_required %d exceeds the team's %d members", team.ApprovalsRequired, len(team.Members))
			}
		}
		d.p.teams[m.Key] = team
	}
	return d.teamEscalations(ladders)
}

// teamGroups reads a team's groups: identity-provider group names, each
// listed once.
func (d *decoder) teamGroups(n *yaml.Node, where string) ([]string, error) {
	var out []string
	err := d.Strings(n, where, func(it *yaml.Node, loc, g string) error {
		if strings.TrimSpace(g) == "" || strings.ContainsFunc(g, unicode.IsControl) {
			return d.Errf(it, loc, "group %q must be a non-empty name without control characters", g)
		}
		if slices.Contains(out, g) {
			return d.Errf(it, loc, "group %q is listed twice", g)
		}
		out = append(out, g)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func (d *decoder) agents(n *yaml.Node, where string) error {
	ms, err := d.Mapping(n, where, nil)
	if err != nil {
		return err
	}
	for _, m := range ms {
		name := lower(m.Key)
		if strings.TrimSpace(name) == "" || strings.ContainsAny(name, " \t\r\n") {
			return d.Errf(m.KeyNode, where, "invalid agent type %q", m.Key)
		}
		if _, dup := d.p.agents[name]; dup {
			return d.Errf(m.KeyNode, where, "agent type %q is defined twice (agent types are case-insensitive)", m.Key)
		}
		l := &ruleLayer{name: "agent:" + name, agent: name}
		fields, err := d.Mapping(m.Val, m.Location, []string{"mode", "rules"})
		if err != nil {
			return err
		}
		for _, f := range fields {
			switch f.Key {
			case "mode":
				s, err := d.Str(f.Val, f.Location)
				if err != nil {
					return err
				}
				if l.mode, err = ParseMode(s); err != nil {
					return d.Errf(f.Val, f.Location, "%v", err)
				}
				if modeLooseness(l.mode) > modeLooseness(d.p.mode) {
					return d.Errf(f.Val, f.Location, "mode %s allows more than the policy mode %s: an agent type is named by the agent itself, so its mode may only be as strict or stricter (always-ask, then auto-edit, then yolo)", l.mode, d.p.mode)
				}
			case "rules":
				if err := d.rules(f.Val, f.Location, l); err != nil {
					return err
				}
			}
		}
		l.buildIndex(&d.p.tools)
		d.p.agents[name] = l
	}
	return nil
}

func (d *decoder) rules(n *yaml.Node, where string, l *ruleLayer) error {
	items, err := d.Sequence(n, where)
	if err != nil {
		return err
	}
	l.rules = make([]rule, 0, len(items))
	for i, it := range items {
		r, err := d.rule(it, fmt.Sprintf("%s[%d]", where, i))
		if err != nil {
			return err
		}
		l.rules = append(l.rules, r)
	}
	return nil
}

var ruleKeys = []string{"rule", "tool", "match", "action", "route", "ttl", "approvals_required", "reason", "escalation", "grantable", "max_age", "step_up"}

// matchSources maps the keys of a rule's match: to the argument they read.
var matchSources = map[string]argSource{
	"path": srcPath, "file_path": srcPath, "notebook_path": srcPath,
	"pattern": srcPattern,
	"command": srcCommand, "cmd": srcCommand, "script": srcCommand,
}

// rule decodes one entry of a rules: list: what it matches (rule:, or tool:
// and match:), then its action and, for an ask, the settings of its
// questions.
func (d *decoder) rule(n *yaml.Node, where string) (rule, error) {
	var r rule
	ms, err := d.Mapping(n, where, ruleKeys)
	if err != nil {
		return r, err
	}
	if n.Kind != yaml.MappingNode {
		return r, d.Errf(n, where, "want a rule such as {rule: \"bash(git status)\", action: allow}, got %s", yamlconf.NodeKind(n))
	}
	f := map[string]yamlconf.Member{}
	for _, m := range ms {
		f[m.Key] = m
	}
	tg, err := d.ruleTarget(n, where, f)
	if err != nil {
		return r, err
	}
	r.text, r.source = tg.text, tg.source
	if err := d.ruleTool(&r, tg); err != nil {
		return r, err
	}
	if err := d.rulePattern(&r, tg); err != nil {
		return r, err
	}
	if err := d.ruleDecision(n, where, f, &r); err != nil {
		return r, err
	}
	if r.action != Ask {
		return r, nil
	}
	return r, d.askSettings(f, where, &r)
}

// ruleTarget is what a rule matches as the operator wrote it, before it is
// compiled.
type ruleTarget struct {
	tool       string // the tool name, glob or @group, trimmed
	pattern    string // the argument pattern, when hasPattern
	hasPattern bool
	source     argSource // the argument match: names (srcAny without match:)
	matchKey   string    // the key under match: ("" without match:)
	text       string    // the rule's text (rule.text)
	// node and where are what errors about the tool or the pattern point
	// at: the pattern under match:, else the rule: or tool: value.
	node  *yaml.Node
	where string
}

// ruleTarget decodes what a rule matches from its rule: key, or from its
// tool: and match: keys (f holds the rule's keys).
func (d *decoder) ruleTarget(n *yaml.Node, where string, f map[string]yamlconf.Member) (ruleTarget, error) {
	var tg ruleTarget
	ruleM, hasRule := f["rule"]
	toolM, hasTool := f["tool"]
	matchM, hasMatch := f["match"]
	switch {
	case hasRule && hasTool:
		return tg, d.Errf(toolM.KeyNode, where, "use either rule: or tool:, not both")
	case hasRule && hasMatch:
		return tg, d.Errf(matchM.KeyNode, where, "match: goes with tool:, not rule: (write rule: \"tool(pattern)\" or tool: + match:)")
	case !hasRule && !hasTool:
		return tg, d.Errf(n, where, "missing rule: (for example rule: \"bash(git status)\")")
	}

	if hasRule {
		tg.node, tg.where = ruleM.Val, ruleM.Location
		s, err := d.Str(ruleM.Val, ruleM.Location)
		if err != nil {
			return tg, err
		}
		if tg.tool, tg.pattern, tg.hasPattern, err = parseRuleText(s); err != nil {
			return tg, d.Errf(ruleM.Val, ruleM.Location, "%v", err)
		}
		tg.text = strings.TrimSpace(s)
		return tg, nil
	}
	tg.node, tg.where = toolM.Val, toolM.Location
	s, err := d.Str(toolM.Val, toolM.Location)
	if err != nil {
		return tg, err
	}
	tg.tool = strings.TrimSpace(s)
	tg.text = tg.tool
	if !hasMatch {
		return tg, nil
	}
	mm, err := d.Mapping(matchM.Val, matchM.Location, nil)
	if err != nil {
		return tg, err
	}
	if len(mm) != 1 {
		return tg, d.Errf(matchM.Val, matchM.Location, "match: takes exactly one argument, got %d", len(mm))
	}
	m := mm[0]
	src, ok := matchSources[m.Key]
	if !ok {
		return tg, d.Errf(m.KeyNode, matchM.Location, "cannot match argument %q (want path, file_path, notebook_path, pattern, command, cmd or script)", m.Key)
	}
	pattern, err := d.Str(m.Val, m.Location)
	if err != nil {
		return tg, err
	}
	pattern = strings.TrimSpace(pattern)
	if pattern == "" {
		return tg, d.Errf(m.Val, m.Location, "empty pattern")
	}
	tg.pattern, tg.hasPattern, tg.source, tg.matchKey = pattern, true, src, m.Key
	tg.node, tg.where = m.Val, m.Location
	if src == srcPath || src == srcPattern {
		tg.text = fmt.Sprintf("%s(%s: %s)", tg.tool, m.Key, pattern)
	} else {
		tg.text = fmt.Sprintf("%s(%s)", tg.tool, pattern)
	}
	return tg, nil
}

// ruleTool sets the tool a rule applies to: a name, a tool-name glob or a
// tool group.
func (d *decoder) ruleTool(r *rule, tg ruleTarget) error {
	r.tool = lower(tg.tool)
	if err := checkToolName(r.tool); err != nil {
		return d.Errf(tg.node, tg.where, "%v", err)
	}
	if strings.HasPrefix(r.tool, "@") {
		g, ok := toolGroups[r.tool]
		if !ok {
			return d.Errf(tg.node, tg.where, "unknown tool group %q (want @read, @write, @exec, @mcp, @shell or @files)", tg.tool)
		}
		r.group = g
	} else if isGlob(r.tool) {
		var err error
		if r.toolGlob, err = glob.Compile(r.tool); err != nil {
			return d.Errf(tg.node, tg.where, "invalid tool-name glob %q: %v", tg.tool, err)
		}
	}
	return nil
}

// rulePattern checks a rule's argument pattern against what its tool's
// calls carry, and compiles it into the path glob, the shell pattern, or
// both, that judge those calls.
func (d *decoder) rulePattern(r *rule, tg ruleTarget) error {
	r.anyArgs = !tg.hasPattern || tg.pattern == "*" || tg.pattern == "**"
	kind := d.p.tools.kindOf(r.tool)
	if !r.multi() && tg.hasPattern {
		switch kind {
		case kindName:
			if tg.matchKey != "" || !r.anyArgs {
				return d.Errf(tg.node, tg.where, "tool %s is matched by name only (MCP and unknown tools have no argument patterns); drop the pattern, or declare the tool under tools.paths or tools.shell", tg.tool)
			}
		case kindPath, kindPatch:
			if r.source != srcAny && r.source != srcPath {
				return d.Errf(tg.node, tg.where, "%s patterns match its path argument, not %s", tg.tool, tg.matchKey)
			}
		case kindPattern, kindSearch:
			if r.source == srcCommand {
				return d.Errf(tg.node, tg.where, "%s patterns match its pattern and path arguments, not %s", tg.tool, tg.matchKey)
			}
		case kindShell:
			if r.source != srcAny && r.source != srcCommand {
				return d.Errf(tg.node, tg.where, "%s patterns match its sub-commands, not %s", tg.tool, tg.matchKey)
			}
		}
	}
	switch {
	case r.group == groupFiles && r.source == srcCommand:
		return d.Errf(tg.node, tg.where, "@files tools have no %s argument (use @shell)", tg.matchKey)
	case r.group == groupShell && (r.source == srcPath || r.source == srcPattern):
		return d.Errf(tg.node, tg.where, "@shell tools have no %s argument (use @files)", tg.matchKey)
	}
	if !tg.hasPattern || r.anyArgs {
		return nil
	}
	pattern := tg.pattern
	asPath := kind == kindPath || kind == kindPatch || kind == kindPattern || kind == kindSearch ||
		(r.multi() && r.group != groupShell)
	asShell := kind == kindShell || (r.multi() && r.group != groupFiles)
	if r.source == srcCommand {
		asPath = false
	} else if r.source != srcAny {
		asShell = false
	}
	if asPath {
		if _, had := globs.ExpandHome(pattern, ""); had && d.p.home == "" {
			return d.Errf(tg.node, tg.where, "cannot expand %q: no home directory is known (set home:)", pattern)
		}
		if err := globs.CheckPathBrackets(pattern); err != nil {
			return d.Errf(tg.node, tg.where, "invalid path glob %q: %v", pattern, err)
		}
		var err error
		if r.path, err = compilePathPattern(normalizePatternText(pattern, d.p.home)); err != nil {
			return d.Errf(tg.node, tg.where, "invalid path glob %q: %v", pattern, err)
		}
	}
	if asShell {
		if err := globs.Check(pattern); err != nil {
			return d.Errf(tg.node, tg.where, "invalid shell pattern %q: %v", pattern, err)
		}
		r.shell = true
		r.shellPattern = pattern
		r.shellKey = shellKeyOf(pattern)
	}
	return nil
}

// ruleDecision decodes what a rule decides (action:, reason:), and refuses
// the settings of an ask on a rule that does not ask.
func (d *decoder) ruleDecision(n *yaml.Node, where string, f map[string]yamlconf.Member, r *rule) error {
	am, ok := f["action"]
	if !ok {
		return d.Errf(n, where, "missing action: (want allow, deny or ask)")
	}
	s, err := d.Str(am.Val, am.Location)
	if err != nil {
		return err
	}
	switch a := Action(s); a {
	case Allow, Deny, Ask:
		r.action = a
	default:
		return d.Errf(am.Val, am.Location, "unknown action %q (want allow, deny or ask)", s)
	}
	if m, ok := f["reason"]; ok {
		if r.reason, err = d.Str(m.Val, m.Location); err != nil {
			return err
		}
	}
	for _, k := range []string{"route", "ttl", "approvals_required", "escalation", "grantable", "max_age", "step_up"} {
		if m, ok := f[k]; ok && r.action != Ask {
			return d.Errf(m.KeyNode, where, "%s only applies to ask rules (this rule %ss)", k, r.action)
		}
	}
	return nil
}

// askSettings decodes the settings of an ask rule's questions: the team
// they go to, the approvals they need, their ttl and escalation, and what an
// answer may grant (grantable:, max_age:, step_up:).
func (d *decoder) askSettings(f map[string]yamlconf.Member, where string, r *rule) error {
	var err error
	team := d.p.teams["default"]
	if m, ok := f["route"]; ok {
		if r.route, err = d.Str(m.Val, m.Location); err != nil {
			return err
		}
		t, ok := d.p.teams[r.route]
		if !ok {
			return d.Errf(m.Val, m.Location, "unknown team %q (defined: %s)", r.route, strings.Join(slices.Sorted(maps.Keys(d.p.teams)), ", "))
		}
		team = t
	}
	if m, ok := f["approvals_required"]; ok {
		if r.approvals, err = d.PositiveInt(m.Val, m.Location); err != nil {
			return err
		}
		if !team.Open() && len(team.Groups) == 0 && r.approvals > len(team.Members) {
			return d.Errf(m.Val, m.Location, "approvals_required %d exceeds the %d members of team %s", r.approvals, len(team.Members), team.Name)
		}
	}
	if m, ok := f["ttl"]; ok {
		if r.ttl, err = d.Duration(m.Val, m.Location); err != nil {
			return err
		}
		if r.ttl > d.p.maxTTL {
			return d.Errf(m.Val, m.Location, "ttl %s exceeds max_ttl %s", r.ttl, d.p.maxTTL)
		}
	}
	if m, ok := f["grantable"]; ok {
		if r.grantable, err = d.Boolean(m.Val, m.Location); err != nil {
			return err
		}
	}
	if m, ok := f["max_age"]; ok {
		if r.maxAge, err = d.Duration(m.Val, m.Location); err != nil {
			return err
		}
	}
	if m, ok := f["step_up"]; ok {
		if r.stepUp, err = d.Boolean(m.Val, m.Location); err != nil {
			return err
		}
	}
	return d.ruleEscalation(f, where, r, team)
}

//go:embed default_policy.yaml
var defaultPolicyYAML []byte

var defaultPolicy = sync.OnceValue(func() *Policy {
	p, err := Parse(defaultPolicyYAML, "default_policy.yaml")
	if err != nil {
		// The file is part of the binary and covered by tests.
		panic("policy: built-in default policy is invalid: " + err.Error())
	}
	return p
})

// Default returns the built-in policy for dev mode (default_policy.yaml,
// embedded): auto-edit mode, common read-only shell commands allowed,
// .env-like secrets and key files denied to the file tools (except
// *.env.example), questions about them from shells, and everything else by
// mode. Its teams are the open default team. The same *Policy is returned on
// every call.
func Default() *Policy { return defaultPolicy() }

// DefaultYAML returns the source of the built-in policy, a starting point
// for a policy file.
func DefaultYAML() []byte { return slices.Clone(defaultPolicyYAML) }

// workspace decodes workspace: the directories writes stay in without a
// question in auto-edit mode: absolute paths, ~/… paths, and "." for the
// request's working directory.
func (d *decoder) workspace(n *yaml.Node, where string) error {
	d.p.workspace = []string{} // not nil: an empty list replaces the default
	return d.Strings(n, where, func(it *yaml.Node, loc, s string) error {
		if s == "." {
			d.p.workspace = append(d.p.workspace, ".")
			return nil
		}
		x, home := globs.ExpandHome(s, d.p.home)
		if home && d.p.home == "" {
			return d.Errf(it, loc, "cannot expand %q: no home directory is known (set home:)", s)
		}
		if !path.IsAbs(x) {
			return d.Errf(it, loc, "workspace directory %q must be absolute, start with ~/, or be \".\" (the request's working directory)", s)
		}
		d.p.workspace = append(d.p.workspace, path.Clean(x))
		return nil
	})
}

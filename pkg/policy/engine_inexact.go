package policy

import (
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff/pkg/policy/globs"
	"github.com/signoff-dev/signoff/pkg/policy/shell"
)

// Judging subjects whose value is not known literally (issue 12, class
// 4): a command with a word such as $f, $(…), a pathname pattern or
// ~user, and a redirection whose target is one of those or a relative
// path after a cd. See shell_match.go for the glob model.
//
// Within a layer the last matching rule wins, per string the subject can
// stand for. The verdict for the subject is the strictest over those
// strings: scanning the rules from the last, a deny or ask rule that
// could match some string counts, an allow rule counts only when it
// matches every string, and the scan stops at the first rule that matches
// every string (no earlier rule decides any of them). With no such rule,
// the mode decides the strings no rule matched.

// candidates returns the positions of the rules that may judge s, in
// ascending order; for a command whose name is not known, every rule of
// the shell tool.
func (l *ruleLayer) candidates(e *evaluation, s *subject) []int32 {
	switch s.kind {
	case subjRedirect:
		return l.writes
	case subjRead:
		return l.reads
	}
	var out []int32
	si := l.shell[e.tool]
	if s.kind == subjCommand && si != nil {
		if s.unknownName {
			for _, list := range si.byWord {
				out = append(out, list...)
			}
		} else {
			out = append(out, si.byWord[s.key]...)
			if s.qualified && s.baseKey != s.key {
				out = append(out, si.byWord[s.baseKey]...)
			}
		}
		out = append(out, si.any...)
	}
	out = append(out, l.multiRules(e).all...)
	slices.Sort(out)
	return slices.Compact(out)
}

// lastMatchInexact returns the rule that decides an inexact subject, and
// whether some string it stands for may be decided by no rule of the
// layer (the mode then applies to it).
func (l *ruleLayer) lastMatchInexact(e *evaluation, s *subject) (hit *rule, open bool) {
	cands := l.candidates(e, s)
	for k := len(cands) - 1; k >= 0; k-- {
		r := &l.rules[cands[k]]
		could, all := r.matchesInexact(s)
		if !could {
			continue
		}
		if r.action != Allow || all {
			if hit == nil || strictness(r.action) > strictness(hit.action) {
				hit = r
			}
		}
		if all {
			return hit, false
		}
	}
	return hit, true
}

// matchesInexact reports whether some string the subject stands for
// could match the rule, and whether all of them do.
func (r *rule) matchesInexact(s *subject) (could, all bool) {
	if r.source != srcAny {
		switch s.kind {
		case subjPath, subjRedirect, subjRead:
			if r.source != srcPath {
				return false, false
			}
		case subjCommand:
			if r.source != srcCommand {
				return false, false
			}
		default:
			return false, false
		}
	}
	if r.anyArgs {
		return true, true
	}
	switch s.kind {
	case subjRedirect, subjRead:
		return r.matchesInexactPath(s)
	case subjCommand:
		if !r.shell {
			return false, false
		}
		p := globs.FromShellPattern(r.shellPattern)
		w := s.globs[0]
		if r.action == Ask && mentionPattern(r.shellPattern) {
			// @shell(*credentials*) asks for a command that mentions
			// credentials: one whose text spells part of the word, not
			// every command with an expansion or a pattern (echo "$HOME",
			// head -5 src/*.go).
			could = globs.IntersectsAnchored(w, p)
		} else {
			could = globs.Intersects(p, w)
		}
		all = globs.Covers(p, w)
		if !could && s.qualified && r.action != Allow && len(s.baseGlobs) > 0 {
			could = globs.Intersects(p, s.baseGlobs[0])
		}
		return could || all, all
	}
	return false, false
}

// matchesInexactPath is matchesInexact for a path a shell command reads
// or writes.
func (r *rule) matchesInexactPath(s *subject) (could, all bool) {
	if r.path == nil {
		return false, false
	}
	if s.placed && s.anchored && r.path.abs && relativeNamed(s.globs[0]) {
		// The relative form of a pattern the agent wrote, placed, is
		// for the relative rules: its placed form meets the absolute
		// ones (./**.gz, which find . feeds, is not /tmp/x.gz). Not a
		// computed value's, nor one under any directory (*/x after a
		// cd the analysis cannot follow), which may be anywhere.
		return false, false
	}
	if s.twinned && r.path.abs && (len(s.globs[0]) == 0 || !s.globs[0][0].Lit() || s.globs[0][0].R != '/') {
		// Grep {"glob": "*.json"}: */*.json is /home/dev/proj/*/*.json
		// as the relative rules see it, not a path under any directory.
		return false, false
	}
	alts, ok := globs.PathAlternatives(r.path.text)
	if !ok {
		return true, false
	}
	w := s.globs[0]
	for _, p := range alts {
		if !could && (s.anchored && globs.IntersectsAnchored(w, p) || !s.anchored && globs.Intersects(p, w)) {
			could = true
		}
		if !all && globs.Covers(p, w) {
			all = true
		}
	}
	if !could && !all && r.action != Allow && (r.path.fold != r.path || globs.HasUpper(w)) {
		// As for a known path, a deny or ask rule meets the word in
		// any case (cat .E*).
		if folded, ok := globs.PathAlternatives(r.path.fold.text); ok {
			lw := globs.Lower(w)
			for _, p := range folded {
				if s.anchored && globs.IntersectsAnchored(lw, p) || !s.anchored && globs.Intersects(p, lw) {
					return true, false
				}
			}
		}
	}
	if !could && s.recursive && absGlob(w) && r.action != Allow {
		// grep -r x /home/d*, diff -N ~/.cod?x e: a directory the word
		// names may hold what an absolute rule names, the word's
		// wildcard above the rule's directory or spelling it (red team
		// AV F1). Met as a tree, not anchored: the rule's names lie
		// under the word, which need not spell them. A recursive read's
		// relative forms are for the relative rules (placeGlobs).
		could = treeMeetsAbs(w, alts)
		if !could && (r.path.fold != r.path || globs.HasUpper(w)) {
			// In any case, as above (grep -r x /mnt/c/USERS).
			if folded, ok := globs.PathAlternatives(r.path.fold.text); ok {
				could = treeMeetsAbs(globs.Lower(w), folded)
			}
		}
	}
	if !could && s.walk && r.action != Allow && path.IsAbs(r.path.dir) {
		// ag x ~/.s*: a directory the word names may hold the rule's.
		d := globs.Literal(nil, r.path.dir)
		tree := append(w[:len(w):len(w)], globs.Tok{R: '/'}, globs.AnyRun)
		could = globs.Intersects(w, d) || globs.Intersects(tree, d)
	}
	if !could && s.walk && r.action != Allow {
		// ar --output .gi? x: a rule covering whatever the directory
		// holds (**/.git/**) meets its walk, as walkChild does.
		child := globs.Literal(append(w[:len(w):len(w)], globs.Tok{R: '/'}), walkChild)
		for _, p := range alts {
			if s.anchored && globs.IntersectsAnchored(child, p) || !s.anchored && globs.Intersects(p, child) {
				could = true
				break
			}
		}
	}
	return could || all, all
}

// treeMeetsAbs reports whether a path the absolute pattern w names, or
// the tree under it, holds a path one of the absolute alternatives alts
// names.
func treeMeetsAbs(w globs.Glob, alts []globs.Glob) bool {
	tree := append(w[:len(w):len(w)], globs.Tok{R: '/'}, globs.AnyRun)
	for _, p := range alts {
		if absGlob(p) && (globs.Intersects(p, tree) || globs.Intersects(p, w)) {
			return true
		}
	}
	return false
}

// absGlob reports whether g is an absolute path pattern.
func absGlob(g globs.Glob) bool { return len(g) > 0 && g[0].Lit() && g[0].R == '/' }

// mentionPattern reports a command pattern that only says what a command
// mentions: *TEXT*, with no other wildcard.
func mentionPattern(p string) bool {
	return len(p) > 2 && strings.HasPrefix(p, "*") && strings.HasSuffix(p, "*") && !strings.ContainsAny(p[1:len(p)-1], "*?[{")
}

// judgeInexact runs an inexact subject through the layers: the agent
// layer's possible deny is a veto, the static layer decides the strings it
// has a rule for, the agent layer those it does not, and the mode the
// rest; the strictest of these is the verdict.
func (e *evaluation) judgeInexact(s *subject) verdict {
	if len(s.globs) <= 1 {
		return e.judgeInexactOne(s)
	}
	// Alternatives (a word that may vanish, the directories a cd may have
	// led to) are judged one by one; the strictest verdict stands.
	var best verdict
	for k := range s.globs {
		alt := *s
		alt.globs = s.globs[k : k+1]
		if k < len(s.baseGlobs) {
			alt.baseGlobs = s.baseGlobs[k : k+1]
		}
		v := e.judgeInexactOne(&alt)
		if k == 0 || strictness(v.action) > strictness(best.action) {
			best = v
		}
		if best.action == Deny {
			break
		}
	}
	return best
}

func (e *evaluation) judgeInexactOne(s *subject) verdict {
	var agentHit *rule
	agentOpen := true
	if e.agent != nil {
		agentHit, agentOpen = e.agent.lastMatchInexact(e, s)
		if agentHit != nil && agentHit.action == Deny {
			return verdict{action: Deny, rule: agentHit, layer: agentHit.layer.name, reason: e.ruleReason(agentHit, s)}
		}
	}
	static, staticOpen := e.p.static.lastMatchInexact(e, s)
	var v verdict
	hit := static
	if static != nil {
		v = verdict{action: static.action, rule: static, layer: static.layer.name, reason: e.ruleReason(static, s)}
	}
	if static == nil || staticOpen {
		if agentHit != nil && (static == nil || strictness(agentHit.action) > strictness(v.action)) {
			v = verdict{action: agentHit.action, rule: agentHit, layer: agentHit.layer.name, reason: e.ruleReason(agentHit, s)}
			hit = agentHit
		}
		if agentHit == nil || agentOpen {
			if m := e.modeVerdict(s); hit == nil || strictness(m.action) > strictness(v.action) {
				v, hit = m, nil
			}
		}
	}
	return e.settle(s, v, hit, static)
}

// lifted reports whether the deciding rule lifts the subject's floor: it
// names the foreign shell the subject runs.
func (s *subject) lifted(hit *rule) bool {
	switch {
	case hit == nil:
		return false
	case s.liftExact:
		return !hit.multi() && hit.layer.agent == ""
	case s.liftAny:
		return hit.anyArgs
	case s.liftKey != "":
		return hit.shell && hit.shellKey == s.liftKey
	}
	return false
}

// relativeNamed reports a relative glob that does not stand for "under
// any directory" (a leading */).
func relativeNamed(g globs.Glob) bool {
	if len(g) == 0 || g[0].Lit() && (g[0].R == '/' || g[0].R == '~') {
		return false
	}
	return !(len(g) >= 2 && g[0].Star && g[1].Lit() && g[1].R == '/')
}

// inexactPath makes a redirection subject stand for the paths its target
// can name.
func (e *evaluation) inexactPath(s *subject, c *shell.Command) {
	if c.Globs == nil {
		return
	}
	s.inexact = true
	s.globs = make([]globs.Glob, len(c.Globs))
	for i, g := range c.Globs {
		if s.floor == "" && e.kernelDotDot(g) {
			// cd node_modules/@s/pkg && echo x > ../../../.bashrc: the
			// kernel climbs from where the link points.
			s.floor, s.floorLayer = "redirect target "+strconv.Quote(c.Target)+" may go through a link (a .. from a directory that may be one) whose target the policy cannot see", "safety"
		}
		s.globs[i] = globs.CleanPath(g, e.p.home)
	}
	s.globs = e.placeGlobs(s.globs)
	s.placed = e.cwd != ""
}

// placeGlobs adds, for each relative glob, its form under the call's
// working directory: a path pattern the analysis built relative to where
// the command runs (cd sub && echo x > ../../.bashrc, cat .e?v) must meet
// the rules on absolute paths (~/.bashrc, /home/dev/proj/.env) as a
// literal path does (resolvePath). The relative form stays, for the rules
// written relative to the working directory; the strictest verdict of
// the forms stands (judgeInexact).
func (e *evaluation) placeGlobs(gs []globs.Glob) []globs.Glob {
	if e.cwd == "" {
		return gs
	}
	n := len(gs)
	for _, g := range gs[:n:n] {
		if len(g) > 0 && g[0].Lit() && g[0].R == '/' {
			// An absolute pattern: its forms under the working
			// directory and the directories above it, for the relative
			// deny and ask rules (red team AM F2: cat
			// /home/dev/proj/secret?/key).
			gs = appendUpForms(gs, g, e.cwd)
			continue
		}
		placed := globs.CleanPath(append(globs.Literal(nil, e.cwd+"/"), g...), e.p.home)
		gs = append(gs, placed)
		gs = appendUpForms(gs, placed, path.Dir(e.cwd))
	}
	return gs
}

// appendUpForms appends the forms of the absolute glob g relative to from
// and each directory above it, up to the root's children: relative rules
// are anchored at the project, which may be the working directory or any
// directory above it (red team AK F12, subject.upRels). Where g's literal
// beginning lies in the directory, the form is the rest of g; where only
// a wildcard may reach into it (../../pro*/secrets/key two levels below
// the project, red team AM F2), the form is any relative path. A form
// only adds verdicts, the strictest standing, and none begins with '/':
// the absolute rules do not meet them.
func appendUpForms(gs []globs.Glob, g globs.Glob, from string) []globs.Glob {
	anyForm := false
	for dir := from; dir != "/" && dir != "."; dir = path.Dir(dir) {
		switch {
		case litPrefix(g, dir+"/"):
			gs = append(gs, slices.Clone(g[len([]rune(dir))+1:]))
		case !anyForm && globs.Intersects(g, append(globs.Literal(nil, dir+"/"), globs.AnyRun)):
			gs, anyForm = append(gs, anyRelative), true
		}
	}
	return gs
}

// anyRelative is every relative path: a first character that is not '/',
// then anything.
var anyRelative = globs.Glob{{Any: true, NoSlash: true}, globs.AnyRun}

// litPrefix reports whether g begins with the literal text p.
func litPrefix(g globs.Glob, p string) bool {
	i := 0
	for _, r := range p {
		if i >= len(g) || !g[i].Lit() || g[i].Star || g[i].R != r {
			return false
		}
		i++
	}
	return true
}

// escapesAll reports whether every relative glob of gs climbs out of its
// directory (../x) after cleaning, and one does: without a working
// directory, where it lands is not known. The alternatives of a path
// placed after a cd stand for "before the cd" and "after it" (the
// analysis does not order them): cd src && ls > ../files.txt writes
// inside after it, so it does not escape; cd sub && echo x > ../../x
// escapes either way.
func escapesAll(gs []globs.Glob) bool {
	n := 0
	for _, g := range gs {
		if len(g) > 0 && g[0].Lit() && (g[0].R == '/' || g[0].R == '~') {
			continue
		}
		if !(len(g) >= 2 && g[0].Lit() && g[0].R == '.' && g[1].Lit() && g[1].R == '.' && (len(g) == 2 || g[2].Lit() && g[2].R == '/')) {
			return false
		}
		n++
	}
	return n > 0
}

// placedOutsideWorkspace returns the safety reason of a write whose target
// the analysis placed as a literal path relative to the working directory
// (after a cd: cd sub && echo x > ../../x) when that path lies outside the
// workspace, or "".
func (e *evaluation) placedOutsideWorkspace(s *subject) string {
	// As for escapesAll, the write is outside only when every placed
	// form is: before the cd and after it.
	reason := ""
	for _, g := range s.globs {
		lit := true
		for _, t := range g {
			lit = lit && t.Lit()
		}
		if !lit || len(g) == 0 || g[0].R != '/' {
			continue
		}
		p := e.pathSubject(subjRedirect, TierWrite, g.String())
		r := e.outsideWorkspace(&p)
		if r == "" {
			return ""
		}
		if reason == "" {
			reason = r
		}
	}
	return reason
}

// readGlobSubject is the subject of a read operand that is not a plain
// literal (cat .e*, grep -r x ~/.s*, cat "$f"): it stands for every path
// its glob can name and, when the command reads trees, for every path
// under them.
func (e *evaluation) readGlobSubject(c *shell.Command, text string, g globs.Glob, computed bool) subject {
	// An agent's pattern is met anchored; a value the script computes can
	// spell any name (shell.Command.ReadAny).
	s := subject{kind: subjRead, tier: TierRead, value: text, cmd: c, inexact: true, anchored: !computed,
		walk: c.Walks && !c.Recursive, recursive: c.Recursive,
		// rg -g '*.go' reads ./**/*.go: the working directory's (known or
		// not), whose relative forms are for the relative rules only, as
		// a relative path's are.
		twinned: !computed && len(g) >= 2 && g[0].Lit() && g[0].R == '.' && g[1].Lit() && g[1].R == '/'}
	clean := globs.CleanPath(g, e.p.home)
	s.globs = []globs.Glob{clean}
	if v := globs.DotDotVariant(g, e.p.home); v != nil {
		s.globs = append(s.globs, v) // .?/x: bash before 5.2 matches ..
	}
	var wild *rule
	if s.anchored {
		// The word's own globs, placed, before the trees under them.
		wild = e.wildNameRule(e.placeGlobs(slices.Clone(s.globs)), c.Recursive)
	}
	if c.Recursive {
		s.globs = append(s.globs, append(clean[:len(clean):len(clean)], globs.Tok{R: '/'}, globs.AnyRun))
	}
	s.globs = e.placeGlobs(s.globs)
	s.placed = e.cwd != ""
	if len(g) > 0 && !(g[0].Lit() && (g[0].R == '/' || g[0].R == '~')) && !(len(g) >= 2 && g[0].Star && g[1].Lit() && g[1].R == '/') {
		// cd "$(…)"; cat *: a relative pattern after a cd the analysis
		// cannot follow may be anywhere, as a relative literal (not its
		// */ form, which stands for that already).
		e.cdFloor(&s, text)
	}
	if s.floor == "" && e.cwd == "" && len(clean) >= 2 && clean[0].Lit() && clean[0].R == '.' && clean[1].Lit() && clean[1].R == '.' &&
		(len(clean) == 2 || clean[2].Lit() && clean[2].R == '/') {
		// grep -r x ../d* without a working directory: as a path's .. (red
		// team AW F4).
		s.floor, s.floorLayer = "read of "+strconv.Quote(text)+" escapes the working directory", "safety"
	}
	if s.floor == "" && wild != nil {
		s.floor, s.floorLayer, s.ungrantable = "a name "+strconv.Quote(text)+" matches wholly by a wildcard may be one rule "+wild.text+
			" "+verb(wild.action)+" reading", "shell", wild.action == Deny
	}
	if c.Elevated && s.floor == "" {
		s.floor, s.floorLayer, s.ungrantable = "read of "+strconv.Quote(text)+" runs elevated ("+e.elevator(c)+")", "shell", true
	} else if kernelLinkGlob(clean) || e.kernelDotDot(g) ||
		c.Recursive && kernelLinkGlob(append(clean[:len(clean):len(clean)], globs.Tok{R: '/'}, globs.AnyRun)) {
		s.floor, s.floorLayer = "read of "+strconv.Quote(text)+" may go through a link (a process's working directory or open files, or a .. from outside the working directory and the home) whose target the policy cannot see", "safety"
	}
	return s
}

// kernelDotDot reports whether a ".." of the path pattern g may climb from
// a directory outside the working directory and the home (/pro?/self/cwd/../x,
// /*/run/../x): from a link's target, which the text does not show. g is
// placed under the working directory first; without one, under a
// directory one level below the root (../*/1/cwd/.. reaches /proc from
// there).
func (e *evaluation) kernelDotDot(g globs.Glob) bool {
	cwd := e.trustedCwd()
	switch {
	case len(g) > 0 && g[0].Lit() && g[0].R == '/':
	case e.cwd != "":
		g = append(globs.Literal(nil, e.cwd+"/"), g...)
	default:
		cwd = "/.cwd"
		g = append(globs.Literal(nil, cwd+"/"), g...)
	}
	return globs.DotDotEscapes(g, []string{cwd, e.p.home}, e.p.home)
}

// readSubject is the subject of an input redirection.
func (e *evaluation) readSubject(c *shell.Command) subject {
	var s subject
	switch {
	case c.Unanalysable != "":
		s = subject{kind: subjRead, tier: TierRead, value: c.Target}
		s.floor, s.floorLayer, s.ungrantable = "cannot analyse input redirect: "+c.Unanalysable, "shell", true
	case c.Globs == nil:
		s = e.pathSubject(subjRead, TierRead, c.Target)
	default:
		s = subject{kind: subjRead, tier: TierRead, value: c.Target}
	}
	s.cmd = c
	s.recursive = c.Recursive
	e.inexactPath(&s, c)
	if c.Elevated && s.floor == "" {
		s.floor, s.floorLayer, s.ungrantable = "read of "+strconv.Quote(c.Target)+" runs elevated ("+e.elevator(c)+")", "shell", true
	}
	return s
}

// fedOutsideWorkspace returns the safety reason of a write of the paths a
// feeder hands a command (shell.Command.Fed: sed -i {} under find -exec,
// xargs) when they may lie outside the workspace in auto-edit mode, or
// "": each glob is placed by its literal directory prefix, as a write of
// that directory would be (outside the workspace, or climbing out of an
// unknown working directory), and one that starts with an unknown part
// (input the analysis cannot see) may be anywhere.
func (e *evaluation) fedOutsideWorkspace(c *shell.Command) string {
	if !c.Fed || e.mode != ModeAutoEdit {
		return ""
	}
	for _, g := range c.Globs {
		n := 0
		for n < len(g) && g[n].Lit() && !g[n].Star {
			n++
		}
		dir := "/"
		if n > 0 {
			lit := g[:n].String()
			dir = lit
			if n < len(g) {
				dir = "."
				if k := strings.LastIndexByte(lit, '/'); k >= 0 {
					dir = lit[:k+1]
				}
			}
		}
		s := e.pathSubject(subjRedirect, TierWrite, dir)
		if n == 0 {
			s.value = "/"
		}
		if s.floor != "" || e.outsideWorkspace(&s) != "" {
			return "writes " + c.Target + ", which may lie outside the workspace"
		}
	}
	return ""
}

// wildNameRule returns a deny or ask read rule, of a file in a named
// directory, that a pattern with a
// component made only of wildcards (~/.config/*/hosts.yml, *) may name
// a file of, or nil. A pattern is met anchored (IntersectsAnchored): the
// rule's name has to meet a character the pattern spells, so wc -l *.go
// does not meet *.env.*; but a component of * and ? alone spells nothing
// and is any name, gh and prod.env among them, so such a pattern meeting
// a rule at all asks, naming it.
func (e *evaluation) wildNameRule(gs []globs.Glob, tree bool) *rule {
	if !slices.ContainsFunc(gs, wildComponent) {
		return nil
	}
	layers := []*ruleLayer{e.p.static}
	if e.agent != nil {
		layers = append(layers, e.agent)
	}
	var wild []globs.Glob
	for _, g := range gs {
		if wildComponent(g) {
			n := noLeadingDot(g)
			wild = append(wild, n)
			if tree {
				// grep -r x ~/.config/*: and what each holds.
				wild = append(wild, append(n[:len(n):len(n)], globs.Tok{R: '/'}, globs.AnyRun))
			}
		}
	}
	for _, l := range layers {
		for _, i := range l.reads {
			r := &l.rules[i]
			if r.action == Allow || r.path == nil || r.path.dir == "" && !r.path.abs {
				// A rule for a name anywhere (*.env, **/.env) is met by any
				// directory's contents, a tree read's as much: out of
				// reach, as grep -r x . is (docs/POLICY.md, limits).
				continue
			}
			alts, ok := globs.PathAlternatives(r.path.text)
			if !ok {
				continue
			}
			for _, p := range alts {
				for _, g := range wild {
					if globs.Intersects(p, g) && !allowedAfter(l, i, g) {
						return r
					}
				}
			}
		}
	}
	return nil
}

// allowedAfter reports whether a read rule of l after rule i allows every
// path of the pattern g (the last match wins: ~/.cargo/registry/src/*/x
// is in a tree an allow names after the ask for the home's dot files).
func allowedAfter(l *ruleLayer, i int32, g globs.Glob) bool {
	for _, j := range l.reads {
		r := &l.rules[j]
		if j <= i || r.action != Allow || r.path == nil {
			continue
		}
		if alts, ok := globs.PathAlternatives(r.path.text); ok &&
			slices.ContainsFunc(alts, func(p globs.Glob) bool { return globs.Covers(p, g) }) {
			return true
		}
	}
	return false
}

// noLeadingDot returns g with each component made only of wildcards
// starting with a character that is not a dot: bash's * and ? do not
// match a name's leading dot (~/.config/*/x is not ~/.config/.git/x).
func noLeadingDot(g globs.Glob) globs.Glob {
	out := make(globs.Glob, 0, len(g)+2)
	for i, t := range g {
		start := i == 0 || g[i-1].Lit() && g[i-1].R == '/'
		if start && t.Any && t.Class == "" && componentWild(g[i:]) {
			out = append(out, globs.Tok{Class: "[!./]"})
			if !t.Star {
				continue // ? is that one character
			}
		}
		out = append(out, t)
	}
	return out
}

// componentWild reports whether the component g starts with is made only
// of * and ?.
func componentWild(g globs.Glob) bool {
	for _, t := range g {
		if t.Lit() && t.R == '/' {
			return true
		}
		if !t.Any || t.Class != "" {
			return false
		}
	}
	return true
}

// wildComponent reports whether a path pattern has a component made only
// of wildcards (* and ?, no class, no literal).
func wildComponent(g globs.Glob) bool {
	start, wild := true, false
	for _, t := range g {
		switch {
		case t.Lit() && t.R == '/':
			if wild {
				return true
			}
			start, wild = true, false
		case t.Any && t.Class == "":
			wild = start || wild
			start = false
		default:
			start, wild = false, false
		}
	}
	return wild
}

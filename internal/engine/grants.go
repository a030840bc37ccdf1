package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/policy/shell"
	"github.com/signoff-dev/signoff/pkg/session"
)

// Grants (docs/POLICY.md "Grants"): an approval with scope session or
// always records one grant object; a later ask is allowed by grants only
// when policy.GrantNeed.SettledBy says their approvers could have settled
// it, and the same rule decides which standing answers a question offers.

// grantID is the id of the grant an approval of a request makes: the same
// on every replica and every outbox retry, so that storing it twice is a
// no-op.
func grantID(sessionID, requestID string) string {
	sum := sha256.Sum256([]byte(sessionID + "\x00" + requestID))
	return "gr_" + hex.EncodeToString(sum[:10])
}

// grantAuthority is what stands behind g for a call requested by
// requestedBy: its distinct approvers, the requester not counted — the
// requester may not approve their own call (authorize), so a grant they
// approved cannot do it for them either. A legacy grant, whose approver is
// unknown, counts as one.
func grantAuthority(g *session.Grant, requestedBy string) policy.Authority {
	if len(g.Approvers) == 0 {
		return policy.Authority{Teams: g.Teams, Approvers: 1}
	}
	ids := make([]string, 0, len(g.Approvers))
	for _, a := range g.Approvers {
		if a.ID != "" && a.ID != requestedBy && !slices.Contains(ids, a.ID) {
			ids = append(ids, a.ID)
		}
	}
	return policy.Authority{Teams: g.Teams, Approvers: len(ids)}
}

// grantedTo reports whether g stands for calls of agentID: an always
// grant is the agent's (the store looks it up by agent); a session grant
// is its session's agent's — the agent whose call the approver answered,
// not any agent that says the same session id (red team AP F2: session
// ids are declared, and often generic: main, default). A session grant
// stored before grants named their agent holds for the session.
func grantedTo(g *session.Grant, agentID string) bool {
	return !g.IsSession() || g.AgentID == "" || g.AgentID == agentID
}

// grantsAllowing returns the grants that turn the ask d of tool, requested
// by requestedBy from agentID, into an allow, or nil. Only grants whose approvers could
// have settled the question count (need.SettledBy of grantAuthority: the
// requester's own approval not counted); a deny or an allow is never a
// grant's.
// A whole-tool grant covers every grantable call of its tool; for a shell
// command, the patterns of the eligible grants together must cover every
// sub-command (shell.PrefixCovered), and the grants returned are the ones
// that cover is made of.
func grantsAllowing(pol *policy.Policy, d *policy.Decision, tool, requestedBy, agentID string, grants []session.Grant) []session.Grant {
	if d.Action != policy.Ask || len(grants) == 0 {
		return nil
	}
	need := pol.NeedOf(d)
	if need.NotGrantable != "" {
		return nil
	}
	var eligible []session.Grant
	for i := range grants {
		g := &grants[i]
		if g.Tool != tool || !grantedTo(g, agentID) {
			continue
		}
		if ok, _ := need.SettledBy(grantAuthority(g, requestedBy)); !ok {
			continue
		}
		if len(g.Patterns) == 0 {
			return []session.Grant{*g}
		}
		eligible = append(eligible, *g)
	}
	if len(eligible) == 0 || d.Shell == nil {
		return nil
	}
	// A grant whose patterns cover none of the sub-commands adds nothing
	// to a cover: leaving it out changes no answer below, and keeps the
	// loop that follows quadratic in useful grants only.
	eligible = slices.DeleteFunc(eligible, func(g session.Grant) bool { return !shell.CoversAny(*d.Shell, g.Patterns) })
	if len(eligible) == 0 || !shell.PrefixCovered(*d.Shell, patternsOf(eligible)) {
		return nil
	}
	// Keep only the grants the cover needs, so that decided_by names them.
	for i := 0; i < len(eligible) && len(eligible) > 1; {
		rest := slices.Concat(eligible[:i], eligible[i+1:])
		if shell.PrefixCovered(*d.Shell, patternsOf(rest)) {
			eligible = rest
			continue
		}
		i++
	}
	return eligible
}

// grantLookup returns q reading the grants that could allow the call d of
// tool (the grant index, docs/STATE.md "Grants"): those of tool in its own
// bucket and, for a shell command, in the bucket of each sub-command's
// program. A call without a shell analysis reads the tool's own bucket
// only: grantsAllowing lets a grant with patterns allow a shell command
// only. What the index leaves out could not have allowed the call, so the
// decision is the same as with every grant read. The automatic path (an
// allow or a deny, which reads no grants) pays nothing for it.
func grantLookup(q session.LookupQuery, d *policy.Decision, tool string) session.LookupQuery {
	if q.SkipGrants {
		return q // an allow or a deny: no grants read, nothing to name
	}
	q.Tool, q.ProgramsKnown = tool, true
	if d.Shell != nil {
		q.Programs = shellPrograms(d.Shell)
	}
	return q
}

// shellPrograms returns the programs of a's commands, each once: the first
// space-separated word of the command's words joined by single spaces (the
// text shell.PrefixCovered matches patterns against; a pattern whose first
// word is literal matches only a command with that first word), ">" for a
// write redirection and "<" for a read one (their patterns are "> TARGET"
// and "< TARGET").
func shellPrograms(a *shell.Analysis) []string {
	var out []string
	for i := range a.Commands {
		c := &a.Commands[i]
		p := ""
		switch {
		case c.Redirect && c.Read:
			p = "<"
		case c.Redirect:
			p = ">"
		case len(c.Words) > 0:
			p, _, _ = strings.Cut(c.Words[0], " ")
		}
		if p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func patternsOf(gs []session.Grant) []string {
	var out []string
	for i := range gs {
		out = append(out, gs[i].Patterns...)
	}
	return out
}

func approverIDs(g *session.Grant) string {
	if len(g.Approvers) == 0 {
		return "an approver before grants were recorded (legacy)"
	}
	ids := make([]string, len(g.Approvers))
	for i, a := range g.Approvers {
		ids[i] = a.ID
	}
	return strings.Join(ids, ", ")
}

// offersFor says which standing answers the question about d offers: a
// scope is offered only when the grant its answer records (approved for
// the question's team by as many approvers as the question needs, with the
// patterns shown) would settle this same question again. On a question
// that needs a quorum, the grant is recorded only if every counted
// approver chooses the standing answer (quorumScope); the offer's Note
// says so.
func offersFor(pol *policy.Policy, d *policy.Decision, tool, agentID string) []messages.GrantOffer {
	need := pol.NeedOf(d)
	ok, why := need.SettledBy(policy.Authority{Teams: []string{need.Team}, Approvers: max(need.Approvals, 1)})
	if ok && pol.AnswersUser(tool) {
		ok, why = false, whyNoAnswerGrant
	}
	session := messages.GrantOffer{Scope: messages.ScopeSession}
	always := messages.GrantOffer{Scope: messages.ScopeAlways}
	if d.Shell != nil {
		always.Scope = messages.ScopeAlwaysPrefix
	}
	covered := d.Shell == nil || (len(d.Always) > 0 && shell.PrefixCovered(*d.Shell, d.Always))
	var patterns []string
	if d.Shell != nil {
		patterns = d.Always
	}
	unsettled := whyNot{!ok, why}
	uncovered := whyNot{!covered, "the command has no pattern a grant could name (it holds a construct only a human may judge each time)"}
	if d.Shell != nil && pol.SessionGrants() == policy.SessionGrantTool {
		offer(&session, tool, nil, unsettled)
	} else {
		offer(&session, tool, patterns, unsettled, uncovered)
	}
	offer(&always, tool, patterns, unsettled, whyNot{agentID == "", "the request names no agent_id to attach the grant to"}, uncovered)
	for _, o := range []*messages.GrantOffer{&session, &always} {
		if o.Offered {
			o.Expires = expiresOf(pol.GrantMaxAge(d, o.Scope != messages.ScopeSession))
		}
	}
	runs := runsFiles(d.Shell)
	for _, o := range []*messages.GrantOffer{&session, &always} {
		if !o.Offered {
			continue
		}
		var notes []string
		if runs != "" {
			notes = append(notes, runs+" what files say (a Makefile, scripts), which the agent may change without a question")
		}
		if need.Approvals > 1 {
			notes = append(notes, fmt.Sprintf("granted only if all %d approvers choose %s; otherwise the request is approved once", need.Approvals, scopeLabel(o.Scope)))
		}
		o.Note = strings.Join(notes, "; ")
	}
	return []messages.GrantOffer{session, always}
}

// runsFiles says which programs of a do what files say rather than only
// what their words say ("make does", "npm and pytest do"), or "" (red
// team AT F4: Always on make build granted 30 days of whatever Makefile
// the agent wrote next, which auto-edit let it write).
func runsFiles(a *shell.Analysis) string {
	if a == nil {
		return ""
	}
	var names []string
	for i := range a.Commands {
		if c := &a.Commands[i]; c.RunsFiles && c.Name != "" && !slices.Contains(names, c.Name) {
			names = append(names, c.Name)
		}
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0] + " does"
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " do"
}

// expiresOf is GrantOffer.Expires of a grant lasting maxAge (0: no limit
// of its own).
func expiresOf(maxAge time.Duration) string {
	if maxAge <= 0 {
		return messages.ExpiresNever
	}
	return maxAge.String()
}

// scopeLabel is the button text of a standing scope.
func scopeLabel(s messages.Scope) string {
	if s == messages.ScopeSession {
		return "Session"
	}
	return "Always"
}

// whyNot is a reason not to offer a standing answer, when it holds.
type whyNot struct {
	holds bool
	why   string
}

// offer fills o: not offered, for the first of reasons that holds, else
// offered for tool with (a copy of) patterns, none meaning every call of
// the tool.
func offer(o *messages.GrantOffer, tool string, patterns []string, reasons ...whyNot) {
	for _, r := range reasons {
		if r.holds {
			o.WhyNot = r.why
			return
		}
	}
	o.Offered, o.Tool, o.Patterns = true, tool, slices.Clone(patterns)
}

// whyNoAnswerGrant is why a question of an ask-user tool offers no standing
// answer: each of its questions needs the approver's own answer, and a grant
// would let the next ones through with none.
const whyNoAnswerGrant = "a question for the approver to answer: each one needs its own answer, and a standing grant would let the next ones through unanswered"

// alwaysOf is the offered always entry in the question's older form, for
// approver clients that read `always`.
func alwaysOf(offers []messages.GrantOffer) *messages.AlwaysGrant {
	for _, o := range offers {
		if o.Offered && (o.Scope == messages.ScopeAlways || o.Scope == messages.ScopeAlwaysPrefix) {
			return &messages.AlwaysGrant{Scope: o.Scope, Tool: o.Tool, Patterns: slices.Clone(o.Patterns)}
		}
	}
	return nil
}

// scopeRank orders scopes by what a grant of them covers: once (no
// grant) < session < always (always_prefix is always for a shell command).
// An approver who chose a wider scope stands behind a narrower grant too.
func scopeRank(s messages.Scope) int {
	switch s {
	case messages.ScopeSession:
		return 1
	case messages.ScopeAlways, messages.ScopeAlwaysPrefix:
		return 2
	}
	return 0
}

// quorumScope is the scope of the grant that counted approvals with the
// given scopes (in order, the settling one last) record when they reach
// required: the settling approver's scope if at least required approvers
// chose it or a wider one; else session if enough chose session or wider;
// else once (no grant: the request is approved once). It returns the
// indexes of the approvals that stand behind the grant.
func quorumScope(scopes []messages.Scope, required int) (messages.Scope, []int) {
	if len(scopes) == 0 {
		return messages.ScopeOnce, nil
	}
	behind := func(rank int) []int {
		var idx []int
		for i, s := range scopes {
			if scopeRank(s) >= rank {
				idx = append(idx, i)
			}
		}
		return idx
	}
	last := scopes[len(scopes)-1]
	for _, cand := range []messages.Scope{last, messages.ScopeSession} {
		r := scopeRank(cand)
		if r == 0 || r > scopeRank(last) {
			continue
		}
		if idx := behind(r); len(idx) >= max(required, 1) {
			return cand, idx
		}
	}
	return messages.ScopeOnce, nil
}

// approvalScopes returns the scope of each counted approval of rec, in
// order. An approval stored without its scope (a vote of a broker that
// predates scopes on votes) reads as once, except the settling one, whose
// scope is the decision's (what that broker granted on).
func approvalScopes(rec *session.Record) []messages.Scope {
	out := make([]messages.Scope, len(rec.Approvals))
	for i := range rec.Approvals {
		out[i] = rec.ApprovalScope(i)
		if i == len(rec.Approvals)-1 && (i >= len(rec.ApprovalScopes) || rec.ApprovalScopes[i] == "") && rec.Decision != nil &&
			rec.Approvals[i] == rec.Decision.DecidedBy.ID && rec.Decision.Scope != "" {
			out[i] = rec.Decision.Scope
		}
	}
	return out
}

// checkScope returns why an approval with scope may not be applied to the
// question q ("" when it may): a standing scope must be offered — a
// question stored with offers made before quorum questions offered them
// offers none.
func checkScope(scope messages.Scope, q *messages.ApprovalNeeded, rec *session.Record) string {
	if scope == messages.ScopeOnce {
		return ""
	}
	if scope != messages.ScopeSession && scope != messages.ScopeAlways && scope != messages.ScopeAlwaysPrefix {
		return fmt.Sprintf("unknown scope %q", scope)
	}
	o := q.Offer(scope)
	if o == nil {
		return fmt.Sprintf("scope %s is not offered for this question (it was asked before grants were offered); approve once", scope)
	}
	if !o.Offered {
		return fmt.Sprintf("scope %s is not offered for this question: %s; approve once", scope, o.WhyNot)
	}
	if scope == messages.ScopeAlwaysPrefix && o.Scope != messages.ScopeAlwaysPrefix {
		return "scope always_prefix applies to shell commands only; use always"
	}
	if scope != messages.ScopeSession && rec.AgentID == "" {
		return fmt.Sprintf("scope %s needs the request's agent_id", scope)
	}
	return ""
}

// grantOf returns the grant the approval rec records (nil for once): the
// offer of the scope quorumScope derives from the stored scope of every
// counted approval, approved for the question's team by the approvers who
// chose it (or a wider one), lasting the policy's max_age. The decision's
// scope must say the same (the responding replica derived it from the
// approvals it read): if a vote raced in between, nothing is granted.
func (e *Engine) grantOf(rec *session.Record, q *messages.ApprovalNeeded) (*session.Grant, error) {
	if rec.Decision == nil || rec.Decision.Scope == "" || rec.Decision.Scope == messages.ScopeOnce {
		return nil, nil
	}
	scope, behind := quorumScope(approvalScopes(rec), rec.ApprovalsRequired)
	if scope == messages.ScopeOnce {
		return nil, fmt.Errorf("scope %s: only %d of the %d approvers counted chose a standing answer; approved once",
			rec.Decision.Scope, len(behindOf(approvalScopes(rec))), rec.ApprovalsRequired)
	}
	if scopeRank(scope) != scopeRank(rec.Decision.Scope) {
		return nil, fmt.Errorf("the decision says scope %s but the counted approvals stand behind %s (a vote raced the decision); approved once",
			rec.Decision.Scope, scope)
	}
	scope = rec.Decision.Scope
	if why := checkScope(scope, q, rec); why != "" {
		return nil, errors.New(why)
	}
	o := q.Offer(scope)
	g := &session.Grant{
		Grant: messages.Grant{
			ID:        grantID(rec.SessionID, rec.ID),
			Scope:     o.Scope,
			Tool:      o.Tool,
			Patterns:  slices.Clone(o.Patterns),
			Teams:     grantTeams(rec, q),
			Approvers: approversOf(rec, behind),
			RequestID: rec.ID,
		},
		Origin: rec.SessionID,
	}
	if o.Scope == messages.ScopeSession {
		// The session's, for the agent whose call was approved
		// (grantedTo).
		g.SessionID = rec.SessionID
	}
	g.AgentID = rec.AgentID
	pol := e.cfg.Policy.Current()
	d := pol.Evaluate(policy.Call{Tool: rec.Tool, Arguments: q.Request.Arguments, AgentType: q.Request.AgentType,
		Cwd: q.Request.Cwd, Home: q.Request.Home, Mode: e.mode(rec.SessionID, q.Request.AgentType)})
	g.MaxAge = pol.GrantMaxAge(&d, !g.IsSession())
	return g, nil
}

// grantTeams is the team a grant is approved for: the team the question
// was routed to, whose need it settled. Teams an escalation added to the
// question answer for that team; they are not the grant's (a member of an
// added team approving must not make a grant usable for that team's own,
// other questions).
func grantTeams(rec *session.Record, q *messages.ApprovalNeeded) []string {
	if q.Team != "" {
		return []string{q.Team}
	}
	return slices.Clone(rec.Teams[:min(len(rec.Teams), 1)])
}

// behindOf returns the indexes of the approvals with a standing scope.
func behindOf(scopes []messages.Scope) []int {
	var idx []int
	for i, s := range scopes {
		if scopeRank(s) > 0 {
			idx = append(idx, i)
		}
	}
	return idx
}

// approversOf lists who stands behind rec's grant: the approvals counted
// at the indexes behind, the settling one with the channel and device it
// answered from.
func approversOf(rec *session.Record, behind []int) []messages.Approver {
	by := rec.Decision.DecidedBy
	out := make([]messages.Approver, 0, max(len(behind), 1))
	for _, i := range behind {
		id := rec.Approvals[i]
		a := messages.Approver{ID: id}
		if id == by.ID {
			a = messages.Approver{ID: by.ID, Display: by.Display, Channel: by.Channel, Device: by.Device}
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		out = append(out, messages.Approver{ID: by.ID, Display: by.Display, Channel: by.Channel, Device: by.Device})
	}
	return out
}

// storeGrant stores the grant of an approval (an outbox effect: storing it
// twice is a no-op, and storing it after it was revoked or expired stores
// nothing) and records its creation.
func (e *Engine) storeGrant(ctx context.Context, rec *session.Record, g *session.Grant) (session.Grant, error) {
	sctx, cancel := e.storeCtx(ctx)
	stored, created, purged, err := e.cfg.Grants.AddGrant(sctx, *g)
	cancel()
	if errors.Is(err, session.ErrGrantRemoved) {
		// A retry of this approval's effects after the grant was revoked or
		// expired: it stays removed (the cascade finds no grant of it).
		e.log.Info("grant not stored again: it was revoked or expired", "grant_id", g.ID, "request_id", rec.ID, "session_id", rec.SessionID)
		return *g, nil
	}
	if err != nil {
		e.storeErr("grant", err, "request_id", rec.ID, "session_id", rec.SessionID)
		return session.Grant{}, err
	}
	if created {
		e.m.Grants.WithLabelValues(string(messages.GrantCreated)).Inc()
		e.log.Info("grant created", "grant_id", stored.ID, "scope", stored.Scope, "tool", stored.Tool,
			"patterns", strings.Join(stored.Patterns, ", "), "teams", strings.Join(stored.Teams, ","),
			"request_id", rec.ID, "session_id", rec.SessionID, "expires_at", stored.ExpiresAt)
	}
	// Appended on every run: the stream keeps one copy (its Nats-Msg-Id).
	e.GrantEvent(messages.GrantCreated, &stored, rec.ID, "")
	e.GrantsExpired(purged)
	return stored, nil
}

// GrantsExpired records grants the store removed at their expiry.
func (e *Engine) GrantsExpired(gs []session.Grant) {
	for i := range gs {
		e.m.Grants.WithLabelValues(string(messages.GrantExpired)).Inc()
		e.log.Info("grant expired", "grant_id", gs[i].ID, "scope", gs[i].Scope, "expires_at", gs[i].ExpiresAt)
		e.GrantEvent(messages.GrantExpired, &gs[i], "", "")
	}
}

// GrantEvent appends the audit record of a grant's creation, revocation or
// expiry. Its Nats-Msg-Id names the grant and the event, so every replica
// and retry recording it makes one record.
func (e *Engine) GrantEvent(kind messages.GrantEventKind, g *session.Grant, requestID, by string) {
	sess := g.Origin
	if g.IsSession() {
		sess = g.SessionID
	}
	if sess == "" {
		// A legacy always grant: no session is known; the agent id is a
		// token too and names where the grant lived.
		sess = g.AgentID
	}
	ev := messages.GrantEvent{V: messages.Version, Type: messages.TypeGrantEvent, Event: kind, Grant: g.Grant,
		RequestID: requestID, SessionID: sess, By: by, Replica: e.cfg.Replica, Recorded: time.Now().UTC()}
	e.cfg.Audit.Grant(&ev)
}

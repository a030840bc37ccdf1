package engine

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
)

// Approve with changes (docs/PROTOCOL.md "Approve with changes"): an
// approval may carry updated_arguments, the arguments the call is to run
// with. The broker judges the edited call as it judges an agent's request
// — same tool, agent, agent type, working directory and session mode, the
// policy in force now — before it counts the answer, and takes the grants
// of a session or always answer from the edited call, never the original.

// editedCall is an approval's edited call as the policy judged it.
type editedCall struct {
	// args are the edited arguments, compact: what the decision carries.
	args json.RawMessage
	// q is the question as approved: the edited call, its risk, and the
	// standing answers it offers (checkScope, grantOf read them). Scopes
	// and grants are taken from it, never from the original question.
	q messages.ApprovalNeeded
}

// whyEditPending ends every refusal of an edit: the question is still open.
const whyEditPending = "; the request stays pending: approve it unchanged, edit it otherwise, or reject it with feedback"

// checkEdit judges the edited call of resp, an approval of rec (whose
// stored question is q), with pol. It returns nil and "" when resp carries
// no edit, or arguments equal to the agent's (a plain approval); else the
// edited call, or why the answer is refused (the request stays pending).
func (e *Engine) checkEdit(pol *policy.Policy, rec *session.Record, q *messages.ApprovalNeeded, resp *messages.Response) (*editedCall, string) {
	if len(resp.UpdatedArguments) == 0 {
		return nil, ""
	}
	if q.AskUser != nil || pol.AnswersUser(rec.Tool) {
		// An ask-user question's approval carries the approver's answer to
		// the questions shown, standing for the tool's output: an edited
		// call would change the questions it answers (and the hook's
		// updatedInput would have two meanings). Fail closed either way
		// the class is known: from the question or the policy now.
		return nil, "approve with changes is not available on an ask-user question (tool " + rec.Tool +
			"): answer it instead" + whyEditPending
	}
	if rec.ApprovalsRequired > 1 {
		// The approvals counted so far (and those still to come) approve
		// the call they were shown: counting them for another call would
		// let one approver change what the others agreed to.
		return nil, fmt.Sprintf("approve with changes is not available on a request that needs %d approvals: "+
			"reject it with feedback, and the agent asks for the changed call, which gets its own approvals", rec.ApprovalsRequired) + whyEditPending
	}
	args, err := compactJSON(resp.UpdatedArguments)
	if err != nil {
		return nil, "the edited arguments are not valid JSON: " + err.Error() + whyEditPending
	}
	if orig, err := compactJSON(q.Request.Arguments); err == nil && bytes.Equal(orig, args) {
		return nil, ""
	}
	// The edited call passes the checks of an agent's request.
	req := q.Request
	req.Arguments, req.BatchRemaining = args, nil
	if err := req.Validate(); err != nil {
		return nil, "the edited call is not a valid request: " + err.Error() + whyEditPending
	}
	d := pol.Evaluate(policy.Call{Tool: rec.Tool, Arguments: args, AgentType: req.AgentType, Cwd: req.Cwd, Home: req.Home,
		Mode: e.mode(rec.SessionID, req.AgentType)})
	switch d.Action {
	case policy.Deny:
		return nil, "the edited call is denied by the policy: " + d.Reason + whyEditPending
	case policy.Ask:
		if d.SafetyOverride != "" {
			// A safety override asks a question of its own, shown with
			// its warning: an edit never turns it into an approval.
			return nil, "the edited call trips a safety override (" + d.SafetyOverride + "): it needs its own question; reject with feedback, and the agent asks for it" + whyEditPending
		}
		// The approval must be one that could have settled the edited
		// call's own question: by a member of the team it routes to, with
		// no more approvals than one.
		team, need := pol.Route(&d)
		if need > 1 {
			return nil, fmt.Sprintf("the edited call needs %d approvals from team %s (%s): reject with feedback, and the agent asks for it",
				need, team, d.Reason) + whyEditPending
		}
		routed := &session.Record{Request: session.Request{RequestedBy: rec.RequestedBy, Teams: []string{team}}}
		if why := authorize(pol, routed, resp.Approver.ID, resp.ApproverGroups, e.cfg.OpenTeams); why != "" {
			return nil, "the edited call goes to team " + team + ": " + why + whyEditPending
		}
	}
	ed := &editedCall{args: args, q: *q}
	ed.q.Request.Arguments = args
	ed.q.Risk = riskOf(&d)
	ed.q.Risk.Shell = pol.IsShellTool(rec.Tool)
	ed.q.Offers = offersFor(pol, &d, rec.Tool, rec.AgentID)
	ed.q.Always = alwaysOf(ed.q.Offers)
	if su := pol.StepUp(&d); su != nil {
		// The edited call's own step-up, if it needs one; else the
		// original question's stays.
		ed.q.StepUp = su
	}
	if why := checkScope(resp.EffectiveScope(), &ed.q, rec); why != "" {
		return nil, "the edited call: " + why + whyEditPending
	}
	return ed, ""
}

// approvedQuestion is the question the settled approval rec approved:
// for an approval with changes, the edited call — its arguments, and what
// a standing answer to it grants as its decision recorded (the granted
// patterns, never the original question's) — else q itself. The outbox
// takes an approval's grants from it, on whichever replica carries them
// out, whatever the policy in force by then.
func approvedQuestion(rec *session.Record, q messages.ApprovalNeeded) messages.ApprovalNeeded {
	d := rec.Decision
	if d == nil || len(d.UpdatedArguments) == 0 {
		return q
	}
	q.Request.Arguments = d.UpdatedArguments
	q.Always, q.Offers = nil, nil
	switch d.Scope {
	case messages.ScopeSession:
		q.Offers = []messages.GrantOffer{{Scope: messages.ScopeSession, Offered: true, Tool: rec.Tool, Patterns: d.GrantedPattern}}
	case messages.ScopeAlways, messages.ScopeAlwaysPrefix:
		scope := messages.ScopeAlways
		if len(d.GrantedPattern) > 0 {
			scope = messages.ScopeAlwaysPrefix // a shell command's patterns
		}
		q.Offers = []messages.GrantOffer{{Scope: scope, Offered: true, Tool: rec.Tool, Patterns: d.GrantedPattern}}
		q.Always = alwaysOf(q.Offers)
	}
	return q
}

// compactJSON returns raw without insignificant whitespace.
func compactJSON(raw json.RawMessage) (json.RawMessage, error) {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

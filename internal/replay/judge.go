package replay

import (
	"strings"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/policy/shell"
)

// Change is one recorded decision that the candidate policy would change.
type Change struct {
	RequestID string `json:"request_id"`
	SessionID string `json:"session_id"`
	AgentID   string `json:"agent_id,omitempty"`
	AgentType string `json:"agent_type,omitempty"`
	Tool      string `json:"tool"`
	// From is what the recorded request got from the policy and the grants:
	// allow (a rule, the mode, or a grant), ask (a human decided), deny.
	From policy.Action `json:"from"`
	// To is what the candidate gives it now.
	To policy.Action `json:"to"`
	// ReasonCode is the recorded decision's reason code.
	ReasonCode messages.ReasonCode `json:"reason_code"`
	// Rule is the candidate rule that decides now ("" when its mode does).
	Rule string `json:"rule,omitempty"`
	// Reason is the candidate's reason.
	Reason string `json:"reason"`
	// GrantLost names the grant that allowed the recorded request and
	// would no longer apply under the candidate.
	GrantLost string `json:"grant_lost,omitempty"`
	// DecidedAt is when the recorded decision was made.
	DecidedAt time.Time `json:"decided_at"`
}

// Key is the change's label in the totals, "allow→deny".
func (c *Change) Key() string { return string(c.From) + "→" + string(c.To) }

// verdict is the outcome of judging one record: skipped (with why), the
// same, or a change.
type verdict struct {
	skip   string // the reason code of a decision the policy did not make
	change *Change
}

// recordedAction returns what the policy (and the grants) made of a
// recorded decision's request, and ok=false for a decision the policy did
// not make: a hard stop comes before the policy, and an unavailable store
// or stream denies whatever the policy said.
func recordedAction(code messages.ReasonCode) (a policy.Action, ok bool) {
	switch code {
	case messages.ReasonPolicyAllow, messages.ReasonModeAllow, messages.ReasonScopeGrant:
		return policy.Allow, true
	case messages.ReasonPolicyDeny:
		return policy.Deny, true
	case messages.ReasonApproved, messages.ReasonRejected, messages.ReasonTimeout,
		messages.ReasonCancelled, messages.ReasonCascade:
		return policy.Ask, true
	}
	return "", false
}

// judge evaluates the request of rec under cand and compares. It reads
// only rec and cand, so records may be judged concurrently.
func judge(cand *policy.Policy, rec *messages.AuditRecord) verdict {
	dec := &rec.Decision
	if c := rec.Clipped; c != nil {
		// Stored clipped: judged on the arguments it kept, skipped when
		// it kept only their size and digest.
		if len(c.Arguments) == 0 {
			return verdict{skip: skipClipped}
		}
		whole := *rec
		whole.Request.Arguments = c.Arguments
		rec = &whole
	}
	c, ok := compare(cand, &rec.Request, dec, rec.Mode)
	if !ok {
		return verdict{skip: string(dec.ReasonCode)}
	}
	if c.to == c.from {
		return verdict{}
	}
	req := &rec.Request
	return verdict{change: &Change{RequestID: dec.RequestID, SessionID: dec.SessionID, AgentID: req.AgentID,
		AgentType: req.AgentType, Tool: req.Tool, From: c.from, To: c.to, ReasonCode: dec.ReasonCode,
		Rule: c.d.Rule, Reason: c.d.Reason, GrantLost: c.lost, DecidedAt: dec.DecidedAt}}
}

// comparison is what a live decision and a candidate's verdict on the
// same call are: the action each gives, the candidate's decision, and the
// grant that allowed the live decision when the candidate's ask would not
// be settled by it.
type comparison struct {
	from, to policy.Action
	d        policy.Decision
	lost     string
}

// compare judges the call of req, decided dec under the admin's mode
// override mode, with cand; ok is false when dec was not the policy's
// (recordedAction). A grant's allow stays an allow when cand asks and the
// grant would still settle the question.
func compare(cand *policy.Policy, req *messages.Request, dec *messages.Decision, mode string) (c comparison, ok bool) {
	if c.from, ok = recordedAction(dec.ReasonCode); !ok {
		return c, false
	}
	var m policy.Mode
	if mode != "" {
		// An override this version does not know leaves the candidate's
		// own mode (it is not guessed at).
		m, _ = policy.ParseMode(mode)
	}
	c.d = cand.Evaluate(policy.Call{Tool: strings.ToLower(req.Tool), Arguments: req.Arguments, AgentType: req.AgentType,
		Cwd: req.Cwd, Home: req.Home, Mode: m})
	c.to = c.d.Action
	if dec.ReasonCode == messages.ReasonScopeGrant && c.to != policy.Allow {
		if c.to == policy.Ask && grantStillSettles(cand, &c.d, dec) {
			c.to = policy.Allow
		} else {
			c.lost = dec.DecidedBy.ID
		}
	}
	return c, true
}

// grantStillSettles reports whether the grant that allowed the recorded
// scope_grant decision dec could still settle the candidate's ask d: the
// ask must be grantable, and for a grant of patterns (a shell command's
// arity prefixes) the patterns must still cover every sub-command. The
// record names the grant and its patterns, not its teams and approvers:
// a candidate that routes the question to another team or raises its
// quorum is not detected here (docs/OPERATIONS.md "Replay").
func grantStillSettles(cand *policy.Policy, d *policy.Decision, dec *messages.Decision) bool {
	if cand.NeedOf(d).NotGrantable != "" {
		return false
	}
	if len(dec.GrantedPattern) == 0 {
		return true // a grant of the tool by name
	}
	return d.Shell != nil && shell.PrefixCovered(*d.Shell, dec.GrantedPattern)
}

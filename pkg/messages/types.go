package messages

import (
	"encoding/json"
	"time"
)

// Version is the protocol version carried as "v" on every message.
const Version = 1

// Outcome is the final answer for a tool call.
type Outcome string

// Outcomes.
const (
	OutcomeAllow Outcome = "allow"
	OutcomeDeny  Outcome = "deny"
)

// ReasonCode says why a decision was made. See DESIGN §3.
type ReasonCode string

// Reason codes.
const (
	ReasonPolicyAllow ReasonCode = "policy_allow"
	ReasonPolicyDeny  ReasonCode = "policy_deny"
	ReasonModeAllow   ReasonCode = "mode_allow"
	ReasonScopeGrant  ReasonCode = "scope_grant"
	ReasonApproved    ReasonCode = "approved"
	ReasonRejected    ReasonCode = "rejected"
	ReasonHardStop    ReasonCode = "hard_stop"
	ReasonTimeout     ReasonCode = "timeout"
	ReasonCancelled   ReasonCode = "cancelled"
	ReasonCascade     ReasonCode = "cascade"
	// ReasonUnavailable is the fail-closed deny of a request whose state
	// (the session store, or the audit stream in strict audit mode) could
	// not be reached. It extends DESIGN §3's list (docs/PROTOCOL.md).
	ReasonUnavailable ReasonCode = "unavailable"
)

// Scope is how far an approval reaches.
type Scope string

// Scopes. Once approves this call only; Session approves for the rest of the
// session (the tool name, or for shell tools the arity-prefix patterns of the
// command unless the policy says session_grants: tool); Always approves for
// the agent (the tool name, or for shell tools the arity-prefix patterns of
// the command); AlwaysPrefix approves the arity-prefix patterns of a shell
// command for the agent. A standing scope is accepted only where the
// question offers it ([ApprovalNeeded.Offers]).
const (
	ScopeOnce         Scope = "once"
	ScopeSession      Scope = "session"
	ScopeAlways       Scope = "always"
	ScopeAlwaysPrefix Scope = "always_prefix"
)

// RejectMode says what a rejection does to the rest of the agent's turn.
type RejectMode string

// Reject modes. RejectHard is the default (seed 000/003).
const (
	RejectSoft RejectMode = "reject_soft"
	RejectHard RejectMode = "reject_hard"
)

// Category is the agent's optional hint about a tool's kind; the policy's
// own classification wins.
type Category string

// Categories.
const (
	CategoryRead  Category = "read"
	CategoryWrite Category = "write"
	CategoryExec  Category = "exec"
	CategoryMCP   Category = "mcp"
)

// DeciderKind says who made a decision.
type DeciderKind string

// Decider kinds.
const (
	DeciderPolicy   DeciderKind = "policy"
	DeciderApprover DeciderKind = "approver"
	DeciderReaper   DeciderKind = "reaper"
	DeciderAgent    DeciderKind = "agent"
)

// State is the lifecycle state of a request as reported in receipts and
// status replies.
type State string

// States. Pending is the only state that can change; the others are final.
const (
	StatePending   State = "pending"
	StateApproved  State = "approved"
	StateRejected  State = "rejected"
	StateExpired   State = "expired"
	StateCancelled State = "cancelled"
	// StateDecided is reported for requests decided without a human
	// (policy, grant, hard stop): they never were pending.
	StateDecided State = "decided"
)

// Final reports whether s can no longer change.
func (s State) Final() bool { return s != StatePending && s != "" }

// BatchItem is one tool call that follows the current one in the agent's batch.
type BatchItem struct {
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Request is what an agent sends on signoff.v1.req.<session>.
type Request struct {
	V           int             `json:"v"`
	RequestID   string          `json:"request_id"`
	SessionID   string          `json:"session_id"`
	AgentID     string          `json:"agent_id"`
	AgentType   string          `json:"agent_type,omitempty"`
	RequestedBy string          `json:"requested_by,omitempty"`
	CallID      string          `json:"call_id,omitempty"`
	Tool        string          `json:"tool"`
	Category    Category        `json:"category,omitempty"`
	Arguments   json.RawMessage `json:"arguments,omitempty"`
	Description string          `json:"description,omitempty"`
	// Cwd is the agent's working directory: absolute, clean, without
	// control characters. The policy resolves relative paths against it
	// and takes it as the default workspace (docs/POLICY.md).
	Cwd string `json:"cwd,omitempty"`
	// Home is the agent's home directory, as its host sees it ($HOME of
	// the hook or gateway): absolute, clean, without control or glob
	// characters. A policy that sets no home: judges the call with it
	// (docs/POLICY.md).
	Home           string      `json:"home,omitempty"`
	BatchRemaining []BatchItem `json:"batch_remaining,omitempty"`
	TTLMillis      int64       `json:"ttl_ms,omitempty"`
	// Identity is how the broker knows agent_id, agent_type and the
	// session: "verified" from the NATS credentials (Nats-Request-Info),
	// or "declared" (taken as the agent says). The broker sets it on every
	// request it accepts; an agent's own value is never kept.
	Identity Identity `json:"identity,omitempty"`
}

// Identity says where a request's identity comes from.
type Identity string

// Identities.
const (
	// IdentityVerified: the agent is its NATS credentials' identity.
	IdentityVerified Identity = "verified"
	// IdentityDeclared: agent_id, agent_type and the session are the
	// agent's claim (a plane without tenant accounts).
	IdentityDeclared Identity = "declared"
)

// Decider identifies who made a decision.
type Decider struct {
	Kind    DeciderKind `json:"kind"`
	ID      string      `json:"id,omitempty"`
	Display string      `json:"display,omitempty"`
	Channel string      `json:"channel,omitempty"`
	Device  string      `json:"device,omitempty"`
	// StepUp, on an approval of a question that needed step-up, is the
	// second factor the approver gave (from the bot's signed response).
	StepUp *StepUp `json:"step_up,omitempty"`
}

// Decision is the final answer for one request.
type Decision struct {
	V              int        `json:"v"`
	RequestID      string     `json:"request_id"`
	SessionID      string     `json:"session_id"`
	Tool           string     `json:"tool,omitempty"`
	Outcome        Outcome    `json:"outcome"`
	ReasonCode     ReasonCode `json:"reason_code"`
	Reason         string     `json:"reason,omitempty"`
	Scope          Scope      `json:"scope,omitempty"`
	GrantedPattern []string   `json:"granted_pattern,omitempty"`
	RejectMode     RejectMode `json:"reject_mode,omitempty"`
	// StopRejections, on a hard_stop deny of a session stopped by a
	// reject_hard, are the request ids of the hard rejections behind the
	// stop, oldest first: an agent that did not hear of them (it
	// restarted) hears of them here, and a tracked turn must name them to
	// end the stop (docs/PROTOCOL.md "New turn").
	StopRejections []string        `json:"stop_rejections,omitempty"`
	Feedback       string          `json:"feedback,omitempty"`
	LLMMessage     string          `json:"llm_message,omitempty"`
	Answer         json.RawMessage `json:"answer,omitempty"`
	// UpdatedArguments, on an approval with changes, are the arguments the
	// approver edited the call to: the agent runs the tool with them
	// instead of its own (see [Decision.ArgumentsToRun]).
	UpdatedArguments json.RawMessage `json:"updated_arguments,omitempty"`
	DecidedBy        Decider         `json:"decided_by"`
	DecidedAt        time.Time       `json:"decided_at"`
	PolicyVersion    string          `json:"policy_version,omitempty"`
}

// Receipt is the broker's reply to a Request: the final decision, or
// pending with the request id and its expiry.
type Receipt struct {
	V         int       `json:"v"`
	RequestID string    `json:"request_id"`
	State     State     `json:"state"`
	Decision  *Decision `json:"decision,omitempty"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
	// Identity is the request's identity (verified or declared).
	Identity Identity `json:"identity,omitempty"`
}

// Verdict is one parsed sub-command of a shell call with its own verdict.
type Verdict struct {
	Command string   `json:"command"`
	Words   []string `json:"words,omitempty"`
	Kind    string   `json:"kind,omitempty"` // "command", "redirect" (a file written) or "read" (a file read)
	Action  string   `json:"action"`         // allow | deny | ask
	Rule    string   `json:"rule,omitempty"`
	Reason  string   `json:"reason,omitempty"`
}

// Risk explains why a question is asked.
type Risk struct {
	Tier           string    `json:"tier"`
	Rule           string    `json:"rule,omitempty"`
	Reason         string    `json:"reason,omitempty"`
	SafetyOverride string    `json:"safety_override,omitempty"`
	Subcommands    []Verdict `json:"subcommands,omitempty"`
	// Breaker names the tripped outbreak breaker that made this call ask
	// (docs/POLICY.md "Breakers"); "" when none did.
	Breaker string `json:"breaker,omitempty"`
	// Shell is set when the brokers judged the call as a shell call (the
	// policy's shell tools): its "command" argument is the script that
	// runs. Approver displays show a command as "the command" only then;
	// any other tool's arguments are shown alike, none promoted (a
	// "command" key on an MCP tool may be one its server ignores).
	Shell bool `json:"shell,omitempty"`
}

// AlwaysGrant says what an "Always" answer would grant. Nil when the call
// cannot be granted always (unprefixable shell constructs, safety override,
// a question a grant could not settle again). Kept for approver clients
// written before [GrantOffer]: it repeats the offered "always" entry of
// [ApprovalNeeded.Offers].
type AlwaysGrant struct {
	Scope    Scope    `json:"scope"`
	Tool     string   `json:"tool"`
	Patterns []string `json:"patterns,omitempty"`
}

// GrantOffer says what a standing answer would grant, or why it is not
// offered. A standing answer is offered only when the grant it records
// would settle this same question again (docs/POLICY.md "Grants").
type GrantOffer struct {
	Scope    Scope    `json:"scope"` // session | always | always_prefix
	Offered  bool     `json:"offered"`
	Tool     string   `json:"tool,omitempty"`
	Patterns []string `json:"patterns,omitempty"` // empty: every call of Tool
	WhyNot   string   `json:"why_not,omitempty"`  // set when !Offered: a sentence for humans
	// Note, on an offered scope, is a condition for humans: on a question
	// that needs several approvals, the grant is recorded only if every
	// approver chooses it ("granted only if all 2 approvers choose Session").
	Note string `json:"note,omitempty"`
	// Expires, on an offered scope, is how long the grant would last: a
	// Go duration ("720h0m0s"), or "never" when it has no limit of its
	// own (an always grant until revoked; a session grant until the
	// session's grants lapse). Empty from brokers that predate it.
	Expires string `json:"expires,omitempty"`
}

// ExpiresNever is GrantOffer.Expires of a grant with no limit of its own.
const ExpiresNever = "never"

// ApprovalNeeded is the question the broker publishes on
// signoff.v1.ask.<team>.
type ApprovalNeeded struct {
	V                 int          `json:"v"`
	Type              string       `json:"type"` // "approval_needed"
	Request           Request      `json:"request"`
	Team              string       `json:"team"`
	Risk              Risk         `json:"risk"`
	BatchRemaining    []BatchItem  `json:"batch_remaining,omitempty"`
	ExpiresAt         time.Time    `json:"expires_at"`
	ApprovalsRequired int          `json:"approvals_required"`
	ApprovalsSoFar    []string     `json:"approvals_so_far,omitempty"`
	Always            *AlwaysGrant `json:"always,omitempty"`
	// Offers lists the standing answers: session first, then always (or
	// always_prefix), each offered or with the reason it is not.
	Offers []GrantOffer `json:"offers,omitempty"`
	// Escalation is the question's ladder (docs/POLICY.md "Escalation"):
	// what happens if nobody answers, and when.
	Escalation []EscalationStep `json:"escalation,omitempty"`
	// EscalationStep is the 1-based step of the ladder that published this
	// copy of the question (0: the first ask).
	EscalationStep int `json:"escalation_step,omitempty"`
	// Reminder counts the reminders: 1 for the first remind step's copy,
	// and so on (0: not a reminder). A device shows a reminder as a new
	// message, or marks the question new again.
	Reminder int `json:"reminder,omitempty"`
	// AskUser is set when the tool asks the human something (ask-user
	// class): approvers answer it with Response.Answer.
	AskUser *AskUser `json:"ask_user,omitempty"`
	// Digest is the digest of what the question shows
	// ([ApprovalNeeded.ShownDigest]), set by the brokers on every copy: a
	// response names it, and a bot refuses a copy of an open question with
	// another.
	Digest string `json:"digest,omitempty"`
	// StepUp is set when approving the question needs a second factor: a
	// fresh WebAuthn assertion on the approver's device (docs/POLICY.md
	// "Step-up"). Channels that cannot take one offer only Reject and the
	// web page. Rejecting never needs it.
	StepUp *StepUpNeed `json:"step_up,omitempty"`
	// TraceParent is the W3C traceparent of the brokers' span of the
	// request that asked (empty when tracing is off), kept with the
	// question so that a response answered later, on any replica, joins
	// the request's trace. Not part of what the question shows.
	TraceParent string `json:"traceparent,omitempty"`
	// Answerers are who may answer this copy (its Team) under the policy
	// the publishing broker had in force: a bot shows the question only
	// to them (docs/APPROVERS.md "Who sees what"). Set on every copy a
	// broker publishes or replays; nil from a broker that predates it.
	// Not part of what the question shows.
	Answerers *Answerers `json:"answerers,omitempty"`
}

// Answerers are the approvers a team admits: its members by approver id,
// approvers whose signed-in identity states one of its groups, or, for an
// open team (no members, no groups: dev brokers only), anyone.
type Answerers struct {
	Members []string `json:"members,omitempty"`
	Groups  []string `json:"groups,omitempty"`
	Open    bool     `json:"open,omitempty"`
}

// Admit reports whether an approver with id and identity-provider groups
// is one of a.
func (a *Answerers) Admit(id string, groups []string) bool {
	if a.Open {
		return true
	}
	for _, m := range a.Members {
		if m == id {
			return true
		}
	}
	for _, g := range groups {
		for _, tg := range a.Groups {
			if g == tg {
				return true
			}
		}
	}
	return false
}

// StepUpNeed says that approving a question needs step-up, and why.
type StepUpNeed struct {
	// Why names what asked for it: "rule <text>", "team <name>",
	// "safety override", "quorum" or "tier <tier>" (joined by "; ").
	Why string `json:"why"`
	// MaxAgeS is how fresh the assertion must be, in seconds: an
	// approval's step_up.asserted_at may be at most this old when the
	// broker applies it.
	MaxAgeS int `json:"max_age_s"`
}

// MaxAge is n's MaxAgeS as a duration.
func (n *StepUpNeed) MaxAge() time.Duration { return time.Duration(n.MaxAgeS) * time.Second }

// StepUpWebAuthn is the StepUp.Method of a WebAuthn assertion (a passkey
// or a security key).
const StepUpWebAuthn = "webauthn"

// StepUp is the evidence of a second factor an approval carries: the bot
// that verified the assertion states it in the (signed) response.
type StepUp struct {
	Method string `json:"method"` // "webauthn"
	// CredentialID is the authenticator's credential id, unpadded
	// base64url.
	CredentialID string `json:"credential_id"`
	// AssertedAt is when the bot verified the assertion.
	AssertedAt time.Time `json:"asserted_at"`
	// UserVerified is true when the authenticator verified the user (PIN
	// or biometrics), not only their presence.
	UserVerified bool `json:"user_verified,omitempty"`
}

// Offer returns the offer of scope s (always and always_prefix are one
// offer), or nil when the question carries none.
func (a *ApprovalNeeded) Offer(s Scope) *GrantOffer {
	standing := func(x Scope) bool { return x == ScopeAlways || x == ScopeAlwaysPrefix }
	for i := range a.Offers {
		o := &a.Offers[i]
		if o.Scope == s || (standing(s) && standing(o.Scope)) {
			return o
		}
	}
	return nil
}

// Grant is a standing approval as stored and listed: the answer "session"
// or "always" to one question, which allows later calls it covers without
// asking (docs/POLICY.md "Grants").
type Grant struct {
	ID        string     `json:"id"`
	Scope     Scope      `json:"scope"`                // session | always | always_prefix
	SessionID string     `json:"session_id,omitempty"` // session grants
	AgentID   string     `json:"agent_id,omitempty"`   // always grants
	Tool      string     `json:"tool"`
	Patterns  []string   `json:"patterns,omitempty"` // empty: the whole tool
	Teams     []string   `json:"teams"`              // teams it was approved for
	Approvers []Approver `json:"approvers"`          // who approved (id, channel…)
	RequestID string     `json:"request_id"`         // the request it came from
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt time.Time  `json:"expires_at,omitzero"`
	Legacy    bool       `json:"legacy,omitempty"` // stored before grants were objects (docs/STATE.md "Migration")
}

// GrantEventKind says what happened to a grant in a [GrantEvent]. A grant's
// use is the audit record of the decision it made: reason_code
// scope_grant, decided_by.id the grant's id.
type GrantEventKind string

// Grant events.
const (
	GrantCreated GrantEventKind = "created"
	GrantRevoked GrantEventKind = "revoked"
	GrantExpired GrantEventKind = "expired"
)

// GrantEvent is the audit record of a grant's life, appended to the
// SIGNOFF_AUDIT stream on audit.<session> (the grant's session, or for an
// always grant the session of the request it came from) next to
// the decisions' [AuditRecord]s, from which its "type" tells it apart.
type GrantEvent struct {
	V     int            `json:"v"`
	Type  string         `json:"type"` // "grant_event"
	Event GrantEventKind `json:"event"`
	Grant Grant          `json:"grant"`
	// RequestID is the request the grant came from (created).
	RequestID string `json:"request_id,omitempty"`
	SessionID string `json:"session_id"`
	// By is who revoked it: an approver id, or "admin" for an admin
	// request without one.
	By       string    `json:"by,omitempty"`
	Replica  string    `json:"replica,omitempty"`
	Recorded time.Time `json:"recorded"`
}

// Approver identifies the human who answered and where.
type Approver struct {
	ID      string `json:"id"`
	Display string `json:"display,omitempty"`
	Channel string `json:"channel,omitempty"`
	Device  string `json:"device,omitempty"`
}

// Response is an approver's answer, sent on signoff.v1.respond.
type Response struct {
	V          int             `json:"v"`
	RequestID  string          `json:"request_id"`
	SessionID  string          `json:"session_id"`
	Approver   Approver        `json:"approver"`
	Approved   bool            `json:"approved"`
	Scope      Scope           `json:"scope,omitempty"`
	RejectMode RejectMode      `json:"reject_mode,omitempty"`
	Feedback   string          `json:"feedback,omitempty"`
	Answer     json.RawMessage `json:"answer,omitempty"`
	// UpdatedArguments approves the call with changes: a JSON object that
	// replaces the call's arguments. Approvals only; the broker evaluates
	// the edited call with the policy and refuses the answer if it denies.
	UpdatedArguments json.RawMessage `json:"updated_arguments,omitempty"`
	// Digest names the question the response answers: the Digest of the
	// approval_needed the approver was shown. Required on an approval:
	// the brokers refuse an approval without one, and any response whose
	// digest is not the open question's; a rejection without one is
	// applied (docs/PROTOCOL.md).
	Digest string `json:"digest,omitempty"`
	// StepUp is the second factor behind an approval of a question that
	// needs one ([ApprovalNeeded.StepUp]); the brokers refuse such an
	// approval without it, or with one older than the question allows.
	StepUp *StepUp `json:"step_up,omitempty"`
	// ApproverGroups are the identity provider's groups the bot vouches
	// the approver is in (web OIDC sign-in), as the policy's teams list
	// them under groups: (docs/APPROVERS.md). Signed with the rest of the
	// response; omitted when empty.
	ApproverGroups []string  `json:"approver_groups,omitempty"`
	SignedAt       time.Time `json:"signed_at,omitzero"`
	KeyID          string    `json:"key_id,omitempty"`
	Signature      string    `json:"signature,omitempty"`
}

// RespondReply is the broker's reply to a Response.
type RespondReply struct {
	V        int       `json:"v"`
	Applied  bool      `json:"applied"`
	State    State     `json:"state"`
	Reason   string    `json:"reason,omitempty"`
	Decision *Decision `json:"decision,omitempty"`
	// ApprovalsSoFar lists the approvers counted so far on a quorum request.
	ApprovalsSoFar []string `json:"approvals_so_far,omitempty"`
}

// Resolved tells every approver device that a question is settled.
type Resolved struct {
	V         int      `json:"v"`
	Type      string   `json:"type"` // "resolved"
	RequestID string   `json:"request_id"`
	SessionID string   `json:"session_id"`
	Team      string   `json:"team"`
	State     State    `json:"state"`
	Decision  Decision `json:"decision"`
}

// StatusRequest asks for the state of a request (signoff.v1.status.<session>).
type StatusRequest struct {
	V         int    `json:"v"`
	RequestID string `json:"request_id"`
}

// CancelRequest cancels pending requests of a session
// (signoff.v1.cancel.<session>). Empty RequestIDs cancels all of them.
type CancelRequest struct {
	V          int      `json:"v"`
	RequestIDs []string `json:"request_ids,omitempty"`
	Reason     string   `json:"reason,omitempty"`
}

// CancelReply lists what was cancelled.
type CancelReply struct {
	V         int      `json:"v"`
	Cancelled []string `json:"cancelled"`
}

// TurnRequest announces a new user turn (signoff.v1.turn.<session>).
type TurnRequest struct {
	V int `json:"v"`
	// Seen lists the request ids of the session's hard rejections
	// (reject_hard) whose decision the agent has received. A turn ends a
	// stop only when the agent has heard of the rejection behind it:
	// while one is still being delivered, a turn that does not name it
	// began before the agent knew, and keeps the stop (docs/PROTOCOL.md
	// "New turn"). A client that keeps no memory across calls (a hook)
	// sends none.
	Seen []string `json:"seen,omitempty"`
	// SeenComplete says Seen lists every hard rejection the agent heard
	// of (its reject_hard decisions and the stop_rejections of its
	// hard_stop denials) since its last turn that ended a stop. Such a
	// turn ends a stop only when it names every rejection behind it; a
	// turn it does not end replies the ones it missed (Unheard).
	SeenComplete bool `json:"seen_complete,omitempty"`
}

// TurnReply acknowledges a new turn.
type TurnReply struct {
	V           int  `json:"v"`
	StopCleared bool `json:"stop_cleared"`
	// Unheard, when the stop holds, are the hard rejections behind it
	// the turn did not name (SeenComplete), or those that reached the
	// agent only with this reply: the agent had not heard of them, so
	// its turn began before it knew; the stop ends with its next turn
	// that names them.
	Unheard []string `json:"unheard,omitempty"`
}

// PendingRequest asks for a team's open questions (signoff.v1.pending.<team>).
type PendingRequest struct {
	V int `json:"v"`
}

// PendingReply lists a team's open questions.
type PendingReply struct {
	V         int              `json:"v"`
	Questions []ApprovalNeeded `json:"questions"`
}

// AdminRequest is sent on signoff.v1.admin.<op>.
type AdminRequest struct {
	V         int    `json:"v"`
	SessionID string `json:"session_id,omitempty"`
	AgentID   string `json:"agent_id,omitempty"`
	AgentType string `json:"agent_type,omitempty"`
	Mode      string `json:"mode,omitempty"`
	// Teams filters list_grants to grants approved for one of them.
	Teams []string `json:"teams,omitempty"`
	// GrantID names the grant revoke_grant revokes.
	GrantID string `json:"grant_id,omitempty"`
	// By is the approver an approver client acts for (list_grants,
	// revoke_grant): the broker limits the operation to grants of teams By
	// is a member of.
	By string `json:"by,omitempty"`
	// Selector selects the agents of stop and resume; Reason is the
	// stop's text (docs/PROTOCOL.md "AdminRequest").
	Selector *Selector `json:"selector,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	// Policy is set_shadow's candidate policy, as YAML.
	Policy string `json:"policy,omitempty"`
	// Breaker names the breaker breaker_reset resets.
	Breaker string `json:"breaker,omitempty"`
	// Canary is set_canary's canary (canary.go).
	Canary *CanarySpec `json:"canary,omitempty"`
}

// AdminReply answers an admin request.
type AdminReply struct {
	V       int    `json:"v"`
	OK      bool   `json:"ok"`
	Message string `json:"message,omitempty"`
	// Grants is list_grants' answer.
	Grants []Grant `json:"grants,omitempty"`
	// Grant is the grant revoke_grant revoked.
	Grant *Grant `json:"grant,omitempty"`
	// Pending is list_pending's answer: the open questions.
	Pending []ApprovalNeeded `json:"pending,omitempty"`
	// Stops is list_stops' answer; Stop the stop that stop set or resume
	// lifted; Denied the ids of pending requests the stop denied.
	Stops  []FleetStop `json:"stops,omitempty"`
	Stop   *FleetStop  `json:"stop,omitempty"`
	Denied []string    `json:"denied,omitempty"`
	// Policy is one replica's answer to policy_version.
	Policy *PolicyReplica `json:"policy,omitempty"`
	// Agents is list_agents' answer.
	Agents []AgentSeen `json:"agents,omitempty"`
	// Breakers is list_breakers' answer: the tripped breakers; Breaker the
	// trip breaker_reset lifted.
	Breakers []BreakerTrip `json:"breakers,omitempty"`
	Breaker  *BreakerTrip  `json:"breaker,omitempty"`
	// Canary is canary_status' answer (and set_canary's canary).
	Canary *CanaryStatus `json:"canary,omitempty"`
}

// AuditRecord is appended to the SIGNOFF_AUDIT stream for every decision.
type AuditRecord struct {
	V        int       `json:"v"`
	Request  Request   `json:"request"`
	Decision Decision  `json:"decision"`
	Risk     *Risk     `json:"risk,omitempty"`
	Replica  string    `json:"replica,omitempty"`
	Recorded time.Time `json:"recorded"`
	// Escalation lists the steps of the question's escalation ladder that
	// ran before the decision (docs/POLICY.md "Escalation").
	Escalation []EscalationRun `json:"escalation,omitempty"`
	// Mode is the admin's mode override in force for the request's
	// session or agent type when the record was made ("" = none: the
	// policy's own mode decided). Replay judges the request under it.
	Mode string `json:"mode,omitempty"`
	// Shadow is what the shadow policy, when one was set, would have
	// decided about the request (never enforced).
	Shadow *ShadowVerdict `json:"shadow,omitempty"`
	// Canary marks a decision of a request the canary covered: the
	// candidate policy decided it (canary.go).
	Canary *CanaryMark `json:"canary,omitempty"`
	// Clipped is set when the record was too large to store whole (see
	// [AuditRecord.Clip]): the request's arguments are then its size and
	// digest, not its content.
	Clipped *ClippedRecord `json:"clipped,omitempty"`
}

// ClippedRecord says what [AuditRecord.Clip] left out of a record too
// large for a stream message.
type ClippedRecord struct {
	// RecordBytes is the encoded size of the whole record.
	RecordBytes int `json:"record_bytes"`
	// ArgumentsBytes and ArgumentsSHA256 (hex) are the size and digest of
	// the request's arguments as the agent sent them.
	ArgumentsBytes  int    `json:"arguments_bytes"`
	ArgumentsSHA256 string `json:"arguments_sha256"`
	// Arguments are the request's arguments as the agent sent them,
	// base64 in JSON (their bytes, not re-encoded: a '<' stays one
	// byte), unless even so they would not fit.
	Arguments []byte `json:"arguments,omitempty"`
	// UpdatedBytes and UpdatedSHA256 are those of the decision's
	// updated_arguments (an approval with changes), left out too.
	UpdatedBytes  int    `json:"updated_bytes,omitempty"`
	UpdatedSHA256 string `json:"updated_sha256,omitempty"`
}

// ShadowVerdict is a shadow (candidate) policy's verdict on a request
// whose live decision stood (docs/OPERATIONS.md "Operating a fleet").
type ShadowVerdict struct {
	// PolicyVersion is the shadow policy's version.
	PolicyVersion string `json:"policy_version"`
	// Action is its verdict: allow, ask or deny.
	Action string `json:"action"`
	// Live is the live policy's verdict on the same call.
	Live string `json:"live"`
	// Rule is the candidate rule that decided ("" when its mode did).
	Rule string `json:"rule,omitempty"`
}

// ErrorBody is the body of an error reply.
type ErrorBody struct {
	Code    ErrorCode `json:"code"`
	Message string    `json:"message"`
}

// ErrorReply is sent instead of a normal reply when a message cannot be
// handled: {"v":1,"error":{"code":"invalid_request","message":"…"}}.
type ErrorReply struct {
	V     int       `json:"v"`
	Error ErrorBody `json:"error"`
}

// ErrorCode classifies an error reply.
type ErrorCode string

// Error codes.
const (
	CodeInvalidRequest     ErrorCode = "invalid_request"
	CodeTooLarge           ErrorCode = "too_large"
	CodeUnsupportedVersion ErrorCode = "unsupported_version"
	CodeNotFound           ErrorCode = "not_found"
	CodeForbidden          ErrorCode = "forbidden"
	CodeUnavailable        ErrorCode = "unavailable"
	CodeInternal           ErrorCode = "internal"
)

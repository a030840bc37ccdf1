package policy

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy/shell"
)

// Action is a policy verdict.
type Action string

// Actions, ordered by strictness: Deny > Ask > Allow.
const (
	Allow Action = "allow"
	Ask   Action = "ask"
	Deny  Action = "deny"
)

// Tier is how dangerous a tool is by kind.
type Tier string

// Tiers. Unknown tools are Exec (the safe default of seed 001).
const (
	TierRead  Tier = "read"
	TierWrite Tier = "write"
	TierExec  Tier = "exec"
	TierMCP   Tier = "mcp"
)

// Mode says which tiers are allowed without a rule.
type Mode string

// Modes.
const (
	// ModeAlwaysAsk auto-allows only the read tier.
	ModeAlwaysAsk Mode = "always-ask"
	// ModeAutoEdit auto-allows read and write.
	ModeAutoEdit Mode = "auto-edit"
	// ModeYolo allows everything; explicit deny rules still deny and safety
	// overrides do not ask.
	ModeYolo Mode = "yolo"
)

// Call is one tool call to judge.
type Call struct {
	Tool      string
	Arguments json.RawMessage
	// AgentType selects the agent-type layer (subagents), if any.
	AgentType string
	// Cwd is the agent's working directory (absolute and clean, or ""
	// when unknown): relative paths of file tools, shell redirections and
	// operands resolve against it, and it is the default workspace.
	Cwd string
	// Home is the agent's home directory (absolute and clean, or "" when
	// unknown). A policy that sets no home: judges the call with it: `~`
	// in its rules and in the call's arguments is the agent's home, not
	// the broker's (home.go).
	Home string
	// Mode overrides the policy's mode for this call ("" = the mode the
	// policy resolves for the agent type). Set by the broker from admin
	// state, never from an agent's message.
	Mode Mode
}

// Decision is the policy's verdict on one call, with its reasons.
type Decision struct {
	Action Action
	Tier   Tier
	// Reason is a human sentence saying why.
	Reason string
	// Rule is the source text of the deciding rule ("" when the mode decided).
	Rule string
	// Layer is where the decision came from: "agent:<type>" or "static" (a
	// rule of that layer), "mode" (no rule matched), "safety" (a safety
	// override or a path that escapes the working directory), "shell" (a
	// command that cannot be analysed or runs elevated) or "input"
	// (arguments that cannot be read).
	Layer string
	// SafetyOverride is the reason a critical pattern forced ask ("" if none).
	SafetyOverride string
	// Subcommands are the judged parts of a shell command, in source order.
	Subcommands []Subcommand
	// Grantable is false when no grant may turn this ask into an allow: a
	// safety override, an elevated (sudo/doas) command, or a shell construct
	// that cannot be analysed.
	Grantable bool
	// Always holds the arity-prefix patterns an "Always" answer would grant
	// for a shell call that asks; nil when the call does not ask (there is
	// no answer to give) or the command has none (unprefixable).
	Always []string
	// Shell is the analysis of the command when the tool is a shell tool
	// (nil otherwise). Grant matching uses it (PrefixCovered).
	Shell *shell.Analysis
	// Route is the team the deciding rule routes questions to ("" = default).
	Route string
	// ApprovalsRequired from the deciding rule (0 = the team's setting).
	ApprovalsRequired int
	// TTL from the deciding rule (0 = the broker's default).
	TTL time.Duration
	// ExplicitAsk is the text of an ask rule without grantable: true that
	// made this call (or one of its sub-commands) ask: no grant settles
	// the question, which asks every time ("" when none did).
	ExplicitAsk string
	// GrantMaxAge is the shortest max_age of the rules that made this call
	// ask (0 = none set): it caps grants made by answering the question.
	GrantMaxAge time.Duration
	// StepUpRule is the text of the first rule with step_up: true that
	// made this call (or one of its sub-commands) ask ("" when none did):
	// approving the question needs a second factor ([Policy.StepUp]).
	StepUpRule string
	// Escalation is the deciding rule's own ladder: nil when it has none
	// (the team's applies, see [Policy.Escalation]), empty when it says
	// escalation: [].
	Escalation []messages.EscalationStep
}

// Subcommand is one judged part of a shell command.
type Subcommand struct {
	// Command is the words joined by single spaces (what shell patterns match).
	Command string
	Words   []string
	// Kind is "command", "redirect" (a write redirection, or a file a
	// command writes by its options or operands, judged as a write of its
	// target path) or "read" (a file a command reads, judged by the rules
	// of the read-tier file tools).
	Kind   string
	Action Action
	Rule   string
	Reason string
}

// Team is a named group of approvers that questions are routed to.
type Team struct {
	Name string
	// Members are the approver ids allowed to answer. A team without
	// members and groups is only possible for the team "default" and makes
	// it open (the broker honours that in dev mode only): any
	// authenticated approver may answer (see docs/POLICY.md).
	Members []string
	// Groups are identity-provider groups whose members may answer too:
	// an approver counts when the (signed) response states one of them
	// among approver.groups (web OIDC sign-in, docs/APPROVERS.md).
	Groups []string
	// ApprovalsRequired is how many distinct members must approve (≥ 1).
	ApprovalsRequired int
	// Escalation is the team's ladder (nil: none); a rule's own replaces
	// it. See [Policy.Escalation].
	Escalation []messages.EscalationStep
	// StepUp makes approving every question routed to the team need a
	// second factor (docs/POLICY.md "Step-up").
	StepUp bool
}

// Open reports whether any authenticated approver may answer for the team.
func (t Team) Open() bool { return len(t.Members) == 0 && len(t.Groups) == 0 }

// IsMember reports whether the approver id may answer for the team: it is
// listed, or the team is open. Group membership is not considered (see
// [Team.Admits]).
func (t Team) IsMember(approver string) bool { return t.Admits(approver, nil) }

// Admits reports whether an approver with this id, whom the answering bot
// vouches is in groups, may answer for the team: the id is listed, one of
// the groups is, or the team is open.
func (t Team) Admits(approver string, groups []string) bool {
	if approver == "" {
		return false
	}
	if t.Open() || slices.Contains(t.Members, approver) {
		return true
	}
	for _, g := range groups {
		if slices.Contains(t.Groups, g) {
			return true
		}
	}
	return false
}

package hook

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Host is an agent host whose hook format the hook speaks.
type Host string

// Hosts.
const (
	ClaudeCode Host = "claude-code"
	Codex      Host = "codex"
)

// ParseHost returns the host named s.
func ParseHost(s string) (Host, error) {
	switch h := Host(s); h {
	case ClaudeCode, Codex:
		return h, nil
	}
	return "", fmt.Errorf("unknown host %q (want claude-code or codex)", s)
}

// kind is what the hook does with an event.
type kind int

const (
	kindUnknown kind = iota
	kindGate         // ask Signoff and answer allow/deny
	kindTurn         // a new user turn: clear the hard stop
	kindEnd          // the session ends: cancel what is pending
	kindIgnore       // documented, nothing to decide: exit 0, no output
	kindVerify       // a call ran: check an approval with changes ran as approved
)

// events lists the events each host documents and what the hook does with
// them. An event missing here is refused (exit 2), since the hook cannot
// know whether the host would let something through on silence.
var events = map[Host]map[string]kind{
	ClaudeCode: {
		"PreToolUse":         kindGate,
		"PermissionRequest":  kindGate,
		"UserPromptSubmit":   kindTurn,
		"SessionEnd":         kindEnd,
		"SessionStart":       kindIgnore,
		"PostToolUse":        kindVerify,
		"PostToolUseFailure": kindIgnore,
		"PermissionDenied":   kindIgnore,
		"Notification":       kindIgnore,
		"Stop":               kindIgnore,
		"SubagentStart":      kindIgnore,
		"SubagentStop":       kindIgnore,
		"PreCompact":         kindIgnore,
		"PostCompact":        kindIgnore,
	},
	Codex: {
		"PreToolUse":        kindGate,
		"PermissionRequest": kindGate,
		"UserPromptSubmit":  kindTurn,
		"SessionStart":      kindIgnore,
		"PostToolUse":       kindIgnore,
		"Stop":              kindIgnore,
		"PreCompact":        kindIgnore,
		"PostCompact":       kindIgnore,
	},
}

// eventKind is what host does with event.
func (h Host) eventKind(event string) kind { return events[h][event] }

// blocksOnExit2 reports whether the host documents exit code 2 as "block"
// for event: then an error answers with exit 2 and the reason on stderr.
// For the others (SessionEnd, notifications) exit 2 means nothing special
// and an error is exit 1, a non-blocking error the host logs.
func (h Host) blocksOnExit2(event string) bool {
	switch event {
	case "PreToolUse", "PermissionRequest", "UserPromptSubmit":
		return true
	}
	return h.eventKind(event) == kindUnknown
}

// hookOutput is the JSON the hosts read on stdout (exit code 0). Only the
// fields a host documents are set: Codex treats an unknown field as a failed
// hook, which lets the call run.
type hookOutput struct {
	// Decision and Reason are PostToolUse's: "block" tells the model
	// Reason.
	Decision           string          `json:"decision,omitempty"`
	Reason             string          `json:"reason,omitempty"`
	HookSpecificOutput *specificOutput `json:"hookSpecificOutput,omitempty"`
	SystemMessage      string          `json:"systemMessage,omitempty"`
}

type specificOutput struct {
	HookEventName            string `json:"hookEventName"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	// UpdatedInput replaces the tool's input on an allow (Claude Code
	// only): the approver's updated_arguments.
	UpdatedInput json.RawMessage     `json:"updatedInput,omitempty"`
	Decision     *permissionDecision `json:"decision,omitempty"`
}

type permissionDecision struct {
	Behavior string `json:"behavior"`
	// UpdatedInput replaces the tool's input on an allow (Claude Code
	// only): the approver's updated_arguments.
	UpdatedInput json.RawMessage `json:"updatedInput,omitempty"`
	Message      string          `json:"message,omitempty"`
	Interrupt    bool            `json:"interrupt,omitempty"`
}

// answer turns a decision into the host's stdout for a gated event; nil
// means "write nothing, exit 0".
func (h Host) answer(event string, d *messages.Decision) ([]byte, error) {
	allow := d.Outcome == messages.OutcomeAllow
	if allow && len(d.Answer) > 0 {
		// An ask-user tool a person answered through Signoff: the answer
		// is the tool's output, so the tool must not run (it would ask a
		// terminal nobody watches); the model reads the answer as the
		// reason instead.
		allow = false
		d = answered(d)
	}
	if allow && d.Edited() && !h.carriesEdits() {
		// The host cannot run the approver's version of the call, and the
		// original is not what was approved: deny, and tell the model.
		allow = false
		d = editedElsewhere(d)
	}
	var edit json.RawMessage
	if allow && d.Edited() {
		edit = d.UpdatedArguments
	}
	var out hookOutput
	switch event {
	case "PreToolUse":
		if allow {
			if h == Codex {
				// Codex honours only deny: silence lets its own approval
				// settings apply (docs/AGENTS.md).
				return nil, nil
			}
			out.HookSpecificOutput = &specificOutput{HookEventName: event,
				PermissionDecision: "allow", PermissionDecisionReason: userText(d), UpdatedInput: edit}
			break
		}
		out.HookSpecificOutput = &specificOutput{HookEventName: event,
			PermissionDecision: "deny", PermissionDecisionReason: modelText(d)}
		if h == ClaudeCode {
			out.SystemMessage = userText(d)
		}
	case "PermissionRequest":
		pd := &permissionDecision{Behavior: "allow", UpdatedInput: edit}
		if !allow {
			pd = &permissionDecision{Behavior: "deny", Message: modelText(d)}
			// A hard rejection ends the turn; Claude Code can stop the
			// agent itself (Codex fails closed on interrupt today, so it
			// is not sent there).
			pd.Interrupt = h == ClaudeCode && stopsTurn(d)
		}
		out.HookSpecificOutput = &specificOutput{HookEventName: event, Decision: pd}
	default:
		return nil, fmt.Errorf("no decision output for event %s", event)
	}
	return json.Marshal(out)
}

// stopsTurn reports whether d ends the agent's turn.
func stopsTurn(d *messages.Decision) bool {
	return d.ReasonCode == messages.ReasonHardStop ||
		(d.ReasonCode == messages.ReasonRejected && d.RejectMode != messages.RejectSoft)
}

// modelText is what the model reads on a deny: the decision's llm_message,
// which the protocol defines for exactly this, else a sentence built from
// the reason.
func modelText(d *messages.Decision) string {
	if d.LLMMessage != "" {
		return d.LLMMessage
	}
	reason := strings.TrimSpace(d.Reason)
	if reason == "" {
		reason = string(d.ReasonCode)
	}
	return "Tool " + quoteName(d.Tool) + " was not run: Signoff denied it (" + reason + ")."
}

// userText is the one line the user sees: who decided and why.
func userText(d *messages.Decision) string {
	verdict := "allowed"
	if d.Outcome != messages.OutcomeAllow {
		verdict = "denied"
	}
	s := "Signoff " + verdict + " " + d.Tool
	if r := strings.TrimSpace(d.Reason); r != "" {
		s += ": " + r
	}
	if d.DecidedBy.Kind == messages.DeciderApprover && d.DecidedBy.ID != "" && !strings.Contains(s, d.DecidedBy.ID) {
		s += " (" + d.DecidedBy.ID + ")"
	}
	return s
}

func quoteName(s string) string {
	if s == "" {
		return "call"
	}
	return "'" + s + "'"
}

// answered turns an approval that carries an answer into the deny that
// hands the answer to the model.
func answered(d *messages.Decision) *messages.Decision {
	text, _ := client.Answered(d)
	out := *d
	out.Outcome = messages.OutcomeDeny
	who := cmp.Or(d.DecidedBy.Display, d.DecidedBy.ID, "the user")
	out.Reason = who + " answered through Signoff"
	out.LLMMessage = text
	return &out
}

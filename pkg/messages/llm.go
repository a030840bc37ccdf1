package messages

import "strings"

// The texts an agent returns to its LLM instead of a tool's output when the
// call is not run (Decision.LLMMessage). They live here so that the broker,
// the reaper and the SDK all use the same words; docs/PROTOCOL.md quotes
// them.

// ReasonTimeoutText is the reason of a decision made by the reaper.
const ReasonTimeoutText = "approval timed out (no approver response)"

// Suffixes of the rejection texts.
const (
	softRejectReminder = "[System reminder: Ask the user what they would prefer instead before continuing.]"
	hardRejectStop     = "The user stopped this turn: do not call more tools; wait for the user's next message."
)

// LLMMessageSoftReject is the text for a reject_soft: the LLM may go on, but
// should ask the user what to do instead.
//
//	User rejected tool 'write'. Feedback: Don't write that file
//
//	[System reminder: Ask the user what they would prefer instead before continuing.]
//
// Without feedback the "Feedback: …" part is left out.
func LLMMessageSoftReject(tool, feedback string) string {
	return rejected(tool, feedback) + "\n\n" + softRejectReminder
}

// LLMMessageHardReject is the text for a reject_hard: the turn is over.
//
//	User rejected tool 'bash'. Feedback: Wrong approach
//
//	The user stopped this turn: do not call more tools; wait for the user's next message.
//
// Without feedback the "Feedback: …" part is left out.
func LLMMessageHardReject(tool, feedback string) string {
	return rejected(tool, feedback) + "\n\n" + hardRejectStop
}

// LLMMessageHardStop is the text for a call denied because an earlier
// reject_hard stopped the turn (reason code hard_stop).
//
//	Tool 'bash' was not run because the user stopped this turn: do not call more tools; wait for the user's next message.
func LLMMessageHardStop(tool string) string {
	return "Tool " + quoteTool(tool) + " was not run because the user stopped this turn: " +
		"do not call more tools; wait for the user's next message."
}

// LLMMessageTimeout is the text for a call nobody approved in time (reason
// code timeout).
//
//	Tool 'bash' was not run: approval timed out (no approver response).
func LLMMessageTimeout(tool string) string {
	return "Tool " + quoteTool(tool) + " was not run: " + ReasonTimeoutText + "."
}

// LLMMessageDenied is the text for a call the policy denied (reason code
// policy_deny), with the policy's reason when there is one.
//
//	Tool 'bash' was denied by policy: rm -rf outside the workspace is not allowed.
func LLMMessageDenied(tool, reason string) string {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return "Tool " + quoteTool(tool) + " was denied by policy."
	}
	return "Tool " + quoteTool(tool) + " was denied by policy: " + strings.TrimSuffix(reason, ".") + "."
}

// LLMMessageUnavailable is the text for a call denied because Signoff
// could not reach what it needed to decide (reason code unavailable): no
// policy said no, so the agent is told to retry, not to give up.
//
//	Tool 'bash' was not run: Signoff is unavailable (state store unavailable: …); retry later.
func LLMMessageUnavailable(tool, reason string) string {
	reason = strings.TrimSuffix(strings.TrimSpace(reason), ".")
	if reason == "" {
		return "Tool " + quoteTool(tool) + " was not run: Signoff is unavailable; retry later."
	}
	return "Tool " + quoteTool(tool) + " was not run: Signoff is unavailable (" + reason + ")."
}

// LLMMessageCancelled is the text for a call cancelled by the agent itself
// (reason code cancelled), with the agent's reason when there is one.
//
//	Tool 'bash' was not run: the request was cancelled (agent shutting down).
func LLMMessageCancelled(tool, reason string) string {
	reason = strings.TrimSpace(reason)
	if reason == "" {
		return "Tool " + quoteTool(tool) + " was not run: the request was cancelled."
	}
	return "Tool " + quoteTool(tool) + " was not run: the request was cancelled (" + reason + ")."
}

func rejected(tool, feedback string) string {
	s := "User rejected tool " + quoteTool(tool) + "."
	if feedback = strings.TrimSpace(feedback); feedback != "" {
		s += " Feedback: " + feedback
	}
	return s
}

func quoteTool(tool string) string { return "'" + tool + "'" }

package hook

import (
	"encoding/json"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// askUserTool is Claude Code's tool that asks the user questions.
const askUserTool = "AskUserQuestion"

// answersInput turns an approver's answer to Claude Code's AskUserQuestion
// into the input Claude Code documents for a hook that collected the
// answers itself: the tool's own input with an "answers" object mapping
// each question's text to the answer (permissionDecision allow with
// updatedInput; https://code.claude.com/docs/en/hooks, AskUserQuestion).
// The tool then returns the answers without asking. The answer's keys are
// the question texts as the broker read them (one line, clipped); they are
// mapped back to the questions' own texts here. ok is false when the answer
// cannot be put so — another host or tool, an input without questions, a
// free-text answer to several questions, a key that names no question —
// and the hook then denies with the answer in the reason, which the model
// reads all the same.
func answersInput(h Host, tool string, toolInput, answer json.RawMessage) (json.RawMessage, bool) {
	if h != ClaudeCode || tool != askUserTool || len(answer) == 0 {
		return nil, false
	}
	var input map[string]json.RawMessage
	if json.Unmarshal(toolInput, &input) != nil || input == nil {
		return nil, false
	}
	var qs []struct {
		Question string `json:"question"`
	}
	if json.Unmarshal(input["questions"], &qs) != nil || len(qs) == 0 {
		return nil, false
	}
	given := map[string]string{}
	var text string
	switch {
	case json.Unmarshal(answer, &text) == nil:
		if len(qs) != 1 || text == "" {
			return nil, false
		}
		given[shownQuestion(qs[0].Question)] = text
	case json.Unmarshal(answer, &given) != nil || len(given) == 0:
		return nil, false
	}
	answers := map[string]string{}
	for _, q := range qs {
		if a, ok := given[shownQuestion(q.Question)]; ok && a != "" {
			answers[q.Question] = a
			delete(given, shownQuestion(q.Question))
		}
	}
	if len(given) > 0 || len(answers) == 0 {
		return nil, false
	}
	raw, err := json.Marshal(answers)
	if err != nil {
		return nil, false
	}
	input["answers"] = raw
	out, err := json.Marshal(input)
	return out, err == nil
}

// shownQuestion is a question's text as approvers saw it and keyed their
// answer by.
func shownQuestion(q string) string {
	raw, _ := json.Marshal(map[string]string{"question": q})
	if a := messages.ParseAskUser(raw); len(a.Questions) == 1 {
		return a.Questions[0].Question
	}
	return q
}

// output is the host's stdout for decision d on the gated call in: the one
// place that decides which updatedInput, if any, an allow carries — an
// ask-user answer's (answersInput: AskUserQuestion's input with the
// answers) or an approval with changes' (the approver's
// updated_arguments), never both. An edited approval of an ask-user call
// is no thing Signoff defines (the brokers refuse it: the answer answers
// the questions shown), so one that arrives all the same is denied: the
// call does not run with input nobody approved.
func (h Host) output(event string, in Input, d *messages.Decision) ([]byte, error) {
	if d.Outcome == messages.OutcomeAllow && d.Edited() && (len(d.Answer) > 0 || in.ToolName == askUserTool || d.Tool == askUserTool) {
		d = editedAskUser(d)
	}
	if out, ok := answeredOutput(h, event, in, d); ok {
		return out, nil
	}
	if h == ClaudeCode && in.PermissionMode == planMode && d.Outcome == messages.OutcomeAllow &&
		len(d.Answer) == 0 && in.ToolName != exitPlanTool {
		// The user set Claude Code to plan (read and plan, change
		// nothing): a PreToolUse allow skips the host's permission
		// system in every mode, so Signoff's allow — its own mode is
		// auto-edit — let edits through (red team AT F7), and a
		// PermissionRequest allow answers the prompt plan mode raised
		// (AU F6). Silence lets the host's plan mode decide (on
		// PermissionRequest: its own prompt); a deny still denies, and
		// ExitPlanMode, the plan's approval, is answered as asked.
		return nil, nil
	}
	return h.answer(event, d)
}

// planMode is Claude Code's permission_mode while it plans; exitPlanTool
// the tool that asks to leave it.
const (
	planMode     = "plan"
	exitPlanTool = "ExitPlanMode"
)

// editedAskUser is the deny that answers an approval with changes of an
// ask-user call.
func editedAskUser(d *messages.Decision) *messages.Decision {
	out := *d
	out.Outcome, out.UpdatedArguments, out.Answer = messages.OutcomeDeny, nil, nil
	out.Reason = "an approval with changes of an ask-user tool is refused: its answer stands for the questions shown"
	out.LLMMessage = "Tool " + quoteName(d.Tool) + " was not run: Signoff refused an approval that changed the questions of an ask-user tool. Ask again if you still need the answer."
	return &out
}

// answeredOutput is Claude Code's hook output for an AskUserQuestion a
// person answered through Signoff: allow, with the tool's input carrying
// the answers (PreToolUse's updatedInput, or PermissionRequest's
// decision.updatedInput). ok is false when the decision is not such an
// answer or the answer cannot be put in the input (see answersInput).
func answeredOutput(h Host, event string, in Input, d *messages.Decision) ([]byte, bool) {
	if d.Outcome != messages.OutcomeAllow {
		return nil, false
	}
	input, ok := answersInput(h, in.ToolName, in.ToolInput, d.Answer)
	if !ok {
		return nil, false
	}
	out := specificOutput{HookEventName: event}
	switch event {
	case "PreToolUse":
		out.PermissionDecision, out.PermissionDecisionReason, out.UpdatedInput = "allow", userText(d), input
	case "PermissionRequest":
		out.Decision = &permissionDecision{Behavior: "allow", UpdatedInput: input}
	default:
		return nil, false
	}
	data, err := json.Marshal(hookOutput{HookSpecificOutput: &out})
	return data, err == nil
}

package client

import (
	"encoding/json"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// CallToRun returns the call an agent runs under d, and whether it may run
// at all. An approver may approve a call with changes: then d carries
// updated_arguments and the returned call has them as its Arguments (a
// json.RawMessage) — the agent runs that call, never its own. Otherwise an
// allowed call is returned as it is. ok is false when d does not allow the
// call, and when a person answered it (an ask-user tool, d.Answer: the
// answer is the call's result, [Answered]): nothing may run.
func CallToRun(call Call, d *messages.Decision) (Call, bool) {
	if d == nil || d.Outcome != messages.OutcomeAllow || len(d.Answer) > 0 {
		return Call{}, false
	}
	if d.Edited() {
		call.Arguments = json.RawMessage(d.UpdatedArguments)
	}
	return call, true
}

// Answered returns, for a decision that carries a person's answer to an
// ask-user tool (an allow with d.Answer), the text the model reads as the
// tool's result — the tool itself must not run: it would ask somewhere
// nobody watches, or do what the person just answered against (red team
// AT F6) — and true; otherwise "" and false.
func Answered(d *messages.Decision) (string, bool) {
	if d == nil || d.Outcome != messages.OutcomeAllow || len(d.Answer) == 0 {
		return "", false
	}
	var text string
	if json.Unmarshal(d.Answer, &text) != nil {
		text = string(d.Answer) // not a string: the JSON as it came
	}
	return "The user answered through Signoff (the tool was not run; this is its result): " + text, true
}

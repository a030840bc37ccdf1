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
// call: nothing may run.
func CallToRun(call Call, d *messages.Decision) (Call, bool) {
	if d == nil || d.Outcome != messages.OutcomeAllow {
		return Call{}, false
	}
	if d.Edited() {
		call.Arguments = json.RawMessage(d.UpdatedArguments)
	}
	return call, true
}

package messages

import "encoding/json"

// Edited reports whether d approves the call with changes: an allow that
// carries the approver's updated_arguments.
func (d *Decision) Edited() bool {
	return d.Outcome == OutcomeAllow && len(d.UpdatedArguments) > 0
}

// ArgumentsToRun returns the arguments the agent runs the tool with under
// d: the approver's updated_arguments when d approved the call with
// changes, else original (the arguments the agent asked about). It returns
// nil when d does not allow the call: nothing may run.
func (d *Decision) ArgumentsToRun(original json.RawMessage) json.RawMessage {
	switch {
	case d.Outcome != OutcomeAllow:
		return nil
	case len(d.UpdatedArguments) > 0:
		return d.UpdatedArguments
	}
	return original
}

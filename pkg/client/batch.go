package client

import (
	"context"
	"errors"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// ErrHardStop is returned by [Client.RunBatch] when an approver rejected a
// call with reject_hard (or the session was already stopped): the agent loop
// must stop and wait for the user's next message, then call
// [Client.NewTurn].
var ErrHardStop = errors.New("client: stopped by a hard reject; wait for the user's next message")

// BatchResult is what happened to one call of a batch.
type BatchResult struct {
	// Call is the call as the agent asked it; run was given the call as
	// approved (see [CallToRun]: an approver may have changed its
	// arguments, shown in Decision.UpdatedArguments).
	Call Call
	// Decision is nil for calls skipped after a hard stop.
	Decision *messages.Decision
	// Ran reports whether run was called.
	Ran bool
	// Err is run's error, or the error that kept the call from a decision.
	Err error
	// LLMMessage is the text to return to the model for a call that did not
	// run (a rejection, a denial, a timeout, a skip after a hard stop, a
	// person's answer to an ask-user tool: [Answered]).
	LLMMessage string
}

// RunBatch asks about each call in order, with the calls after it sent as
// batch_remaining, and runs the allowed ones with run (seed 000 semantics) —
// each as approved: with the approver's updated_arguments when it was
// approved with changes ([CallToRun]);
// a reject_soft, a policy deny or a timeout skips that call and the batch
// goes on; a reject_hard or a hard stop skips it and every call after it and
// returns ErrHardStop. A call whose decision could not be had (ctx done, an
// error reply) stops the batch with that error.
func (c *Client) RunBatch(ctx context.Context, calls []Call, run func(context.Context, Call) error) ([]BatchResult, error) {
	results := make([]BatchResult, len(calls))
	for i := range calls {
		results[i].Call = calls[i]
	}
	for i, call := range calls {
		rest := make([]messages.BatchItem, 0, len(calls)-i-1)
		for _, next := range calls[i+1:] {
			args, err := rawArguments(next.Arguments)
			if err != nil {
				results[i].Err = err
				return results, err
			}
			rest = append(rest, messages.BatchItem{Tool: next.Tool, Arguments: args})
		}
		d, err := c.request(ctx, call, rest)
		if err != nil {
			results[i].Err = err
			return results, err
		}
		results[i].Decision = d
		if approved, ok := CallToRun(call, d); ok {
			results[i].Ran = true
			results[i].Err = run(ctx, approved)
			continue
		}
		results[i].LLMMessage = d.LLMMessage
		if text, ok := Answered(d); ok {
			results[i].LLMMessage = text
		}
		if d.RejectMode == messages.RejectHard {
			for j := i + 1; j < len(calls); j++ {
				results[j].LLMMessage = messages.LLMMessageHardStop(calls[j].Tool)
			}
			return results, ErrHardStop
		}
	}
	return results, nil
}

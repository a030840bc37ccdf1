// Package client provides the agent SDK of Signoff: an agent asks before it
// runs a tool call and gets one decision back, allow or deny, with the text
// to hand the model (llm_message) when the call does not run.
//
// A [Client] speaks for one session over a NATS connection. [Client.Request]
// subscribes to the decision subject before it sends, retries with the same
// request id when no broker answers, and recovers a decision it missed while
// disconnected through the status subject; [Client.RunBatch] runs a batch of
// calls with the reject_soft / reject_hard semantics of the seeds;
// [Client.NewTurn] clears a hard stop when the user speaks again.
//
// An approver may approve a call with changes: the decision then carries
// updated_arguments, and the agent runs the call [CallToRun] returns — with
// the approver's arguments — never its own ([Client.RunBatch] does so).
package client

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
// A hard stop ends only with a turn sent after the agent heard of the
// rejections behind it: the client remembers the reject_hard decisions it
// received and the rejections its hard_stop denials named, and its turn
// names them all (seen_complete), so a turn sent before the agent heard —
// however late it reaches a broker — ends nothing. Use one Client for the
// life of a session; a gate that runs one process per call (a hook) keeps
// [Client.Seen] between processes and passes it [WithSeen], or, keeping
// nothing, uses [WithStatelessTurns].
//
// An approver may approve a call with changes: the decision then carries
// updated_arguments, and the agent runs the call [CallToRun] returns — with
// the approver's arguments — never its own ([Client.RunBatch] does so).
package client

// Package engine provides the decision procedure of a Signoff broker
// (DESIGN §4) without its transport: an agent's request (policy, stop
// signal, grants, the pending request of an ask), an approver's response
// (vote, settle), and the effects of every transition (question, decision
// and resolution published, audit record, grant, cascade, hard stop).
//
// Its API takes and returns [messages] values and a context; what it
// tells others goes out through the small interfaces it declares
// ([Publisher], [Audit], [Acker]), and state through the store roles it
// uses ([Requests], [Sessions], [Grants]). internal/broker wires it to
// NATS: subscriptions, workers, decoding, encoding and replies.
//
// Two rules hold the procedure together. [Automatic] is the one pure
// function that turns a policy verdict and a store lookup into an
// automatic decision, for the request path and the cascade alike; and
// newDecision is the one constructor of every decision, whichever reason
// code, replica or approver made it.
package engine

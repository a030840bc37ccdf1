// Package broker provides the NATS side of a Signoff broker replica: it
// serves every subject of the protocol (requests, status, cancel, turn,
// approver responses, pending replay, admin) with a bounded pool of
// workers, decodes each message, hands it to the decision engine
// (internal/engine, DESIGN §4), and encodes and sends the reply. It is the
// engine's transport: it publishes the questions, decisions and
// resolutions the engine emits, appends the audit stream (audit.go,
// auditbatch.go), acknowledges carried-out outbox effects in batches, and
// runs the reaper, the outbox worker and the escalator.
//
// A Broker holds no state of its own: any number of replicas may serve the
// same NATS subjects (queue group "signoff-brokers") and the same store.
package broker

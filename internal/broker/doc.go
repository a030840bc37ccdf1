// Package broker provides the NATS side of a Signoff broker replica: it
// serves every subject of the protocol (requests, status, cancel, turn,
// approver responses, pending replay, admin) with a bounded pool of
// workers, decodes each message, hands it to the decision engine
// (internal/engine, DESIGN §4), and encodes and sends the reply. It is the
// engine's transport: it publishes the questions, decisions and
// resolutions the engine emits, appends the audit stream (audit.go,
// auditbatch.go), acknowledges carried-out outbox effects in batches, and
// runs the reaper, the outbox worker and the escalator. It follows the
// admin's modes bucket: mode overrides (modes.go), the shadow policy
// (shadow.go) and a policy canary with its cross-replica counts and its
// one-time rollback (canary.go).
//
// A [Plane] serves many tenants (internal/tenancy): it subscribes once,
// reads each message's Nats-Request-Info, refuses what the requester's
// credentials may not do, and hands the rest to the tenant's own Broker
// (its store, policy, modes and publish subjects <prefix>.t.<account>.…).
//
// A Broker holds no state of its own: any number of replicas may serve the
// same NATS subjects (queue group "signoff-brokers") and the same store.
package broker

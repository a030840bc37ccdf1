// Package broker provides the NATS side of a Signoff broker replica: it
// serves every subject of the protocol (requests, status, cancel, turn,
// approver responses, pending replay, admin), runs the decision procedure of
// DESIGN §4 against a [session.Store] and a policy, publishes questions,
// decisions and resolutions, appends the audit stream, and runs the reaper.
//
// A Broker holds no state of its own: any number of replicas may serve the
// same NATS subjects (queue group "signoff-brokers") and the same store.
package broker

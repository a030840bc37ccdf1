// Package brokertest starts a whole Signoff approval plane inside a test —
// an embedded NATS server, the memory store or a real redis-server, and any
// number of broker replicas — with helpers for agents and approver devices.
// Tests of the broker, the SDK and the approver bot share it.
package brokertest

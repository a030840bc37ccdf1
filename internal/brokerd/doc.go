// Package brokerd assembles a broker process from its options: the flags,
// SIGNOFF_* environment variables and config file of cmd/broker, the NATS
// connection (or, in dev mode, an embedded NATS server with JetStream), the
// state store (Redis, or memory in dev mode), the policy watcher and the
// HTTP listener for health and metrics; then it runs the broker until its
// context ends and shuts everything down in order.
package brokerd

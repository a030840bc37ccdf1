// Command genkeys creates the nkey users of a Signoff deployment without
// nsc: one ed25519 user key per role (broker, approver, admin, agent) or per
// agent, the public keys the NATS server configuration in deploy/nats reads
// from the environment, and the files the services authenticate with.
//
// Usage:
//
//	go run ./deploy/nats/genkeys [-dir DIR] [-force] [NAME ...]
//
// With no NAME it creates the four role keys. Each NAME gets DIR/NAME.nk (the
// seed, mode 0600: give it to that service only) and DIR/NAME.pub (the public
// key). Existing seeds are kept unless -force is given, so adding an agent
// later is safe. DIR/nkeys.env is then rewritten from every seed in DIR, one
// SIGNOFF_NKEY_<NAME>=U… line each (NAME upper-cased, '-' as '_'): the
// variables deploy/nats/*.conf reference, ready for `docker compose
// --env-file` or a Kubernetes ConfigMap. Public keys are not secret; seeds
// are.
package main

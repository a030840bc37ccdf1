// Command genkeys creates the nkey users of a Signoff deployment without
// nsc: one ed25519 user key per role (broker, approver, admin, agent, and
// the DEMO tenant's demo-agent, demo-approver and demo-admin) or per agent, the public keys the NATS server configuration in deploy/nats reads
// from the environment, and the files the services authenticate with.
//
// Usage:
//
//	go run ./deploy/nats/genkeys [-dir DIR] [-force] [NAME ...]
//
// With no NAME it creates the role keys (`make keys` runs it with -readable
// for the compose plane). Each NAME gets DIR/NAME.nk (the
// seed, mode 0600: give it to that service only) and DIR/NAME.pub (the public
// key). Existing seeds are kept unless -force is given, so adding an agent
// later is safe. DIR/nkeys.env is then rewritten from every seed in DIR, one
// SIGNOFF_NKEY_<NAME>=U… line each (NAME upper-cased, '-' as '_'): the
// variables deploy/nats/*.conf reference, ready for `docker compose
// --env-file` or a Kubernetes ConfigMap. With the demo-* keys it also writes
// DIR/tenants.yaml, the brokers' --tenants file for the DEMO account. Public
// keys are not secret; seeds are. The directory is made 0700; -readable makes
// the seeds 0644 inside it, for bind-mounting into containers.
package main

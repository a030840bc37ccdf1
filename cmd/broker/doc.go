// Command broker is Signoff's approval broker: `broker --dev` runs the whole
// plane in one process, `broker --nats URL --redis URL` runs one of any
// number of production replicas, and `broker policy check` evaluates tool
// calls against a policy file offline.
package main

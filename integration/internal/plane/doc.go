// Package plane provides a whole Signoff plane in Docker containers for the
// end-to-end suite: a NATS cluster with JetStream, Redis with an append-only
// file, broker replicas and approver bots, on two private networks, with the
// faults the suite injects (kill, stop and start, pause, network
// disconnect).
//
// The networks are split so that a broker can lose Redis and keep NATS:
//
//	nats-net:  nats-1..N, broker-1..M, approver bots
//	redis-net: redis, broker-1..M
//
// Everything is started with testcontainers-go (without its reaper: the
// reaper image cannot be pulled where no registry is reachable) and removed
// in the test's Cleanup. Containers carry labels naming the test process, so
// a later run removes what a crashed run left behind ([Prune]).
package plane

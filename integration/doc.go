// Package integration holds Signoff's end-to-end suite: the whole plane in
// Docker containers, driven from the test process, and the deployment
// artefacts (images, compose file) exercised as a user would run them.
//
// TestDistributed starts a 3-node NATS cluster with JetStream, Redis with
// an append-only file and 3 broker replicas on two private networks
// (integration/internal/plane), then puts them through the faults of a
// distributed deployment — a broker killed mid-request, a NATS node
// restarted, Redis paused and restarted, a broker cut off from Redis, two
// approver devices racing on one question, and the faults of issue 14: a
// deciding broker frozen while Redis pauses writes and killed as they
// resume, bursts of hard rejects with Redis killed or frozen, the audit
// stream's leader frozen or killed (the decisions' effects must come from
// the outbox of another replica, exactly one audit record each) — and a
// load run with one and three replicas. Agents (pkg/client) and approvers speak NATS from the
// test process; a ledger (integration/internal/workload) checks that every
// request got exactly one decision and that nothing was allowed without a
// policy allow or a stored approval.
//
// The suite needs a Docker engine and the images of scripts/build-images.sh
// (`make images`), which TestMain runs once (it rebuilds only what changed;
// SIGNOFF_SKIP_IMAGE_BUILD=1 skips it). Without Docker the tests skip with a
// loud message, or fail when CI=true. testcontainers' reaper is turned off:
// its image cannot be pulled where no registry is reachable, so every test
// removes its containers and networks in t.Cleanup, and the next run removes
// what a killed run left behind. SIGNOFF_IMAGE_BROKER, _APPROVER_BOT, _NATS,
// _REDIS and _AGENT name other images (the official nats and redis images
// work too). SIGNOFF_LOAD_FULL=1 runs the load at the size reported in
// docs/BENCHMARKS.md.
//
//	go test -count=1 -timeout 15m ./integration/
package integration

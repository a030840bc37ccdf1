// Command procbench measures the broker's automatic path as separate
// processes: nats-server, redis-server and the broker each run on their
// own, and an outside load generator (this command, in another process)
// speaks the protocol to them over loopback. The baseline is a responder
// process (this command again) that does, per request, what any replica
// reading shared state must do: take a NATS request, do one Redis GET and
// reply.
//
// A run is -passes passes; each pass runs every target in turn (the
// baseline, then the broker in each -modes audit mode), each freshly
// started, warmed up and then loaded at every -concurrency, the requests
// in flight spread over one agent connection each (-conns). The summary
// gives, for every target and concurrency, the medians over the passes of
// p50, p99, throughput and the target process's CPU per request, and the
// median of its per-pass ratios to the baseline measured in the same pass.
// With -replicas 1,2,3 every broker target runs as that many broker
// processes on the same NATS and Redis (the queue group shares the load);
// their CPU is summed, and a second table compares each count with one
// replica of the same pass.
//
//	go build -o /tmp/pb/nats-server github.com/nats-io/nats-server/v2
//	go build -o /tmp/pb/broker ./cmd/broker
//	go run ./integration/cmd/procbench -nats-server /tmp/pb/nats-server -broker /tmp/pb/broker
//
// scripts/bench.sh (make bench SECTIONS=processes) runs exactly that.
//
// Roles (the first argument; the orchestrator starts the other two):
//
//	procbench [flags]                    orchestrate a run (the default)
//	procbench load -nats URL [flags]     load one target, print one JSON line
//	procbench baseline -nats URL -redis ADDR   serve the baseline until SIGTERM
package main

// Command loadagent is a fleet of Signoff agents for load and end-to-end
// tests. It runs -agents agents, each one session with its own client
// (pkg/client) asking -requests questions one after the other, drawn from a
// mix of calls the policy allows, denies and asks about; with -approver it
// also answers the questions of its own sessions over NATS as that approver.
// It prints one JSON summary on stdout and exits 0 when every request got
// exactly one decision, the one its kind expects, and nothing failed;
// 1 when not; 2 on a usage error.
//
//	loadagent -nats nats://127.0.0.1:4222 -agents 20 -requests 50 \
//	    -mix allow=8,deny=1,ask=1 -approver alice -ask-ttl 10s
//
// The image signoff/agent:dev runs it (scripts/build-images.sh), e.g. on the
// network of the compose demo (deploy/compose, project "compose"):
//
//	docker run --rm --network compose_nats signoff/agent:dev -nats nats://nats-1:4222 -agents 5
//
// # Calls
//
// allow, deny and ask are three calls, each a JSON object {"tool",
// "arguments"} set by -allow-call, -deny-call and -ask-call. The defaults
// fit the built-in policy and deploy/compose/policy.yaml: `ls -la` (bash,
// allowed), reading app/.env (read_file, denied) and `make deploy` (bash,
// asks). An agent's calls follow the mix's weights in a fixed interleaved
// order, each agent starting at a different place in it, so a run's counts
// by kind are exact.
//
// # Summary
//
// One JSON object (the [Summary] type; durations in milliseconds):
//
//	{
//	  "agents": 20, "requests_per_agent": 50,
//	  "requests": 1000,           // sent
//	  "unsent": 0,                // not sent before -timeout (counted in errors)
//	  "session_prefix": "load-…",
//	  "sent":      {"allow": 800, "deny": 100, "ask": 100},
//	  "decisions": {"allow": 900, "deny": 100},
//	  "reasons":   {"policy_allow": 800, "policy_deny": 100, "approved": 100},
//	  "unexpected": 0,            // decisions other than the kind expects (ask: allow with -approver, not judged without)
//	  "without_decision": 0,      // requests that ended without a decision (each also in errors)
//	  "extra_decisions": 0,       // requests that saw more than one decision message, or one that disagreed with the decision returned
//	  "errors": 0, "error_samples": [],
//	  "anomalies": [],            // up to 20 "request_id: what" lines for the three counts above
//	  "approver": {"id": "alice", "questions": 100, "applied": 100, "refused": 0, "errors": 0},
//	  "latency_ms": {"count": 1000, "p50": 1.9, "p90": 4.2, "p99": 11.0, "max": 23.5},
//	  "latency_ms_by_kind": {"allow": {…}, "deny": {…}, "ask": {…}},
//	  "duration_ms": 2480.1, "throughput_per_s": 403.2,
//	  "ok": true
//	}
//
// Latency is measured per request from the call to [client.Client.Request]
// to its return, so for asked calls it includes the approver's answer.
// Throughput is decisions per second of wall time over the whole run.
package main

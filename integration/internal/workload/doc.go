// Package workload provides the traffic of the end-to-end suite and the
// books that prove it was served correctly: a [Fleet] of agents asking
// through pkg/client, [Approver] devices answering questions over NATS, and
// a [Ledger] that records, per request id, the decisions the agent got,
// the questions approvers saw, the answers they sent and the decisions
// published, then checks that every request got exactly one decision and
// that nothing was allowed without a policy allow or a stored approval.
//
// The calls follow the suite's [Policy]: `ls …` is allowed, `rm …` denied,
// `make …` asks a human, so the ledger knows what each request should get.
package workload

// Package pager pages on-call humans through PagerDuty (Events API v2) and
// Opsgenie (Alert API) when an approval request goes unanswered.
//
// The escalation code consumes one port, [Pager]: Trigger opens (or
// re-triggers) the incident of a request, Resolve closes it when the request
// is settled by anyone, and CheckHealth reports whether the vendor is
// reachable with the configured credentials. Both implementations are built
// by [New] from a [Config] (the `pagers:` section of the escalation config,
// see docs/PAGING.md) and are safe for concurrent use by any number of
// goroutines; they own no goroutines and need no Close.
//
// Idempotency is the contract that lets several broker replicas page without
// coordinating: the incident key is [DedupKey] of the request id, a pure
// function, so a trigger retried after a timeout, or sent by two replicas,
// lands on the same open incident; a resolve of an incident that is unknown
// or already closed is a success.
//
// Every call retries network errors, HTTP 429 (honouring Retry-After) and
// 5xx with exponential backoff and full jitter, bounded by the caller's ctx
// and by [Config.MaxAttempts]. Any other 4xx is permanent: it returns an
// [*APIError] that wraps [ErrRejected] and carries the vendor's own message
// and field errors. Secrets (routing keys, API keys) come from a file or an
// environment variable and never reach logs or error strings.
//
// Package pagertest provides httptest fakes of both vendors' APIs.
package pager

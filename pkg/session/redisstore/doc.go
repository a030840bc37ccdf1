// Package redisstore provides the Redis [session.Store] that broker
// replicas share in production.
//
// Every state transition is one Lua script (create-if-absent,
// decide-if-pending, settle, stop, claim…), so two replicas or two approver
// devices racing on one request never both win. Scripts read the time from
// Redis TIME, never from the caller: replicas with skewed clocks agree on
// every expiry. Every script touches keys of one hash slot only — the keys
// of a session share the hash tag {<session>} — so the store runs unchanged
// on a single server, behind Sentinel, or on Redis Cluster. Redis 7 or later
// is required (script flags).
//
// The hot path of the broker, [Store.Lookup], is one round trip; so is
// [Store.Prepare]. [Store.ClaimExpired] finds due requests through a due
// index sharded over a few keys and leased by the reapers, so that any
// number of replicas may run the reaper and each request still expires
// exactly once. The transitions record their effects in a per-session
// outbox in the same script; [Store.ClaimEffects] finds the entries whose
// lease ran out through an outbox index sharded and leased the same way.
// A claim that fails after its lease releases the lease on the next call.
//
// Any error that means Redis could not be reached or could not serve in
// time wraps session.ErrUnavailable: callers fail closed. Calls never
// retry behind the caller's back, since a script whose reply was lost may
// have run.
//
// docs/STATE.md describes the key layout, the scripts, retention, the
// supported topologies and the behaviour under failures.
package redisstore

// Package memstore provides the in-memory [session.Store] that the broker
// uses in dev mode (one process, no Redis).
//
// It keeps the same contract as the Redis store and passes the same
// conformance suite (package storetest): every transition runs under one
// mutex, so it is atomic; every returned record is a copy. The pending
// indexes (by session, agent and team) are maps, the expiry index is a
// min-heap, so ClaimExpired costs O(k log n) for k claimed requests.
//
// Lifetimes:
//   - Settled requests stay readable for Options.Retention (default 24 h),
//     counted from DecidedAt, or from the claim for expired requests; they
//     are dropped lazily by the next call that reaches the store.
//   - A session's grants expire together Options.Retention after the last
//     AddGrant or Lookup of that session, so an idle session forgets them
//     (it asks again: the safe direction). Agent grants last until revoked.
//   - A hard-stop signal lasts until NewTurn: it never expires, because an
//     expired stop would let the agent go on without the turn the human
//     asked for.
//
// The store is not persistent: restarting the process forgets everything.
package memstore

// Package claim runs the loop that claims work from a shared store and
// hands it to workers: claim up to a batch, handle each item, claim again
// while full batches come back, sleep until the next sweep (or until the
// store says something is due), back off while claims fail, and let claimed
// items finish for a while after shutdown.
//
// The reaper (expired requests), the broker's outbox runner (effects whose
// lease ran out) and the escalator (due escalation steps) are each a [Loop]
// over their store's claim method: what differs is what they claim and how
// they handle it, not how they loop.
package claim

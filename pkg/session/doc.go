// Package session defines the shared state of Signoff: the [Store] interface
// that every broker replica uses for requests, grants, hard-stop signals and
// the expiry index, composed of small roles ([Requests], [Pending],
// [Grants], [Sessions], [Expiry], [Outbox], [Escalations], [Backend]) that
// consumers declare one by one, its sentinel errors, and the request state machine
// (pending → approved | rejected | expired | cancelled; settled states never
// change), and the outbox through which every transition's effects outside
// the store survive the death of the replica that made it (the rules are
// at [DefaultEffectLease]).
//
// Two implementations pass one conformance suite (package storetest):
// redisstore for production and memstore for dev mode.
package session

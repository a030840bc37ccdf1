// Package storetest provides the conformance suite that every
// [session.Store] implementation passes: [Run] checks each transition and
// refusal of the contract, retention, and the races that the atomic
// transitions must win exactly once.
//
// The suite is black-box: it uses only the Store interface, real time and
// short TTLs, so the same tests run against the in-memory store and against
// a real Redis server. Subtests use their own session, agent and team names,
// so a backend may be shared between them. Subtests that call ClaimExpired
// or ClaimEffects (which claim across the whole backend) run one after the
// other, before the others start; the rest run in parallel.
//
// Besides the doc comments of [session.Store] and the expiry rules on
// [session.Record.Due], the suite pins down these choices:
//
//   - Every field of a request comes back unchanged, its Question compared
//     by its JSON form, with QuestionErr nil; records returned are the
//     caller's to change (the question's slices included).
//   - Prepare validates with [session.Request.Validate]; a retry returns the
//     stored record (created false) whatever its state, before the stop
//     signal is checked.
//   - A second vote from an approver whose approval was counted is refused
//     with ErrDuplicateVote, a deny included.
//   - Stop and CancelSession need a decision func; they settle only open
//     requests and return only those. CancelSession skips unknown and
//     settled ids; an empty id is ErrInvalid.
//   - RevokeGrants with neither a session nor an agent is ErrInvalid;
//     AddGrant refuses a pattern on a session grant.
//   - Lifetimes: settled requests are readable for the retention, then
//     ErrNotFound; a session's grants lapse a retention after their last
//     AddGrant or Lookup; agent grants last until revoked; a stop signal
//     lasts until NewTurn.
//   - A deny with Vote.Stop sets the stop signal in the same call; a
//     stopped session approves nothing (Decide or Settle), denies apply.
//   - Prepare records no outbox entry; Open, applied votes,
//     Settle, Stop, CancelSession and ClaimExpired record one per request.
//   - After Close every method fails with an error wrapping ErrUnavailable.
package storetest

// Package storetest provides the conformance suite that every
// [session.Store] implementation passes: [Run] checks each transition and
// refusal of the contract, retention, and the races that the atomic
// transitions must win exactly once.
//
// The suite is split as [session.Store] is, one file per role (requests.go
// with the two-step create, sessions.go with the pending lists and stop
// votes, grants.go, expiry.go, outbox.go, escalation.go, backend.go), and
// its subtests are named by role: -run 'Conformance/contract/Grants' runs
// one role. retention.go and races.go hold the promises that span roles.
// A test reaches the store through its roles (e.grants.AddGrant,
// e.requests.Lookup), so each file shows which roles it needs besides its
// own: mostly Requests, to make the requests it works on ([Create] takes
// only that role).
//
// The suite is black-box: it uses only the Store interface, real time and
// short TTLs, so the same tests run against the in-memory store and against
// a real Redis server. Subtests use their own session, agent and team names,
// so a backend may be shared between them. Subtests that call ClaimExpired,
// ClaimEffects or ClaimSteps (which claim across the whole backend) run one
// after the other, before the others start; the rest run in parallel.
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
//     AddGrant validates with [session.Grant.Validate]; a grant with a
//     stored id is not stored again. RevokeGrant is atomic against Lookup;
//     grants expire by the store's clock and ExpireGrants reports each
//     expired grant once.
//   - Lifetimes: settled requests are readable for the retention, then
//     ErrNotFound; a session's grants lapse a retention after their last
//     AddGrant or Lookup; agent grants last until revoked or their expiry; a stop signal
//     lasts until NewTurn.
//   - A deny with Vote.Stop sets the stop signal in the same call; a
//     stopped session approves nothing (Decide or Settle), denies apply.
//     A reject_hard is only such a vote (a stopless one, or a Settle of
//     one, is ErrInvalid); NewTurn keeps the stop while a hard rejection
//     of the session is unacknowledged in the outbox (ErrStopOwed).
//   - Prepare records no outbox entry; Open, applied votes,
//     Settle, Stop, CancelSession and ClaimExpired record one per request.
//   - Escalation steps (session.Escalations): Prepare refuses a ladder out
//     of order, at or past the TTL, with ErrInvalid and stores nothing; a
//     step is handed out at creation + its delay, once per lease, with the
//     record; steps of held requests wait, those of requests settled or
//     expired first are never handed out; a page watch is handed out in
//     phase resolve once its request is no longer open; StepsDone lists the
//     finished steps until the request's expiry; AddTeam adds a team once
//     (listed for it, quorum unchanged), refuses settled requests with
//     ErrSettled and held or unknown ones with ErrNotFound.
//   - After Close every method fails with an error wrapping ErrUnavailable.
package storetest

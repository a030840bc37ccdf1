// Package admincli provides `signoff admin`, the operator's command over
// the admin subjects: open questions, grants and their revocation, fleet
// stops, modes, policy versions and reloads, the audit stream (a tenant's
// too, --tenant), the agents' last seen and the policy canary
// (docs/OPERATIONS.md "Operating a fleet").
//
// [Run] is the whole command: cmd/signoff dispatches `signoff admin` to it,
// and tests drive it in-process. Output is a human table, or JSON with
// --json; the exit status says what happened ([ExitOK] … [ExitNoBroker]).
package admincli

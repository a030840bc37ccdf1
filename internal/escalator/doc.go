// Package escalator runs the escalation ladders of pending questions
// (docs/POLICY.md "Escalation"): reminders to the question's teams, a team
// added to the question, and pages through PagerDuty or Opsgenie
// (internal/pager), resolved when the question settles.
//
// Every broker replica runs one [Escalator]. The steps are scheduled in
// the session store with their request and claimed with a lease at the
// store's clock (session.Escalations), like the reaper's expiries: a step
// runs once across replicas, and again only if the replica that claimed
// it died or failed before it finished it; its effects are idempotent
// (questions are keyed by request id and step, a page by the request id).
package escalator

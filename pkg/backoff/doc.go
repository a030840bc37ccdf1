// Package backoff computes the waits between the attempts of an operation
// that failed and may succeed later: exponential from a least wait to a
// most, with optional jitter so that processes that failed together do not
// retry together. [Policy] is the schedule; [Sleep] waits one step of it,
// or less if its context ends.
//
// Every retry loop of Signoff takes its waits from here (the claim loops
// of the reaper, the outbox and the escalator; the agent SDK's round
// trips; internal/httpapi, the one client of the chat APIs, the webhook
// and the pagers; the Telegram poller and the bot's delivery pump; the
// broker's JetStream wait, follow-ups and audit retries), so that a
// change to how Signoff backs off is made once.
package backoff

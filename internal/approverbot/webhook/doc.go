// Package webhook provides the generic signed webhook channel of the
// approver bot: every question and every resolution is POSTed as JSON to a
// configured URL, and responses come back as signed JSON POSTs to
// /webhook/respond on the bot's listener. It lets any system — a ticket
// queue, a pager, a home-grown dashboard — act as an approver device.
//
// # Signing
//
// Both directions are signed with the configured secret the same way:
//
//	X-Signoff-Timestamp: <unix seconds>
//	X-Signoff-Signature: sha256=<hex HMAC-SHA256(secret, timestamp + "." + body)>
//
// A receiver must check the signature over the exact bytes of the body and
// refuse timestamps more than five minutes away from its clock. The bot
// refuses responses that are unsigned, wrongly signed, stale (or from the
// future) by more than five minutes with 401, and a second use of the same
// signature within the window with 409: every request must be signed anew
// (a retry too).
//
// # Outgoing events
//
// The body is the wire message itself ("v":1, with "type":
// "approval_needed" or "resolved", see docs/PROTOCOL.md); the
// X-Signoff-Event header names the type and X-Signoff-Delivery carries an
// id that stays the same across the retries of one delivery. A question is
// sent again when it changes (a quorum approval was counted) and after the
// bot reconnects: receivers should key questions by request_id. Answers
// other than 2xx are retried with backoff for 5xx, 408, 429 (honouring
// Retry-After) and network errors; other 4xx are final.
//
// # Responses
//
//	POST /webhook/respond
//	{"request_id": "r1", "approver": "alice", "approved": true, "scope": "session", "device": "pager", "digest": "sha256:…"}
//	{"request_id": "r2", "approver": "bob", "approved": false, "reject_mode": "reject_soft", "feedback": "use make test"}
//
// approver must be an approver id of the bot's config; approved is
// required; digest, the digest of the approval_needed event the approver
// was shown, is required with approved true (the version of the question
// approved: one naming another is refused and not sent; a rejection may
// leave it out); scope (once, session, always, always_prefix; default once) goes
// with approvals only, reject_mode (reject_soft, reject_hard; default
// reject_hard) and feedback with rejections; device is optional. The answer
// is the broker's RespondReply ({"v":1,"applied":…,"state":…,"decision":…,
// "reason":…}) with 200 — applied:false says why (already decided by
// someone else, not a member of the team, …) — or an error reply
// ({"v":1,"error":{"code":…,"message":…}}) with 400 (malformed), 401
// (signature), 403 (not a configured approver), 404 (unknown question),
// 409 (replay), 413 (too large), 502 (the broker refused) or 503 (no
// broker answered, or the bot is starting).
package webhook

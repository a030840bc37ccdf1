// Package approverbot is the approver bot's core: it connects to a Signoff
// plane over NATS, keeps the open questions of the teams it serves (replayed
// from the brokers on every (re)connect, then live from the ask and resolved
// subjects), shows them on its channels, and sends the answers of the humans
// who respond, with the approver identity their channel user maps to.
//
// The core knows no channel. What a question shows is built once, by
// package card ([Present] → [View], with what Session and Always would
// grant as the brokers offer it, every text the agent controls sanitised
// and flagged, and what a channel's limits cut); the core decides what
// each choice answers ([Choose], which refuses a
// choice the question does not offer); a channel
// lays the view out in its own markup, maps its controls to [Choice]s and
// its users to approvers, and registers itself with its config section
// ([Register], [Kind]). Channels sit behind one port, [Channel]; they answer
// through the [Responder] the bot gives them. The built-in ones live in the
// sub-packages terminal, web, slack, telegram and webhook (imported
// together by internal/approverbot/channels); every one passes the
// conformance suite in internal/approverbot/channeltest. The bot also lists
// and revokes the standing grants of an approver's teams for the channels
// that show them, the web page and the terminal ([GrantAdmin]). A question,
// once shown, never changes: a copy that shows anything else is refused as
// an attack, and every answer names the digest of what its approver saw.
package approverbot

// Package approverbot provides the approver bot: it connects to a Signoff
// plane over NATS, keeps the open questions of the teams it serves (replayed
// from the brokers on every (re)connect, then live from the ask and resolved
// subjects), shows them on its channels — terminal, web page, Slack,
// Telegram, webhook — and sends the answers of the humans who respond, with
// the approver identity their channel user maps to.
//
// Channels sit behind one port, [Channel]; they answer through the
// [Responder] the bot gives them.
package approverbot

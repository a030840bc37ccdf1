// Package slacktest provides a fake Slack for tests: an httptest server that
// speaks the documented Web API methods the approver bot uses
// (auth.test, chat.postMessage, chat.update, chat.postEphemeral) and the
// response_url endpoint of interactions, with Slack's documented request
// and response formats, errors and Block Kit limits, and exposes what it
// received on Go channels.
//
// It also builds what Slack would send to the bot when a user clicks a
// button: a block_actions interaction payload for a received message,
// form-encoded as payload=<json>, and its v0 request signature.
package slacktest

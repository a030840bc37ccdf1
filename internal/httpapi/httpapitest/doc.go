// Package httpapitest provides the request [Recorder] shared by the fakes
// of the services Signoff calls over HTTP (slacktest, telegramtest,
// pagertest and the webhook channel's test receiver), so that "what did
// the fake receive" is answered the same way for every integration, the
// [Faults] a test injects into them, and the [Server] base the fakes of
// named-call APIs embed.
package httpapitest

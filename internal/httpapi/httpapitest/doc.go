// Package httpapitest provides the request [Recorder] shared by the fakes
// of the services Signoff calls over HTTP (slacktest, telegramtest,
// pagertest and the webhook channel's test receiver), so that "what did
// the fake receive" is answered the same way for every integration.
package httpapitest

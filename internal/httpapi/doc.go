// Package httpapi sends the requests of Signoff's outbound HTTP
// integrations (the Slack Web API, the Telegram Bot API, the webhook
// channel, PagerDuty and Opsgenie) with one set of retry rules, so that a
// change to how Signoff talks to a vendor is made once.
//
// A [Client] is built by [New] from a [Config] that is validated (an
// absolute http(s) base URL, no negative timeout or wait, a jitter from 0
// to 1). [Client.Do] sends a [Request] and, while the request's
// [RetryFunc] asks for it and attempts remain, sends it again after
// max(Retry-After, the [backoff.Policy] delay): Retry-After is read as
// delay-seconds or as an HTTP date ([ParseRetryAfter]); a Retry-After
// longer than [Config.MaxRetryAfter] ends the call with that answer (or is
// cut to it, with [Config.ClampRetryAfter]); the waits end with the
// caller's context, and a wait that would outlast the context's deadline
// is not begun.
//
// Errors never contain the request's URL: a Telegram URL holds the bot
// token, a Slack response_url is a credential, a webhook URL may carry one.
// A network error names the API and the method ("telegram sendMessage:
// …") and has the URL and the path removed, and [Config.Scrub] removes
// anything else the caller knows to be secret.
//
// The package decides nothing about an API's answers: whether a status or
// a body means "try again" is the request's [RetryFunc], and what a final
// answer means is the caller's to read from the [Response].
package httpapi

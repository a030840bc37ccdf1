// Package slack provides the Slack channel of the approver bot: it posts
// each question to its team's Slack channel as a Block Kit message with
// Approve / Approve for session / Always approve / Deny / Deny & stop
// buttons, serves Slack's interactivity endpoint (POST /slack/interactions)
// to take the clicks, and updates the message with the outcome once the
// question is settled, by whichever device.
//
// Deny rejects softly (reject_soft: the agent skips the call and asks its
// user what to do instead); Deny & stop rejects hard (reject_hard: the
// agent's turn ends). Always is offered only when the question says what it
// would grant, and its confirmation dialog repeats it: the card's words
// first (how many patterns, for whom, for how long, the warning), the
// agent's patterns after them, quoted. Deny and Deny & stop
// open a form for feedback to the agent, and an ask-user question's
// Answer… a form with its questions and options (feedback.go). Edit &
// approve… (on questions one approval settles, never an ask-user one)
// opens a modal with the command, or the arguments as JSON, to approve the
// changed call once; its submission is answered at once with the problem
// (the modal stays open) or the outcome (modal.go). Every modal's
// submission goes through one dispatcher, by callback id.
//
// Requests to the endpoint are authenticated with Slack's request signing
// (v0 HMAC-SHA256 of "v0:{timestamp}:{body}" with the app's signing
// secret); a forged, stale or unsigned request is refused with 401 and
// changes nothing. The clicking Slack user is mapped to an approver through
// the bot's config; an unknown user is told so and nothing is sent. Each
// click is acknowledged at once and handled in the background: the outcome
// ("approval 1 of 2 counted", "already decided by Alice …") reaches the
// clicking user as an ephemeral message through the payload's response_url.
//
// Dynamic text is rendered so that nothing an agent sends can format,
// link or mention: commands and arguments go into rich_text elements (shown
// exactly, never parsed), plain_text objects carry identifiers, and
// mrkdwn text has '&', '<' and '>' escaped.
//
// The bot token is sent only in the Authorization header of Web API calls
// and never appears in logs or errors.
package slack

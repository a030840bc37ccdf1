// Package telegram provides the Telegram channel of the approver bot: it
// sends each question to its team's Telegram chat with an inline keyboard —
// Approve / Session / Always (only when the question offers it) and
// Deny / Deny & stop, the buttons of seed 004 plus the two the protocol adds —
// long-polls the Bot API's getUpdates for the users' taps (callback
// queries), maps the tapping Telegram user to an approver, sends the answer
// and answers the tap with what came of it; once a question is settled, by
// whichever device, its message is edited to show the outcome and loses its
// keyboard.
//
// Deny rejects softly (reject_soft: the agent skips the call and asks its
// user what to do instead); Deny & stop rejects hard (reject_hard: the
// agent's turn ends). A reply to the question's message before Deny is the
// rejection's feedback; on an ask-user question a reply (or an option
// button) is the answer (reply.go).
//
// Telegram cannot approve with changes (buttons hold no text): a user who
// sends /edit in a team's chat (even as a reply: it is never feedback or an
// answer) is told so, and to use the web page or the terminal.
//
// Callback data is compact, "<action>:<handle>" (at most 64 bytes, the Bot
// API's limit): the handle is issued per question by this bot run and
// mapped back to the request id, so buttons of an earlier run are refused as
// unknown rather than misread.
//
// Messages use the Bot API's HTML parse mode; everything dynamic is escaped.
// The bot token is part of every Bot API URL, so no URL is ever logged or
// put into an error.
package telegram

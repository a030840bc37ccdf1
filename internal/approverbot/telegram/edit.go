package telegram

import (
	"context"
	"html"
	"strings"
)

// Telegram cannot approve with changes: an inline keyboard has buttons, not
// text fields, and a reply typed in a group is no place for a command that
// must be the one approved. A user who tries (/edit) is told so, and where
// to edit instead.

// cannotEditText is what the bot answers to /edit.
const cannotEditText = "Telegram cannot edit a call: its buttons approve or deny the call exactly as shown. " +
	"To approve with changes, use the approver web page or the terminal (or deny here with feedback, so the agent proposes the changed call)."

// isEditCommand reports whether text is the /edit command: "/edit",
// "/edit@<bot>", either followed by arguments.
func isEditCommand(text string) bool {
	word, _, _ := strings.Cut(strings.TrimSpace(text), " ")
	word, _, _ = strings.Cut(word, "@")
	return strings.EqualFold(word, "/edit")
}

// servesChat reports whether id is the chat of a team this channel serves:
// the bot speaks only where it asks.
func (c *Channel) servesChat(id int64) bool {
	for _, chatID := range c.cfg.Chats {
		if chatID == id {
			return true
		}
	}
	return false
}

// handleEdit answers a message that is the /edit command (the reply
// worker's other messages go to handleReply): in a served chat it gets
// cannotEditText; elsewhere it is not the bot's business.
func (c *Channel) handleEdit(ctx context.Context, m incoming) {
	if !isEditCommand(m.Text) || !c.servesChat(m.Chat.ID) || (m.From != nil && m.From.IsBot) {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	err := c.post(ctx, m.Chat.ID, "sendMessage", sendMessageParams{ChatID: m.Chat.ID, Text: html.EscapeString(cannotEditText), ParseMode: "HTML"}, nil)
	if err != nil {
		c.log.Warn("could not answer /edit", "err", err)
	}
}

package telegram

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Replies: a person answers by replying to the question's message
// (https://core.telegram.org/bots/api#message: reply_to_message). On an
// ask-user question the reply is the answer (option numbers or words); on
// any other question it is feedback, kept for that person until they tap
// ❌ Deny or ⛔ Deny & stop, which sends it with the rejection. A bot in
// privacy mode still receives replies to its own messages
// (https://core.telegram.org/bots/features#privacy-mode). An ask-user
// question that asks one single-choice question also gets a button per
// option.

// tapOption is the callback action of an option button: "o:<handle>:<n>".
const tapOption = 'o'

// maxOptionButtons bounds the option buttons of a question.
const maxOptionButtons = 8

// incoming is a message update: a reply to one of the bot's messages is
// read, anything else ignored.
type incoming struct {
	MessageID      int64    `json:"message_id"`
	From           *user    `json:"from,omitempty"`
	Chat           chat     `json:"chat"`
	Text           string   `json:"text,omitempty"`
	ReplyToMessage *message `json:"reply_to_message,omitempty"`
}

type replyParameters struct {
	MessageID                int64 `json:"message_id"`
	AllowSendingWithoutReply bool  `json:"allow_sending_without_reply"`
}

// replyMessageParams is sendMessage as a reply, in plain text.
type replyMessageParams struct {
	ChatID          int64            `json:"chat_id"`
	Text            string           `json:"text"`
	ReplyParameters *replyParameters `json:"reply_parameters,omitempty"`
}

// draftKey names a person's feedback on a question.
type draftKey struct {
	short string
	user  int64
}

// optionButtons are the option buttons of q: one per option when q asks
// one single-choice question with at most maxOptionButtons options.
func optionButtons(q approverbot.Question, short string) [][]inlineButton {
	if q.AskUser == nil || len(q.AskUser.Questions) != 1 {
		return nil
	}
	aq := q.AskUser.Questions[0]
	if aq.MultiSelect || len(aq.Options) == 0 || len(aq.Options) > maxOptionButtons {
		return nil
	}
	v := approverbot.Present(q, limits)
	var rows [][]inlineButton
	for i, o := range v.Ask.Questions[0].Options {
		rows = append(rows, []inlineButton{{Text: clip(strconv.Itoa(i+1)+". "+o.Label, maxButtonText),
			CallbackData: string(tapOption) + ":" + short + ":" + strconv.Itoa(i)}})
	}
	return rows
}

// maxButtonText bounds an option button's label.
const maxButtonText = 60

// renderAsk appends an ask-user question's questions and how to answer.
func renderAsk(w *htmlWriter, q approverbot.Question, v approverbot.View) {
	lines := v.AskLines()
	if lines == nil {
		return
	}
	w.plain("\n\n")
	w.bold("The agent asks you")
	for _, l := range lines {
		w.plain("\n" + l)
	}
	w.plain("\n")
	if optionButtons(q, "x") != nil {
		w.text("<i>", "Tap an option, or reply to this message with your own words.", "</i>")
		return
	}
	hint := "Reply to this message with your answer."
	if n := len(v.Ask.Questions); n == 1 {
		hint = "Reply to this message with option numbers (1,3 for several) or your own words."
	} else if n > 1 {
		hint = "Reply to this message with, per question in order, option numbers or your own words, separated by ;"
	}
	w.text("<i>", hint, "</i>")
}

// handleReply takes a reply to one of the bot's messages.
func (c *Channel) handleReply(ctx context.Context, r approverbot.Responder, m incoming) {
	if m.ReplyToMessage == nil || m.From == nil || m.From.IsBot {
		return
	}
	c.mu.Lock()
	var s *sent
	for _, x := range c.byID {
		if x.chatID == m.Chat.ID && x.msgID == m.ReplyToMessage.MessageID {
			s = x
			break
		}
	}
	if s == nil {
		// The reply may beat sendMessage's answer (the message id is not
		// recorded yet): the message shows its request id.
		if _, rest, ok := strings.Cut(m.ReplyToMessage.Text, " · request "); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if x := c.byID[f[0]]; x != nil && x.chatID == m.Chat.ID && x.msgID == 0 {
					s = x
				}
			}
		}
	}
	var q approverbot.Question
	var settled bool
	if s != nil {
		q, settled = s.q, !s.settled.IsZero()
	}
	c.mu.Unlock()
	if s == nil {
		// A reply to another message: not ours to read.
		c.log.Debug("ignored a reply to a message that is no open question's", "chat", m.Chat.ID, "reply_to", m.ReplyToMessage.MessageID)
		return
	}
	id := q.Request.RequestID
	log := c.log.With("telegram_user", m.From.ID, "request_id", id)
	say := func(text string) { c.replyTo(ctx, m, text) }
	text := strings.TrimSpace(m.Text)
	switch {
	case settled:
		say("This question is already settled: nothing was sent.")
		return
	case text == "":
		say("Only text replies are read: nothing was sent.")
		return
	}
	appr, ok := r.Approver(Name, strconv.FormatInt(m.From.ID, 10))
	if !ok {
		log.Warn("reply from a Telegram user that is not a configured approver")
		say(fmt.Sprintf("You are not a configured approver (Telegram user %d): nothing was sent.", m.From.ID))
		return
	}
	if q.AskUser != nil {
		if _, whole := renderQuestion(q, c.now()); !whole {
			// An answer approves: not of a question Telegram cannot show.
			log.Warn("answer refused: the question is too long for Telegram")
			say("Nothing was sent. " + notWholeText(approverbot.Present(q, limits)))
			return
		}
		raw, err := approverbot.AnswerOf(q, approverbot.ParseAnswerLine(q, text))
		if err != nil {
			say(approverbot.NotSentText(err))
			return
		}
		o := approverbot.SubmitAnswer(ctx, r, log, q, raw, appr.ID, Name, "telegram user "+strconv.FormatInt(m.From.ID, 10))
		say(o.Text)
		return
	}
	if len(text) > messages.MaxFeedbackBytes {
		say(fmt.Sprintf("Feedback is too long (at most %d bytes): nothing was kept.", messages.MaxFeedbackBytes))
		return
	}
	if err := approverbot.Offered(q, approverbot.ChoiceReject, appr.ID); err != nil {
		say(approverbot.NotSentText(err))
		return
	}
	c.mu.Lock()
	c.drafts[draftKey{s.short, m.From.ID}] = text
	c.mu.Unlock()
	say("Feedback noted. Tap ❌ Deny or ⛔ Deny & stop to send it with your rejection; a new reply replaces it.")
}

// takeDraft returns and forgets a person's feedback on a question.
func (c *Channel) takeDraft(short string, userID int64) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := draftKey{short, userID}
	fb := c.drafts[k]
	delete(c.drafts, k)
	return fb
}

// tapAnswer answers an option button's tap.
func (c *Channel) tapAnswer(ctx context.Context, r approverbot.Responder, q approverbot.Question, appr approverbot.Approver, from int64, option string) approverbot.Submission {
	log := c.log.With("telegram_user", from, "request_id", q.Request.RequestID)
	n, err := strconv.Atoi(option)
	if err != nil {
		return approverbot.Submission{Text: "This button is not understood: nothing was sent."}
	}
	raw, err := approverbot.AnswerOf(q, []approverbot.Pick{{Question: 0, Options: []int{n}}})
	if err != nil {
		return approverbot.Submission{Text: approverbot.NotSentText(err)}
	}
	return approverbot.SubmitAnswer(ctx, r, log, q, raw, appr.ID, Name, "telegram user "+strconv.FormatInt(from, 10))
}

// replyTo answers a person's message in its chat, as a reply to it.
func (c *Channel) replyTo(ctx context.Context, m incoming, text string) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	err := c.post(ctx, m.Chat.ID, "sendMessage", replyMessageParams{ChatID: m.Chat.ID, Text: clip(text, maxAnswerChars*20),
		ReplyParameters: &replyParameters{MessageID: m.MessageID, AllowSendingWithoutReply: true}}, nil)
	if err != nil {
		c.log.Warn("could not answer a reply", "err", err)
	}
}

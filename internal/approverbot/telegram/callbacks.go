package telegram

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// errGarbled is callback data this bot did not make.
var errGarbled = errors.New("not a Signoff button")

// parseData splits callback data "<action>:<handle>".
func parseData(data string) (byte, string, error) {
	if len(data) < 3 || data[1] != ':' {
		return 0, "", errGarbled
	}
	if _, ok := choiceOf[data[0]]; !ok && data[0] != tapOption {
		return 0, "", errGarbled
	}
	return data[0], data[2:], nil
}

// handleTap answers one callback query: it maps the Telegram user to an
// approver, sends the answer and tells the user what came of it. Every
// query is answered (Telegram shows a spinner until then).
func (c *Channel) handleTap(ctx context.Context, r approverbot.Responder, cq callbackQuery) {
	log := c.log.With("telegram_user", cq.From.ID)
	action, short, err := parseData(cq.Data)
	if err != nil {
		log.Warn("tap with garbled callback data", "data_bytes", len(cq.Data))
		c.answer(ctx, cq.ID, "This button is not understood ("+err.Error()+"): nothing was sent.", true)
		return
	}
	option := ""
	if action == tapOption {
		var ok bool
		if short, option, ok = strings.Cut(short, ":"); !ok {
			c.answer(ctx, cq.ID, "This button is not understood ("+errGarbled.Error()+"): nothing was sent.", true)
			return
		}
	}
	s, q, chatID, html := c.tapped(short)
	if s == nil {
		log.Warn("tap on a question this run does not know")
		c.answer(ctx, cq.ID, "This button belongs to a question the bot no longer knows (sent by an earlier run, or settled long ago): nothing was sent.", true)
		return
	}
	id := q.Request.RequestID
	log = log.With("request_id", id)
	if cq.Message != nil && cq.Message.Chat.ID != chatID {
		log.Warn("tap from another chat than the question's")
		c.answer(ctx, cq.ID, "This button does not belong to this chat: nothing was sent.", true)
		return
	}
	appr, ok := r.Approver(Name, strconv.FormatInt(cq.From.ID, 10))
	if !ok {
		log.Warn("tap from a Telegram user that is not a configured approver")
		c.answer(ctx, cq.ID, fmt.Sprintf("You are not a configured approver (Telegram user %d): nothing was sent.", cq.From.ID), true)
		return
	}
	var o approverbot.Submission
	if action != tapDeny && action != tapDenyStop && q.Open() {
		if why := c.approvalRefusal(log, q, chatID); why != "" {
			c.answer(ctx, cq.ID, why, true)
			return
		}
	}
	if action == tapAlways && q.Open() {
		if why := c.confirmAlways(draftKey{short, cq.From.ID}, q); why != "" {
			c.answer(ctx, cq.ID, why, true)
			return
		}
	}
	switch action {
	case tapOption:
		o = c.tapAnswer(ctx, r, q, appr, cq.From.ID, option)
	case tapDeny, tapDenyStop:
		// The feedback this person replied with, if any.
		o = approverbot.Submit(ctx, r, log, q, choiceOf[action], appr.ID, Name, "telegram user "+strconv.FormatInt(cq.From.ID, 10), c.takeDraft(short, cq.From.ID))
	default:
		o = approverbot.Submit(ctx, r, log, q, choiceOf[action], appr.ID, Name, "telegram user "+strconv.FormatInt(cq.From.ID, 10), "")
	}
	c.answer(ctx, cq.ID, o.Text, !o.Applied)
	if o.Settled != nil && cq.Message != nil {
		// Settled elsewhere: make sure this message shows it, even if the
		// resolution never reached this bot (settled first, as Resolve).
		c.showTappedSettled(ctx, log, s, cq.Message, html, *o.Settled)
	}
}

// tapped returns the question sent under the handle short, with the chat
// it was sent to and its rendering, read under the lock; s is nil when
// this run sent no question under short.
func (c *Channel) tapped(short string) (s *sent, q approverbot.Question, chatID int64, html string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	s = c.byShort[short]
	if s == nil {
		return nil, approverbot.Question{}, 0, ""
	}
	return s, s.q, s.chatID, s.html
}

// approvalRefusal returns why a tap that approves the open question q, or
// answers it, sent to chatID, is not sent, or "". A tap right after the
// chat's messages moved may have been aimed at another question's button;
// and a question this channel cannot show whole is not approved, whatever
// button data came: the approver did not see all of it.
func (c *Channel) approvalRefusal(log *slog.Logger, q approverbot.Question, chatID int64) string {
	if why := c.guard.Refusal(chatKey(chatID)); why != "" {
		log.Info("approving tap held back: the chat just changed")
		return why
	}
	if _, whole := renderQuestion(q, c.now()); !whole {
		log.Warn("approval refused: the question is too long for Telegram")
		return clip("Nothing was sent. "+notWholeText(approverbot.Present(q, limits)), maxAnswerChars)
	}
	return ""
}

// showTappedSettled edits the tapped message m of s, rendered as html,
// into its settled form r, and records that s is settled and, once the
// edit succeeds, that it shows so.
func (c *Channel) showTappedSettled(ctx context.Context, log *slog.Logger, s *sent, m *message, html string, r messages.Resolved) {
	c.update(s, func(s *sent) {
		if s.settled.IsZero() {
			s.settled = c.now()
		}
	})
	ectx, cancel := context.WithTimeout(ctx, callTimeout)
	err := c.showSettled(ectx, m.Chat.ID, m.MessageID, html, r)
	cancel()
	if err != nil {
		log.Warn("could not update the settled question's message", "err", err)
		return
	}
	c.update(s, func(s *sent) { s.shown = true })
}

// alwaysConfirmWindow is how long a first tap on Always waits for the
// second that confirms it.
const alwaysConfirmWindow = time.Minute

// confirmAlways says why a tap on Always grants nothing yet, or "" when
// it confirms the same person's first tap on it: Always is a standing
// grant, never one tap away (red team AL F7: a tap meant for Session,
// beside it, granted for 30 days). The first tap says what it grants; a
// second within the tap guard's window (a double tap) is held back; one
// after it, within a minute, grants.
func (c *Channel) confirmAlways(k draftKey, q approverbot.Question) string {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	first, ok := c.alwaysTaps[k]
	switch {
	case !ok || now.Sub(first) > alwaysConfirmWindow:
		c.alwaysTaps[k] = now
		return alwaysAlert(approverbot.Present(q, limits).Always)
	case now.Sub(first) < c.alwaysMin:
		return fmt.Sprintf("Nothing sent: the second tap on Always came %.1f s after the first, too soon to have read what it grants. Read it, then tap ♾ Always again.", now.Sub(first).Seconds())
	}
	delete(c.alwaysTaps, k)
	return ""
}

// alwaysAlert is what the first tap on Always says, within the alert's
// 200 characters: the core's words first — what, for whom, for how long —
// the patterns quoted after them, so that a clip cuts patterns, never the
// core's words, and says it cut (red team AP F1: the pattern came first,
// and a long one left only the agent's words in the alert). A warning or
// a condition of the brokers', too long for the alert, is pointed to: the
// message above says it whole.
func alwaysAlert(o approverbot.Offer) string {
	head := "Nothing sent yet: tap ♾ Always again. " + o.Name() + " approves " + o.Count() + " " + o.Grantee() + ", " + o.Until
	if o.Warning != "" || o.Note != "" {
		head += " (⚠ read the warning in the message)"
	}
	calls := o.QuotedCalls()
	if calls == "" {
		return clip(head+".", maxAnswerChars)
	}
	whole := head + ": " + calls
	if length(whole) <= maxAnswerChars {
		return whole
	}
	const cut = " …(cut: the message lists them all)"
	if room := maxAnswerChars - length(head) - length(": "+cut); room > 8 {
		return head + ": " + strings.TrimSuffix(clip(calls, room), "…") + cut
	}
	return clip(head+"; the message lists the patterns.", maxAnswerChars)
}

// answer answers a callback query with text (an alert when alert is set).
func (c *Channel) answer(ctx context.Context, id, text string, alert bool) {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	err := c.api.call(ctx, "answerCallbackQuery", answerCallbackQueryParams{CallbackQueryID: id, Text: clip(text, maxAnswerChars), ShowAlert: alert}, nil)
	if err != nil {
		c.log.Warn("could not answer a tap", "err", err)
	}
}

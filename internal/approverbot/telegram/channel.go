package telegram

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/backoff"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Name is the channel's name (Approver.Channel of its answers).
const Name = "telegram"

// callTimeout bounds one Bot API call other than the long poll.
const callTimeout = 30 * time.Second

// Options are the optional parts of a [Channel].
type Options struct {
	// Logger receives the channel's logs (default slog.Default()).
	Logger *slog.Logger
	// HTTPClient calls the Bot API (default: a plain client; each call has
	// its own deadline).
	HTTPClient *http.Client
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Workers is how many taps are handled at once (default 4).
	Workers int
	// MaxRetryAfter is the longest retry_after one call sits out (default
	// 30 s); longer ones fail the call and the bot retries later.
	MaxRetryAfter time.Duration
	// MinBackoff and MaxBackoff bound the wait between failed polls
	// (default 500 ms and 30 s).
	MinBackoff, MaxBackoff time.Duration
	// TapGuard is how long after a change to a chat's messages an
	// approving tap there is refused ([approverbot.TapGuard]; default
	// [approverbot.DefaultTapGuard], negative: off).
	TapGuard time.Duration
}

// Channel is the Telegram channel. Create it with [New]; it implements
// [approverbot.Channel].
type Channel struct {
	cfg     Config
	api     *api
	log     *slog.Logger
	now     func() time.Time
	workers int
	minBack time.Duration
	maxBack time.Duration
	guard   *approverbot.TapGuard

	// epoch makes this run's handles differ from an earlier run's, so a
	// button of an old message is refused instead of misread.
	epoch string

	mu      sync.Mutex
	seq     uint64
	byID    map[string]*sent
	byShort map[string]*sent
	// drafts are feedback replies kept until their author taps Deny.
	drafts map[draftKey]string
	// alwaysTaps are when a person first tapped a question's Always, which
	// a second tap confirms (see confirmAlways); alwaysMin is the least
	// time between the two (the tap guard's window).
	alwaysTaps map[draftKey]time.Time
	alwaysMin  time.Duration
}

// sent is a question's message in Telegram.
type sent struct {
	short   string
	chatID  int64
	msgID   int64 // 0 until sent
	q       approverbot.Question
	html    string    // the question as rendered, for the settled edit
	settled time.Time // zero while open
	shown   bool      // the message shows the outcome
}

var _ approverbot.Channel = (*Channel)(nil)

// New returns the Telegram channel of cfg (cfg.Telegram must be set).
func New(cfg *approverbot.Config, o Options) (*Channel, error) {
	s, err := approverbot.Section[*Config](cfg, Name)
	if err != nil {
		return nil, err
	}
	tc := *s
	if tc.Token == "" {
		return nil, errors.New("telegram: token is required")
	}
	if tc.APIURL == "" {
		tc.APIURL = "https://api.telegram.org"
	}
	if _, ok := approverbot.HTTPURL(tc.APIURL); !ok {
		return nil, fmt.Errorf("telegram: api_url %q is not an http(s) URL", tc.APIURL)
	}
	for _, team := range cfg.Teams {
		if tc.Chats[team] == 0 {
			return nil, fmt.Errorf("telegram.chats: no Telegram chat for team %q", team)
		}
	}
	if tc.PollTimeout <= 0 {
		tc.PollTimeout = 30 * time.Second
	}
	o.Logger, o.Now = approverbot.DefaultLog(o.Logger, o.Now)
	o.Workers, o.MaxRetryAfter = approverbot.DefaultChat(o.Workers, o.MaxRetryAfter)
	o.MinBackoff, o.MaxBackoff = approverbot.DefaultBackoff(o.MinBackoff, o.MaxBackoff, 30*time.Second)
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	if o.TapGuard == 0 {
		o.TapGuard = approverbot.DefaultTapGuard
	}
	var e [3]byte
	_, _ = crand.Read(e[:])
	a, err := newAPI(strings.TrimRight(tc.APIURL, "/"), tc.Token, o.HTTPClient, o.MaxRetryAfter)
	if err != nil {
		return nil, fmt.Errorf("telegram: %w", err)
	}
	return &Channel{
		cfg:     tc,
		api:     a,
		log:     o.Logger.With("channel", "telegram"),
		now:     o.Now,
		workers: o.Workers,
		minBack: o.MinBackoff,
		maxBack: o.MaxBackoff,
		guard:   approverbot.NewTapGuard(o.TapGuard, o.Now),
		epoch:   hex.EncodeToString(e[:]),
		byID:    map[string]*sent{},
		byShort: map[string]*sent{},
		drafts:  map[draftKey]string{},

		alwaysTaps: map[draftKey]time.Time{},
		alwaysMin:  max(o.TapGuard, 0),
	}, nil
}

// Name implements [approverbot.Channel].
func (c *Channel) Name() string { return Name }

// CheckHealth implements [approverbot.Channel] with getMe: the token is
// valid and the Bot API is reachable.
func (c *Channel) CheckHealth(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	var me user
	return c.api.call(ctx, "getMe", struct{}{}, &me)
}

// Run implements [approverbot.Channel]: it long-polls getUpdates for
// callback queries until ctx is done, handing each to a worker; failed
// polls are retried with backoff (or after the retry_after the Bot API
// asks for).
func (c *Channel) Run(ctx context.Context, r approverbot.Responder) error {
	if r == nil {
		return errors.New("telegram: nil responder")
	}
	taps := make(chan update)
	wait := approverbot.ServeWorkers(ctx, c.workers, taps, func(u update) {
		switch {
		case u.CallbackQuery != nil:
			c.handleTap(ctx, r, *u.CallbackQuery)
		case isEditCommand(u.Message.Text):
			// Before replies: "/edit …" is never feedback or an answer.
			c.handleEdit(ctx, *u.Message)
		default:
			c.handleReply(ctx, r, *u.Message)
		}
	})
	defer wait()

	var offset int64
	failures := 0
	for ctx.Err() == nil {
		updates, err := c.getUpdates(ctx, offset)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			failures++
			wait := c.backoff(err, failures)
			c.log.Warn("getUpdates failed; polling again later", "err", err, "retry_in", wait)
			if backoff.Sleep(ctx, wait) != nil {
				break
			}
			continue
		}
		failures = 0
		for _, u := range updates {
			// Confirm every update, handled or not: one the bot cannot
			// use must not come back forever.
			offset = max(offset, u.UpdateID+1)
			if u.CallbackQuery == nil && u.Message == nil {
				continue
			}
			if u.Message != nil && c.servesChat(u.Message.Chat.ID) {
				// A message in the chat moves the questions on the screen.
				c.guard.Changed(chatKey(u.Message.Chat.ID))
			}
			select {
			case taps <- u:
			case <-ctx.Done():
			}
		}
	}
	return nil
}

func (c *Channel) getUpdates(ctx context.Context, offset int64) ([]update, error) {
	secs := int(c.cfg.PollTimeout / time.Second)
	ctx, cancel := context.WithTimeout(ctx, time.Duration(secs)*time.Second+callTimeout)
	defer cancel()
	var updates []update
	err := c.api.call(ctx, "getUpdates", getUpdatesParams{Offset: offset, Timeout: secs,
		AllowedUpdates: []string{"callback_query", "message"}}, &updates)
	return updates, err
}

// backoff is the wait after the n-th failed poll in a row: what a 429
// asks for, else exponential with jitter.
func (c *Channel) backoff(err error, n int) time.Duration {
	var ae *APIError
	if errors.As(err, &ae) && ae.RetryAfter > 0 {
		return ae.RetryAfter
	}
	return backoff.Policy{Min: c.minBack, Max: c.maxBack, Jitter: 0.5}.Delay(n)
}

// Ask implements [approverbot.Channel]: it sends the question to its
// team's chat with the inline keyboard, or edits the message already sent
// (a quorum approval was counted).
func (c *Channel) Ask(ctx context.Context, q approverbot.Question) error {
	chatID := c.cfg.Chats[q.Team]
	if chatID == 0 {
		return fmt.Errorf("telegram: no Telegram chat for team %q", q.Team)
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	c.prune()
	s := c.entry(q, chatID)
	html, whole := renderQuestion(q, c.now())
	var kb *inlineKeyboard
	if whole {
		kb = keyboard(s.short, approverbot.Offered(q, approverbot.ChoiceSession, "") == nil,
			approverbot.Offered(q, approverbot.ChoiceAlways, "") == nil)
		kb.InlineKeyboard = append(optionButtons(q, s.short), kb.InlineKeyboard...)
	} else {
		kb = partKeyboard(s.short, approverbot.WebLink(c.cfg.WebURL, q.Request.RequestID), q.NeedsStepUp())
	}
	noPreview := &linkPreviewOptions{IsDisabled: true}
	if msgID := c.messageOf(s); msgID != 0 {
		err := c.post(ctx, s.chatID, "editMessageText", editMessageTextParams{MessageID: msgID,
			sendMessageParams: sendMessageParams{ChatID: s.chatID, Text: html, ParseMode: "HTML", ReplyMarkup: kb, LinkPreviewOptions: noPreview}}, nil)
		switch {
		case err == nil || notModified(err):
			var prev int
			c.update(s, func(s *sent) { prev, s.q, s.html = s.q.Reminder, q, html })
			if q.Reminder > prev {
				return c.remind(ctx, s.chatID, msgID, q)
			}
			return nil
		case !messageGone(err):
			return err
		}
		// The message was deleted: send it again.
	}
	var m message
	if err := c.post(ctx, chatID, "sendMessage", sendMessageParams{ChatID: chatID, Text: html, ParseMode: "HTML",
		ReplyMarkup: kb, LinkPreviewOptions: noPreview}, &m); err != nil {
		return err
	}
	c.update(s, func(s *sent) { s.q, s.html, s.chatID, s.msgID = q, html, m.Chat.ID, m.MessageID })
	c.log.Debug("question sent", "request_id", q.Request.RequestID, "team", q.Team, "message_id", m.MessageID)
	return nil
}

// remind sends an escalation's reminder as a reply to the question's
// message: a reply notifies, an edit does not.
func (c *Channel) remind(ctx context.Context, chatID, msgID int64, q approverbot.Question) error {
	var p struct {
		ChatID          int64  `json:"chat_id"`
		Text            string `json:"text"`
		ReplyParameters struct {
			MessageID int64 `json:"message_id"`
		} `json:"reply_parameters"`
	}
	p.ChatID, p.Text, p.ReplyParameters.MessageID = chatID, approverbot.ReminderText(q), msgID
	return c.post(ctx, chatID, "sendMessage", p, nil)
}

// post makes a Bot API call that changes chat chatID's messages (sends or
// edits one), with the chat's tap guard raised while it is on its way.
func (c *Channel) post(ctx context.Context, chatID int64, method string, params, resp any) error {
	defer c.guard.Change(chatKey(chatID))()
	return c.api.call(ctx, method, params, resp)
}

// chatKey is a chat's key in the tap guard.
func chatKey(chatID int64) string { return strconv.FormatInt(chatID, 10) }

// Resolve implements [approverbot.Channel]: it edits the question's
// message to show the outcome, without the keyboard. A question this run
// never sent has no message to edit.
func (c *Channel) Resolve(ctx context.Context, r messages.Resolved) error {
	c.mu.Lock()
	s := c.byID[r.RequestID]
	var chatID, msgID int64
	var html string
	if s != nil && !s.shown && s.msgID != 0 {
		chatID, msgID, html = s.chatID, s.msgID, s.html
		// Settled from now on, before the edit shows it: a reply that
		// comes while the edit is on its way is refused, not kept as
		// feedback for a deny that can no longer be sent.
		if s.settled.IsZero() {
			s.settled = c.now()
		}
	}
	c.mu.Unlock()
	if msgID == 0 {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	if err := c.showSettled(ctx, chatID, msgID, html, r); err != nil {
		return err // a retry edits again: shown is not set
	}
	c.update(s, func(s *sent) { s.shown = true })
	return nil
}

// showSettled edits a message into its settled form.
func (c *Channel) showSettled(ctx context.Context, chatID, msgID int64, html string, r messages.Resolved) error {
	err := c.post(ctx, chatID, "editMessageText", editMessageTextParams{MessageID: msgID,
		sendMessageParams: sendMessageParams{ChatID: chatID, Text: renderSettled(html, r), ParseMode: "HTML", LinkPreviewOptions: &linkPreviewOptions{IsDisabled: true}}}, nil)
	if err == nil || notModified(err) || messageGone(err) {
		return nil
	}
	return err
}

// The callback data actions.
const (
	tapApprove  = 'a'
	tapSession  = 's'
	tapAlways   = 'w'
	tapDeny     = 'd'
	tapDenyStop = 'x'
)

// choiceOf maps a callback data action to the choice it stands for.
var choiceOf = map[byte]approverbot.Choice{
	tapApprove: approverbot.ChoiceOnce, tapSession: approverbot.ChoiceSession, tapAlways: approverbot.ChoiceAlways,
	tapDeny: approverbot.ChoiceReject, tapDenyStop: approverbot.ChoiceRejectStop,
}

// keyboard is a question's inline keyboard; the Session and Always
// buttons only when the question offers them.
func keyboard(short string, session, always bool) *inlineKeyboard {
	b := func(label string, action byte) inlineButton {
		return inlineButton{Text: label, CallbackData: string(action) + ":" + short}
	}
	row1 := []inlineButton{b("✅ Approve", tapApprove)}
	if session {
		row1 = append(row1, b("🕒 Session", tapSession))
	}
	if always {
		row1 = append(row1, b("♾ Always", tapAlways))
	}
	return &inlineKeyboard{InlineKeyboard: [][]inlineButton{row1, {b("❌ Deny", tapDeny), b("⛔ Deny & stop", tapDenyStop)}}}
}

// partKeyboard is the keyboard of a question too long to show whole: no
// approval, a button that opens the web page (when its address is
// configured; "Approve on the web page" when approving needs step-up), and
// the rejections.
func partKeyboard(short, webURL string, stepUp bool) *inlineKeyboard {
	b := func(label string, action byte) inlineButton {
		return inlineButton{Text: label, CallbackData: string(action) + ":" + short}
	}
	rows := [][]inlineButton{{b("❌ Deny", tapDeny), b("⛔ Deny & stop", tapDenyStop)}}
	if webURL != "" {
		label := "🌐 Open on the web page"
		if stepUp {
			label = "🔐 Approve on the web page"
		}
		rows = append([][]inlineButton{{{Text: label, URL: webURL}}}, rows...)
	}
	return &inlineKeyboard{InlineKeyboard: rows}
}

// entry returns the question's record, creating it (with a new handle)
// for a question not sent yet.
func (c *Channel) entry(q approverbot.Question, chatID int64) *sent {
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := c.byID[q.Request.RequestID]; s != nil {
		return s
	}
	c.seq++
	s := &sent{short: c.epoch + strconv.FormatUint(c.seq, 36), chatID: chatID, q: q}
	c.byID[q.Request.RequestID] = s
	c.byShort[s.short] = s
	return s
}

func (c *Channel) messageOf(s *sent) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return s.msgID
}

func (c *Channel) update(s *sent, f func(*sent)) {
	c.mu.Lock()
	f(s)
	c.mu.Unlock()
}

// Settled questions are remembered for a while, so a late tap gets
// "already decided by …"; open ones whose resolution never came are
// forgotten long after their expiry.
const (
	keepSettled = time.Hour
	keepExpired = time.Hour
)

func (c *Channel) prune() {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, s := range c.byID {
		if (!s.settled.IsZero() && now.Sub(s.settled) > keepSettled) ||
			(s.settled.IsZero() && !s.q.ExpiresAt.IsZero() && now.Sub(s.q.ExpiresAt) > keepExpired) {
			delete(c.byID, id)
			delete(c.byShort, s.short)
		}
	}
	for k := range c.drafts {
		if c.byShort[k.short] == nil {
			delete(c.drafts, k)
		}
	}
	for k := range c.alwaysTaps {
		if c.byShort[k.short] == nil {
			delete(c.alwaysTaps, k)
		}
	}
}

package slack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Name is the channel's name (Approver.Channel of its answers).
const Name = "slack"

// InteractionsPath is where Slack posts interaction payloads: set the app's
// Interactivity Request URL to https://<bot host>/slack/interactions.
const InteractionsPath = "/slack/interactions"

// Options are the optional parts of a [Channel].
type Options struct {
	// Logger receives the channel's logs (default slog.Default()).
	Logger *slog.Logger
	// HTTPClient calls Slack (default: a client with a 30 s timeout).
	HTTPClient *http.Client
	// Now is the clock (default time.Now); tests move it to check the
	// replay window.
	Now func() time.Time
	// Workers is how many clicks are handled at once (default 4).
	Workers int
	// MaxRetryAfter is the longest rate-limit wait one API call sits out
	// (default 30 s); longer ones fail the call and the bot retries later.
	MaxRetryAfter time.Duration
	// TapGuard is how long after a change to a channel's messages an
	// approving click there is refused ([approverbot.TapGuard]; default
	// [approverbot.DefaultTapGuard], negative: off).
	TapGuard time.Duration
}

// Channel is the Slack channel. Create it with [New]; it implements
// [approverbot.HTTPChannel].
type Channel struct {
	cfg     Config
	api     *api
	log     *slog.Logger
	now     func() time.Time
	workers int
	apiURL  *url.URL
	guard   *approverbot.TapGuard

	mu     sync.Mutex
	posted map[string]*postedQuestion // by request id

	// running is set while Run serves; clicks are refused before.
	running   atomic.Bool
	responder approverbot.ResponderSlot
	clicks    chan click
}

// postedQuestion is a question's message in Slack.
type postedQuestion struct {
	channel, ts string
	q           approverbot.Question
}

var _ approverbot.HTTPChannel = (*Channel)(nil)

// New returns the Slack channel of cfg (cfg.Slack must be set).
func New(cfg *approverbot.Config, o Options) (*Channel, error) {
	s, err := approverbot.Section[*Config](cfg, Name)
	if err != nil {
		return nil, err
	}
	sc := *s
	if sc.BotToken == "" || sc.SigningSecret == "" {
		return nil, errors.New("slack: bot_token and signing_secret are required")
	}
	if sc.APIURL == "" {
		sc.APIURL = "https://slack.com/api"
	}
	u, ok := approverbot.HTTPURL(sc.APIURL)
	if !ok {
		return nil, fmt.Errorf("slack: api_url %q is not an http(s) URL", sc.APIURL)
	}
	for _, team := range cfg.Teams {
		if sc.Channels[team] == "" {
			return nil, fmt.Errorf("slack.channels: no Slack channel for team %q", team)
		}
	}
	o.Logger, o.Now = approverbot.DefaultLog(o.Logger, o.Now)
	o.Workers, o.MaxRetryAfter = approverbot.DefaultChat(o.Workers, o.MaxRetryAfter)
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if o.TapGuard == 0 {
		o.TapGuard = approverbot.DefaultTapGuard
	}
	a, err := newAPI(strings.TrimRight(sc.APIURL, "/"), sc.BotToken, o.HTTPClient, o.MaxRetryAfter)
	if err != nil {
		return nil, fmt.Errorf("slack: %w", err)
	}
	return &Channel{
		cfg:     sc,
		api:     a,
		log:     o.Logger.With("channel", "slack"),
		now:     o.Now,
		workers: o.Workers,
		apiURL:  u,
		guard:   approverbot.NewTapGuard(o.TapGuard, o.Now),
		posted:  map[string]*postedQuestion{},
		clicks:  make(chan click, 64),
	}, nil
}

// Name implements [approverbot.Channel].
func (c *Channel) Name() string { return Name }

// Register implements [approverbot.HTTPChannel]: it serves POST
// [InteractionsPath].
func (c *Channel) Register(mux *http.ServeMux) {
	mux.HandleFunc("POST "+InteractionsPath, c.serveInteraction)
}

// Run implements [approverbot.Channel]: it handles the clicks the
// interactions endpoint accepted until ctx is done, then waits for the ones
// in progress.
func (c *Channel) Run(ctx context.Context, r approverbot.Responder) error {
	if r == nil {
		return errors.New("slack: nil responder")
	}
	c.responder.Set(r)
	c.running.Store(true)
	defer c.running.Store(false)
	wait := approverbot.ServeWorkers(ctx, c.workers, c.clicks, func(k click) { c.handleClick(ctx, r, k) })
	<-ctx.Done()
	wait()
	return nil
}

// CheckHealth implements [approverbot.Channel] with auth.test: the token is
// valid and Slack is reachable.
func (c *Channel) CheckHealth(ctx context.Context) error {
	var resp authTestResp
	return c.api.call(ctx, "auth.test", struct{}{}, &resp)
}

// Ask implements [approverbot.Channel]: it posts the question to its team's
// channel, or updates the message already posted (a quorum approval was
// counted).
func (c *Channel) Ask(ctx context.Context, q approverbot.Question) error {
	channel := c.cfg.Channels[q.Team]
	if channel == "" {
		return fmt.Errorf("slack: no Slack channel for team %q", q.Team)
	}
	c.prune()
	id := q.Request.RequestID
	msg := postMessageReq{Channel: channel, Text: fallbackText(q), Blocks: questionBlocks(q, c.now(), c.cfg.WebURL)}
	if p := c.lookup(id); p != nil {
		msg.Channel, msg.TS = p.channel, p.ts
		err := c.post(ctx, p.channel, "chat.update", msg, &postMessageResp{})
		var ae *APIError
		switch {
		case err == nil:
			c.store(id, &postedQuestion{channel: p.channel, ts: p.ts, q: q})
			if q.Reminder > p.q.Reminder {
				return c.remind(ctx, p.channel, p.ts, q)
			}
			return nil
		case errors.As(err, &ae) && ae.Code == "message_not_found":
			// Someone deleted the message: post it again below.
			msg.TS = ""
			msg.Channel = channel
		default:
			return err
		}
	}
	no := false
	msg.UnfurlLinks, msg.UnfurlMedia = &no, &no
	var resp postMessageResp
	if err := c.post(ctx, msg.Channel, "chat.postMessage", msg, &resp); err != nil {
		return err
	}
	c.store(id, &postedQuestion{channel: resp.Channel, ts: resp.TS, q: q})
	c.log.Debug("question posted", "request_id", id, "team", q.Team, "ts", resp.TS)
	return nil
}

// remind posts an escalation's reminder as a reply in the question's
// thread, shown in the channel too, so that it notifies like a new message.
func (c *Channel) remind(ctx context.Context, channel, ts string, q approverbot.Question) error {
	no := false
	msg := postMessageReq{Channel: channel, ThreadTS: ts, ReplyBroadcast: true, UnfurlLinks: &no, UnfurlMedia: &no,
		Text: approverbot.ReminderText(q)}
	return c.post(ctx, channel, "chat.postMessage", msg, &postMessageResp{})
}

// post makes a Web API call that changes channel's messages (posts or
// updates one), with the channel's tap guard raised while it is on its way.
func (c *Channel) post(ctx context.Context, channel, method string, req, resp any) error {
	defer c.guard.Change(channel)()
	return c.api.call(ctx, method, req, resp)
}

// Resolve implements [approverbot.Channel]: it replaces the question's
// buttons with the outcome. A question this run never posted has no
// message to update.
func (c *Channel) Resolve(ctx context.Context, r messages.Resolved) error {
	p := c.lookup(r.RequestID)
	if p == nil {
		return nil
	}
	if err := c.showSettled(ctx, p.channel, p.ts, p.q, r); err != nil {
		return err
	}
	c.mu.Lock()
	if c.posted[r.RequestID] == p {
		delete(c.posted, r.RequestID)
	}
	c.mu.Unlock()
	return nil
}

// showSettled updates a message to show the outcome, without buttons.
func (c *Channel) showSettled(ctx context.Context, channel, ts string, q approverbot.Question, r messages.Resolved) error {
	msg := postMessageReq{Channel: channel, TS: ts, Text: settledText(q, r), Blocks: settledBlocks(q, r)}
	return c.post(ctx, channel, "chat.update", msg, &postMessageResp{})
}

func (c *Channel) lookup(id string) *postedQuestion {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.posted[id]
}

func (c *Channel) store(id string, p *postedQuestion) {
	c.mu.Lock()
	c.posted[id] = p
	c.mu.Unlock()
}

// forgetAfter is how long past its expiry a question's message is
// remembered when its resolution never arrived.
const forgetAfter = time.Hour

// prune forgets messages of questions long past their expiry.
func (c *Channel) prune() {
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, p := range c.posted {
		if !p.q.ExpiresAt.IsZero() && now.Sub(p.q.ExpiresAt) > forgetAfter {
			delete(c.posted, id)
		}
	}
}

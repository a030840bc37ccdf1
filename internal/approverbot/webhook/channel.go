package webhook

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/card"
	"github.com/signoff-dev/signoff/internal/httpapi"
	"github.com/signoff-dev/signoff/pkg/backoff"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Name is the channel's name (Approver.Channel of its answers).
const Name = "webhook"

// Options are the optional parts of a [Channel].
type Options struct {
	// Logger receives the channel's logs (default slog.Default()).
	Logger *slog.Logger
	// HTTPClient posts the events (default: a client with a 10 s timeout).
	HTTPClient *http.Client
	// Now is the clock (default time.Now); tests move it.
	Now func() time.Time
	// MaxAttempts is how often one event is tried (default 4).
	MaxAttempts int
	// MinBackoff and MaxBackoff bound the wait between attempts (default
	// 500 ms and 10 s); a Retry-After within MaxBackoff is honoured.
	MinBackoff, MaxBackoff time.Duration
}

// Channel is the webhook channel. Create it with [New]; it implements
// [approverbot.HTTPChannel].
type Channel struct {
	url    string
	host   string // for logs: the URL may carry a credential
	secret string
	api    *httpapi.Client
	log    *slog.Logger
	now    func() time.Time

	responder approverbot.ResponderSlot
	replays   replayCache

	healthMu sync.Mutex
	lastErr  error
}

var _ approverbot.HTTPChannel = (*Channel)(nil)

// New returns the webhook channel of cfg (cfg.Webhook must be set).
func New(cfg *approverbot.Config, o Options) (*Channel, error) {
	wc, err := approverbot.Section[*Config](cfg, Name)
	if err != nil {
		return nil, err
	}
	u, ok := approverbot.HTTPURL(wc.URL)
	if !ok {
		return nil, errors.New("webhook: url is not an http(s) URL")
	}
	if len(wc.Secret) < 16 {
		return nil, errors.New("webhook: the secret must be at least 16 bytes")
	}
	o.Logger, o.Now = approverbot.DefaultLog(o.Logger, o.Now)
	o.MinBackoff, o.MaxBackoff = approverbot.DefaultBackoff(o.MinBackoff, o.MaxBackoff, 10*time.Second)
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 4
	}
	api, err := httpapi.New(httpapi.Config{API: "webhook", BaseURL: wc.URL, HTTPClient: o.HTTPClient,
		MaxAttempts: o.MaxAttempts, Backoff: backoff.Policy{Min: o.MinBackoff, Max: o.MaxBackoff, Jitter: 0.5},
		// A Retry-After is honoured up to MaxBackoff: the delivery
		// pump, not one call, waits out a receiver that asks for more.
		MaxRetryAfter: o.MaxBackoff, ClampRetryAfter: true,
		MaxResponseBytes: snippetBytes + 1<<20})
	if err != nil {
		return nil, fmt.Errorf("webhook: %w", err)
	}
	return &Channel{
		url: wc.URL, host: u.Scheme + "://" + u.Host, secret: wc.Secret,
		api: api, log: o.Logger.With("channel", "webhook"), now: o.Now,
	}, nil
}

// Name implements [approverbot.Channel].
func (c *Channel) Name() string { return Name }

// Run implements [approverbot.Channel]: responses are taken while it runs.
func (c *Channel) Run(ctx context.Context, r approverbot.Responder) error {
	if r == nil {
		return errors.New("webhook: nil responder")
	}
	c.responder.Set(r)
	defer c.responder.Set(nil)
	<-ctx.Done()
	return nil
}

// CheckHealth implements [approverbot.Channel]: it reports the failure of
// the latest delivery, if it failed. (It sends nothing: a probe would be
// an event the receiver has to understand.)
func (c *Channel) CheckHealth(context.Context) error {
	c.healthMu.Lock()
	defer c.healthMu.Unlock()
	return c.lastErr
}

// QuestionEvent is an approval_needed delivery: the wire message (with the
// brokers' own `offers`), plus what the receiving system needs to offer the
// right answers, as every other channel shows them.
type QuestionEvent struct {
	messages.ApprovalNeeded
	Choices Choices `json:"choices"`
	// Warnings are the card's warnings, for a receiver that shows the
	// question to people: disguised text (bidi, invisible and control
	// characters, words mixing scripts, host names outside ASCII) and
	// argument keys a person could misread. Absent when there are none.
	Warnings []string `json:"warnings,omitempty"`
	// ArgumentKeys are the keys of the call's arguments in the order the
	// agent sent them, repeats included (the JSON of request.arguments
	// holds them too; a decoder that keeps one value per key does not).
	ArgumentKeys []string `json:"argument_keys,omitempty"`
	// Identity is how the broker knows the agent, for people:
	// "verified" (its NATS credentials are that agent's) or "declared,
	// not verified" (request.identity says which; see the card's
	// IdentityText).
	Identity string `json:"identity"`
}

// Choices are the core's view of a question's answers.
type Choices struct {
	// NoApproval, on a question whose approval needs step-up (a passkey
	// or security key, which a webhook cannot ask for), says so and where
	// to approve it instead: Actions then hold the rejections only.
	NoApproval string `json:"no_approval,omitempty"`
	// Actions are the choices the question offers (approve, session,
	// always, reject_soft, reject_hard), as /webhook/respond takes them
	// (always: "scope": "always"); "answer" on an ask-user question
	// (ask_user is set: "answer": … with "approved": true).
	Actions []string `json:"actions"`
	// Session and Always say in words what those answers grant, the
	// core's words first and the patterns quoted after them (Offer.Said:
	// no pattern can close its quotes and write the grant's words); when
	// one is not offered it is empty and SessionNotOffered or
	// AlwaysNotOffered says why.
	Session           string `json:"session,omitempty"`
	SessionNotOffered string `json:"session_not_offered,omitempty"`
	Always            string `json:"always,omitempty"`
	AlwaysNotOffered  string `json:"always_not_offered,omitempty"`
	// SessionScope and AlwaysScope say, for an offered answer, for whom,
	// where and until when it grants ("for agent pod-7, in any working
	// directory (this call's: /w), for 30 days or until revoked; warning:
	// …"); empty when not offered.
	SessionScope string `json:"session_scope,omitempty"`
	AlwaysScope  string `json:"always_scope,omitempty"`
	// SessionGrant and AlwaysGrant are the same in pieces (nil when not
	// offered): the scope the answer sends, the tool, the patterns
	// (empty: every call of the tool), and the session or agent.
	SessionGrant *OfferedGrant `json:"session_grant,omitempty"`
	AlwaysGrant  *OfferedGrant `json:"always_grant,omitempty"`
}

// OfferedGrant is what a Session or Always answer would grant.
type OfferedGrant struct {
	Scope     messages.Scope `json:"scope"`
	Tool      string         `json:"tool"`
	Patterns  []string       `json:"patterns,omitempty"`
	SessionID string         `json:"session_id,omitempty"`
	AgentID   string         `json:"agent_id,omitempty"`
}

func offeredGrant(o approverbot.Offer) *OfferedGrant {
	if !o.Offered {
		return nil
	}
	return &OfferedGrant{Scope: o.Scope, Tool: o.Tool, Patterns: o.Patterns, SessionID: o.Session, AgentID: o.Agent}
}

// Ask implements [approverbot.Channel]: it posts the question with its
// offers.
func (c *Channel) Ask(ctx context.Context, q approverbot.Question) error {
	msg := QuestionEvent{ApprovalNeeded: q.ApprovalNeeded}
	msg.V, msg.Type = messages.Version, "approval_needed"
	v := approverbot.Present(q, approverbot.DefaultLimits)
	msg.Warnings, msg.ArgumentKeys, msg.Identity = v.Warnings, v.ArgKeys, v.Identity
	msg.Choices = Choices{Actions: []string{}, Session: v.Session.Said(), SessionNotOffered: v.Session.WhyNot,
		Always: v.Always.Said(), AlwaysNotOffered: v.Always.WhyNot,
		SessionScope: v.Session.ScopeLine(), AlwaysScope: v.Always.ScopeLine(),
		SessionGrant: offeredGrant(v.Session), AlwaysGrant: offeredGrant(v.Always)}
	for _, ch := range approverbot.Choices {
		if approverbot.Offered(q, ch, "") == nil {
			msg.Choices.Actions = append(msg.Choices.Actions, string(ch))
		}
	}
	msg.Choices.NoApproval = v.WhyNotHere("a webhook")
	if q.AskUser != nil && !q.NeedsStepUp() && approverbot.Offered(q, approverbot.ChoiceOnce, "") == nil {
		msg.Choices.Actions = append(msg.Choices.Actions, "answer")
	}
	return c.deliver(ctx, msg.Type, msg.Request.RequestID, msg)
}

// Resolve implements [approverbot.Channel]: it posts the resolution.
func (c *Channel) Resolve(ctx context.Context, r messages.Resolved) error {
	r.V, r.Type = messages.Version, "resolved"
	return c.deliver(ctx, r.Type, r.RequestID, r)
}

// snippetBytes is how much of a refusal's body its error quotes.
const snippetBytes = 256

// deliver posts one event, retrying what may succeed later: network
// errors, 408, 429 and 5xx, after max(Retry-After, backoff).
func (c *Channel) deliver(ctx context.Context, event, requestID string, v any) error {
	body, err := marshalVisible(v)
	if err != nil {
		return fmt.Errorf("webhook: encode %s: %w", event, err)
	}
	var id [8]byte
	_, _ = rand.Read(id[:])
	delivery := hex.EncodeToString(id[:])
	resp, err := c.api.Do(ctx, httpapi.Request{
		Method: event, URL: c.url, Body: body,
		Header: http.Header{
			"Content-Type": {"application/json"},
			"User-Agent":   {"signoff-approver-bot"},
			HeaderEvent:    {event},
			HeaderDelivery: {delivery},
		},
		// Signed per attempt: a retry after minutes must not look stale.
		Prepare: func(r *http.Request) { Sign(r.Header, c.secret, c.now(), body) },
		Retry:   httpapi.RetryTransient,
		OnRetry: func(attempt int, resp *httpapi.Response, err error, wait time.Duration) {
			c.log.Warn("webhook delivery failed; retrying", "event", event, "request_id", requestID,
				"attempt", attempt, "retry_in", wait, "err", failure(resp, err))
		},
	})
	if err == nil && resp.Status/100 == 2 {
		c.setHealth(nil)
		return nil
	}
	var last error
	var he *httpapi.Error
	switch {
	case errors.As(err, &he) && he.Ctx != nil:
		// Stopped, not failed: say so, whatever the last attempt got.
		last = he.Ctx
	case errors.As(err, &he):
		last = he.Net // without the URL, which may hold a credential
	case err != nil:
		last = err
	default:
		last = failure(resp, nil)
	}
	err = fmt.Errorf("webhook: %s for %s not delivered to %s: %w", event, requestID, c.host, last)
	c.setHealth(err)
	return err
}

// failure describes a failed attempt: its network error, "HTTP 503" for
// an answer that is retried, or the status and the start of the body for
// a refusal.
func failure(resp *httpapi.Response, err error) error {
	switch {
	case err != nil:
		return err
	case resp.Retried:
		return fmt.Errorf("HTTP %d", resp.Status)
	}
	snippet := resp.Body[:min(len(resp.Body), snippetBytes)]
	return fmt.Errorf("HTTP %d: %s", resp.Status, strings.TrimSpace(card.OneLine(string(snippet))))
}

func (c *Channel) setHealth(err error) {
	c.healthMu.Lock()
	c.lastErr = err
	c.healthMu.Unlock()
}

// marshalVisible is v as JSON with every character the card escapes (bidi
// controls, invisible and control characters; see card.Hidden) written as
// a \u escape: the same JSON strings, but no byte of the body hides or
// reorders text in a log, a terminal or a receiver that shows it as is.
func marshalVisible(v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if !bytes.ContainsFunc(body, func(r rune) bool { return r >= 0x80 && card.Hidden(r) }) {
		return body, nil
	}
	out := make([]byte, 0, len(body)+64)
	for _, r := range string(body) {
		if r < 0x80 || !card.Hidden(r) {
			out = utf8.AppendRune(out, r)
			continue
		}
		for _, u := range utf16.Encode([]rune{r}) {
			out = fmt.Appendf(out, `\u%04x`, u)
		}
	}
	return out, nil
}

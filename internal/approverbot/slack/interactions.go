package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/card"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// maxInteractionBytes bounds an interaction request. A block_actions
// payload embeds the whole message, which Slack bounds well below this.
const maxInteractionBytes = 1 << 20

// click is a verified button click, queued for a worker.
type click struct {
	user        string // Slack user id
	action      string
	requestID   string
	responseURL string
	channel     string // the message's channel
	ts          string // the message's ts
	triggerID   string // opens a modal, for 3 seconds

	// submitted is set for a modal's submission: its feedback (a Deny),
	// its picks and the answer they make (Answer), or the edited text
	// (Edit & approve…).
	submitted bool
	feedback  string
	picks     []approverbot.Pick
	answer    json.RawMessage
	edited    string
}

// interactionPayload is the part of a block_actions payload the channel
// reads (https://docs.slack.dev/reference/interaction-payloads/block_actions-payload).
type interactionPayload struct {
	Type string `json:"type"`
	User struct {
		ID string `json:"id"`
	} `json:"user"`
	Container struct {
		Type      string `json:"type"`
		MessageTS string `json:"message_ts"`
		ChannelID string `json:"channel_id"`
	} `json:"container"`
	Channel struct {
		ID string `json:"id"`
	} `json:"channel"`
	Message *struct {
		TS string `json:"ts"`
	} `json:"message"`
	ResponseURL string `json:"response_url"`
	TriggerID   string `json:"trigger_id"`
	Actions     []struct {
		Type     string `json:"type"`
		ActionID string `json:"action_id"`
		Value    string `json:"value"`
	} `json:"actions"`
}

// serveInteraction takes one interaction request: it authenticates it,
// parses it, queues the click and acknowledges at once (Slack wants an
// answer within 3 seconds; the brokers may take longer).
func (c *Channel) serveInteraction(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxInteractionBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("slack interaction: body larger than %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "slack interaction: cannot read body", http.StatusBadRequest)
		return
	}
	if err := Verify(c.cfg.SigningSecret, r.Header, body, c.now()); err != nil {
		c.log.Warn("refused an unauthenticated interaction request", "err", err, "remote", r.RemoteAddr)
		http.Error(w, "slack interaction: "+err.Error(), http.StatusUnauthorized)
		return
	}
	k, err := parseInteraction(body)
	var fe *formError
	if errors.As(err, &fe) {
		writeFormError(w, fe)
		return
	}
	if errors.Is(err, errLinkClick) {
		w.WriteHeader(http.StatusOK)
		return
	}
	if err != nil {
		c.log.Warn("refused a garbled interaction", "err", err)
		http.Error(w, "slack interaction: "+err.Error(), http.StatusBadRequest)
		return
	}
	resp := c.responder.Get()
	if !c.running.Load() || resp == nil {
		http.Error(w, "slack interaction: the approver bot is starting; try again", http.StatusServiceUnavailable)
		return
	}
	if k.submitted && k.action == actionEdit {
		// Answered now, within Slack's 3 seconds: the modal stays open
		// with a problem, or shows the outcome.
		c.serveEdit(w, r, resp, k)
		return
	}
	if k.submitted && k.action == actionAnswer {
		if err := checkAnswerForm(resp, &k); err != nil {
			errors.As(err, &fe)
			writeFormError(w, fe)
			return
		}
	}
	select {
	case c.clicks <- k:
		w.WriteHeader(http.StatusOK)
	default:
		http.Error(w, "slack interaction: too many clicks in progress; try again", http.StatusServiceUnavailable)
	}
}

// parseInteraction reads a block_actions click out of a request body.
func parseInteraction(body []byte) (click, error) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return click{}, fmt.Errorf("body is not application/x-www-form-urlencoded: %v", err)
	}
	raw := form.Get("payload")
	if raw == "" {
		return click{}, errors.New("body has no payload field")
	}
	var p interactionPayload
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return click{}, fmt.Errorf("payload is not valid JSON: %v", err)
	}
	if p.Type == "view_submission" {
		if err := messages.ValidateToken("user.id", p.User.ID); err != nil {
			return click{}, fmt.Errorf("view_submission payload: %v", err)
		}
		return parseSubmission([]byte(raw), p.User.ID)
	}
	if p.Type != "block_actions" {
		return click{}, fmt.Errorf("unsupported interaction type %q; this endpoint handles block_actions and view_submission", p.Type)
	}
	if len(p.Actions) == 0 {
		return click{}, errors.New("block_actions payload has no action")
	}
	if err := messages.ValidateToken("user.id", p.User.ID); err != nil {
		return click{}, fmt.Errorf("block_actions payload: %v", err)
	}
	a := p.Actions[0]
	if a.ActionID == actionOpenWeb {
		// The link button: Slack opened the page; nothing to answer.
		return click{}, errLinkClick
	}
	if _, ok := choiceOf[a.ActionID]; !ok && a.ActionID != actionAnswer && a.ActionID != actionEdit {
		return click{}, fmt.Errorf("unknown action_id %q: not a Signoff button", card.Clip(a.ActionID, 64))
	}
	if err := messages.ValidateToken("actions[0].value (request id)", a.Value); err != nil {
		return click{}, fmt.Errorf("block_actions payload: %v", err)
	}
	k := click{user: p.User.ID, action: a.ActionID, requestID: a.Value, responseURL: p.ResponseURL,
		channel: p.Container.ChannelID, ts: p.Container.MessageTS, triggerID: p.TriggerID}
	if k.channel == "" {
		k.channel = p.Channel.ID
	}
	if k.ts == "" && p.Message != nil {
		k.ts = p.Message.TS
	}
	return k, nil
}

// handleClick answers one click: it maps the Slack user to an approver,
// sends the answer and tells the user what came of it.
func (c *Channel) handleClick(ctx context.Context, r approverbot.Responder, k click) {
	log := c.log.With("request_id", k.requestID, "slack_user", k.user, "action", k.action)
	appr, ok := r.Approver(Name, k.user)
	if !ok {
		log.Warn("click from a Slack user that is not a configured approver")
		c.tell(ctx, k, "You are not a configured approver (Slack user "+k.user+"): nothing was sent. "+
			"Ask an admin to map your Slack user to an approver in the bot's config.")
		return
	}
	if why := notWhole(r, k); why != "" {
		log.Warn("approval refused: the question is too long for Slack")
		c.tell(ctx, k, "Nothing was sent. "+why)
		return
	}
	if ch, ok := choiceOf[k.action]; ok && ch.Approves() && !k.submitted {
		// An approval right after the channel's messages moved may have
		// been aimed at another question's button.
		if why := c.guard.Refusal(k.channel); why != "" {
			log.Info("approving click held back: the channel just changed")
			c.tell(ctx, k, why)
			return
		}
	}
	if k.action == actionEdit && !k.submitted {
		c.openEditor(ctx, r, k, appr.ID)
		return
	}
	q, ok := r.Lookup(k.requestID)
	if !ok {
		q.Request.RequestID = k.requestID
	}
	var o approverbot.Submission
	switch {
	case k.submitted:
		o = c.handleSubmission(ctx, r, log, q, appr, k)
	case ok && q.Open() && opensModal(k.action) && approverbot.Offered(q, modalChoice(k.action), appr.ID) == nil:
		err := c.openModal(ctx, q, k)
		if err == nil {
			return // the form's submission answers
		}
		if k.action == actionAnswer {
			log.Warn("could not open the answer form", "err", err)
			c.tell(ctx, k, "Could not open the answer form ("+err.Error()+"): nothing was sent. Try again, or answer on another channel.")
			return
		}
		// A rejection needs no words: deny without feedback rather than not at all.
		log.Warn("could not open the feedback form; denying without feedback", "err", err)
		o = approverbot.Submit(ctx, r, log, q, choiceOf[k.action], appr.ID, Name, "slack user "+k.user, "")
	case k.action == actionAnswer:
		o = approverbot.SubmitAnswer(ctx, r, log, q, nil, appr.ID, Name, "slack user "+k.user)
	default:
		o = approverbot.Submit(ctx, r, log, q, choiceOf[k.action], appr.ID, Name, "slack user "+k.user, "")
	}
	c.tell(ctx, k, o.Text)
	if o.Settled != nil && k.channel != "" && k.ts != "" {
		// Settled elsewhere: make sure this message shows it, even if the
		// resolution never reached this bot.
		if err := c.showSettled(ctx, k.channel, k.ts, q, *o.Settled); err != nil {
			log.Warn("could not update the settled question's message", "err", err)
		}
	}
}

// responseMessage is what the channel posts to a response_url.
type responseMessage struct {
	ResponseType    string `json:"response_type"`
	ReplaceOriginal bool   `json:"replace_original"`
	Text            string `json:"text"`
}

// tell shows text to the clicking user only: through the payload's
// response_url, else as an ephemeral message.
func (c *Channel) tell(ctx context.Context, k click, text string) {
	text = escapeMrkdwn(text)
	// The ephemeral message shows at the bottom, moving the others for
	// this user. It answers the user's own click, so it counts from when
	// it is sent rather than holding clicks back while it is on its way.
	c.guard.Changed(k.channel)
	if k.responseURL != "" {
		if !c.responseURLAllowed(k.responseURL) {
			c.log.Warn("ignoring a response_url outside Slack", "request_id", k.requestID)
		} else {
			err := c.api.postResponseURL(ctx, k.responseURL, responseMessage{ResponseType: "ephemeral", Text: text})
			if err == nil {
				return
			}
			c.log.Warn("response_url failed; trying an ephemeral message", "request_id", k.requestID, "err", err)
		}
	}
	if k.channel == "" {
		return
	}
	if err := c.api.call(ctx, "chat.postEphemeral", ephemeralReq{Channel: k.channel, User: k.user, Text: text}, nil); err != nil {
		c.log.Warn("could not tell the user", "request_id", k.requestID, "err", err)
	}
}

// responseURLAllowed says whether the channel may post to u: Slack's own
// hosts over HTTPS, or the host of the configured API URL (a Slack-
// compatible gateway, or a test server). A signed payload is trusted, but
// the bot still never posts where Slack would not send it.
func (c *Channel) responseURLAllowed(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return false
	}
	if u.Scheme == c.apiURL.Scheme && u.Host == c.apiURL.Host {
		return true
	}
	host := u.Hostname()
	return u.Scheme == "https" && (host == "slack.com" || strings.HasSuffix(host, ".slack.com") ||
		host == "slack-gov.com" || strings.HasSuffix(host, ".slack-gov.com"))
}

// writeFormError answers a view_submission with an error shown under a
// block of the form (response_action "errors").
func writeFormError(w http.ResponseWriter, fe *formError) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"response_action": "errors", "errors": map[string]string{fe.block: fe.msg}})
}

// errLinkClick: the click was on the link to the web page, which Slack
// reports too; there is nothing to answer.
var errLinkClick = errors.New("a click on the web page link")

// notWhole says why click k may not approve: it approves (or opens the
// editor of an approval) a question Slack cannot show whole; "" otherwise.
// Whatever a client sends, an approver approves only what they could read.
func notWhole(r approverbot.Responder, k click) string {
	if c, ok := choiceOf[k.action]; ok && !c.Approves() {
		return ""
	}
	q, ok := r.Lookup(k.requestID)
	if !ok || !q.Open() {
		return ""
	}
	return approverbot.Present(q, limits).WhyNotHere("Slack")
}

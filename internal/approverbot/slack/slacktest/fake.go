package slacktest

import (
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/signoff-dev/signoff/internal/httpapi/httpapitest"
)

// Options shape a fake Slack.
type Options struct {
	// Token is the bot token the fake accepts (default "xoxb-test").
	Token string
	// Channels are the channel ids that exist; posting elsewhere fails with
	// channel_not_found.
	Channels []string
}

// Message is a message as the fake received it.
type Message struct {
	Channel string
	TS      string
	Text    string
	Blocks  []json.RawMessage
	// User is the recipient of an ephemeral message.
	User string
	// ThreadTS is the message a thread reply answers ("" for a message in
	// the channel); Broadcast says the reply is shown in the channel too.
	ThreadTS  string
	Broadcast bool
}

// Response is what was posted to an interaction's response_url.
type Response struct {
	// Message is the message whose interaction the response_url belongs to.
	Message         Message
	ResponseType    string
	ReplaceOriginal bool
	DeleteOriginal  bool
	Text            string
	Blocks          []json.RawMessage
}

// Server is a fake Slack. Its channels receive, in order, every accepted
// call; a test that does not read them may block the fake after 1,000.
// A rate limit answers HTTP 429 with Retry-After, as Slack's limiter does.
type Server struct {
	httpapitest.Server
	token string

	mu        sync.Mutex
	channels  map[string]bool
	msgs      map[string]Message // by ts
	seq       int
	responses map[string]*responseURL
	triggers  map[string]time.Time // trigger_id -> issued (Click)

	// Posted receives chat.postMessage calls.
	Posted chan Message
	// Updated receives chat.update calls.
	Updated chan Message
	// Ephemeral receives chat.postEphemeral calls.
	Ephemeral chan Message
	// Responses receives posts to response_url.
	Responses chan Response
	// Opened receives views.open calls (modals).
	Opened chan View
}

type responseURL struct {
	msg  Message
	uses int
}

// New starts a fake Slack; it stops when Close is called.
func New(o Options) *Server {
	if o.Token == "" {
		o.Token = "xoxb-test"
	}
	s := &Server{
		token:     o.Token,
		channels:  map[string]bool{},
		msgs:      map[string]Message{},
		responses: map[string]*responseURL{},
		Posted:    make(chan Message, 1000),
		Updated:   make(chan Message, 1000),
		Ephemeral: make(chan Message, 1000),
		Responses: make(chan Response, 1000),
		Opened:    make(chan View, 1000),
		triggers:  map[string]time.Time{},
	}
	for _, c := range o.Channels {
		s.channels[c] = true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/{method}", s.serveAPI)
	mux.HandleFunc("POST /_response/{id}", s.serveResponseURL)
	s.Start(mux)
	return s
}

// APIURL is the Web API base URL to configure (slack.api_url).
func (s *Server) APIURL() string { return s.URL() + "/api" }

// Message returns the current state of the message with ts.
func (s *Server) Message(ts string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.msgs[ts]
	return m, ok
}

// reply writes a Web API answer: HTTP 200 with {"ok":…} as Slack does, for
// errors too.
func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, code string, details ...string) {
	body := map[string]any{"ok": false, "error": code}
	if len(details) > 0 {
		body["response_metadata"] = map[string]any{"messages": details}
	}
	reply(w, body)
}

// messageArgs are the arguments of chat.postMessage, chat.update and
// chat.postEphemeral that the fake models.
type messageArgs struct {
	Channel string            `json:"channel"`
	TS      string            `json:"ts"`
	Text    string            `json:"text"`
	Blocks  []json.RawMessage `json:"blocks"`
	User    string            `json:"user"`
	// ThreadTS and ReplyBroadcast (chat.postMessage) post a thread reply.
	ThreadTS       string `json:"thread_ts"`
	ReplyBroadcast bool   `json:"reply_broadcast"`
}

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	method := r.PathValue("method")
	if s.Faults().Unavailable(w) {
		return
	}
	s.Recorder().Record(method, r)
	if wait, _ := s.Faults().Next(method); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(wait))
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusTooManyRequests)
		_ = json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": "ratelimited"})
		return
	}
	auth := r.Header.Get("Authorization")
	switch {
	case auth == "":
		fail(w, "not_authed")
		return
	case auth != "Bearer "+s.token:
		fail(w, "invalid_auth")
		return
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/json" {
		// Slack also takes form posts; this fake models the JSON API only.
		fail(w, "invalid_form_data", "the fake takes application/json bodies only")
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
	if err != nil {
		fail(w, "invalid_form_data")
		return
	}
	var args messageArgs
	if method != "auth.test" {
		if err := json.Unmarshal(data, &args); err != nil {
			fail(w, "invalid_json", err.Error())
			return
		}
	}
	switch method {
	case "auth.test":
		reply(w, map[string]any{"ok": true, "url": s.URL() + "/", "team": "Fake", "user": "signoff",
			"team_id": "T0FAKE", "user_id": "U0BOT", "bot_id": "B0BOT"})
	case "chat.postMessage":
		s.postMessage(w, args)
	case "chat.update":
		s.update(w, args)
	case "chat.postEphemeral":
		s.postEphemeral(w, args)
	case "views.open":
		s.viewsOpen(w, data)
	default:
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		_ = json.NewEncoder(w).Encode(map[string]any{"ok": false, "error": "unknown_method"})
	}
}

// checkContent applies the documented rules of a message's text and
// blocks; it returns a Slack error code and details.
func checkContent(args messageArgs) (string, []string) {
	if args.Text == "" && len(args.Blocks) == 0 {
		return "no_text", nil
	}
	if n := len([]rune(args.Text)); n > 40000 {
		return "msg_too_long", []string{fmt.Sprintf("text is %d characters, limit 40000", n)}
	}
	if problems := checkBlocks(args.Blocks); len(problems) > 0 {
		return "invalid_blocks", problems
	}
	return "", nil
}

func (s *Server) postMessage(w http.ResponseWriter, args messageArgs) {
	s.mu.Lock()
	known := s.channels[args.Channel]
	s.mu.Unlock()
	if args.Channel == "" || !known {
		fail(w, "channel_not_found")
		return
	}
	if code, details := checkContent(args); code != "" {
		fail(w, code, details...)
		return
	}
	if args.ThreadTS != "" {
		s.mu.Lock()
		parent, found := s.msgs[args.ThreadTS]
		s.mu.Unlock()
		if !found || parent.Channel != args.Channel {
			fail(w, "thread_not_found")
			return
		}
	}
	s.mu.Lock()
	s.seq++
	m := Message{Channel: args.Channel, TS: fmt.Sprintf("1700000000.%06d", s.seq), Text: args.Text, Blocks: args.Blocks,
		ThreadTS: args.ThreadTS, Broadcast: args.ReplyBroadcast}
	s.msgs[m.TS] = m
	s.mu.Unlock()
	s.Posted <- m
	reply(w, map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS,
		"message": map[string]any{"type": "message", "text": m.Text, "blocks": m.Blocks, "ts": m.TS, "bot_id": "B0BOT"}})
}

func (s *Server) update(w http.ResponseWriter, args messageArgs) {
	s.mu.Lock()
	known := s.channels[args.Channel]
	m, found := s.msgs[args.TS]
	s.mu.Unlock()
	switch {
	case args.Channel == "" || !known:
		fail(w, "channel_not_found")
		return
	case args.TS == "" || !found || m.Channel != args.Channel:
		fail(w, "message_not_found")
		return
	}
	if code, details := checkContent(args); code != "" {
		fail(w, code, details...)
		return
	}
	m.Text, m.Blocks = args.Text, args.Blocks
	s.mu.Lock()
	s.msgs[m.TS] = m
	s.mu.Unlock()
	s.Updated <- m
	reply(w, map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS, "text": m.Text})
}

func (s *Server) postEphemeral(w http.ResponseWriter, args messageArgs) {
	s.mu.Lock()
	known := s.channels[args.Channel]
	s.seq++
	ts := fmt.Sprintf("1700000000.%06d", s.seq)
	s.mu.Unlock()
	switch {
	case !known:
		fail(w, "channel_not_found")
		return
	case args.User == "":
		fail(w, "user_not_in_channel")
		return
	}
	if code, details := checkContent(args); code != "" {
		fail(w, code, details...)
		return
	}
	s.Ephemeral <- Message{Channel: args.Channel, TS: ts, Text: args.Text, Blocks: args.Blocks, User: args.User}
	reply(w, map[string]any{"ok": true, "message_ts": ts})
}

// serveResponseURL models an interaction's response_url: JSON messages,
// at most five uses.
func (s *Server) serveResponseURL(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	ru, ok := s.responses[id]
	if ok {
		ru.uses++
	}
	s.mu.Unlock()
	switch {
	case !ok:
		w.WriteHeader(http.StatusNotFound)
		reply(w, map[string]any{"ok": false, "error": "expired_url"})
		return
	case ru.uses > 5:
		w.WriteHeader(http.StatusNotFound)
		reply(w, map[string]any{"ok": false, "error": "used_url"})
		return
	}
	if r.Header.Get("Authorization") != "" {
		// A response_url needs no token; sending one leaks it to whoever
		// holds the URL.
		w.WriteHeader(http.StatusBadRequest)
		reply(w, map[string]any{"ok": false, "error": "unexpected_authorization"})
		return
	}
	var body struct {
		ResponseType    string            `json:"response_type"`
		ReplaceOriginal bool              `json:"replace_original"`
		DeleteOriginal  bool              `json:"delete_original"`
		Text            string            `json:"text"`
		Blocks          []json.RawMessage `json:"blocks"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 4<<20)).Decode(&body); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		reply(w, map[string]any{"ok": false, "error": "invalid_payload"})
		return
	}
	if code, details := checkContent(messageArgs{Text: body.Text, Blocks: body.Blocks}); code != "" {
		w.WriteHeader(http.StatusBadRequest)
		reply(w, map[string]any{"ok": false, "error": code, "details": details})
		return
	}
	if body.ResponseType != "" && body.ResponseType != "ephemeral" && body.ResponseType != "in_channel" {
		w.WriteHeader(http.StatusBadRequest)
		reply(w, map[string]any{"ok": false, "error": "invalid_response_type"})
		return
	}
	s.Responses <- Response{Message: ru.msg, ResponseType: body.ResponseType, ReplaceOriginal: body.ReplaceOriginal,
		DeleteOriginal: body.DeleteOriginal, Text: body.Text, Blocks: body.Blocks}
	reply(w, map[string]any{"ok": true})
}

// VisibleText is every text a reader of m sees, one element per line:
// the top-level text is left out when m has blocks (clients show the
// blocks then).
func (m Message) VisibleText() string {
	if len(m.Blocks) == 0 {
		return m.Text
	}
	var b strings.Builder
	for _, raw := range m.Blocks {
		var v any
		if json.Unmarshal(raw, &v) == nil {
			collectText(&b, v)
		}
	}
	return b.String()
}

// collectText walks a block and writes the strings under "text" keys,
// as Slack shows them: an emoji shortcode (":white_check_mark:") in
// mrkdwn, or in plain_text without "emoji": false, is shown as the emoji
// (renderEmoji).
func collectText(b *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		if t, ok := x["text"].(string); ok {
			if typ, _ := x["type"].(string); typ == "mrkdwn" || typ == "plain_text" && x["emoji"] != false {
				t = renderEmoji(t)
			}
			b.WriteString(t)
			b.WriteByte('\n')
		}
		for k, child := range x {
			if k == "confirm" {
				continue // shown only after a click
			}
			if _, isStr := child.(string); !isStr {
				collectText(b, child)
			}
		}
	case []any:
		for _, child := range x {
			collectText(b, child)
		}
	}
}

// emojiNames are the shortcodes the fake shows as emoji: a few of
// Slack's standard set (Slack converts only names it knows, its own and
// the workspace's custom ones).
var emojiNames = map[string]string{"white_check_mark": "✅", "heavy_check_mark": "✔️", "x": "❌",
	"warning": "⚠️", "lock": "🔒", "fire": "🔥", "rocket": "🚀", "+1": "👍", "thumbsup": "👍", "smile": "😄"}

// renderEmoji replaces the shortcodes of emojiNames in s by their emoji,
// as a Slack client shows them.
func renderEmoji(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, ':')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+1:], ':')
		if j < 0 {
			break
		}
		if e, ok := emojiNames[s[i+1:i+1+j]]; ok {
			b.WriteString(s[:i])
			b.WriteString(e)
			s = s[i+j+2:]
			continue
		}
		b.WriteString(s[:i+1])
		s = s[i+1:]
	}
	b.WriteString(s)
	return b.String()
}

// Button is a button of a message.
type Button struct {
	BlockID  string
	ActionID string
	Text     string
	Value    string
	Style    string
	// Confirm is the confirmation dialog's text ("" without one).
	Confirm string
}

// Buttons lists m's buttons in order.
func (m Message) Buttons() []Button {
	var out []Button
	for _, raw := range m.Blocks {
		var b struct {
			Type     string `json:"type"`
			BlockID  string `json:"block_id"`
			Elements []struct {
				Type     string `json:"type"`
				ActionID string `json:"action_id"`
				Value    string `json:"value"`
				Style    string `json:"style"`
				Text     struct {
					Text string `json:"text"`
				} `json:"text"`
				Confirm *struct {
					Text struct {
						Text string `json:"text"`
					} `json:"text"`
				} `json:"confirm"`
			} `json:"elements"`
		}
		if json.Unmarshal(raw, &b) != nil || b.Type != "actions" {
			continue
		}
		for _, e := range b.Elements {
			if e.Type != "button" {
				continue
			}
			bt := Button{BlockID: b.BlockID, ActionID: e.ActionID, Text: e.Text.Text, Value: e.Value, Style: e.Style}
			if e.Confirm != nil {
				bt.Confirm = e.Confirm.Text.Text
			}
			out = append(out, bt)
		}
	}
	return out
}

// Button returns m's button with actionID.
func (m Message) Button(actionID string) (Button, bool) {
	for _, b := range m.Buttons() {
		if b.ActionID == actionID {
			return b, true
		}
	}
	return Button{}, false
}

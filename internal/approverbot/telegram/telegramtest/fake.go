package telegramtest

import (
	"bytes"
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

// Options shape a fake Bot API.
type Options struct {
	// Token is the bot token the fake accepts (default "123456:TEST").
	Token string
	// Chats are the chat ids that exist; sending elsewhere fails with
	// "chat not found".
	Chats []int64
}

// User is a Telegram user.
type User struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	Username  string `json:"username,omitempty"`
}

// Button is an inline keyboard button.
type Button struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data,omitempty"`
	// URL makes a link button (exactly one of URL and CallbackData).
	URL string `json:"url,omitempty"`
}

// Message is a message as the fake holds it.
type Message struct {
	ChatID    int64
	MessageID int64
	// HTML is the text as the bot sent it; Text is what users see (tags
	// removed, entities decoded).
	HTML      string
	Text      string
	ParseMode string
	Keyboard  [][]Button
	// ReplyTo is the message this one replies to (0: none).
	ReplyTo int64
}

// Buttons lists the message's buttons row by row.
func (m Message) Buttons() []Button {
	var out []Button
	for _, row := range m.Keyboard {
		out = append(out, row...)
	}
	return out
}

// Button returns the button labelled label.
func (m Message) Button(label string) (Button, bool) {
	for _, b := range m.Buttons() {
		if b.Text == label {
			return b, true
		}
	}
	return Button{}, false
}

// Answer is an answerCallbackQuery call.
type Answer struct {
	CallbackQueryID string
	Text            string
	ShowAlert       bool
}

// Server is a fake Bot API. Its channels receive, in order, every accepted
// call; a test that does not read them may block the fake after 1,000.
// Its URL is the Bot API base URL to configure (telegram.api_url); it
// records the calls with the right token only (their paths hold the
// token), and a rate limit answers 429 with parameters.retry_after.
type Server struct {
	httpapitest.Server
	token string

	mu       sync.Mutex
	chats    map[int64]bool
	msgs     map[[2]int64]*Message
	nextMsg  int64
	updates  []json.RawMessage // unconfirmed, in order
	updateID []int64
	nextUpd  int64
	queries  map[string]bool // callback query id -> answered
	nextQry  int
	wake     chan struct{} // closed when an update is queued
	pollGen  int
	allowed  []string

	// Sent receives sendMessage calls.
	Sent chan Message
	// Edited receives editMessageText calls.
	Edited chan Message
	// Answers receives answerCallbackQuery calls.
	Answers chan Answer
}

// New starts a fake Bot API; it stops when Close is called.
func New(o Options) *Server {
	if o.Token == "" {
		o.Token = "123456:TEST"
	}
	s := &Server{
		token:   o.Token,
		chats:   map[int64]bool{},
		msgs:    map[[2]int64]*Message{},
		queries: map[string]bool{},
		wake:    make(chan struct{}),
		nextUpd: 100,
		Sent:    make(chan Message, 1000),
		Edited:  make(chan Message, 1000),
		Answers: make(chan Answer, 1000),
	}
	for _, c := range o.Chats {
		s.chats[c] = true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/{bot}/{method}", s.serve)
	s.Start(mux)
	return s
}

// Fail makes the next call of method fail with an HTTP status and a body
// that is not a Bot API answer (a proxy's error page).
func (s *Server) Fail(method string, status int) { s.Faults().Fail(method, status) }

// Message returns the current state of a message.
func (s *Server) Message(chatID, messageID int64) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.msgs[[2]int64{chatID, messageID}]
	if !ok {
		return Message{}, false
	}
	return *m, true
}

// Pending reports how many updates wait for the bot's confirmation.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.updates)
}

// Tap queues the callback query Telegram sends when from taps the button
// with callback data data on m, and returns the query's id. m must carry
// such a button: a client can only send the data of a button it shows.
func (s *Server) Tap(m Message, data string, from User) (string, error) {
	found := false
	for _, b := range m.Buttons() {
		found = found || b.CallbackData == data
	}
	if !found {
		return "", fmt.Errorf("telegramtest: message %d has no button with data %q", m.MessageID, data)
	}
	return s.InjectTap(m.ChatID, m.MessageID, data, from), nil
}

// InjectTap queues a callback query with any data, as a modified client
// could send; it returns the query's id.
func (s *Server) InjectTap(chatID, messageID int64, data string, from User) string {
	s.mu.Lock()
	s.nextQry++
	id := "q" + strconv.Itoa(s.nextQry)
	s.queries[id] = false
	text := ""
	if m, ok := s.msgs[[2]int64{chatID, messageID}]; ok {
		text = m.Text
	}
	s.mu.Unlock()
	s.Inject(map[string]any{"callback_query": map[string]any{
		"id":   id,
		"from": from,
		"message": map[string]any{
			"message_id": messageID,
			"from":       map[string]any{"id": 1, "is_bot": true, "first_name": "Signoff", "username": "signoff_bot"},
			"chat":       map[string]any{"id": chatID, "type": "group", "title": "approvals"},
			"date":       time.Now().Unix(),
			"text":       text,
		},
		"chat_instance": "-1234567890",
		"data":          data,
	}})
	return id
}

// Reply queues the message update Telegram sends when from replies to m
// with text (https://core.telegram.org/bots/api#message:
// reply_to_message), and returns the new message's id. The fake keeps the
// reply like any message, so the bot may reply to it in turn.
func (s *Server) Reply(m Message, text string, from User) int64 {
	s.mu.Lock()
	s.nextMsg++
	id := s.nextMsg
	reply := Message{ChatID: m.ChatID, MessageID: id, Text: text, HTML: text, ReplyTo: m.MessageID}
	s.msgs[[2]int64{m.ChatID, id}] = &reply
	s.mu.Unlock()
	chat := map[string]any{"id": m.ChatID, "type": "group", "title": "approvals"}
	s.Inject(map[string]any{"message": map[string]any{
		"message_id": id,
		"from":       from,
		"chat":       chat,
		"date":       time.Now().Unix(),
		"text":       text,
		"reply_to_message": map[string]any{
			"message_id": m.MessageID,
			"from":       map[string]any{"id": 1, "is_bot": true, "first_name": "Signoff", "username": "signoff_bot"},
			"chat":       chat,
			"date":       time.Now().Unix(),
			"text":       m.Text,
		},
	}})
	return id
}

// Inject queues an update of any shape (update_id is set by the fake).
func (s *Server) Inject(update map[string]any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextUpd++
	update["update_id"] = s.nextUpd
	data, _ := json.Marshal(update)
	s.updates = append(s.updates, data)
	s.updateID = append(s.updateID, s.nextUpd)
	close(s.wake)
	s.wake = make(chan struct{})
}

// reply writes a Bot API answer.
func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func ok(w http.ResponseWriter, result any) {
	reply(w, http.StatusOK, map[string]any{"ok": true, "result": result})
}

func fail(w http.ResponseWriter, code int, description string) {
	reply(w, code, map[string]any{"ok": false, "error_code": code, "description": description})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if s.Faults().Unavailable(w) {
		return
	}
	if r.PathValue("bot") != "bot"+s.token {
		fail(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	method := r.PathValue("method")
	s.Recorder().Record(method, r)
	wait, status := s.Faults().Next(method)
	switch {
	case wait > 0:
		reply(w, http.StatusTooManyRequests, map[string]any{"ok": false, "error_code": 429,
			"description": fmt.Sprintf("Too Many Requests: retry after %d", wait), "parameters": map[string]any{"retry_after": wait}})
		return
	case status > 0:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, "<html><body><h1>"+http.StatusText(status)+"</h1></body></html>")
		return
	}
	params, err := readParams(r)
	if err != nil {
		fail(w, http.StatusBadRequest, "Bad Request: "+err.Error())
		return
	}
	switch method {
	case "getMe":
		ok(w, User{ID: 1, IsBot: true, FirstName: "Signoff", Username: "signoff_bot"})
	case "getUpdates":
		s.getUpdates(w, r, params)
	case "sendMessage":
		s.sendMessage(w, params)
	case "editMessageText":
		s.editMessageText(w, params)
	case "answerCallbackQuery":
		s.answerCallbackQuery(w, params)
	default:
		fail(w, http.StatusNotFound, "Not Found")
	}
}

// readParams reads a method's parameters: a JSON object or a form (the
// Bot API takes both; query strings too).
func readParams(r *http.Request) (map[string]json.RawMessage, error) {
	params := map[string]json.RawMessage{}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "application/json" {
		data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(data)) > 0 {
			if err := json.Unmarshal(data, &params); err != nil {
				return nil, fmt.Errorf("can't parse JSON object: %v", err)
			}
		}
		return params, nil
	}
	if err := r.ParseForm(); err != nil {
		return nil, err
	}
	for k, v := range r.Form {
		if json.Valid([]byte(v[0])) {
			params[k] = json.RawMessage(v[0])
		} else {
			q, _ := json.Marshal(v[0])
			params[k] = q
		}
	}
	return params, nil
}

func (s *Server) getUpdates(w http.ResponseWriter, r *http.Request, p map[string]json.RawMessage) {
	var offset int64
	var timeout int
	var allowed []string
	if raw, ok := p["offset"]; ok && json.Unmarshal(raw, &offset) != nil {
		fail(w, http.StatusBadRequest, "Bad Request: invalid offset")
		return
	}
	if raw, ok := p["timeout"]; ok && json.Unmarshal(raw, &timeout) != nil {
		fail(w, http.StatusBadRequest, "Bad Request: invalid timeout")
		return
	}
	if raw, ok := p["allowed_updates"]; ok && json.Unmarshal(raw, &allowed) != nil {
		fail(w, http.StatusBadRequest, "Bad Request: invalid allowed_updates")
		return
	}
	s.mu.Lock()
	if allowed != nil {
		// As documented, the list applies to later calls too.
		s.allowed = allowed
	}
	s.pollGen++
	gen := s.pollGen
	s.mu.Unlock()
	deadline := time.After(time.Duration(timeout) * time.Second)
	for {
		s.mu.Lock()
		if gen != s.pollGen {
			s.mu.Unlock()
			fail(w, http.StatusConflict, "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running")
			return
		}
		// An offset confirms every update before it.
		if offset > 0 {
			for len(s.updateID) > 0 && s.updateID[0] < offset {
				s.updates, s.updateID = s.updates[1:], s.updateID[1:]
			}
		}
		var out []json.RawMessage
		for _, u := range s.updates {
			if s.allows(u) {
				out = append(out, u)
			}
			if len(out) == 100 {
				break
			}
		}
		wake := s.wake
		s.mu.Unlock()
		if len(out) > 0 || timeout == 0 {
			if out == nil {
				out = []json.RawMessage{}
			}
			ok(w, out)
			return
		}
		select {
		case <-wake:
		case <-deadline:
			timeout = 0
		case <-r.Context().Done():
			return
		}
	}
}

// allows reports whether an update's type is in allowed_updates (all
// types but a few when unset, as documented).
func (s *Server) allows(u json.RawMessage) bool {
	if len(s.allowed) == 0 {
		return true
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(u, &m)
	for _, a := range s.allowed {
		if _, ok := m[a]; ok {
			return true
		}
	}
	return false
}

// messageParams are the parameters of sendMessage and editMessageText.
type messageParams struct {
	ChatID      int64  `json:"chat_id"`
	MessageID   int64  `json:"message_id"`
	Text        string `json:"text"`
	ParseMode   string `json:"parse_mode"`
	ReplyMarkup *struct {
		InlineKeyboard [][]Button `json:"inline_keyboard"`
	} `json:"reply_markup"`
	ReplyParameters *struct {
		MessageID                int64 `json:"message_id"`
		AllowSendingWithoutReply bool  `json:"allow_sending_without_reply"`
	} `json:"reply_parameters"`
}

func decodeParams(p map[string]json.RawMessage) (messageParams, error) {
	data, _ := json.Marshal(p)
	var mp messageParams
	err := json.Unmarshal(data, &mp)
	return mp, err
}

// content checks a message's text and keyboard as the Bot API does.
func content(mp messageParams) (Message, string) {
	m := Message{ChatID: mp.ChatID, HTML: mp.Text, Text: mp.Text, ParseMode: mp.ParseMode}
	switch mp.ParseMode {
	case "":
	case "HTML":
		plain, err := ParseHTML(mp.Text)
		if err != nil {
			return m, "Bad Request: " + err.Error()
		}
		m.Text = plain
	default:
		return m, "Bad Request: unsupported parse_mode " + strconv.Quote(mp.ParseMode) + " (the fake models HTML)"
	}
	switch n := length(m.Text); {
	case n == 0:
		return m, "Bad Request: message text is empty"
	case n > 4096:
		return m, "Bad Request: message is too long"
	}
	if mp.ReplyMarkup != nil {
		for _, row := range mp.ReplyMarkup.InlineKeyboard {
			for _, b := range row {
				if b.Text == "" {
					return m, "Bad Request: BUTTON_TEXT_EMPTY"
				}
				if b.URL != "" {
					if b.CallbackData != "" || !(strings.HasPrefix(b.URL, "https://") || strings.HasPrefix(b.URL, "http://")) {
						return m, "Bad Request: BUTTON_URL_INVALID"
					}
					continue
				}
				if n := len(b.CallbackData); n < 1 || n > 64 {
					return m, "Bad Request: BUTTON_DATA_INVALID"
				}
			}
		}
		m.Keyboard = mp.ReplyMarkup.InlineKeyboard
	}
	return m, ""
}

// result is the Message object the Bot API answers with.
func result(m Message) map[string]any {
	return map[string]any{
		"message_id": m.MessageID,
		"from":       map[string]any{"id": 1, "is_bot": true, "first_name": "Signoff", "username": "signoff_bot"},
		"chat":       map[string]any{"id": m.ChatID, "type": "group", "title": "approvals"},
		"date":       time.Now().Unix(),
		"text":       m.Text,
	}
}

// message decodes the parameters of a message call, then applies check
// (a problem, "" for none) and the content checks; it answers the first
// failure and reports whether there was none.
func message(w http.ResponseWriter, p map[string]json.RawMessage, check func(messageParams) string) (messageParams, Message, bool) {
	mp, err := decodeParams(p)
	if err != nil {
		fail(w, http.StatusBadRequest, "Bad Request: "+err.Error())
		return mp, Message{}, false
	}
	if problem := check(mp); problem != "" {
		fail(w, http.StatusBadRequest, problem)
		return mp, Message{}, false
	}
	m, problem := content(mp)
	if problem != "" {
		fail(w, http.StatusBadRequest, problem)
		return mp, Message{}, false
	}
	return mp, m, true
}

// store keeps m as its chat's message, passes it to the test on to and
// answers with it.
func (s *Server) store(w http.ResponseWriter, m Message, to chan Message) {
	s.mu.Lock()
	stored := m
	s.msgs[[2]int64{m.ChatID, m.MessageID}] = &stored
	s.mu.Unlock()
	to <- m
	ok(w, result(m))
}

func (s *Server) sendMessage(w http.ResponseWriter, p map[string]json.RawMessage) {
	mp, m, valid := message(w, p, func(mp messageParams) string {
		s.mu.Lock()
		defer s.mu.Unlock()
		if !s.chats[mp.ChatID] {
			return "Bad Request: chat not found"
		}
		return ""
	})
	if !valid {
		return
	}
	if rp := mp.ReplyParameters; rp != nil {
		s.mu.Lock()
		_, exists := s.msgs[[2]int64{mp.ChatID, rp.MessageID}]
		s.mu.Unlock()
		if !exists && !rp.AllowSendingWithoutReply {
			fail(w, http.StatusBadRequest, "Bad Request: message to be replied not found")
			return
		}
		m.ReplyTo = rp.MessageID
	}
	s.mu.Lock()
	s.nextMsg++
	m.MessageID = s.nextMsg
	s.mu.Unlock()
	s.store(w, m, s.Sent)
}

func (s *Server) editMessageText(w http.ResponseWriter, p map[string]json.RawMessage) {
	var before Message
	mp, m, valid := message(w, p, func(mp messageParams) string {
		s.mu.Lock()
		defer s.mu.Unlock()
		cur, found := s.msgs[[2]int64{mp.ChatID, mp.MessageID}]
		if !found {
			return "Bad Request: message to edit not found"
		}
		before = *cur
		return ""
	})
	if !valid {
		return
	}
	m.MessageID = mp.MessageID
	if m.HTML == before.HTML && keyboardsEqual(m.Keyboard, before.Keyboard) {
		fail(w, http.StatusBadRequest, "Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
		return
	}
	s.store(w, m, s.Edited)
}

func keyboardsEqual(a, b [][]Button) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func (s *Server) answerCallbackQuery(w http.ResponseWriter, p map[string]json.RawMessage) {
	var a struct {
		CallbackQueryID string `json:"callback_query_id"`
		Text            string `json:"text"`
		ShowAlert       bool   `json:"show_alert"`
	}
	data, _ := json.Marshal(p)
	if err := json.Unmarshal(data, &a); err != nil {
		fail(w, http.StatusBadRequest, "Bad Request: "+err.Error())
		return
	}
	if length(a.Text) > 200 {
		fail(w, http.StatusBadRequest, "Bad Request: MESSAGE_TOO_LONG")
		return
	}
	s.mu.Lock()
	answered, known := s.queries[a.CallbackQueryID]
	if known && !answered {
		s.queries[a.CallbackQueryID] = true
	}
	s.mu.Unlock()
	if !known || answered {
		fail(w, http.StatusBadRequest, "Bad Request: query is too old and response timeout expired or query ID is invalid")
		return
	}
	s.Answers <- Answer{CallbackQueryID: a.CallbackQueryID, Text: a.Text, ShowAlert: a.ShowAlert}
	ok(w, true)
}

package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// subscriberBuffer is how many events a browser may lag behind before it is
// disconnected. A dropped browser reconnects and re-fetches the list, so
// dropping loses nothing; blocking would stall every other browser.
const subscriberBuffer = 64

// event is one thing every open page must show.
type event struct {
	question *approverbot.Question
	resolved *messages.Resolved
	// enc shares the event's encoding among the pages that show the same
	// bytes (nil: each page encodes it).
	enc *encodings
}

// newEvent is an event whose encoding its pages share.
func newEvent(q *approverbot.Question, r *messages.Resolved) event {
	return event{question: q, resolved: r, enc: &encodings{by: map[string]*encoding{}}}
}

// encodings caches an event's encoding by viewer: a card depends only on
// the question and the approver who views it, so every open page of one
// approver gets the same bytes, and a question is rendered once per
// approver rather than once per device (docs/BENCHMARKS.md, "Approver
// devices"). Whether a page may see the question is still decided per
// page. Safe for concurrent use.
type encodings struct {
	mu sync.Mutex
	by map[string]*encoding
}

type encoding struct {
	once sync.Once
	data []byte
	ok   bool
}

// get returns the encoding for key, building it on the first call.
func (m *encodings) get(key string, build func() ([]byte, bool)) ([]byte, bool) {
	m.mu.Lock()
	e := m.by[key]
	if e == nil {
		e = &encoding{}
		m.by[key] = e
	}
	m.mu.Unlock()
	e.once.Do(func() { e.data, e.ok = build() })
	return e.data, e.ok
}

// hub fans events out to the open event streams. Safe for concurrent use.
type hub struct {
	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	closed bool
}

// subscriber is one open event stream.
type subscriber struct {
	events chan event
	// gone is closed when the hub drops the stream (it lagged, its session
	// ended, or the channel stops).
	gone    chan struct{}
	session string // "" for a proxy-authenticated stream without a session
	viewer  string // the approver id, for "mine" marks
}

func newHub() *hub { return &hub{subs: map[*subscriber]struct{}{}} }

// subscribe opens a stream; it returns false once the hub is closed.
func (h *hub) subscribe(sessionID, viewer string) (*subscriber, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, false
	}
	s := &subscriber{events: make(chan event, subscriberBuffer), gone: make(chan struct{}),
		session: sessionID, viewer: viewer}
	h.subs[s] = struct{}{}
	return s, true
}

func (h *hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropLocked(s)
}

func (h *hub) dropLocked(s *subscriber) {
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		close(s.gone)
	}
}

// publish hands e to every stream, without ever blocking: a stream whose
// buffer is full is dropped.
func (h *hub) publish(e event) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		select {
		case s.events <- e:
		default:
			h.dropLocked(s)
		}
	}
}

// dropSession ends the streams of a session (on logout).
func (h *hub) dropSession(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if s.session == id {
			h.dropLocked(s)
		}
	}
}

// close ends every stream and refuses new ones.
func (h *hub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		h.dropLocked(s)
	}
}

// count is the number of open streams (tests, metrics).
func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// handleEvents serves GET /events: a text/event-stream of "question" and
// "resolved" events, with a heartbeat comment so that proxies keep the
// connection open and a dead one is noticed.
func (c *Channel) handleEvents(w http.ResponseWriter, r *http.Request) {
	p, ok := c.principal(r)
	if !ok {
		c.unauthorized(w, r)
		return
	}
	sessionID := ""
	if p.sess != nil {
		sessionID = p.sess.id
	}
	sub, ok := c.hub.subscribe(sessionID, p.approver)
	if !ok {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the web channel is shutting down")
		return
	}
	defer c.hub.unsubscribe(sub)

	rc := http.NewResponseController(w)
	// The server's write timeout, if any, must not cut a stream that is
	// meant to stay open; ignore servers that cannot lift it.
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write([]byte("retry: 1000\n: connected\n\n")); err != nil {
		return
	}
	if rc.Flush() != nil {
		return
	}
	tick := time.NewTicker(c.heartbeat)
	defer tick.Stop()
	for {
		var msg []byte
		select {
		case <-r.Context().Done():
			return
		case <-sub.gone:
			return
		case <-tick.C:
			msg = []byte(": heartbeat\n\n")
		case e := <-sub.events:
			var ok bool
			if msg, ok = c.encodeEvent(e, p); !ok {
				continue
			}
		}
		if sessionID != "" && !c.sessions.live(sessionID) {
			return
		}
		if _, err := w.Write(msg); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
}

// encodeEvent returns e in the event-stream format for the viewer, false
// when the viewer may not see it. JSON never holds a raw newline, so each
// event is one data line. The bytes may be shared with other pages: read
// only.
func (c *Channel) encodeEvent(e event, viewer principal) ([]byte, bool) {
	key := ""
	if e.question != nil {
		if !c.sees(viewer, *e.question) {
			// Questions and their commands are for the teams they are
			// routed to.
			return nil, false
		}
		key = viewer.approver
	}
	build := func() ([]byte, bool) { return c.encodeFor(e, viewer.approver) }
	if e.enc == nil {
		return build()
	}
	return e.enc.get(key, build)
}

// encodeFor encodes e as the approver's pages show it.
func (c *Channel) encodeFor(e event, approver string) ([]byte, bool) {
	var name string
	var v any
	switch {
	case e.question != nil:
		qv, err := c.questionView(*e.question, approver)
		if err != nil {
			c.log.Error("web: cannot render a question", "request_id", e.question.Request.RequestID, "err", err)
			return nil, false
		}
		name, v = "question", qv
	case e.resolved != nil:
		name, v = "resolved", resolvedView(*e.resolved)
	default:
		return nil, false
	}
	data, err := json.Marshal(v)
	if err != nil {
		c.log.Error("web: cannot encode an event", "err", err)
		return nil, false
	}
	var buf bytes.Buffer
	buf.WriteString("event: " + name + "\ndata: ")
	buf.Write(data)
	buf.WriteString("\n\n")
	return buf.Bytes(), true
}

func resolvedView(r messages.Resolved) ResolvedView {
	return ResolvedView{RequestID: r.RequestID, Team: r.Team, State: r.State, Outcome: r.Decision.Outcome,
		Decision: r.Decision, Text: resolutionText(r)}
}

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
	var buf bytes.Buffer
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
			buf.Reset()
			if !c.encodeEvent(&buf, e, p) {
				continue
			}
			msg = buf.Bytes()
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

// encodeEvent writes e in the event-stream format. JSON never holds a raw
// newline, so each event is one data line.
func (c *Channel) encodeEvent(buf *bytes.Buffer, e event, viewer principal) bool {
	var name string
	var v any
	switch {
	case e.question != nil:
		if !c.sees(viewer, *e.question) {
			// Questions and their commands are for the teams they are
			// routed to.
			return false
		}
		qv, err := c.questionView(*e.question, viewer.approver)
		if err != nil {
			c.log.Error("web: cannot render a question", "request_id", e.question.Request.RequestID, "err", err)
			return false
		}
		name, v = "question", qv
	case e.resolved != nil:
		name, v = "resolved", resolvedView(*e.resolved)
	default:
		return false
	}
	data, err := json.Marshal(v)
	if err != nil {
		c.log.Error("web: cannot encode an event", "err", err)
		return false
	}
	buf.WriteString("event: " + name + "\ndata: ")
	buf.Write(data)
	buf.WriteString("\n\n")
	return true
}

func resolvedView(r messages.Resolved) ResolvedView {
	return ResolvedView{RequestID: r.RequestID, Team: r.Team, State: r.State, Outcome: r.Decision.Outcome,
		Decision: r.Decision, Text: resolutionText(r)}
}

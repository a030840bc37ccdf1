package webhook_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/channeltest"
	"github.com/signoff-dev/signoff/internal/approverbot/webhook"
)

func TestWebhookPassesTheChannelSuite(t *testing.T) {
	channeltest.Run(t, func(t *testing.T, s channeltest.Setup) channeltest.Harness {
		h := &harness{s: s, events: map[string][]string{}, bodies: map[string][]byte{}, digests: map[string]string{}, wake: make(chan struct{}, 1)}
		h.recv = httptest.NewServer(http.HandlerFunc(h.receive))
		t.Cleanup(h.recv.Close)
		return h
	})
}

// harness is the system behind the webhook URL: it keeps each request's
// latest event, and answers through the webhook's respond endpoint naming
// the digest of the question it was shown.
type harness struct {
	s    channeltest.Setup
	recv *httptest.Server
	bot  *httptest.Server

	mu      sync.Mutex
	down    bool
	events  map[string][]string // event types by request id
	bodies  map[string][]byte   // latest body by request id
	digests map[string]string   // the digest of the latest question by request id
	wake    chan struct{}
}

func (h *harness) receive(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.down {
		http.Error(w, "receiver down", http.StatusServiceUnavailable)
		return
	}
	if err := webhook.Verify(testSecret, r.Header, body, time.Now()); err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	var probe struct {
		RequestID string `json:"request_id"`
		Request   struct {
			RequestID string `json:"request_id"`
		} `json:"request"`
		Digest string `json:"digest"`
	}
	_ = json.Unmarshal(body, &probe)
	id := probe.RequestID + probe.Request.RequestID
	h.events[id] = append(h.events[id], r.Header.Get(webhook.HeaderEvent))
	h.bodies[id] = body
	if probe.Digest != "" {
		h.digests[id] = probe.Digest
	}
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

func (h *harness) Config() string {
	return `
teams: [default]
approvers:
  alice: {display: Alice}
  bob: {}
  dave: {display: Dave}
webhook:
  url: "` + h.recv.URL + `/hook"
  secret: ` + testSecret + `
`
}

func (h *harness) Channel(t *testing.T, cfg *approverbot.Config) approverbot.Channel {
	ch, err := webhook.New(cfg, webhook.Options{Logger: h.s.Logger, MaxAttempts: 2, MinBackoff: 10 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	ch.Register(mux)
	h.bot = httptest.NewServer(mux)
	t.Cleanup(h.bot.Close)
	return ch
}

// await waits until request id's latest event is event; it returns its body.
func (h *harness) await(t *testing.T, id, event string) []byte {
	t.Helper()
	deadline := time.After(channeltest.Wait)
	for {
		h.mu.Lock()
		evs, body := h.events[id], h.bodies[id]
		h.mu.Unlock()
		if len(evs) > 0 && evs[len(evs)-1] == event {
			return body
		}
		select {
		case <-h.wake:
		case <-time.After(20 * time.Millisecond):
		case <-deadline:
			t.Fatalf("no %s event for %s (got %v)", event, id, evs)
		}
	}
}

// Shown: the receiving system reads the question's JSON; its controls are
// the respond endpoint's answers the delivery's choices list.
func (h *harness) Shown(t *testing.T, id string) (string, []approverbot.Choice) {
	body := h.await(t, id, "approval_needed")
	var q webhook.QuestionEvent
	if err := json.Unmarshal(body, &q); err != nil {
		t.Fatal(err)
	}
	var cs []approverbot.Choice
	for _, a := range q.Choices.Actions {
		if a == "answer" {
			continue
		}
		c, err := approverbot.ParseChoice(a)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	if q.Always != nil && !strings.Contains(q.Choices.Always, "for agent") {
		t.Errorf("the choices do not say what Always grants: %+v", q.Choices)
	}
	return string(body), cs
}

func (h *harness) Choose(t *testing.T, id string, c approverbot.Choice, feedback string) string {
	in := map[string]any{"request_id": id, "approver": h.s.As, "approved": c.Approves(), "digest": h.digest(id)}
	switch c {
	case approverbot.ChoiceOnce:
		in["scope"] = "once"
	case approverbot.ChoiceSession:
		in["scope"] = "session"
	case approverbot.ChoiceAlways:
		in["scope"] = "always"
	case approverbot.ChoiceReject:
		in["reject_mode"], in["feedback"] = "reject_soft", feedback
	case approverbot.ChoiceRejectStop:
		in["reject_mode"], in["feedback"] = "reject_hard", feedback
	}
	return h.post(t, in)
}

// digest is the digest of the question request id's system was shown
// last.
func (h *harness) digest(id string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.digests[id]
}

// post sends a signed response; it returns the reply body.
func (h *harness) post(t *testing.T, in map[string]any) string {
	body, _ := json.Marshal(in)
	for deadline := time.Now().Add(channeltest.Wait); ; time.Sleep(20 * time.Millisecond) {
		req, _ := http.NewRequest(http.MethodPost, h.bot.URL+webhook.RespondPath, bytes.NewReader(body))
		webhook.Sign(req.Header, testSecret, time.Now(), body)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusServiceUnavailable || time.Now().After(deadline) {
			return string(out)
		}
	}
}

func (h *harness) Settled(t *testing.T, id string) string {
	return string(h.await(t, id, "resolved"))
}

func (h *harness) Feedback() bool { return true }

func (h *harness) Break() bool {
	h.mu.Lock()
	h.down = true
	h.mu.Unlock()
	return true
}

func (h *harness) Heal() bool {
	h.mu.Lock()
	h.down = false
	h.mu.Unlock()
	return true
}

func (h *harness) Secrets() []string { return []string{testSecret} }

// Edit approves the question with its command changed to text: the body
// carries updated_arguments.
func (h *harness) Edit(t *testing.T, id, text string) string {
	in := map[string]any{"request_id": id, "approver": h.s.As, "approved": true, "scope": "once",
		"updated_arguments": map[string]any{"command": text}, "digest": h.digest(id)}
	return h.post(t, in)
}

// Asked: the receiving system reads ask_user from the question's JSON; the
// respond endpoint takes "answer".
func (h *harness) Asked(t *testing.T, id string) (string, [][]string) {
	body := h.await(t, id, "approval_needed")
	var q webhook.QuestionEvent
	if err := json.Unmarshal(body, &q); err != nil {
		t.Fatal(err)
	}
	if q.AskUser == nil || !strings.Contains(strings.Join(q.Choices.Actions, ","), "answer") {
		t.Fatalf("the event offers no answer: ask_user %+v, actions %v", q.AskUser, q.Choices.Actions)
	}
	var options [][]string
	for _, aq := range q.AskUser.Questions {
		var labels []string
		for _, o := range aq.Options {
			labels = append(labels, o.Label)
		}
		options = append(options, labels)
	}
	return string(body), options
}

func (h *harness) Answer(t *testing.T, id string, picks []approverbot.Pick) string {
	body := h.await(t, id, "approval_needed")
	var q webhook.QuestionEvent
	if err := json.Unmarshal(body, &q); err != nil {
		t.Fatal(err)
	}
	var answer any
	if len(q.AskUser.Questions) == 0 {
		answer = picks[0].Text
	} else {
		m := map[string]string{}
		for _, p := range picks {
			aq := q.AskUser.Questions[p.Question]
			var parts []string
			for _, o := range p.Options {
				parts = append(parts, aq.Options[o].Label)
			}
			if p.Text != "" {
				parts = append(parts, p.Text)
			}
			m[aq.Question] = strings.Join(parts, ", ")
		}
		answer = m
	}
	return h.post(t, map[string]any{"request_id": id, "approver": h.s.As, "approved": true, "answer": answer, "digest": h.digest(id)})
}

package web

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/channeltest"
)

func TestWebPassesTheChannelSuite(t *testing.T) {
	channeltest.Run(t, func(t *testing.T, s channeltest.Setup) channeltest.Harness {
		hashes(t)
		return &harness{s: s, resolved: map[string]string{}}
	})
}

// harness signs in as Setup.As and uses the page's API: the questions
// list, the respond endpoint and the event stream.
type harness struct {
	s   channeltest.Setup
	srv *server

	once     sync.Once
	c        *http.Client
	csrf     string
	mu       sync.Mutex
	resolved map[string]string // request id → the "resolved" event's text
}

func (h *harness) Config() string {
	return `
teams: [default]
approvers:
  alice: { display: Alice, password_hash: "` + aliceHash + `" }
  bob:   { password_hash: "` + bobHash + `" }
  dave:  { display: Dave, password_hash: "` + daveHash + `" }
web: {insecure_cookies: true}
`
}

func (h *harness) Channel(t *testing.T, cfg *approverbot.Config) approverbot.Channel {
	ch, err := New(cfg, Options{Logger: h.s.Logger})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	ch.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	h.srv = &server{ch: ch, srv: srv}
	return ch
}

var passwords = map[string]string{"alice": alicePassword, "bob": bobPassword, "dave": "dave-password"}

// session signs in once the bot runs, and follows the event stream.
func (h *harness) session(t *testing.T) {
	h.once.Do(func() {
		for h.srv.ch.responder() == nil {
			time.Sleep(time.Millisecond)
		}
		h.c, h.csrf = h.srv.login(t, h.s.As, passwords[h.s.As])
		// The stream lives as long as the bot: the channel ends it when
		// the bot stops (t may be a subtest's that ends sooner).
		req, _ := http.NewRequestWithContext(context.Background(), "GET", h.srv.srv.URL+"/events", nil)
		res, err := h.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		events := readEvents(res.Body)
		go func() {
			for ev := range events {
				if ev.name != "resolved" {
					continue
				}
				var r ResolvedView
				if json.Unmarshal([]byte(ev.data), &r) == nil {
					h.mu.Lock()
					h.resolved[r.RequestID] = r.Text
					h.mu.Unlock()
				}
			}
		}()
		for h.srv.ch.hub.count() == 0 {
			time.Sleep(time.Millisecond)
		}
	})
}

var tags = regexp.MustCompile(`<[^>]*>`)

func (h *harness) Shown(t *testing.T, id string) (string, []approverbot.Choice) {
	v := h.listed(t, id)
	var cs []approverbot.Choice
	for _, a := range v.Actions {
		if a == actionAnswer {
			continue
		}
		c, err := approverbot.ParseChoice(a)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	return html.UnescapeString(tags.ReplaceAllString(v.HTML, " ")), cs
}

var (
	askFieldset = regexp.MustCompile(`(?s)<fieldset class="ask-q".*?</fieldset>`)
	askLabel    = regexp.MustCompile(`class="ask-label">([^<]*)<`)
)

// Asked reads the card's answer form: a fieldset per question, a label per
// option.
func (h *harness) Asked(t *testing.T, id string) (string, [][]string) {
	v := h.listed(t, id)
	if !slices.Contains(v.Actions, actionAnswer) || !strings.Contains(v.HTML, `data-action="answer"`) {
		t.Fatalf("the card offers no answer: actions %v", v.Actions)
	}
	var options [][]string
	for _, fs := range askFieldset.FindAllString(v.HTML, -1) {
		var labels []string
		for _, m := range askLabel.FindAllStringSubmatch(fs, -1) {
			labels = append(labels, html.UnescapeString(m[1]))
		}
		options = append(options, labels)
	}
	return html.UnescapeString(tags.ReplaceAllString(v.HTML, " ")), options
}

func (h *harness) Answer(t *testing.T, id string, picks []approverbot.Pick) string {
	h.session(t)
	req := RespondRequest{RequestID: id, Action: actionAnswer}
	for _, p := range picks {
		req.Picks = append(req.Picks, PickRequest{Question: p.Question, Options: p.Options, Text: p.Text})
	}
	body, _ := json.Marshal(req)
	res := h.srv.do(t, h.c, "POST", "/api/respond", string(body), "Content-Type", "application/json", csrfHeader, h.csrf)
	var out RespondResult
	raw := readBody(t, res)
	if json.Unmarshal([]byte(raw), &out) != nil || out.Message == "" {
		return raw
	}
	return out.Message
}

// listed waits until question id is listed and returns it.
func (h *harness) listed(t *testing.T, id string) QuestionView {
	h.session(t)
	deadline := time.Now().Add(channeltest.Wait)
	for {
		var list questionsReply
		decodeJSON(t, h.srv.do(t, h.c, "GET", "/api/questions", ""), &list)
		for _, v := range list.Questions {
			if v.RequestID == id {
				return v
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("question %s never listed", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// HidesFromNonMembers: the page shows a question only to the answerers
// the brokers name on it.
func (h *harness) HidesFromNonMembers() bool { return true }

// Addressable: POST /api/respond names any request id.
func (h *harness) Addressable() bool { return true }

// NotShown checks for a while that question id is not listed, nor on the
// page.
func (h *harness) NotShown(t *testing.T, id string) {
	h.session(t)
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		var list questionsReply
		decodeJSON(t, h.srv.do(t, h.c, "GET", "/api/questions", ""), &list)
		for _, v := range list.Questions {
			if v.RequestID == id {
				t.Fatalf("question %s is listed to a non-member", id)
			}
		}
	}
	if page := readBody(t, h.srv.do(t, h.c, "GET", "/", "")); strings.Contains(page, id) {
		t.Fatalf("question %s is on a non-member's page", id)
	}
}

func (h *harness) Choose(t *testing.T, id string, c approverbot.Choice, feedback string) string {
	h.session(t)
	body, _ := json.Marshal(RespondRequest{RequestID: id, Action: string(c), Feedback: feedback})
	res := h.srv.do(t, h.c, "POST", "/api/respond", string(body), "Content-Type", "application/json", csrfHeader, h.csrf)
	var out RespondResult
	raw := readBody(t, res)
	if json.Unmarshal([]byte(raw), &out) != nil || out.Message == "" {
		return raw
	}
	return out.Message
}

func (h *harness) Settled(t *testing.T, id string) string {
	deadline := time.Now().Add(channeltest.Wait)
	for {
		h.mu.Lock()
		text, ok := h.resolved[id]
		h.mu.Unlock()
		if ok {
			var list questionsReply
			decodeJSON(t, h.srv.do(t, h.c, "GET", "/api/questions", ""), &list)
			for _, v := range list.Questions {
				if v.RequestID == id {
					t.Fatalf("question %s is settled (%s) but still listed with its buttons", id, text)
				}
			}
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("no resolved event for %s", id)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *harness) Feedback() bool    { return true }
func (h *harness) Break() bool       { return false }
func (h *harness) Heal() bool        { return false }
func (h *harness) Secrets() []string { return []string{alicePassword, bobPassword, aliceHash} }

// Edit approves question id with its command changed to text, through
// POST /api/respond's edit (what the page's editor sends).
func (h *harness) Edit(t *testing.T, id, text string) string {
	h.session(t)
	body, _ := json.Marshal(RespondRequest{RequestID: id, Action: string(approverbot.ChoiceOnce), Edit: &text})
	res := h.srv.do(t, h.c, "POST", "/api/respond", string(body), "Content-Type", "application/json", csrfHeader, h.csrf)
	var out RespondResult
	raw := readBody(t, res)
	if json.Unmarshal([]byte(raw), &out) != nil || out.Message == "" {
		return raw
	}
	return out.Message
}

// StepsUp implements channeltest.SteppingUp: the page asks for a passkey
// or security key when a step-up question is approved.
func (h *harness) StepsUp() bool { return true }

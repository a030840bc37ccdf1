package webhook_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/channeltest"
	"github.com/signoff-dev/signoff/internal/approverbot/webhook"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/httpapi/httpapitest"
)

const testSecret = "whsec-0123456789abcdef-test"

// delivery is one POST the receiver got.
type delivery struct {
	Event, Delivery string
	Timestamp       string
	Body            []byte
	// Type and RequestID are read from the body.
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
}

// receiver is the system behind the webhook URL. It checks every
// signature with its own HMAC (not the package's) and answers with the
// statuses queued in fail before answering 200.
type receiver struct {
	t   testing.TB
	srv *httptest.Server
	got chan delivery
	rec httpapitest.Recorder

	mu   sync.Mutex
	fail []int
	// retryAfter is sent with a 429.
	retryAfter string
}

func newReceiver(t testing.TB) *receiver {
	rc := &receiver{t: t, got: make(chan delivery, 100)}
	rc.srv = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body := rc.rec.Record(r.Header.Get("X-Signoff-Event"), r)
	ts := r.Header.Get("X-Signoff-Timestamp")
	m := hmac.New(sha256.New, []byte(testSecret))
	m.Write([]byte(ts + "." + string(body)))
	if want := "sha256=" + hex.EncodeToString(m.Sum(nil)); r.Header.Get("X-Signoff-Signature") != want {
		rc.t.Errorf("receiver: signature %q, want %q", r.Header.Get("X-Signoff-Signature"), want)
	}
	if sec, err := strconv.ParseInt(ts, 10, 64); err != nil || time.Since(time.Unix(sec, 0)).Abs() > time.Minute {
		rc.t.Errorf("receiver: timestamp %q is not now", ts)
	}
	d := delivery{Event: r.Header.Get("X-Signoff-Event"), Delivery: r.Header.Get("X-Signoff-Delivery"), Timestamp: ts, Body: body}
	var probe struct {
		Type      string `json:"type"`
		RequestID string `json:"request_id"`
		Request   struct {
			RequestID string `json:"request_id"`
		} `json:"request"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		rc.t.Errorf("receiver: body is not JSON: %v", err)
	}
	d.Type, d.RequestID = probe.Type, probe.RequestID
	if d.RequestID == "" {
		d.RequestID = probe.Request.RequestID
	}
	rc.got <- d
	rc.mu.Lock()
	status := http.StatusOK
	if len(rc.fail) > 0 {
		status, rc.fail = rc.fail[0], rc.fail[1:]
	}
	ra := rc.retryAfter
	rc.mu.Unlock()
	if status == http.StatusTooManyRequests && ra != "" {
		w.Header().Set("Retry-After", ra)
	}
	w.WriteHeader(status)
	if status != http.StatusOK {
		_, _ = io.WriteString(w, "receiver says no\n(status "+strconv.Itoa(status)+")")
	}
}

func (rc *receiver) failNext(statuses ...int) {
	rc.mu.Lock()
	rc.fail = append(rc.fail, statuses...)
	rc.mu.Unlock()
}

func testConfig(t testing.TB, url string) *approverbot.Config {
	t.Helper()
	yaml := `
teams: [default, oncall]
approvers:
  alice: {display: Alice}
  bob:   {display: Bob}
  carol: {display: Carol}
  erin:  {display: Erin}
webhook:
  url: "` + url + `"
  secret: ` + testSecret + `
`
	cfg, err := approverbot.ParseConfig([]byte(yaml), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func quietOptions() webhook.Options {
	return webhook.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond}
}

// env is a plane with a bot whose only channel is the webhook.
type env struct {
	plane *brokertest.Plane
	recv  *receiver
	bot   *httptest.Server
	logs  *brokertest.LogBuffer

	*channeltest.Bot
}

func start(t *testing.T) *env {
	t.Helper()
	p := brokertest.Start(t, brokertest.Options{})
	recv := newReceiver(t)
	cfg := testConfig(t, recv.srv.URL+"/hooks/signoff")
	log, logs := channeltest.Logger()
	o := quietOptions()
	o.Logger = log
	ch, err := webhook.New(cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	ch.Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	e := &env{plane: p, recv: recv, bot: srv, logs: logs, Bot: channeltest.NewBot(t, p, cfg, ch, log, logs, testSecret)}
	return e
}

// post sends body with header to the respond endpoint; 503 (the bot's
// channels are still starting) is retried.
func (e *env) post(t *testing.T, body []byte, header http.Header) (int, []byte) {
	t.Helper()
	for range 100 {
		req, err := http.NewRequest(http.MethodPost, e.bot.URL+webhook.RespondPath, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(data), "starting") {
			return resp.StatusCode, data
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("the respond endpoint stayed unavailable")
	return 0, nil
}

func signed(body []byte, at time.Time) http.Header {
	h := http.Header{"Content-Type": {"application/json"}}
	webhook.Sign(h, testSecret, at, body)
	return h
}

// respond posts a response signed now.
func (e *env) respond(t *testing.T, v any) (int, []byte) {
	t.Helper()
	body, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return e.post(t, body, signed(body, time.Now()))
}

// nextDelivery waits for the next delivery of event for requestID.
func (rc *receiver) next(t *testing.T, event, requestID string) delivery {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case d := <-rc.got:
			if d.Event == event && d.RequestID == requestID {
				return d
			}
		case <-deadline:
			t.Fatalf("no %s for %s within 10 s", event, requestID)
		}
	}
}

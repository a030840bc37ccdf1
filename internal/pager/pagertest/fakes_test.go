package pagertest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/pager/pagertest"
)

const key32 = "0123456789abcdef0123456789ABCDEF"

func post(t *testing.T, url, contentType, auth, body string) (int, http.Header, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var v map[string]any
	_ = json.Unmarshal(data, &v)
	return resp.StatusCode, resp.Header, v
}

func TestPagerDutyFakeRefusesWhatTheAPIRefuses(t *testing.T) {
	f := pagertest.NewPagerDuty(t, key32)
	url := f.URL + "/v2/enqueue"
	trigger := func(mod string) string {
		return `{"routing_key":"` + key32 + `","event_action":"trigger","dedup_key":"k",` + mod + `}`
	}
	okPayload := `"payload":{"summary":"s","source":"src","severity":"error"}`
	tests := []struct {
		name, contentType, body string
		wantStatus              int
		wantError               string
	}{
		{"a valid trigger is accepted", "application/json", trigger(okPayload), 202, ""},
		{"a trigger without a summary is refused", "application/json", trigger(`"payload":{"source":"s","severity":"error"}`), 400, "payload.summary"},
		{"a trigger without a source is refused", "application/json", trigger(`"payload":{"summary":"s","severity":"error"}`), 400, "payload.source"},
		{"an unknown severity is refused", "application/json", trigger(`"payload":{"summary":"s","source":"s","severity":"high"}`), 400, "payload.severity"},
		{"a summary over 1024 characters is refused", "application/json",
			trigger(`"payload":{"summary":"` + strings.Repeat("é", 1025) + `","source":"s","severity":"info"}`), 400, "longer than 1024"},
		{"a dedup key over 255 characters is refused", "application/json",
			`{"routing_key":"` + key32 + `","event_action":"resolve","dedup_key":"` + strings.Repeat("k", 256) + `"}`, 400, "dedup_key"},
		{"a routing key of the wrong length is refused", "application/json",
			`{"routing_key":"short","event_action":"resolve","dedup_key":"k"}`, 400, "routing_key"},
		{"a routing key of another service is refused", "application/json",
			`{"routing_key":"` + strings.Repeat("z", 32) + `","event_action":"resolve","dedup_key":"k"}`, 400, "Invalid routing key"},
		{"an unknown field is refused", "application/json", trigger(okPayload + `,"urgency":"high"`), 400, "urgency"},
		{"an unknown action is refused", "application/json",
			`{"routing_key":"` + key32 + `","event_action":"close","dedup_key":"k"}`, 400, "event_action"},
		{"a resolve without a dedup key is refused", "application/json",
			`{"routing_key":"` + key32 + `","event_action":"resolve"}`, 400, "dedup_key"},
		{"a resolve with a payload is refused", "application/json",
			`{"routing_key":"` + key32 + `","event_action":"resolve","dedup_key":"k",` + okPayload + `}`, 400, "resolve"},
		{"a link that is not a URL is refused", "application/json", trigger(okPayload + `,"links":[{"href":"nope"}]`), 400, "links[0].href"},
		{"a body that is not JSON is refused", "application/json", `{`, 400, "invalid"},
		{"a form body is refused", "application/x-www-form-urlencoded", trigger(okPayload), 400, "Content-Type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := post(t, url, tt.contentType, "", tt.body)
			if status != tt.wantStatus {
				t.Fatalf("status %d, want %d (%v)", status, tt.wantStatus, body)
			}
			if tt.wantError == "" {
				if body["status"] != "success" || body["dedup_key"] != "k" {
					t.Fatalf("body = %v", body)
				}
				return
			}
			raw, _ := json.Marshal(body)
			if body["status"] != "invalid event" || !strings.Contains(string(raw), tt.wantError) {
				t.Fatalf("body %s does not name %q", raw, tt.wantError)
			}
		})
	}
	if n := len(f.Events()); n != 1 {
		t.Fatalf("%d events recorded; only the valid one should be", n)
	}
	select {
	case ev := <-f.Received:
		if ev.Payload.Summary != "s" {
			t.Fatalf("received %+v", ev)
		}
	default:
		t.Fatal("the accepted event was not sent on Received")
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET status %d", resp.StatusCode)
	}
}

func TestPagerDutyFakeDeduplicatesAsDocumented(t *testing.T) {
	f := pagertest.NewPagerDuty(t, key32)
	url := f.URL + "/v2/enqueue"
	send := func(action string) {
		body := `{"routing_key":"` + key32 + `","event_action":"` + action + `","dedup_key":"k"`
		if action == "trigger" {
			body += `,"payload":{"summary":"s","source":"src","severity":"error"}`
		}
		if status, _, b := post(t, url, "application/json", "", body+"}"); status != 202 {
			t.Fatalf("%s: %d %v", action, status, b)
		}
	}
	send("resolve") // nothing open: dropped
	send("trigger")
	send("trigger")
	send("resolve")
	send("trigger") // after a resolve: a new alert
	in := f.Incidents()
	if len(in) != 2 || in[0].Triggers != 2 || !in[0].Resolved || in[1].Resolved {
		t.Fatalf("incidents = %+v", in)
	}
}

func TestFaultsAreServedInOrder(t *testing.T) {
	f := pagertest.NewPagerDuty(t, key32)
	f.Inject(pagertest.Fault{Status: 429, RetryAfter: 1500 * time.Millisecond}, pagertest.Fault{Status: 502, Body: "bad gateway"})
	body := `{"routing_key":"` + key32 + `","event_action":"resolve","dedup_key":"k"}`
	status, h, _ := post(t, f.URL+"/v2/enqueue", "application/json", "", body)
	if status != 429 || h.Get("Retry-After") != "2" {
		t.Fatalf("first: %d Retry-After %q", status, h.Get("Retry-After"))
	}
	if status, _, _ := post(t, f.URL+"/v2/enqueue", "application/json", "", body); status != 502 {
		t.Fatalf("second: %d", status)
	}
	if status, _, _ := post(t, f.URL+"/v2/enqueue", "application/json", "", body); status != 202 {
		t.Fatalf("third: %d", status)
	}
	if f.Requests() != 3 {
		t.Fatalf("requests = %d", f.Requests())
	}
	// The faulted requests are recorded too, bodies intact.
	for i, r := range f.Recorded() {
		if r.Method != http.MethodPost || r.Path != "/v2/enqueue" || string(r.Body) != body {
			t.Errorf("recorded request %d = %s %s %q", i+1, r.Method, r.Path, r.Body)
		}
	}
}

func TestOpsgenieFakeRefusesWhatTheAPIRefuses(t *testing.T) {
	const key = "og-key"
	f := pagertest.NewOpsgenie(t, key)
	auth := "GenieKey " + key
	tests := []struct {
		name, path, auth, body string
		wantStatus             int
		wantError              string
	}{
		{"a valid create is accepted", "/v2/alerts", auth, `{"message":"m","alias":"a","priority":"P2","details":{"k":"v"},"responders":[{"type":"team","name":"ops"}]}`, 202, ""},
		{"a request without the key is refused", "/v2/alerts", "", `{"message":"m"}`, 401, "Could not authenticate"},
		{"a bearer token is refused", "/v2/alerts", "Bearer " + key, `{"message":"m"}`, 401, "Could not authenticate"},
		{"an empty message is refused", "/v2/alerts", auth, `{"message":" "}`, 422, "Message can not be empty"},
		{"a message over 130 characters is refused", "/v2/alerts", auth, `{"message":"` + strings.Repeat("m", 131) + `"}`, 422, "message can not be longer than 130"},
		{"an alias over 512 characters is refused", "/v2/alerts", auth, `{"message":"m","alias":"` + strings.Repeat("a", 513) + `"}`, 422, "alias"},
		{"details over 8000 characters are refused", "/v2/alerts", auth, `{"message":"m","details":{"k":"` + strings.Repeat("v", 8000) + `"}}`, 422, "Details"},
		{"details that are not strings are refused", "/v2/alerts", auth, `{"message":"m","details":{"k":1}}`, 400, "parse"},
		{"an unknown priority is refused", "/v2/alerts", auth, `{"message":"m","priority":"P0"}`, 422, "Priority"},
		{"21 tags are refused", "/v2/alerts", auth, `{"message":"m","tags":["` + strings.Repeat(`t","`, 20) + `t"]}`, 422, "Tags"},
		{"a responder of an unknown type is refused", "/v2/alerts", auth, `{"message":"m","responders":[{"type":"group","name":"x"}]}`, 422, "responder"},
		{"an unknown field is refused", "/v2/alerts", auth, `{"message":"m","severity":"high"}`, 400, "severity"},
		{"a close by alias is accepted", "/v2/alerts/a/close?identifierType=alias", auth, `{"user":"u","note":"n"}`, 202, ""},
		{"a close with an unknown identifier type is refused", "/v2/alerts/a/close?identifierType=name", auth, `{}`, 422, "identifierType"},
		{"a close with a source over 100 characters is refused", "/v2/alerts/a/close?identifierType=alias", auth, `{"source":"` + strings.Repeat("s", 101) + `"}`, 422, "source"},
		{"an unknown path is not found", "/v1/alerts", auth, `{}`, 404, "No handler"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := post(t, f.URL+tt.path, "application/json", tt.auth, tt.body)
			if status != tt.wantStatus {
				t.Fatalf("status %d, want %d (%v)", status, tt.wantStatus, body)
			}
			if body["requestId"] == nil {
				t.Fatalf("no requestId in %v", body)
			}
			if tt.wantError == "" {
				if body["result"] != "Request will be processed" {
					t.Fatalf("body = %v", body)
				}
				return
			}
			raw, _ := json.Marshal(body)
			if !strings.Contains(string(raw), tt.wantError) {
				t.Fatalf("body %s does not name %q", raw, tt.wantError)
			}
		})
	}
	if alerts := f.Alerts(); len(alerts) != 1 || !alerts[0].Closed || alerts[0].First.Priority != "P2" {
		t.Fatalf("alerts = %+v", alerts)
	}
	if n := len(f.Accepted()); n != 2 {
		t.Fatalf("%d requests recorded; only the two valid ones should be", n)
	}
	for _, want := range []string{"create", "close"} {
		select {
		case r := <-f.Received:
			if r.Action != want {
				t.Fatalf("received %q, want %q", r.Action, want)
			}
		default:
			t.Fatalf("no %s on Received", want)
		}
	}
}

func TestOpsgenieFakeKeepsOneOpenAlertPerAlias(t *testing.T) {
	const key = "og-key"
	f := pagertest.NewOpsgenie(t, key)
	auth := "GenieKey " + key
	for range 3 {
		if status, _, b := post(t, f.URL+"/v2/alerts", "application/json", auth, `{"message":"m","alias":"a"}`); status != 202 {
			t.Fatalf("%d %v", status, b)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, f.URL+"/v2/alerts/count", nil)
	req.Header.Set("Authorization", auth)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var count struct {
		Data struct{ Count int } `json:"data"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&count)
	resp.Body.Close()
	if resp.StatusCode != 200 || count.Data.Count != 1 {
		t.Fatalf("count: %d %+v", resp.StatusCode, count)
	}
	if a := f.Alerts(); len(a) != 1 || a[0].Count != 3 {
		t.Fatalf("alerts = %+v", a)
	}
}

package pagertest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// PagerDuty Events API v2 limits the fake enforces.
const (
	pdRoutingKeyLen = 32
	pdMaxDedupKey   = 255
	pdMaxSummary    = 1024
	pdMaxBody       = 512 << 10
)

// PDEvent is an event the PagerDuty fake accepted, as documented for POST
// /v2/enqueue.
type PDEvent struct {
	RoutingKey  string     `json:"routing_key"`
	EventAction string     `json:"event_action"`
	DedupKey    string     `json:"dedup_key"`
	Payload     *PDPayload `json:"payload,omitempty"`
	Images      []PDImage  `json:"images,omitempty"`
	Links       []PDLink   `json:"links,omitempty"`
	Client      string     `json:"client,omitempty"`
	ClientURL   string     `json:"client_url,omitempty"`
}

// PDPayload is an event's payload.
type PDPayload struct {
	Summary       string         `json:"summary"`
	Source        string         `json:"source"`
	Severity      string         `json:"severity"`
	Timestamp     string         `json:"timestamp,omitempty"`
	Component     string         `json:"component,omitempty"`
	Group         string         `json:"group,omitempty"`
	Class         string         `json:"class,omitempty"`
	CustomDetails map[string]any `json:"custom_details,omitempty"`
}

// PDImage is an entry of images.
type PDImage struct {
	Src  string `json:"src"`
	Href string `json:"href,omitempty"`
	Alt  string `json:"alt,omitempty"`
}

// PDLink is an entry of links.
type PDLink struct {
	Href string `json:"href"`
	Text string `json:"text,omitempty"`
}

// PDIncident is the alert a dedup key opened.
type PDIncident struct {
	DedupKey string
	// Triggers counts the trigger events folded into this alert.
	Triggers int
	Resolved bool
	// First is the trigger that opened it.
	First PDEvent
}

// PagerDuty is a fake of the Events API v2. Its ledger keeps the accepted
// events (Received gets each; see [PagerDuty.Events] for the full list) and
// the alerts by dedup key. Its key is the routing key of the fake's one
// service; a well-formed key that is not it is refused as "Invalid routing
// key".
type PagerDuty struct {
	fake[PDEvent, PDIncident]
}

// NewPagerDuty starts a fake whose service has routing key routingKey; it
// stops when t ends.
func NewPagerDuty(t testing.TB, routingKey string) *PagerDuty {
	return closedAtEnd(t, StartPagerDuty(routingKey))
}

// StartPagerDuty starts a fake outside a test (an example, a demo); the
// caller must Close it.
func StartPagerDuty(routingKey string) *PagerDuty {
	f := &PagerDuty{}
	f.listen(routingKey, f.serve, pdErrorBody)
	return f
}

// Events lists the accepted events in order.
func (f *PagerDuty) Events() []PDEvent { return f.requests() }

// Incidents lists the alerts opened, in order, with their state.
func (f *PagerDuty) Incidents() []PDIncident { return f.alertList() }

func (f *PagerDuty) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v2/enqueue" {
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	var ev PDEvent
	switch fault, err := readJSON(r, pdMaxBody, &ev); fault {
	case bodyNotJSON:
		pdInvalid(w, "Content-Type must be application/json")
		return
	case bodyUnreadable:
		pdInvalid(w, "could not read the body")
		return
	case bodyTooLarge:
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	case bodyInvalid:
		pdInvalid(w, "Event object is invalid: "+err.Error())
		return
	}
	if errs := pdValidate(ev); len(errs) > 0 {
		pdInvalid(w, errs...)
		return
	}
	if ev.RoutingKey != f.key {
		pdInvalid(w, "Invalid routing key")
		return
	}
	f.accept(ev)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_ = json.NewEncoder(w).Encode(map[string]string{"status": "success", "message": "Event processed", "dedup_key": ev.DedupKey})
}

// accept applies the documented de-duplication: a trigger adds to the open
// alert of its dedup key or opens one; a resolve closes the open alert or
// is dropped.
func (f *PagerDuty) accept(ev PDEvent) {
	f.record(ev, func() {
		switch ev.EventAction {
		case "trigger":
			f.openAlert(ev.DedupKey, func() *PDIncident { return &PDIncident{DedupKey: ev.DedupKey, First: ev} }).Triggers++
		case "resolve":
			f.closeAlert(ev.DedupKey, func(in *PDIncident) { in.Resolved = true })
		}
	})
}

// pdValidate checks an event as the Events API documents it.
func pdValidate(ev PDEvent) []string {
	var errs []string
	if n := len(ev.RoutingKey); n != pdRoutingKeyLen {
		errs = append(errs, fmt.Sprintf("Length of 'routing_key' is incorrect (should be %d characters)", pdRoutingKeyLen))
	}
	switch ev.EventAction {
	case "trigger":
		p := ev.Payload
		if p == nil {
			errs = append(errs, "'payload' is missing")
			break
		}
		if strings.TrimSpace(p.Summary) == "" {
			errs = append(errs, "'payload.summary' is missing or blank")
		} else if utf8.RuneCountInString(p.Summary) > pdMaxSummary {
			errs = append(errs, fmt.Sprintf("'payload.summary' is longer than %d characters", pdMaxSummary))
		}
		if strings.TrimSpace(p.Source) == "" {
			errs = append(errs, "'payload.source' is missing or blank")
		}
		switch p.Severity {
		case "critical", "error", "warning", "info":
		default:
			errs = append(errs, "'payload.severity' is invalid (must be critical, error, warning or info)")
		}
		if p.Timestamp != "" {
			if _, err := time.Parse(time.RFC3339Nano, p.Timestamp); err != nil {
				errs = append(errs, "'payload.timestamp' is not an ISO 8601 timestamp")
			}
		}
	case "acknowledge", "resolve":
		if ev.DedupKey == "" {
			errs = append(errs, "'dedup_key' is required for "+ev.EventAction)
		}
		if ev.Payload != nil || len(ev.Links) > 0 {
			errs = append(errs, "'"+ev.EventAction+"' takes routing_key, dedup_key and event_action only")
		}
	default:
		errs = append(errs, "'event_action' is invalid (must be trigger, acknowledge or resolve)")
	}
	if utf8.RuneCountInString(ev.DedupKey) > pdMaxDedupKey {
		errs = append(errs, fmt.Sprintf("'dedup_key' is longer than %d characters", pdMaxDedupKey))
	}
	for i, l := range ev.Links {
		if u, err := url.Parse(l.Href); err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
			errs = append(errs, fmt.Sprintf("'links[%d].href' is not a URL", i))
		}
	}
	for i, im := range ev.Images {
		if !strings.HasPrefix(im.Src, "https://") {
			errs = append(errs, fmt.Sprintf("'images[%d].src' must be served via HTTPS", i))
		}
	}
	return errs
}

func pdInvalid(w http.ResponseWriter, errs ...string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"status": "invalid event", "message": "Event object is invalid", "errors": errs})
}

func pdErrorBody(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return `{"status":"throttle event","message":"Requests for this service are arriving too quickly.  Please retry later."}`
	case status >= 500:
		return `{"status":"error","message":"Internal Server Error"}`
	}
	return `{"status":"invalid event","message":"Event object is invalid","errors":["injected"]}`
}

package pager

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// PagerDuty Events API v2 limits (developer.pagerduty.com, "Send an Alert
// Event" and "Events API v2 Overview").
const (
	pdRoutingKeyLen  = 32
	pdMaxSummary     = 1024
	pdMaxDedupKey    = 255
	pdEnqueuePath    = "/v2/enqueue"
	pdLinkText       = "Open the question in Signoff"
	pdClass          = "approval request"
	pdMaxPayloadByte = 512 << 10
	// pdMaxDetail cuts each custom detail, so a long description cannot
	// push the event past the 512 KB limit on its own.
	pdMaxDetail = 16 << 10
)

// pagerDuty pages through the Events API v2.
type pagerDuty struct{ *client }

// pdEvent is the body of POST /v2/enqueue.
type pdEvent struct {
	RoutingKey  string     `json:"routing_key"`
	EventAction string     `json:"event_action"`
	DedupKey    string     `json:"dedup_key"`
	Payload     *pdPayload `json:"payload,omitempty"`
	Links       []pdLink   `json:"links,omitempty"`
	Client      string     `json:"client,omitempty"`
	ClientURL   string     `json:"client_url,omitempty"`
}

type pdPayload struct {
	Summary       string            `json:"summary"`
	Source        string            `json:"source"`
	Severity      Severity          `json:"severity"`
	Timestamp     string            `json:"timestamp,omitempty"`
	Component     string            `json:"component,omitempty"`
	Group         string            `json:"group,omitempty"`
	Class         string            `json:"class,omitempty"`
	CustomDetails map[string]string `json:"custom_details,omitempty"`
}

type pdLink struct {
	Href string `json:"href"`
	Text string `json:"text,omitempty"`
}

// pdAccepted is the 202 answer.
type pdAccepted struct {
	Status   string `json:"status"`
	Message  string `json:"message"`
	DedupKey string `json:"dedup_key"`
}

func (p *pagerDuty) Kind() Kind { return KindPagerDuty }

func (p *pagerDuty) Trigger(ctx context.Context, pg Page) (Ref, error) {
	pg, key, err := p.prepare(pg)
	if err != nil {
		return Ref{}, err
	}
	ev := pdEvent{
		RoutingKey:  string(p.key),
		EventAction: "trigger",
		DedupKey:    key,
		Payload: &pdPayload{
			Summary:       truncate(pg.Summary, pdMaxSummary),
			Source:        p.cfg.Source,
			Severity:      cmp.Or(pg.Severity, p.cfg.Severity),
			Timestamp:     pageTime(pg).Format(time.RFC3339Nano),
			Component:     pg.Tool,
			Group:         pg.Team,
			Class:         pdClass,
			CustomDetails: details(pg),
		},
		Client: "Signoff",
	}
	if pg.Description != "" {
		ev.Payload.CustomDetails["description"] = pg.Description
	}
	for k, v := range ev.Payload.CustomDetails {
		ev.Payload.CustomDetails[k] = truncate(v, pdMaxDetail)
	}
	if pg.Link != "" {
		ev.Links = []pdLink{{Href: pg.Link, Text: pdLinkText}}
		ev.ClientURL = pg.Link
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return Ref{}, fmt.Errorf("pager %q: encode event: %w", p.cfg.Name, err)
	}
	if len(body) > pdMaxPayloadByte {
		return Ref{}, fmt.Errorf("%w: the event is %d bytes; PagerDuty accepts at most %d (shorten the description or details)",
			ErrInvalidPage, len(body), pdMaxPayloadByte)
	}
	if err := p.send(ctx, "trigger", pg.RequestID, body); err != nil {
		return Ref{}, err
	}
	p.log.InfoContext(ctx, "page triggered", "request_id", pg.RequestID, "dedup_key", key)
	return Ref{Pager: p.cfg.Name, DedupKey: key}, nil
}

func (p *pagerDuty) Resolve(ctx context.Context, dedupKey string) error {
	if dedupKey == "" || len(dedupKey) > pdMaxDedupKey {
		return fmt.Errorf("%w: dedup key must be 1 to %d characters", ErrInvalidPage, pdMaxDedupKey)
	}
	body, err := json.Marshal(pdEvent{RoutingKey: string(p.key), EventAction: "resolve", DedupKey: dedupKey})
	if err != nil {
		return fmt.Errorf("pager %q: encode event: %w", p.cfg.Name, err)
	}
	// PagerDuty accepts (202) and drops a resolve for an incident that is
	// unknown or already resolved, which is the success this port promises.
	if err := p.send(ctx, "resolve", "", body); err != nil {
		return err
	}
	p.log.InfoContext(ctx, "page resolved", "dedup_key", dedupKey)
	return nil
}

// send posts one event and accepts only 202 with status "success".
func (p *pagerDuty) send(ctx context.Context, op, requestID string, body []byte) error {
	resp, err := p.do(ctx, call{op: op, requestID: requestID, method: http.MethodPost, path: pdEnqueuePath, body: body})
	if err != nil {
		return err
	}
	if resp.status != http.StatusAccepted {
		e := p.finish(call{op: op}, &APIError{Status: resp.status}, resp.attempts)
		e.Message, e.Fields = p.vendorMessage(resp.body)
		if resp.status < 400 {
			e.Status = http.StatusBadGateway // an unexpected 2xx/3xx is the vendor misbehaving, not our fault
			e.Message = fmt.Sprintf("unexpected HTTP %d: %s", resp.status, e.Message)
		}
		return e
	}
	var acc pdAccepted
	if err := json.Unmarshal(resp.body, &acc); err != nil || acc.Status != "success" {
		e := p.finish(call{op: op}, &APIError{Status: http.StatusBadGateway}, resp.attempts)
		e.Message = "HTTP 202 without {\"status\":\"success\"}: " + truncate(clean(p.key.scrub(string(resp.body)), false), 200)
		return e
	}
	return nil
}

// CheckHealth checks that the Events API answers over TLS. The Events API
// has no call that checks a routing key without creating an alert, so the
// key itself is checked only for its documented form (at New); one GET of
// the enqueue endpoint proves DNS, TLS and the route, and any answer below
// 500 counts as up.
func (p *pagerDuty) CheckHealth(ctx context.Context) error {
	return p.probe(ctx, call{op: "health", method: http.MethodGet, path: pdEnqueuePath}, nil)
}

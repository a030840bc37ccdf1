package pager

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/pkg/policy"
)

// Opsgenie Alert API limits (docs.opsgenie.com, "Alert API": Create Alert
// and Close Alert parameters).
const (
	ogMaxMessage     = 130
	ogMaxAlias       = 512
	ogMaxDescription = 15000
	ogMaxDetails     = 8000 // characters of all keys and values together
	ogMaxUser        = 100
	ogMaxNote        = 25000
	ogMaxResponders  = 50
	ogAlertsPath     = "/v2/alerts"
	ogUser           = "Signoff"
	ogEntity         = "signoff"
)

// opsgenie pages through the Alert API.
type opsgenie struct {
	*client
	responders []ogResponder
	tags       []string
}

// ogResponder is one entry of "responders": a team, escalation or schedule
// by name, or a user by username.
type ogResponder struct {
	Type     string `json:"type"`
	Name     string `json:"name,omitempty"`
	Username string `json:"username,omitempty"`
}

func parseResponder(s string) (ogResponder, error) {
	typ, name, err := policy.ParseResponder(s)
	switch {
	case err != nil:
		return ogResponder{}, err
	case typ == "user":
		return ogResponder{Type: typ, Username: name}, nil
	}
	return ogResponder{Type: typ, Name: name}, nil
}

// ogCreate is the body of POST /v2/alerts.
type ogCreate struct {
	Message     string            `json:"message"`
	Alias       string            `json:"alias"`
	Description string            `json:"description,omitempty"`
	Responders  []ogResponder     `json:"responders,omitempty"`
	Tags        []string          `json:"tags,omitempty"`
	Details     map[string]string `json:"details,omitempty"`
	Entity      string            `json:"entity,omitempty"`
	Source      string            `json:"source,omitempty"`
	Priority    string            `json:"priority,omitempty"`
	User        string            `json:"user,omitempty"`
}

// ogClose is the body of POST /v2/alerts/{alias}/close.
type ogClose struct {
	User   string `json:"user,omitempty"`
	Source string `json:"source,omitempty"`
	Note   string `json:"note,omitempty"`
}

// ogAccepted is the 202 answer of both calls: the request is queued.
type ogAccepted struct {
	Result    string  `json:"result"`
	Took      float64 `json:"took"`
	RequestID string  `json:"requestId"`
}

// priority maps a severity to an Opsgenie priority.
func priority(s Severity) string {
	switch s {
	case SeverityCritical:
		return "P1"
	case SeverityError:
		return "P2"
	case SeverityWarning:
		return "P3"
	default:
		return "P4"
	}
}

func (o *opsgenie) Kind() Kind { return KindOpsgenie }

func (o *opsgenie) Trigger(ctx context.Context, pg Page) (Ref, error) {
	pg, alias, err := o.prepare(pg)
	if err != nil {
		return Ref{}, err
	}
	// The link goes first so that cutting a long description keeps it.
	desc := pg.Description
	if pg.Link != "" {
		desc = strings.TrimSpace("Open the question: " + pg.Link + "\n\n" + desc)
	}
	body, err := json.Marshal(ogCreate{
		Message:     truncate(pg.Summary, ogMaxMessage),
		Alias:       alias,
		Description: truncate(desc, ogMaxDescription),
		Responders:  o.responders,
		Tags:        o.tags,
		Details:     fitDetails(details(pg), ogMaxDetails),
		Entity:      ogEntity,
		Source:      o.cfg.Source,
		Priority:    priority(cmp.Or(pg.Severity, o.cfg.Severity)),
		User:        ogUser,
	})
	if err != nil {
		return Ref{}, fmt.Errorf("pager %q: encode alert: %w", o.cfg.Name, err)
	}
	// Opsgenie keeps one open alert per alias: a second create with the
	// same alias adds to its count instead of opening another.
	acc, err := o.send(ctx, call{op: "trigger", requestID: pg.RequestID, method: http.MethodPost, path: ogAlertsPath, body: body}, false)
	if err != nil {
		return Ref{}, err
	}
	o.log.InfoContext(ctx, "page triggered", "request_id", pg.RequestID, "dedup_key", alias, "vendor_request_id", acc.RequestID)
	return Ref{Pager: o.cfg.Name, DedupKey: alias, VendorID: acc.RequestID}, nil
}

func (o *opsgenie) Resolve(ctx context.Context, dedupKey string) error {
	if dedupKey == "" || utf8.RuneCountInString(dedupKey) > ogMaxAlias {
		return fmt.Errorf("%w: dedup key must be 1 to %d characters", ErrInvalidPage, ogMaxAlias)
	}
	body, err := json.Marshal(ogClose{User: ogUser, Source: o.cfg.Source, Note: "The approval request was settled in Signoff."})
	if err != nil {
		return fmt.Errorf("pager %q: encode close: %w", o.cfg.Name, err)
	}
	path := ogAlertsPath + "/" + url.PathEscape(dedupKey) + "/close?identifierType=alias"
	// A close is queued (202) whether or not an open alert has the alias;
	// a 404, which some Opsgenie front ends answer for an unknown alias, is
	// the same "nothing open to close" and so a success.
	if _, err := o.send(ctx, call{op: "resolve", method: http.MethodPost, path: path, body: body}, true); err != nil {
		return err
	}
	o.log.InfoContext(ctx, "page resolved", "dedup_key", dedupKey)
	return nil
}

// send sends c and accepts 202 with a requestId (and 404 when notFoundOK).
func (o *opsgenie) send(ctx context.Context, c call, notFoundOK bool) (ogAccepted, error) {
	c.header = http.Header{"Authorization": {"GenieKey " + string(o.key)}}
	resp, err := o.do(ctx, c)
	if err != nil {
		return ogAccepted{}, err
	}
	if notFoundOK && resp.status == http.StatusNotFound {
		return ogAccepted{}, nil
	}
	if resp.status != http.StatusAccepted {
		e := o.finish(c, &APIError{Status: resp.status}, resp.attempts)
		e.Message, e.Fields = o.vendorMessage(resp.body)
		if resp.status < 400 {
			e.Status = http.StatusBadGateway
			e.Message = fmt.Sprintf("unexpected HTTP %d: %s", resp.status, e.Message)
		}
		return ogAccepted{}, e
	}
	var acc ogAccepted
	if err := json.Unmarshal(resp.body, &acc); err != nil || acc.RequestID == "" {
		e := o.finish(c, &APIError{Status: http.StatusBadGateway}, resp.attempts)
		e.Message = "HTTP 202 without a requestId: " + truncate(clean(o.key.scrub(string(resp.body)), false), 200)
		return ogAccepted{}, e
	}
	return acc, nil
}

// CheckHealth counts alerts (GET /v2/alerts/count), which creates nothing.
// 200 is healthy; so is 403, which means the key was recognised but the API
// integration lacks read access (creating and closing alerts needs none);
// 401 (key rejected), other 4xx and 5xx are not.
func (o *opsgenie) CheckHealth(ctx context.Context) error {
	c := call{op: "health", method: http.MethodGet, path: ogAlertsPath + "/count",
		header: http.Header{"Authorization": {"GenieKey " + string(o.key)}}}
	return o.probe(ctx, c, func(status int) bool {
		return status == http.StatusOK || status == http.StatusForbidden || status == http.StatusTooManyRequests
	})
}

// fitDetails keeps details within Opsgenie's limit on all keys and values
// together: the identifying keys first, then the others in name order; the
// value that crosses the limit is cut and later ones dropped, and
// "truncated" says so.
func fitDetails(d map[string]string, limit int) map[string]string {
	first := []string{"request_id", "link", "team", "tool", "session_id"}
	var keys []string
	for _, k := range first {
		if _, ok := d[k]; ok {
			keys = append(keys, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(d)) {
		if !slices.Contains(first, k) {
			keys = append(keys, k)
		}
	}
	const mark, markValue = "truncated", "true"
	budget := limit - len(mark) - len(markValue)
	out := make(map[string]string, len(d))
	cut := false
	for _, k := range keys {
		k2 := truncate(k, 100)
		need := utf8.RuneCountInString(k2) + utf8.RuneCountInString(d[k])
		if need <= budget {
			out[k2] = d[k]
			budget -= need
			continue
		}
		cut = true
		if room := budget - utf8.RuneCountInString(k2); room > 1 {
			out[k2] = truncate(d[k], room)
			budget = 0
		}
		break
	}
	if cut {
		out[mark] = markValue
	}
	return out
}

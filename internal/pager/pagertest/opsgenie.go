package pagertest

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// Opsgenie Alert API limits the fake enforces (Create Alert and Close
// Alert parameters).
const (
	ogMaxMessage     = 130
	ogMaxAlias       = 512
	ogMaxDescription = 15000
	ogMaxDetails     = 8000
	ogMaxSource      = 100
	ogMaxUser        = 100
	ogMaxNote        = 25000
	ogMaxEntity      = 512
	ogMaxTags        = 20
	ogMaxTagChars    = 50
	ogMaxActions     = 10
	ogMaxResponders  = 50
	ogMaxBody        = 1 << 20
)

// OGResponder is an entry of responders or visibleTo.
type OGResponder struct {
	Type     string `json:"type"`
	ID       string `json:"id,omitempty"`
	Name     string `json:"name,omitempty"`
	Username string `json:"username,omitempty"`
}

// OGCreate is the documented body of POST /v2/alerts.
type OGCreate struct {
	Message     string            `json:"message"`
	Alias       string            `json:"alias,omitempty"`
	Description string            `json:"description,omitempty"`
	Responders  []OGResponder     `json:"responders,omitempty"`
	VisibleTo   []OGResponder     `json:"visibleTo,omitempty"`
	Actions     []string          `json:"actions,omitempty"`
	Tags        []string          `json:"tags,omitempty"`
	Details     map[string]string `json:"details,omitempty"`
	Entity      string            `json:"entity,omitempty"`
	Source      string            `json:"source,omitempty"`
	Priority    string            `json:"priority,omitempty"`
	User        string            `json:"user,omitempty"`
	Note        string            `json:"note,omitempty"`
}

// OGClose is the documented body of POST /v2/alerts/{identifier}/close.
type OGClose struct {
	User   string `json:"user,omitempty"`
	Source string `json:"source,omitempty"`
	Note   string `json:"note,omitempty"`
}

// OGRequest is a request the Opsgenie fake accepted.
type OGRequest struct {
	// Action is "create" or "close".
	Action string
	// Identifier and IdentifierType are a close's path and query.
	Identifier, IdentifierType string
	Create                     OGCreate
	Close                      OGClose
	// RequestID is the requestId the fake answered.
	RequestID string
}

// OGAlert is an alert as the fake keeps it.
type OGAlert struct {
	Alias string
	// Count is how many creates were folded into this alert.
	Count  int
	Closed bool
	First  OGCreate
}

// Opsgenie is a fake of the Alert API. Its ledger keeps the accepted
// requests (Received gets each; see [Opsgenie.Accepted] for the full list)
// and the alerts by alias.
type Opsgenie struct {
	fake[OGRequest, OGAlert]
}

// NewOpsgenie starts a fake that accepts the API key apiKey; it stops when
// t ends.
func NewOpsgenie(t testing.TB, apiKey string) *Opsgenie {
	return closedAtEnd(t, StartOpsgenie(apiKey))
}

// StartOpsgenie starts a fake outside a test; the caller must Close it.
func StartOpsgenie(apiKey string) *Opsgenie {
	f := &Opsgenie{}
	f.listen(apiKey, f.serve, ogErrorBody)
	return f
}

// Accepted lists the accepted requests in order.
func (f *Opsgenie) Accepted() []OGRequest { return f.requests() }

// Alerts lists the alerts created, in order, with their state.
func (f *Opsgenie) Alerts() []OGAlert { return f.alertList() }

func (f *Opsgenie) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "GenieKey "+f.key {
		ogError(w, http.StatusUnauthorized, "Could not authenticate", nil)
		return
	}
	path := r.URL.EscapedPath()
	switch {
	case path == "/v2/alerts/count" && r.Method == http.MethodGet:
		writeJSON(w, http.StatusOK, map[string]any{"data": map[string]int{"count": f.openCount()}, "took": 0.001, "requestId": newID()})
	case path == "/v2/alerts" && r.Method == http.MethodPost:
		var c OGCreate
		if !decodeStrict(w, r, &c) {
			return
		}
		if errs := ogValidateCreate(c); len(errs) > 0 {
			ogError(w, http.StatusUnprocessableEntity, "Request body is not processable. Please check the errors.", errs)
			return
		}
		f.accept(w, OGRequest{Action: "create", Create: c})
	case strings.HasPrefix(path, "/v2/alerts/") && strings.HasSuffix(path, "/close") && r.Method == http.MethodPost:
		id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/v2/alerts/"), "/close")
		typ := r.URL.Query().Get("identifierType")
		if typ == "" {
			typ = "id"
		}
		if typ != "id" && typ != "alias" && typ != "tiny" {
			ogError(w, http.StatusUnprocessableEntity, "Request body is not processable. Please check the errors.",
				map[string]string{"identifierType": "Invalid identifierType [" + typ + "]"})
			return
		}
		var c OGClose
		if r.ContentLength != 0 && !decodeStrict(w, r, &c) {
			return
		}
		errs := map[string]string{}
		checkLen(errs, "user", c.User, ogMaxUser)
		checkLen(errs, "source", c.Source, ogMaxSource)
		checkLen(errs, "note", c.Note, ogMaxNote)
		checkLen(errs, "identifier", id, ogMaxAlias)
		if len(errs) > 0 {
			ogError(w, http.StatusUnprocessableEntity, "Request body is not processable. Please check the errors.", errs)
			return
		}
		f.accept(w, OGRequest{Action: "close", Identifier: id, IdentifierType: typ, Close: c})
	default:
		ogError(w, http.StatusNotFound, "No handler found for "+r.Method+" "+path, nil)
	}
}

// accept records a valid request, applies it the way Opsgenie documents
// alias de-duplication (one open alert per alias; a create for an open
// alias adds to its count), and answers 202. The real API applies requests
// asynchronously and answers 202 even for a close that finds no alert.
func (f *Opsgenie) accept(w http.ResponseWriter, req OGRequest) {
	req.RequestID = newID()
	f.record(req, func() {
		switch req.Action {
		case "create":
			alias := req.Create.Alias
			if alias == "" {
				alias = req.Create.Message // Opsgenie's default alias
			}
			f.openAlert(alias, func() *OGAlert { return &OGAlert{Alias: alias, First: req.Create} }).Count++
		case "close":
			if req.IdentifierType == "alias" {
				f.closeAlert(req.Identifier, func(a *OGAlert) { a.Closed = true })
			}
		}
	})
	writeJSON(w, http.StatusAccepted, map[string]any{"result": "Request will be processed", "took": 0.002, "requestId": req.RequestID})
}

func ogValidateCreate(c OGCreate) map[string]string {
	errs := map[string]string{}
	if strings.TrimSpace(c.Message) == "" {
		errs["message"] = "Message can not be empty."
	}
	checkLen(errs, "message", c.Message, ogMaxMessage)
	checkLen(errs, "alias", c.Alias, ogMaxAlias)
	checkLen(errs, "description", c.Description, ogMaxDescription)
	checkLen(errs, "source", c.Source, ogMaxSource)
	checkLen(errs, "user", c.User, ogMaxUser)
	checkLen(errs, "note", c.Note, ogMaxNote)
	checkLen(errs, "entity", c.Entity, ogMaxEntity)
	n := 0
	for k, v := range c.Details {
		n += utf8.RuneCountInString(k) + utf8.RuneCountInString(v)
	}
	if n > ogMaxDetails {
		errs["details"] = fmt.Sprintf("Details can not be longer than %d characters.", ogMaxDetails)
	}
	if len(c.Tags) > ogMaxTags {
		errs["tags"] = fmt.Sprintf("Tags can not be more than %d.", ogMaxTags)
	}
	for _, t := range c.Tags {
		checkLen(errs, "tags", t, ogMaxTagChars)
	}
	if len(c.Actions) > ogMaxActions {
		errs["actions"] = fmt.Sprintf("Actions can not be more than %d.", ogMaxActions)
	}
	if len(c.Responders) > ogMaxResponders {
		errs["responders"] = fmt.Sprintf("Responders can not be more than %d.", ogMaxResponders)
	}
	for _, rs := range [][]OGResponder{c.Responders, c.VisibleTo} {
		for _, r := range rs {
			switch {
			case r.Type != "team" && r.Type != "user" && r.Type != "escalation" && r.Type != "schedule":
				errs["responders"] = "Invalid responder type [" + r.Type + "]"
			case r.ID == "" && r.Type == "user" && r.Username == "":
				errs["responders"] = "User responder needs an id or a username."
			case r.ID == "" && r.Type != "user" && r.Name == "":
				errs["responders"] = "Responder needs an id or a name."
			}
		}
	}
	switch c.Priority {
	case "", "P1", "P2", "P3", "P4", "P5":
	default:
		errs["priority"] = "Priority should be one of [P1, P2, P3, P4, P5]"
	}
	return errs
}

func checkLen(errs map[string]string, field, v string, n int) {
	if utf8.RuneCountInString(v) > n {
		errs[field] = fmt.Sprintf("%s can not be longer than %d characters.", field, n)
	}
}

// decodeStrict reads a JSON body with only the documented fields.
func decodeStrict(w http.ResponseWriter, r *http.Request, v any) bool {
	switch fault, err := readJSON(r, ogMaxBody, v); fault {
	case bodyOK:
		return true
	case bodyNotJSON:
		ogError(w, http.StatusUnsupportedMediaType, "Content-Type must be application/json", nil)
	case bodyUnreadable, bodyTooLarge:
		ogError(w, http.StatusRequestEntityTooLarge, "Request body is too large", nil)
	default:
		ogError(w, http.StatusBadRequest, "Could not parse the request body: "+err.Error(), nil)
	}
	return false
}

func ogError(w http.ResponseWriter, status int, msg string, errs map[string]string) {
	body := map[string]any{"message": msg, "took": 0.001, "requestId": newID()}
	if len(errs) > 0 {
		body["errors"] = errs
	}
	writeJSON(w, status, body)
}

func ogErrorBody(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return `{"message":"You are making too many requests! To avoid errors, we recommend you limit requests.","took":0.0,"requestId":"` + newID() + `"}`
	case status >= 500:
		return `{"message":"Internal Server Error","took":0.0,"requestId":"` + newID() + `"}`
	}
	return `{"message":"injected","took":0.0,"requestId":"` + newID() + `"}`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// newID is a random UUID (version 4), the form of Opsgenie's requestId.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

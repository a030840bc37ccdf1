package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/card"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// The Grants view lists the standing grants of the signed-in approver's
// teams (admin.list_grants with By = the approver: the brokers decide
// membership) and revokes one by id (admin.revoke_grant with By; the
// brokers refuse unless the approver is a member of one of its teams).

// Grants requests per approver (token bucket): twenty, then one a second.
// Each one is a request to the brokers.
const (
	grantsBurst  = 20
	grantsRefill = time.Second
	// maxRevokeBody bounds POST /api/grants/revoke's body.
	maxRevokeBody = 4 << 10
)

// GrantView is one grant as GET /api/grants lists it: the brokers' grant
// unchanged, what it allows in words, and its item as the page renders it.
type GrantView struct {
	Grant messages.Grant `json:"grant"`
	Text  string         `json:"text"`
	HTML  string         `json:"html"`
}

// grantsReply is GET /api/grants' reply.
type grantsReply struct {
	Grants []GrantView `json:"grants"`
}

// RevokeRequest is POST /api/grants/revoke's body.
type RevokeRequest struct {
	GrantID string `json:"grant_id"`
}

// RevokeResult is POST /api/grants/revoke's reply: the revoked grant and
// a sentence for people.
type RevokeResult struct {
	Revoked GrantView `json:"revoked"`
	Message string    `json:"message"`
}

// grantData is what the grant template renders.
type grantData struct {
	ID, Scope          string
	What               *grantLine
	Session, Agent     string
	Teams              string
	Approvers          string
	RequestID          string
	Created, CreatedAt string // in words, and RFC 3339
	Expires            string
	Legacy             bool
}

func newGrantData(g messages.Grant) grantData {
	g = approverbot.CleanGrant(g)
	what := &grantLine{Tool: g.Tool, Session: g.SessionID, Agent: g.AgentID}
	for _, p := range g.Patterns[:min(len(g.Patterns), approverbot.DefaultLimits.Patterns)] {
		what.Patterns = append(what.Patterns, card.Clip(card.OneLine(p), approverbot.DefaultLimits.Pattern))
	}
	what.More = len(g.Patterns) - len(what.Patterns)
	d := grantData{ID: g.ID, Scope: approverbot.ScopeText(g.Scope), What: what, Session: g.SessionID, Agent: g.AgentID,
		Teams: strings.Join(g.Teams, ", "), Approvers: approverbot.GrantApprovers(g), RequestID: g.RequestID,
		Expires: approverbot.GrantExpiry(g), Legacy: g.Legacy}
	if !g.CreatedAt.IsZero() {
		d.Created = g.CreatedAt.UTC().Format("2006-01-02 15:04 UTC")
		d.CreatedAt = g.CreatedAt.UTC().Format(time.RFC3339)
	}
	return d
}

// grantView renders g.
func grantView(g messages.Grant) (GrantView, error) {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, "grant", newGrantData(g)); err != nil {
		return GrantView{}, err
	}
	return GrantView{Grant: g, Text: approverbot.GrantText(approverbot.CleanGrant(g)), HTML: buf.String()}, nil
}

// grantAdmin returns the bot's grants side, or answers why there is none.
// It also spends one of the approver's grants requests.
func (c *Channel) grantAdmin(w http.ResponseWriter, p principal) (approverbot.GrantAdmin, bool) {
	if ok, wait := c.grantsLimit.take(p.approver); !ok {
		secs := int(wait.Round(time.Second)/time.Second) + 1
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		writeError(w, http.StatusTooManyRequests, "rate_limited", "too many grants requests; try again in "+strconv.Itoa(secs)+" s")
		return nil, false
	}
	resp := c.responder()
	if resp == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the bot is starting; retry in a moment")
		return nil, false
	}
	ga, ok := resp.(approverbot.GrantAdmin)
	if !ok {
		writeError(w, http.StatusServiceUnavailable, "unavailable", approverbot.ErrGrantsUnavailable.Error())
		return nil, false
	}
	return ga, true
}

// handleGrants serves GET /api/grants: the grants of the viewer's teams,
// newest first.
func (c *Channel) handleGrants(w http.ResponseWriter, r *http.Request) {
	p, ok := c.principal(r)
	if !ok {
		c.unauthorized(w, r)
		return
	}
	ga, ok := c.grantAdmin(w, p)
	if !ok {
		return
	}
	gs, err := ga.Grants(r.Context(), p.approver)
	if err != nil {
		status, code := respondErrorStatus(err)
		c.log.Warn("web: grants not listed", "approver", p.approver, "err", err)
		writeError(w, status, code, approverbot.GrantErrorText(err))
		return
	}
	out := grantsReply{Grants: []GrantView{}}
	for _, g := range gs {
		v, err := grantView(g)
		if err != nil {
			c.log.Error("web: cannot render a grant", "grant_id", g.ID, "err", err)
			writeError(w, http.StatusInternalServerError, "internal", "cannot render grant "+cleanLine(g.ID, 80))
			return
		}
		out.Grants = append(out.Grants, v)
	}
	writeJSON(w, http.StatusOK, out)
}

// handleRevoke serves POST /api/grants/revoke.
func (c *Channel) handleRevoke(w http.ResponseWriter, r *http.Request, p principal) {
	r.Body = http.MaxBytesReader(w, r.Body, maxRevokeBody)
	var body RevokeRequest
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "the body must be JSON {grant_id}: "+err.Error())
		return
	}
	if err := approverbot.CheckGrantID(body.GrantID); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	ga, ok := c.grantAdmin(w, p)
	if !ok {
		return
	}
	g, err := ga.RevokeGrant(r.Context(), p.approver, body.GrantID)
	if err != nil {
		status, code := respondErrorStatus(err)
		if errors.Is(err, messages.ErrNotFound) {
			// Revoked already (another device), expired, or never there.
			err = errors.New("grant " + cleanLine(body.GrantID, 80) + " is not there: revoked or expired already")
		}
		c.log.Warn("web: grant not revoked", "grant_id", body.GrantID, "approver", p.approver, "err", err)
		writeError(w, status, code, approverbot.GrantErrorText(err))
		return
	}
	v, err := grantView(g)
	if err != nil {
		c.log.Error("web: cannot render a grant", "grant_id", g.ID, "err", err)
		v = GrantView{Grant: g, Text: approverbot.GrantText(approverbot.CleanGrant(g))}
	}
	c.log.Info("web: grant revoked", "grant_id", g.ID, "approver", p.approver)
	writeJSON(w, http.StatusOK, RevokeResult{Revoked: v,
		Message: "Revoked: " + v.Text + ". The next such call asks again."})
}

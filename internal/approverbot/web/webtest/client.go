package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Client is a browser of the bot's web page: one cookie jar, and the CSRF
// token of its session once [Client.Login] has signed in.
type Client struct {
	// Base is the page's root URL, e.g. "http://127.0.0.1:8080".
	Base string
	// HTTP sends the requests; its cookie jar holds the session.
	HTTP *http.Client
	// CSRF is sent as X-CSRF-Token on every request when not empty.
	CSRF string
}

// New returns a signed-out client of the page at base, with a fresh cookie
// jar and a 10 s timeout per request.
func New(base string) *Client {
	jar, _ := cookiejar.New(nil) // cookiejar.New never fails with nil options
	return &Client{Base: base, HTTP: &http.Client{Jar: jar, Timeout: 10 * time.Second}}
}

// Login signs in as approver with password and keeps the session's CSRF
// token in c.CSRF (empty if the bot sent none; callers that require one
// check it).
func (c *Client) Login(ctx context.Context, approver, password string) error {
	var login struct {
		CSRFToken string `json:"csrf_token"`
	}
	if err := c.Do(ctx, http.MethodPost, "/login", map[string]string{"approver": approver, "password": password}, &login); err != nil {
		return err
	}
	c.CSRF = login.CSRFToken
	return nil
}

// Question is one entry of GET /api/questions as the tests read it.
type Question struct {
	RequestID string          `json:"request_id"`
	Question  json.RawMessage `json:"question"`
}

// Questions lists the open questions the signed-in approver may see.
func (c *Client) Questions(ctx context.Context) ([]Question, error) {
	var list struct {
		Questions []Question `json:"questions"`
	}
	if err := c.Do(ctx, http.MethodGet, "/api/questions", nil, &list); err != nil {
		return nil, err
	}
	return list.Questions, nil
}

// Reply is the answer of POST /api/respond.
type Reply struct {
	Applied bool           `json:"applied"`
	State   messages.State `json:"state"`
}

// Respond answers question id with action ("approve" or "deny").
func (c *Client) Respond(ctx context.Context, id, action string) (Reply, error) {
	var rep Reply
	err := c.Do(ctx, http.MethodPost, "/api/respond", map[string]string{"request_id": id, "action": action}, &rep)
	return rep, err
}

// Do sends a JSON request (body marshalled when not nil) and decodes a 200
// reply into out; any other status is an error carrying the reply's body.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Base+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.CSRF != "" {
		req.Header.Set("X-CSRF-Token", c.CSRF)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(data))
	}
	return json.Unmarshal(data, out)
}

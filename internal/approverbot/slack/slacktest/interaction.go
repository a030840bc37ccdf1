package slacktest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// User is a Slack user who clicks.
type User struct {
	ID       string `json:"id"`
	Username string `json:"username"`
	Name     string `json:"name"`
	TeamID   string `json:"team_id"`
}

// Click returns the body Slack posts to the app's Request URL when u clicks
// the button with actionID of m: a block_actions payload, form-encoded as
// payload=<json>, with a response_url served by this fake. m is the
// message as the user saw it (buttons included), e.g. as received on
// Posted or Updated.
func (s *Server) Click(m Message, actionID string, u User) ([]byte, error) {
	b, ok := m.Button(actionID)
	if !ok {
		return nil, fmt.Errorf("slacktest: message %s has no button %q", m.TS, actionID)
	}
	s.mu.Lock()
	s.seq++
	id := strconv.Itoa(s.seq)
	s.responses[id] = &responseURL{msg: m}
	s.triggers["1337.42."+id] = time.Now()
	s.mu.Unlock()
	if u.TeamID == "" {
		u.TeamID = "T0FAKE"
	}
	payload := map[string]any{
		"type":       "block_actions",
		"user":       u,
		"api_app_id": "A0FAKE",
		"token":      "deprecated-verification-token",
		"container": map[string]any{
			"type": "message", "message_ts": m.TS, "channel_id": m.Channel, "is_ephemeral": false,
		},
		"trigger_id": "1337.42." + id,
		"team":       map[string]any{"id": u.TeamID, "domain": "fake"},
		"enterprise": nil,
		"channel":    map[string]any{"id": m.Channel, "name": "approvals"},
		"message": map[string]any{
			"type": "message", "ts": m.TS, "text": m.Text, "blocks": m.Blocks, "bot_id": "B0BOT", "user": "U0BOT",
		},
		"state":        map[string]any{"values": map[string]any{}},
		"response_url": s.URL() + "/_response/" + id,
		"actions": []any{map[string]any{
			"type":      "button",
			"action_id": b.ActionID,
			"block_id":  b.BlockID,
			"text":      map[string]any{"type": "plain_text", "text": b.Text, "emoji": true},
			"value":     b.Value,
			"style":     b.Style,
			"action_ts": "1700000001.000100",
		}},
	}
	return EncodePayload(payload)
}

// EncodePayload form-encodes an interaction payload as Slack sends it:
// payload=<url-encoded JSON>.
func EncodePayload(payload any) ([]byte, error) {
	data, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	return []byte(url.Values{"payload": {string(data)}}.Encode()), nil
}

// Sign returns the headers Slack signs a request with: the timestamp and
// "v0=" + hex HMAC-SHA256(secret, "v0:" + timestamp + ":" + body).
func Sign(secret string, at time.Time, body []byte) http.Header {
	ts := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + ts + ":"))
	mac.Write(body)
	h := http.Header{}
	h.Set("X-Slack-Request-Timestamp", ts)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	return h
}

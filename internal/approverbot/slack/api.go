package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/httpapi"
)

// maxResponseBytes bounds what the channel reads from Slack.
const maxResponseBytes = 4 << 20

// api calls Slack's Web API with the bot token.
type api struct {
	token string
	c     *httpapi.Client
}

// newAPI returns the Web API client at base (e.g. https://slack.com/api).
// A Retry-After over maxRetryAfter fails the call (the pump retries it
// later).
func newAPI(base, token string, hc *http.Client, maxRetryAfter time.Duration) (*api, error) {
	c, err := httpapi.New(approverbot.ChatAPI("slack", base, hc, maxRetryAfter, maxResponseBytes))
	if err != nil {
		return nil, err
	}
	return &api{token: token, c: c}, nil
}

// apiStatus is the envelope every Web API method answers with.
type apiStatus struct {
	OK               bool   `json:"ok"`
	Error            string `json:"error,omitempty"`
	Warning          string `json:"warning,omitempty"`
	ResponseMetadata *struct {
		Messages []string `json:"messages,omitempty"`
	} `json:"response_metadata,omitempty"`
}

// postMessageReq is the body of chat.postMessage and chat.update.
type postMessageReq struct {
	Channel string `json:"channel"`
	TS      string `json:"ts,omitempty"` // chat.update only
	Text    string `json:"text"`
	Blocks  []any  `json:"blocks,omitempty"`
	// Mrkdwn false: Slack shows Text as it is (its &, < and > still
	// escaped), never as markup. Every message of the channel sets it.
	Mrkdwn      bool  `json:"mrkdwn"`
	UnfurlLinks *bool `json:"unfurl_links,omitempty"`
	UnfurlMedia *bool `json:"unfurl_media,omitempty"`
	// ThreadTS and ReplyBroadcast post a reply in a message's thread, also
	// shown in the channel (chat.postMessage only).
	ThreadTS       string `json:"thread_ts,omitempty"`
	ReplyBroadcast bool   `json:"reply_broadcast,omitempty"`
}

type postMessageResp struct {
	apiStatus
	Channel string `json:"channel"`
	TS      string `json:"ts"`
}

// ephemeralReq is the body of chat.postEphemeral.
type ephemeralReq struct {
	Channel string `json:"channel"`
	User    string `json:"user"`
	Text    string `json:"text"`
}

// authTestResp is the answer of auth.test.
type authTestResp struct {
	apiStatus
	Team   string `json:"team"`
	User   string `json:"user"`
	UserID string `json:"user_id"`
}

// call posts in as JSON to method and decodes the answer into out (which
// must embed apiStatus). A 429 is waited out (Retry-After, in seconds or as
// a date; one second when missing) up to approverbot.ChatRateRetries times; any other
// failure is returned: the caller's pump retries deliveries, and retrying a
// post that may have been applied would duplicate the message.
func (a *api) call(ctx context.Context, method string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("slack %s: encode request: %w", method, err)
	}
	resp, err := a.c.Do(ctx, httpapi.Request{Method: method, Path: "/" + method, Body: body,
		Header: http.Header{
			"Content-Type":  {"application/json; charset=utf-8"},
			"Authorization": {"Bearer " + a.token},
		},
		Retry: httpapi.RetryRateLimited(time.Second)})
	if err != nil {
		return approverbot.ChatCallError("slack", method, err)
	}
	if resp.Status == http.StatusTooManyRequests {
		return &APIError{Method: method, Code: "ratelimited", Status: resp.Status, RetryAfter: resp.RetryAfter}
	}
	if resp.ReadErr != nil {
		return fmt.Errorf("slack %s: read response: %w", method, resp.ReadErr)
	}
	if resp.Status != http.StatusOK {
		return &APIError{Method: method, Code: "http_" + strconv.Itoa(resp.Status), Status: resp.Status}
	}
	var st apiStatus
	if err := json.Unmarshal(resp.Body, &st); err != nil {
		return fmt.Errorf("slack %s: malformed response: %w", method, err)
	}
	if !st.OK {
		code := st.Error
		if code == "" {
			code = "unknown_error"
		}
		e := &APIError{Method: method, Code: code, Status: resp.Status}
		if st.ResponseMetadata != nil {
			e.Details = st.ResponseMetadata.Messages
		}
		return e
	}
	if out != nil {
		if err := json.Unmarshal(resp.Body, out); err != nil {
			return fmt.Errorf("slack %s: malformed response: %w", method, err)
		}
	}
	return nil
}

// postResponseURL posts msg to an interaction's response_url. It carries
// no token: the URL itself is the credential (for 30 minutes), which
// httpapi keeps out of errors and logs.
func (a *api) postResponseURL(ctx context.Context, url string, msg any) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	resp, err := a.c.Do(ctx, httpapi.Request{Method: "response_url", URL: url, Body: body,
		Header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}})
	if err != nil {
		return err
	}
	if resp.Status/100 != 2 {
		return fmt.Errorf("slack response_url: HTTP %d", resp.Status)
	}
	return nil
}

package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/backoff"
)

// maxResponseBytes bounds what the channel reads from Slack.
const maxResponseBytes = 4 << 20

// api calls Slack's Web API with the bot token.
type api struct {
	base  string // e.g. https://slack.com/api
	token string
	hc    *http.Client
	// maxRetryAfter is the longest Retry-After the client waits out; a
	// longer one fails the call (the pump retries it later).
	maxRetryAfter time.Duration
	// rateRetries is how many 429s one call waits out.
	rateRetries int
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
// must embed apiStatus). A 429 is waited out (Retry-After) up to
// rateRetries times; any other failure is returned: the caller's pump
// retries deliveries, and retrying a post that may have been applied would
// duplicate the message.
func (a *api) call(ctx context.Context, method string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("slack %s: encode request: %w", method, err)
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/"+method, bytes.NewReader(body))
		if err != nil {
			return fmt.Errorf("slack %s: %w", method, err)
		}
		req.Header.Set("Content-Type", "application/json; charset=utf-8")
		req.Header.Set("Authorization", "Bearer "+a.token)
		resp, err := a.hc.Do(req)
		if err != nil {
			return fmt.Errorf("slack %s: %w", method, err)
		}
		data, rerr := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusTooManyRequests {
			wait := retryAfter(resp.Header.Get("Retry-After"))
			if attempt >= a.rateRetries || wait > a.maxRetryAfter {
				return &APIError{Method: method, Code: "ratelimited", Status: resp.StatusCode, RetryAfter: wait}
			}
			if err := backoff.Sleep(ctx, wait); err != nil {
				return fmt.Errorf("slack %s: rate limited: %w", method, err)
			}
			continue
		}
		if rerr != nil {
			return fmt.Errorf("slack %s: read response: %w", method, rerr)
		}
		if resp.StatusCode != http.StatusOK {
			return &APIError{Method: method, Code: "http_" + strconv.Itoa(resp.StatusCode), Status: resp.StatusCode}
		}
		var st apiStatus
		if err := json.Unmarshal(data, &st); err != nil {
			return fmt.Errorf("slack %s: malformed response: %w", method, err)
		}
		if !st.OK {
			code := st.Error
			if code == "" {
				code = "unknown_error"
			}
			e := &APIError{Method: method, Code: code, Status: resp.StatusCode}
			if st.ResponseMetadata != nil {
				e.Details = st.ResponseMetadata.Messages
			}
			return e
		}
		if out != nil {
			if err := json.Unmarshal(data, out); err != nil {
				return fmt.Errorf("slack %s: malformed response: %w", method, err)
			}
		}
		return nil
	}
}

// postResponseURL posts msg to an interaction's response_url. It carries
// no token: the URL itself is the credential.
func (a *api) postResponseURL(ctx context.Context, url string, msg any) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("slack response_url: %w", err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	resp, err := a.hc.Do(req)
	if err != nil {
		// The URL is a bearer credential for 30 minutes: keep it out of
		// errors and logs.
		return fmt.Errorf("slack response_url: %w", approverbot.StripURL(err))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBytes))
	_ = resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("slack response_url: HTTP %d", resp.StatusCode)
	}
	return nil
}

// retryAfter parses Slack's Retry-After (whole seconds); a missing or
// unreadable value means one second.
func retryAfter(h string) time.Duration {
	n, err := strconv.Atoi(strings.TrimSpace(h))
	if err != nil || n < 1 {
		return time.Second
	}
	return time.Duration(n) * time.Second
}

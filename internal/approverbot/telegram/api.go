package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/httpapi"
)

// maxResponseBytes bounds what the channel reads from the Bot API (a
// getUpdates answer holds up to 100 updates).
const maxResponseBytes = 8 << 20

// Bot API objects the channel uses (https://core.telegram.org/bots/api).

type user struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	Username  string `json:"username,omitempty"`
}

type chat struct {
	ID   int64  `json:"id"`
	Type string `json:"type"`
}

type message struct {
	MessageID int64  `json:"message_id"`
	Chat      chat   `json:"chat"`
	Text      string `json:"text,omitempty"`
}

type callbackQuery struct {
	ID      string   `json:"id"`
	From    user     `json:"from"`
	Message *message `json:"message,omitempty"`
	Data    string   `json:"data,omitempty"`
}

type update struct {
	UpdateID      int64          `json:"update_id"`
	CallbackQuery *callbackQuery `json:"callback_query,omitempty"`
	Message       *incoming      `json:"message,omitempty"`
}

type inlineButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data,omitempty"`
	// URL makes a button that opens a page instead of calling back.
	URL string `json:"url,omitempty"`
}

type inlineKeyboard struct {
	InlineKeyboard [][]inlineButton `json:"inline_keyboard"`
}

type linkPreviewOptions struct {
	IsDisabled bool `json:"is_disabled"`
}

type sendMessageParams struct {
	ChatID             int64               `json:"chat_id"`
	Text               string              `json:"text"`
	ParseMode          string              `json:"parse_mode"`
	ReplyMarkup        *inlineKeyboard     `json:"reply_markup,omitempty"`
	LinkPreviewOptions *linkPreviewOptions `json:"link_preview_options,omitempty"`
}

// editMessageTextParams edits a message into the text sendMessage would
// send; without ReplyMarkup the inline keyboard is removed.
type editMessageTextParams struct {
	sendMessageParams
	MessageID int64 `json:"message_id"`
}

type answerCallbackQueryParams struct {
	CallbackQueryID string `json:"callback_query_id"`
	Text            string `json:"text,omitempty"`
	ShowAlert       bool   `json:"show_alert,omitempty"`
}

type getUpdatesParams struct {
	Offset         int64    `json:"offset,omitempty"`
	Timeout        int      `json:"timeout"`
	AllowedUpdates []string `json:"allowed_updates"`
}

// envelope is every Bot API answer: {"ok":true,"result":…} or
// {"ok":false,"error_code":…,"description":…,"parameters":{…}}.
type envelope struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  *struct {
		RetryAfter      int   `json:"retry_after"`
		MigrateToChatID int64 `json:"migrate_to_chat_id"`
	} `json:"parameters"`
}

// api calls the Bot API.
type api struct {
	token string
	c     *httpapi.Client
}

// newAPI returns the Bot API client at base (e.g. https://api.telegram.org).
// A retry_after over maxRetryAfter fails the call.
func newAPI(base, token string, hc *http.Client, maxRetryAfter time.Duration) (*api, error) {
	cfg := approverbot.ChatAPI("telegram", base, hc, maxRetryAfter, maxResponseBytes)
	// The token is in the path, which httpapi takes out of errors; this
	// catches it anywhere else.
	cfg.Scrub = func(s string) string { return strings.ReplaceAll(s, token, "[token]") }
	c, err := httpapi.New(cfg)
	if err != nil {
		return nil, err
	}
	return &api{token: token, c: c}, nil
}

// rateLimited is the Bot API's 429: {"ok":false,"error_code":429,
// "parameters":{"retry_after":N}}, waited out for max(N s, 1 s).
func rateLimited(resp *httpapi.Response, err error) (bool, time.Duration) {
	if err != nil || resp.ReadErr != nil {
		return false, 0
	}
	var env envelope
	if json.Unmarshal(resp.Body, &env) != nil || env.OK {
		return false, 0
	}
	code := env.ErrorCode
	if code == 0 {
		code = resp.Status
	}
	if code != http.StatusTooManyRequests {
		return false, 0
	}
	var after time.Duration
	if env.Parameters != nil && env.Parameters.RetryAfter > 0 {
		after = time.Duration(env.Parameters.RetryAfter) * time.Second
	}
	return true, max(after, time.Second)
}

// call posts params as JSON to method and decodes the result into out (nil:
// ignore it). A 429 is waited out (retry_after) up to approverbot.ChatRateRetries times.
// The URL holds the token: it is never part of an error.
func (a *api) call(ctx context.Context, method string, params, out any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("telegram %s: encode request: %w", method, err)
	}
	resp, err := a.c.Do(ctx, httpapi.Request{Method: method, Path: "/bot" + a.token + "/" + method, Body: body,
		Header: http.Header{"Content-Type": {"application/json"}}, Retry: rateLimited})
	if err != nil {
		return approverbot.ChatCallError("telegram", method, err)
	}
	if resp.ReadErr != nil {
		return fmt.Errorf("telegram %s: read response: %w", method, resp.ReadErr)
	}
	var env envelope
	if err := json.Unmarshal(resp.Body, &env); err != nil {
		// A proxy's error page, or a truncated answer.
		return &APIError{Method: method, Code: resp.Status,
			Description: fmt.Sprintf("HTTP %d with a body that is not a Bot API answer", resp.Status)}
	}
	if env.OK {
		if out == nil {
			return nil
		}
		if err := json.Unmarshal(env.Result, out); err != nil {
			return fmt.Errorf("telegram %s: malformed result: %w", method, err)
		}
		return nil
	}
	e := &APIError{Method: method, Code: env.ErrorCode, Description: env.Description}
	if e.Code == 0 {
		e.Code = resp.Status
	}
	if env.Parameters != nil && env.Parameters.RetryAfter > 0 {
		e.RetryAfter = time.Duration(env.Parameters.RetryAfter) * time.Second
	}
	return e
}

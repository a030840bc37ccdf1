package telegram

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/backoff"
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

// editMessageTextParams edits a message; without ReplyMarkup the inline
// keyboard is removed.
type editMessageTextParams struct {
	ChatID             int64               `json:"chat_id"`
	MessageID          int64               `json:"message_id"`
	Text               string              `json:"text"`
	ParseMode          string              `json:"parse_mode"`
	ReplyMarkup        *inlineKeyboard     `json:"reply_markup,omitempty"`
	LinkPreviewOptions *linkPreviewOptions `json:"link_preview_options,omitempty"`
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
	base  string // e.g. https://api.telegram.org
	token string
	hc    *http.Client
	// maxRetryAfter is the longest retry_after one call waits out; a
	// longer one fails it.
	maxRetryAfter time.Duration
	rateRetries   int
}

// call posts params as JSON to method and decodes the result into out (nil:
// ignore it). A 429 is waited out (retry_after) up to rateRetries times.
func (a *api) call(ctx context.Context, method string, params, out any) error {
	body, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("telegram %s: encode request: %w", method, err)
	}
	for attempt := 0; ; attempt++ {
		env, status, err := a.post(ctx, method, body)
		if err != nil {
			return err
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
			e.Code = status
		}
		if env.Parameters != nil && env.Parameters.RetryAfter > 0 {
			e.RetryAfter = time.Duration(env.Parameters.RetryAfter) * time.Second
		}
		if e.Code == http.StatusTooManyRequests && attempt < a.rateRetries && e.RetryAfter <= a.maxRetryAfter {
			wait := max(e.RetryAfter, time.Second)
			if err := backoff.Sleep(ctx, wait); err != nil {
				return fmt.Errorf("telegram %s: rate limited: %w", method, err)
			}
			continue
		}
		return e
	}
}

// post sends one request. The URL holds the token: it is never part of an
// error.
func (a *api) post(ctx context.Context, method string, body []byte) (envelope, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/bot"+a.token+"/"+method, bytes.NewReader(body))
	if err != nil {
		return envelope{}, 0, fmt.Errorf("telegram %s: cannot build the request (check api_url)", method)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := a.hc.Do(req)
	if err != nil {
		return envelope{}, 0, fmt.Errorf("telegram %s: %w", method, approverbot.StripURL(err))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return envelope{}, resp.StatusCode, fmt.Errorf("telegram %s: read response: %w", method, approverbot.StripURL(err))
	}
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		// A proxy's error page, or a truncated answer.
		return envelope{}, resp.StatusCode, &APIError{Method: method, Code: resp.StatusCode,
			Description: fmt.Sprintf("HTTP %d with a body that is not a Bot API answer", resp.StatusCode)}
	}
	return env, resp.StatusCode, nil
}

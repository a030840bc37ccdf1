package slack

import (
	"errors"
	"strings"
	"time"
)

// Errors of request verification. Both are answered with 401.
var (
	// ErrBadSignature: X-Slack-Signature is missing or does not match the
	// body signed with the signing secret.
	ErrBadSignature = errors.New("slack request signature is missing or does not match")
	// ErrStaleRequest: X-Slack-Request-Timestamp is missing, malformed or
	// more than five minutes away from now (a replay).
	ErrStaleRequest = errors.New("slack request timestamp is missing, malformed or more than 5 minutes off")
)

// APIError is a Web API call that Slack refused: {"ok":false,"error":code},
// an HTTP error status, or a rate limit the channel did not wait out.
type APIError struct {
	Method string
	// Code is Slack's error code ("channel_not_found", "ratelimited", …)
	// or "http_<status>".
	Code   string
	Status int
	// RetryAfter is Slack's Retry-After on a rate limit.
	RetryAfter time.Duration
	// Details are Slack's response_metadata.messages (which block broke
	// which rule, for invalid_blocks).
	Details []string
}

func (e *APIError) Error() string {
	s := "slack " + e.Method + ": " + e.Code
	if e.RetryAfter > 0 {
		s += " (retry after " + e.RetryAfter.String() + ")"
	}
	if len(e.Details) > 0 {
		s += ": " + strings.Join(e.Details, "; ")
	}
	return s
}

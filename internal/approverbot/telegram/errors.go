package telegram

import (
	"errors"
	"strconv"
	"strings"
	"time"
)

// APIError is a Bot API call that failed: {"ok":false,"error_code",
// "description"}, or an HTTP answer that was not a Bot API answer.
type APIError struct {
	Method      string
	Code        int
	Description string
	// RetryAfter is parameters.retry_after of a 429.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	s := "telegram " + e.Method + ": " + strconv.Itoa(e.Code) + " " + e.Description
	if e.RetryAfter > 0 {
		s += " (retry after " + e.RetryAfter.String() + ")"
	}
	return s
}

// notModified reports the Bot API's refusal to edit a message into what it
// already is: the edit's goal is met.
func notModified(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Code == 400 && strings.Contains(e.Description, "message is not modified")
}

// messageGone reports that the message to edit no longer exists (deleted
// by a user).
func messageGone(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Code == 400 && (strings.Contains(e.Description, "message to edit not found") ||
		strings.Contains(e.Description, "MESSAGE_ID_INVALID"))
}

package pager

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/pkg/policy"
)

var (
	// ErrInvalidPage reports a [Page] that cannot be sent (no request id,
	// no summary, a link that is not an absolute http(s) URL). Nothing was
	// sent.
	ErrInvalidPage = errors.New("pager: invalid page")
	// ErrInvalidConfig reports a [Config] that [New] refuses.
	ErrInvalidConfig = policy.ErrInvalidPager
	// ErrRejected reports a permanent refusal by the vendor (a 4xx other
	// than 429): retrying the same call cannot succeed.
	ErrRejected = errors.New("pager: rejected by the vendor")
	// ErrRateLimited reports that the vendor still answered 429 when the
	// attempts ran out, or asked for a wait longer than
	// [Config.MaxRetryAfter].
	ErrRateLimited = errors.New("pager: rate limited by the vendor")
	// ErrUnavailable reports network errors or 5xx answers that outlasted
	// the attempts.
	ErrUnavailable = errors.New("pager: vendor unavailable")
)

// APIError is the vendor's answer to a call that did not succeed. It
// matches [ErrRejected], [ErrRateLimited] or [ErrUnavailable] with
// errors.Is, by its status.
type APIError struct {
	Pager  string // the pager's name in the config
	Kind   Kind
	Op     string // "trigger", "resolve", "health"
	Status int    // HTTP status; 0 for a network error
	// Message is the vendor's message ("Event object is invalid",
	// "Request body is not processable. Please check the errors.").
	Message string
	// Fields are the vendor's field errors, "field: reason" where the
	// vendor names the field.
	Fields []string
	// Attempts is how many requests were sent.
	Attempts int
	// RetryAfter is the wait the vendor asked for on a 429.
	RetryAfter time.Duration
	// Err is the last network error, if any.
	Err error
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pager %q (%s): %s", e.Pager, e.Kind, e.Op)
	switch {
	case e.Status == 0:
		b.WriteString(": network error")
	case e.Status == 429:
		b.WriteString(": rate limited (HTTP 429)")
		if e.RetryAfter > 0 {
			b.WriteString(", retry after " + e.RetryAfter.String())
		}
	case e.Status >= 500:
		b.WriteString(": vendor error (HTTP " + strconv.Itoa(e.Status) + ")")
	default:
		b.WriteString(": rejected (HTTP " + strconv.Itoa(e.Status) + ")")
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if len(e.Fields) > 0 {
		b.WriteString(" [" + strings.Join(e.Fields, "; ") + "]")
	}
	if e.Attempts > 1 {
		b.WriteString(" after " + strconv.Itoa(e.Attempts) + " attempts")
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	return b.String()
}

// Unwrap exposes the last network error.
func (e *APIError) Unwrap() error { return e.Err }

// Is matches the sentinel that describes the status.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrRejected:
		return e.Status >= 400 && e.Status < 500 && e.Status != 429
	case ErrRateLimited:
		return e.Status == 429
	case ErrUnavailable:
		return e.Status == 0 || e.Status >= 500
	}
	return false
}

// Temporary reports whether a later call may succeed (the escalation code
// retries those on its next tick).
func (e *APIError) Temporary() bool { return !e.Is(ErrRejected) }

package httpapi

import (
	"errors"
	"strconv"
	"strings"
)

// ErrInvalidConfig reports a [Config] that [New] refuses.
var ErrInvalidConfig = errors.New("httpapi: invalid config")

// Error is a call that ended without a final answer: the last attempt
// failed on the network, or the caller's context ended the call (during a
// request or a wait). Its text names the API and the method, never the
// URL.
type Error struct {
	API    string // Config.API
	Method string // Request.Method
	// Attempts is how many requests were sent.
	Attempts int
	// Last is the last answer that was retried, if the call got one
	// before it stopped (nil otherwise).
	Last *Response
	// Net is the last attempt's network error, stripped of the URL and
	// scrubbed (nil when the last failure was an answer, in Last).
	Net error
	// Ctx is the context's error when the context ended the call.
	Ctx error
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.API + " " + e.Method + ": ")
	switch {
	case e.Net != nil:
		b.WriteString(e.Net.Error())
	case e.Last != nil:
		b.WriteString("HTTP " + strconv.Itoa(e.Last.Status))
	default:
		b.WriteString("no answer")
	}
	if e.Attempts > 1 {
		b.WriteString(" after " + strconv.Itoa(e.Attempts) + " attempts")
	}
	if e.Ctx != nil {
		b.WriteString("; stopped: " + e.Ctx.Error())
	}
	return b.String()
}

// Unwrap exposes the network error and the context's error (for
// errors.Is(err, context.Canceled) and the like).
func (e *Error) Unwrap() []error {
	var errs []error
	if e.Net != nil {
		errs = append(errs, e.Net)
	}
	if e.Ctx != nil {
		errs = append(errs, e.Ctx)
	}
	return errs
}

// netError is a transport error with the URL taken out of its text. It
// keeps the original for errors.Is and errors.As (a timeout stays a
// timeout), but its text is the scrubbed one.
type netError struct {
	msg string
	err error
}

func (e *netError) Error() string { return e.msg }
func (e *netError) Unwrap() error { return e.err }

package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// Sentinel errors. Every error this package returns wraps one of them; test
// with errors.Is. [ErrorReplyFor] maps them to error reply codes, and
// [ReplyError] matches them, so a client can test a broker's error reply with
// the same sentinels.
var (
	// ErrInvalid: the message is malformed or breaks a rule of the protocol
	// (code invalid_request).
	ErrInvalid = errors.New("invalid request")
	// ErrTooLarge: the message is larger than the receiver's limit (code
	// too_large).
	ErrTooLarge = errors.New("message too large")
	// ErrUnsupportedVersion: the message has no "v" or a "v" this side does
	// not speak (code unsupported_version).
	ErrUnsupportedVersion = errors.New("unsupported protocol version")
	// ErrInvalidToken: a value cannot be used as a NATS subject token. It
	// wraps ErrInvalid.
	ErrInvalidToken = wrapSentinel(ErrInvalid, "invalid subject token")
	// ErrInvalidSubject: a received subject does not have the shape its
	// handler expects. It wraps ErrInvalid.
	ErrInvalidSubject = wrapSentinel(ErrInvalid, "invalid subject")
	// ErrNotFound: the request id is unknown, or gone after its retention
	// (code not_found).
	ErrNotFound = errors.New("not found")
	// ErrForbidden: the sender may not do this (code forbidden).
	ErrForbidden = errors.New("forbidden")
	// ErrUnavailable: a dependency of the broker could not be reached; the
	// sender may retry (code unavailable).
	ErrUnavailable = errors.New("temporarily unavailable")
)

// sentinel is an error that is also its parent, so that errors.Is(child,
// parent) holds without the parent's text being repeated in the child's.
type sentinel struct {
	parent error
	msg    string
}

func wrapSentinel(parent error, msg string) error { return &sentinel{parent: parent, msg: msg} }

func (e *sentinel) Error() string { return e.msg }
func (e *sentinel) Unwrap() error { return e.parent }

// FieldError reports one field of a message that breaks a rule. Field is the
// JSON path of the field ("tool", "approver.id", "batch_remaining[2].tool").
// It wraps [ErrInvalid], and Err when set.
type FieldError struct {
	Field   string
	Problem string
	// Err is the underlying cause, if any (a [*TokenError], a JSON error).
	Err error
}

// Error returns `invalid request: field "<field>": <problem>`.
func (e *FieldError) Error() string {
	return ErrInvalid.Error() + ": field " + strconv.Quote(e.Field) + ": " + e.Problem
}

// Unwrap returns [ErrInvalid] and the underlying cause.
func (e *FieldError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalid}
	}
	return []error{ErrInvalid, e.Err}
}

// TokenError reports a value that cannot be a NATS subject token. What names
// the value ("session_id", "team", "subject prefix").
type TokenError struct {
	What    string
	Value   string
	Problem string
}

// Error returns `<what> "<value>": <problem>`, with long values shortened.
func (e *TokenError) Error() string {
	return e.What + " " + quoteShort(e.Value) + ": " + e.Problem
}

// Unwrap returns [ErrInvalidToken] (which wraps [ErrInvalid]).
func (e *TokenError) Unwrap() error { return ErrInvalidToken }

// quoteShort quotes s for an error message, keeping at most 64 bytes of it so
// that a hostile 64 KiB value does not end up in every log line.
func quoteShort(s string) string {
	const max = 64
	if len(s) <= max {
		return strconv.Quote(s)
	}
	cut := max
	// Do not split a UTF-8 sequence: back up to the start of a rune.
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return strconv.Quote(s[:cut]) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}

// NewErrorReply returns an error reply with the given code and message.
func NewErrorReply(code ErrorCode, msg string) ErrorReply {
	return ErrorReply{V: Version, Error: ErrorBody{Code: code, Message: msg}}
}

// Messages of error replies whose cause must not leave the broker (addresses
// of Redis nodes, stack details): the broker logs the cause instead.
const (
	msgUnavailable = "temporarily unavailable; retry later"
	msgInternal    = "internal error"
)

// ErrorReplyFor maps err to the error reply a sender should get. Errors that
// describe the sender's own message (invalid, too large, version, not found,
// forbidden) carry err's text; unavailable and internal errors carry a fixed
// text, because their causes describe the broker's infrastructure — log err
// before replying. A nil err yields an internal error reply.
func ErrorReplyFor(err error) ErrorReply {
	switch {
	case err == nil:
		return NewErrorReply(CodeInternal, msgInternal)
	case errors.Is(err, ErrTooLarge):
		return NewErrorReply(CodeTooLarge, err.Error())
	case errors.Is(err, ErrUnsupportedVersion):
		return NewErrorReply(CodeUnsupportedVersion, err.Error())
	case errors.Is(err, ErrInvalid):
		return NewErrorReply(CodeInvalidRequest, err.Error())
	case errors.Is(err, ErrNotFound):
		return NewErrorReply(CodeNotFound, err.Error())
	case errors.Is(err, ErrForbidden):
		return NewErrorReply(CodeForbidden, err.Error())
	case errors.Is(err, ErrUnavailable):
		return NewErrorReply(CodeUnavailable, msgUnavailable)
	default:
		return NewErrorReply(CodeInternal, msgInternal)
	}
}

// errorKey is looked for before a reply is parsed, so that the common case (a
// normal reply) costs a byte search instead of a JSON decode.
var errorKey = []byte(`"error"`)

// IsErrorReply reports whether data is an error reply, and returns it. It
// accepts error replies of any version: a broker that does not speak the
// client's version answers with an unsupported_version error the client must
// still see.
func IsErrorReply(data []byte) (*ErrorReply, bool) {
	if !bytes.Contains(data, errorKey) {
		return nil, false
	}
	var probe struct {
		V     int        `json:"v"`
		Error *ErrorBody `json:"error"`
	}
	if err := json.Unmarshal(data, &probe); err != nil || probe.Error == nil || probe.Error.Code == "" {
		return nil, false
	}
	return &ErrorReply{V: probe.V, Error: *probe.Error}, true
}

// Err returns the error reply as a Go error, a [*ReplyError].
func (r *ErrorReply) Err() error {
	return &ReplyError{Code: r.Error.Code, Message: r.Error.Message}
}

// ReplyError is an error reply received from the broker. errors.Is matches it
// against the sentinel of its code ([ErrInvalid] for invalid_request,
// [ErrNotFound] for not_found…).
type ReplyError struct {
	Code    ErrorCode
	Message string
}

// Error returns "signoff: <code>: <message>".
func (e *ReplyError) Error() string {
	return "signoff: " + string(e.Code) + ": " + e.Message
}

// Is reports whether target is the sentinel of e's code.
func (e *ReplyError) Is(target error) bool {
	s := codeSentinel(e.Code)
	return s != nil && s == target
}

func codeSentinel(c ErrorCode) error {
	switch c {
	case CodeInvalidRequest:
		return ErrInvalid
	case CodeTooLarge:
		return ErrTooLarge
	case CodeUnsupportedVersion:
		return ErrUnsupportedVersion
	case CodeNotFound:
		return ErrNotFound
	case CodeForbidden:
		return ErrForbidden
	case CodeUnavailable:
		return ErrUnavailable
	}
	return nil
}

package engine

import (
	"errors"
	"fmt"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// StoreError is a store call that failed where the caller answers with an
// error reply: not found (the requester named what does not exist, a
// [session.ErrNotFound]) or unavailable. The engine has not counted it.
type StoreError struct {
	Op  string // the store operation, a label of signoff_store_errors_total
	Err error
}

func (e *StoreError) Error() string { return "store " + e.Op + ": " + e.Err.Error() }
func (e *StoreError) Unwrap() error { return e.Err }

// ReplyError is an error the caller answers as it is: an error reply of
// Code with Message.
type ReplyError struct {
	Code    messages.ErrorCode
	Message string
}

func (e *ReplyError) Error() string { return fmt.Sprintf("%s: %s", e.Code, e.Message) }

// ErrUnencodable wraps the error of an audit record that cannot be encoded:
// retrying cannot help. An outbox effect gives the record up (the audit
// sink counts it lost); an allow that waits for its record (strict mode) is
// not given.
var ErrUnencodable = errors.New("audit record cannot be encoded")

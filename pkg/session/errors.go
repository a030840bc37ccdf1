package session

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Store implementations wrap them; test with errors.Is.
var (
	// ErrNotFound: no record with that request id (never created, or gone
	// after its retention).
	ErrNotFound = errors.New("session: request not found")
	// ErrSettled: the request is no longer pending; its outcome stands.
	ErrSettled = errors.New("session: request already settled")
	// ErrDuplicateVote: this approver's approval was already counted.
	ErrDuplicateVote = errors.New("session: approver already voted")
	// ErrExpired: a held request (see Store.Prepare) reached its expiry
	// before it was opened; the store drops it.
	ErrExpired = errors.New("session: held request expired before it was opened")
	// ErrStopped: the session carries a hard-stop signal; nothing new may
	// become pending until the agent announces a new turn.
	ErrStopped = errors.New("session: session is hard-stopped")
	// ErrStopOwed: NewTurn found a hard rejection of the session whose
	// effects are still owed (its outbox entry is not acknowledged), so the
	// agent may not have heard of it yet: a turn that began before the
	// agent learned of a reject_hard cannot end that reject's stop. The
	// stop stays; the error is a [*StopOwedError] that names the
	// rejections, so that the caller carries them out and tries again.
	ErrStopOwed = errors.New("session: a hard rejection of the session is not carried out yet")
	// ErrStopUnheard: a tracked NewTurn ([Turn.Tracked]) did not name
	// every hard rejection behind the session's stop: the agent has not
	// heard of them all, so the turn began before it knew, and the stop
	// stays. The error is a [*StopUnheardError] that names them.
	ErrStopUnheard = errors.New("session: the new turn does not name every hard rejection behind the stop")
	// ErrUnavailable: the backend could not be reached or did not answer in
	// time. Callers must fail closed.
	ErrUnavailable = errors.New("session: store unavailable")
	// ErrGrantRemoved: AddGrant of a grant id that was revoked or expired
	// (within the store's Retention): an outbox retry of the approval that
	// made it must not bring it back.
	ErrGrantRemoved = errors.New("session: grant was revoked or expired")
	// ErrInvalid: the arguments are malformed (empty ids, bad state…).
	ErrInvalid = errors.New("session: invalid argument")
)

// StopOwedError is NewTurn's refusal while hard rejections of the session
// are owed to the outside world ([ErrStopOwed]). Records are those
// rejections as they stand: carrying out their effects and acknowledging
// them (Store.AckEffects) lets the next NewTurn clear the stop.
type StopOwedError struct {
	SessionID string
	Records   []*Record
}

func (e *StopOwedError) Error() string {
	return fmt.Sprintf("%v: session %s has %d hard rejection(s) whose effects are owed", ErrStopOwed, e.SessionID, len(e.Records))
}

// Unwrap returns [ErrStopOwed].
func (e *StopOwedError) Unwrap() error { return ErrStopOwed }

// StopUnheardError is a tracked NewTurn's refusal ([ErrStopUnheard]):
// Unheard are the rejections behind the stop that the turn did not name,
// oldest first. The stop is unchanged.
type StopUnheardError struct {
	SessionID string
	Unheard   []string
}

func (e *StopUnheardError) Error() string {
	return fmt.Sprintf("%v: session %s: the turn does not name %s", ErrStopUnheard, e.SessionID, strings.Join(e.Unheard, ", "))
}

// Unwrap returns [ErrStopUnheard].
func (e *StopUnheardError) Unwrap() error { return ErrStopUnheard }

// CheckStopReason returns an error wrapping [ErrInvalid] when reason
// cannot be stored as a stop's reason: a NUL byte ends the reason in the
// stored signal (docs/STATE.md "Keys").
func CheckStopReason(reason string) error {
	if strings.IndexByte(reason, 0) >= 0 {
		return invalid("the stop reason %q contains a NUL byte", reason)
	}
	return nil
}

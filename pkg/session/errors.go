package session

import "errors"

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

package session

// Store holds the shared state of every broker replica: the composition of
// the roles below, each declared in its own file. Every method is safe for
// concurrent use by many goroutines and many processes sharing one
// backend: each state transition is atomic, so two callers racing on one
// request never both win. Methods return ErrUnavailable (wrapped) when the
// backend cannot be reached: callers fail closed.
//
// A consumer that needs only some of it declares the roles it uses (the
// reaper [Expiry], the outbox runner [Outbox], the escalator part of
// [Escalations]), so that what it can touch is read in one screen.
type Store interface {
	Requests
	Pending
	Grants
	Sessions
	Expiry
	Outbox
	Escalations
	Fleet
	Breakers
	Backend
}

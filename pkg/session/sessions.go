package session

import (
	"context"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Sessions acts on a session as a whole: its hard-stop signal, a new
// turn that clears it, and the cancel of its pending requests.
type Sessions interface {
	// Stop sets the session's hard-stop signal (from then on Prepare and Open refuse
	// with ErrStopped), then settles every pending request of the session
	// rejected with the decision that mk returns for it, each with
	// compare-and-set (a request settled meanwhile keeps its outcome). It
	// returns the records it settled.
	Stop(ctx context.Context, sessionID, reason string, mk func(*Record) messages.Decision) ([]*Record, error)
	// NewTurn clears the session's stop signal; it reports whether one was
	// set. While a hard rejection of the session (Record.HardRejection)
	// has effects owed in the outbox — the agent may not have been told of
	// it — NewTurn clears nothing and returns a [*StopOwedError] naming
	// those rejections ([ErrStopOwed]): a turn cannot end a stop the agent
	// has not heard of. The caller carries them out, acknowledges them
	// and calls NewTurn again. Both checks are one atomic step.
	NewTurn(ctx context.Context, sessionID string) (bool, error)

	// CancelSession settles the given pending requests of a session (all of
	// them when ids is empty) cancelled with the decision mk returns for each;
	// it returns the records it settled.
	CancelSession(ctx context.Context, sessionID string, ids []string, mk func(*Record) messages.Decision) ([]*Record, error)
}

package session

import (
	"context"
	"slices"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Sessions acts on a session as a whole: its hard-stop signal, a new
// turn that clears it, and the cancel of its pending requests.
type Sessions interface {
	// Stop sets the session's hard-stop signal (from then on Prepare and Open refuse
	// with ErrStopped), then settles every pending request of the session
	// rejected with the decision that mk returns for it, each with
	// compare-and-set (a request settled meanwhile keeps its outcome). It
	// returns the records it settled. A stop already in force keeps its
	// reason; sig.Rejections are added to its rejections (see
	// [StopSignal.Add]). sig.Reason must not contain a NUL byte
	// ([CheckStopReason]).
	Stop(ctx context.Context, sessionID string, sig StopSignal, mk func(*Record) messages.Decision) ([]*Record, error)
	// NewTurn clears the session's stop signal; it reports whether one was
	// set. While a hard rejection of the session (Record.HardRejection)
	// has effects owed in the outbox — the agent may not have been told of
	// it — NewTurn clears nothing and returns a [*StopOwedError] naming
	// those rejections ([ErrStopOwed]): a turn cannot end a stop the agent
	// has not heard of. The caller carries them out, acknowledges them
	// and calls NewTurn again. A tracked turn ([Turn.Tracked]) that does
	// not name every rejection behind the stop clears nothing either: it
	// returns a [*StopUnheardError] naming those it missed
	// ([ErrStopUnheard]). All checks are one atomic step.
	NewTurn(ctx context.Context, sessionID string, turn Turn) (bool, error)

	// CancelSession settles the given pending requests of a session (all of
	// them when ids is empty) cancelled with the decision mk returns for each;
	// it returns the records it settled.
	CancelSession(ctx context.Context, sessionID string, ids []string, mk func(*Record) messages.Decision) ([]*Record, error)
}

// MaxStopRejections bounds the rejections a stop signal keeps: when more
// hard rejections stop a session before its next turn, the stop keeps the
// newest ones, and a tracked turn must name those.
const MaxStopRejections = 8

// StopSignal is a session's hard-stop signal.
type StopSignal struct {
	// Reason says why the session stopped (the first rejection's words).
	Reason string
	// Rejections are the request ids of the hard rejections behind the
	// stop, oldest first, at most [MaxStopRejections]. A stop written by a
	// version that kept no ids, or set by Stop without any, has none: any
	// turn ends it.
	Rejections []string
}

// Add returns s with ids added to its rejections (an id already there is
// not added twice), keeping the newest [MaxStopRejections].
func (s StopSignal) Add(ids ...string) StopSignal {
	out := StopSignal{Reason: s.Reason, Rejections: slices.Clone(s.Rejections)}
	for _, id := range ids {
		if !slices.Contains(out.Rejections, id) {
			out.Rejections = append(out.Rejections, id)
		}
	}
	if n := len(out.Rejections) - MaxStopRejections; n > 0 {
		out.Rejections = slices.Delete(out.Rejections, 0, n)
	}
	return out
}

// Unheard returns the rejections behind s that t does not name: those
// that keep the stop in force against t. An untracked turn, and any turn
// against a stop that names no rejection, has none.
func (s StopSignal) Unheard(t Turn) []string {
	if !t.Tracked {
		return nil
	}
	var out []string
	for _, id := range s.Rejections {
		if !slices.Contains(t.Seen, id) {
			out = append(out, id)
		}
	}
	return out
}

// Turn is what a new turn says about what its agent heard.
type Turn struct {
	// Tracked says Seen lists every hard rejection the agent heard of
	// since its last turn that ended a stop (messages.TurnRequest
	// SeenComplete): then the turn ends a stop only when it names every
	// rejection behind it. An untracked turn (a client that keeps no
	// memory, or an older one) ends any stop nothing is owed for.
	Tracked bool
	// Seen are request ids of hard rejections the agent heard of: its
	// reject_hard decisions and those its hard_stop denials named.
	Seen []string
}

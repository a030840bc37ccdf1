package replay

import (
	"io"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Env is what an entry point runs with: the connection to the plane (with
// admin credentials), the subject prefix ("" = messages.DefaultPrefix) and
// where its output and diagnostics go.
type Env struct {
	NC     *nats.Conn
	Prefix string
	Stdout io.Writer
	Stderr io.Writer
}

// Exit codes of the entry points.
const (
	// ExitOK: done; for replay, no decision would change.
	ExitOK = 0
	// ExitChanges: replay found decisions the candidate would change
	// (as diff(1) exits 1 when its inputs differ).
	ExitChanges = 1
	// ExitUsage: bad flags or arguments, or a candidate policy that does
	// not load; nothing was done.
	ExitUsage = 2
	// ExitUnavailable: the plane (NATS, the audit stream, a broker) could
	// not be reached or refused the operation.
	ExitUnavailable = 3
)

func (e Env) subjects() (messages.Subjects, error) {
	return messages.NewSubjects(e.Prefix)
}

package natsurl

import (
	"errors"
	"strings"

	"github.com/nats-io/nats.go"
)

// PermissionHint says what the last permission violation the server
// reported on nc means, as a clause to add to an error ("" when there was
// none). A request whose reply inbox the user may not subscribe to does
// not fail: it times out ("context deadline exceeded"), and a refused
// publish looks like no broker — both while the server said why. A nil nc
// has none.
func PermissionHint(nc *nats.Conn) string {
	if nc == nil {
		return ""
	}
	err := nc.LastError()
	if err == nil || !errors.Is(err, nats.ErrPermissionViolation) {
		return ""
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "Subscription to \"_INBOX") || strings.Contains(msg, "Subscription to \"_inbox"):
		return "; NATS refused this user the subscription to its reply inbox (" + msg + "): set --nats-inbox-prefix " +
			"(SIGNOFF_NATS_INBOX_PREFIX) to the prefix its permissions allow (deploy/nats gives agents _INBOX.agent, " +
			"admins _INBOX.admin); a request it sent may still have been carried out"
	case strings.Contains(msg, "Publish to"):
		return "; NATS refused this user a publish (" + msg + "): its credentials do not allow the subject"
	}
	return "; " + msg
}

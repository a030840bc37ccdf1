package engine

import "github.com/signoff-dev/signoff/pkg/session"

// The human an agent works for (requested_by) may not approve their own
// request — nobody decides for themselves — but may reject it (DESIGN §4
// step 9): stopping one's own agent needs no second person. A rejection is
// then authorized like anyone's, by team membership.

// forAnswer is rec as authorize judges an answer: for a rejection, without
// its requester, so that the requester is refused approvals only.
func forAnswer(rec *session.Record, approved bool) *session.Record {
	if approved || rec.RequestedBy == "" {
		return rec
	}
	r := *rec
	r.RequestedBy = ""
	return &r
}

package session

import (
	"fmt"
	"slices"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// StateHeld is the state of a held request: stored by [Requests.Prepare],
// not yet made pending by [Requests.Open]. It exists only inside the store and
// the broker; no message carries it. "Held" is the one word for it in code,
// logs and docs; its stored value stays "creating" (what records and the
// stores' scripts have always held), so records written by earlier
// versions read alike.
const StateHeld messages.State = "creating"

// Clone returns a deep copy of r: slices, the question and the decision
// are copied too, so the caller may change the copy freely. Clone of nil is nil.
func (r *Record) Clone() *Record {
	if r == nil {
		return nil
	}
	c := *r
	c.Request = r.Request.clone()
	c.Approvals = slices.Clone(r.Approvals)
	c.ApprovalScopes = slices.Clone(r.ApprovalScopes)
	if r.Decision != nil {
		d := *r.Decision
		d.GrantedPattern = slices.Clone(r.Decision.GrantedPattern)
		d.Answer = slices.Clone(r.Decision.Answer)
		c.Decision = &d
	}
	return &c
}

func (r Request) clone() Request {
	r.Teams = slices.Clone(r.Teams)
	r.Question = cloneQuestion(r.Question)
	r.Escalation = slices.Clone(r.Escalation)
	return r
}

// cloneQuestion returns a deep copy of q: every slice and pointer of it is
// copied.
func cloneQuestion(q messages.ApprovalNeeded) messages.ApprovalNeeded {
	q.Request.Arguments = slices.Clone(q.Request.Arguments)
	q.Request.BatchRemaining = cloneBatch(q.Request.BatchRemaining)
	q.BatchRemaining = cloneBatch(q.BatchRemaining)
	if q.Risk.Subcommands != nil {
		q.Risk.Subcommands = slices.Clone(q.Risk.Subcommands)
		for i := range q.Risk.Subcommands {
			q.Risk.Subcommands[i].Words = slices.Clone(q.Risk.Subcommands[i].Words)
		}
	}
	q.ApprovalsSoFar = slices.Clone(q.ApprovalsSoFar)
	q.Escalation = slices.Clone(q.Escalation)
	if q.Always != nil {
		a := *q.Always
		a.Patterns = slices.Clone(a.Patterns)
		q.Always = &a
	}
	if q.Offers != nil {
		q.Offers = slices.Clone(q.Offers)
		for i := range q.Offers {
			q.Offers[i].Patterns = slices.Clone(q.Offers[i].Patterns)
		}
	}
	return q
}

func cloneBatch(b []messages.BatchItem) []messages.BatchItem {
	if b == nil {
		return nil
	}
	b = slices.Clone(b)
	for i := range b {
		b[i].Arguments = slices.Clone(b[i].Arguments)
	}
	return b
}

// Open reports whether the record can still be decided at the store time
// now: it is pending and its expiry has not been reached.
func (r *Record) Open(now time.Time) bool {
	return r.State == messages.StatePending && now.Before(r.ExpiresAt)
}

// Due reports whether the record is pending but its expiry has been reached
// at the store time now: the next transition on it settles it expired.
//
// The expiry rules every Store keeps (the conformance suite in storetest
// checks them):
//
//   - A request is due once the store's clock reaches its ExpiresAt
//     (now >= ExpiresAt). From then on it is no longer open: no vote, Settle,
//     Stop or CancelSession can settle it approved, rejected or cancelled,
//     and the ListPending methods leave it out.
//   - A transition that finds a due request still pending settles it expired
//     itself (State expired, DecidedAt = store time, Decision nil) and
//     reports it as not applied with Refusal [ErrSettled]. The request stays
//     in the expiry index, so [Expiry.ClaimExpired] still returns it exactly
//     once: the reaper is the only component that reports timeouts, whoever
//     moved the state.
//   - Get and Lookup read without writing: a due request that no transition
//     touched yet reads as pending (with ExpiresAt in the past) until the
//     reaper claims it.
//   - Retention counts from DecidedAt for approved, rejected and cancelled
//     requests and from the claim for expired ones: a store never drops a
//     request that the reaper has not reported.
func (r *Record) Due(now time.Time) bool {
	return r.State == messages.StatePending && !now.Before(r.ExpiresAt)
}

// HasApproval reports whether approverID's approval has been counted.
func (r *Record) HasApproval(approverID string) bool {
	return slices.Contains(r.Approvals, approverID)
}

// ApprovalScope returns the scope the counted approval at index i chose:
// once when the store kept none (an approval stored before scopes were).
func (r *Record) ApprovalScope(i int) messages.Scope {
	if i < len(r.ApprovalScopes) && r.ApprovalScopes[i] != "" {
		return r.ApprovalScopes[i]
	}
	return messages.ScopeOnce
}

// HardRejection reports whether r was settled by an approver's reject_hard:
// rejected, reason rejected, reject mode reject_hard. Its vote set the
// session's stop in the same step (see [Vote]); until its effects are
// acknowledged, NewTurn keeps that stop ([ErrStopOwed]).
func (r *Record) HardRejection() bool {
	return r.State == messages.StateRejected && IsHardRejection(r.Decision)
}

// IsHardRejection reports whether d is an approver's reject_hard (reason
// rejected, reject mode reject_hard): a decision that only a vote carrying
// its stop (Vote.Stop) may record.
func IsHardRejection(d *messages.Decision) bool {
	return d != nil && d.ReasonCode == messages.ReasonRejected && d.RejectMode == messages.RejectHard
}

// CheckSettle returns an error wrapping [ErrInvalid] unless [Store.Settle]
// may record d with state: CheckSettleState, and d is not a hard
// rejection, which sets a stop and so is only ever a vote
// ([Store.Decide] with Vote.Stop): a Settle cannot record a reject_hard
// without its stop.
func CheckSettle(state messages.State, d *messages.Decision) error {
	if err := CheckSettleState(state); err != nil {
		return err
	}
	if state == messages.StateRejected && IsHardRejection(d) {
		return fmt.Errorf("%w: a reject_hard decision is recorded by a vote that sets the session's stop (Decide with Vote.Stop), not by Settle", ErrInvalid)
	}
	return nil
}

// CheckSettleState returns an error wrapping [ErrInvalid] unless s is a state
// that [Requests.Settle] may move a request to: approved, rejected or cancelled.
// Expired is reserved to the expiry path.
func CheckSettleState(s messages.State) error {
	switch s {
	case messages.StateApproved, messages.StateRejected, messages.StateCancelled:
		return nil
	}
	return fmt.Errorf("%w: settle state %q: want approved, rejected or cancelled", ErrInvalid, s)
}

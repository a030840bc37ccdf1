package session

import (
	"context"
	"fmt"
	"time"
)

// Escalations schedules and hands out the escalation steps of pending
// requests (docs/STATE.md "Escalation"), exactly once across every caller
// sharing the backend, by the store's clock, with the lease pattern of the
// outbox:
//
//   - Prepare (and Create) schedule step i of a request at its creation +
//     Request.Escalation[i], in the atomic step that stores it: no request
//     exists without its ladder.
//   - ClaimSteps hands out a due step of an open request (pending, expiry
//     not reached) leased to the caller for the store's effect lease
//     ([DefaultEffectLease] by default). Steps of a request that settled or
//     expired are dropped by the claim, in the same atomic step that reads
//     the request's state; steps of a held request wait until it is opened.
//   - The caller carries the step out and calls FinishStep. If it dies or
//     fails first, the lease runs out and ClaimSteps hands the step out
//     again: a step's effects are at least once, and must be idempotent.
//   - FinishStep with a watch (a page step that paged) keeps the step as a
//     watch: ClaimSteps hands it out again, in phase [StepResolve], once its
//     request is settled or expired, so the page can be resolved (checked
//     every watch period); a watch whose request record is gone is dropped.
type Escalations interface {
	// ClaimSteps leases up to limit steps that are due, earliest first.
	ClaimSteps(ctx context.Context, limit int) ([]Step, error)
	// FinishStep ends a step that ClaimSteps handed out: a step in phase
	// StepDue is recorded as done (see StepsDone) and, with watch > 0, kept
	// as a watch looked at every watch; a watch in phase StepResolve is
	// removed. Finishing a step twice, or one another caller finished, is
	// a no-op.
	FinishStep(ctx context.Context, st Step, watch time.Duration) error
	// StepsDone returns the steps of a request that ran (finished in phase
	// StepDue), in ladder order, with when each finished by the store's
	// clock: what the request's audit record lists. They are kept until
	// the request's expiry.
	StepsDone(ctx context.Context, sessionID, requestID string) ([]StepDone, error)
	// AddTeam routes an open request to one more team as well: the team is
	// added to its Teams (kept in the pending index by team) unless it is
	// there already. Not applied (Refusal ErrSettled) for a request that
	// is no longer open, nor for one that already has the team (Refusal
	// nil). ErrNotFound for an unknown or held request.
	AddTeam(ctx context.Context, sessionID, requestID, team string) (Result, error)
}

// StepDone is a step that ran.
type StepDone struct {
	// Index is the step's place in the ladder (0-based).
	Index int
	// At is when it finished, by the store's clock.
	At time.Time
}

// StepPhase says what a claimed step asks for.
type StepPhase string

// Step phases.
const (
	// StepDue: the step's time has come and its request is open: run it.
	StepDue StepPhase = "due"
	// StepResolve: a page step that paged, whose request is now settled
	// or expired: resolve the page.
	StepResolve StepPhase = "resolve"
)

// Step is one escalation step handed out by [Escalations.ClaimSteps].
type Step struct {
	SessionID string
	RequestID string
	// Index is the step's place in the request's ladder (0-based).
	Index int
	Phase StepPhase
	// Record is the request as it stood when the step was claimed.
	Record *Record
}

// MaxEscalationSteps bounds Request.Escalation.
const MaxEscalationSteps = 64

// CheckEscalation returns an error wrapping [ErrInvalid] unless the steps
// of req are due after its creation, in increasing order, and before its
// expiry (a step at or past it could never run).
func CheckEscalation(req *Request) error {
	if len(req.Escalation) > MaxEscalationSteps {
		return invalid("Request.Escalation has %d steps: at most %d", len(req.Escalation), MaxEscalationSteps)
	}
	var last time.Duration
	for i, d := range req.Escalation {
		switch {
		case d <= last:
			return invalid("Request.Escalation[%d] is %v: want more than %v (steps are due in order, after creation)", i, d, last)
		case d >= req.TTL:
			return invalid("Request.Escalation[%d] is %v: at or after the request's TTL %v", i, d, req.TTL)
		case d%time.Microsecond != 0:
			return invalid("Request.Escalation[%d] is %v: want whole microseconds", i, d)
		}
		last = d
	}
	return nil
}

// CheckPrepare runs the checks of a request every Store's Prepare makes
// before it touches the backend: [Request.Validate], then
// [CheckEscalation].
func CheckPrepare(req *Request) error {
	if err := req.Validate(); err != nil {
		return err
	}
	return CheckEscalation(req)
}

// CheckStep returns an error wrapping [ErrInvalid] unless st names a
// request, a step and a phase, and a due step carries its record.
func CheckStep(st Step) error {
	if err := CheckKey(st.SessionID, st.RequestID); err != nil {
		return err
	}
	if st.Index < 0 || st.Index >= MaxEscalationSteps {
		return invalid("Step.Index is %d: want 0 to %d", st.Index, MaxEscalationSteps-1)
	}
	if st.Phase != StepDue && st.Phase != StepResolve {
		return fmt.Errorf("%w: Step.Phase %q: want due or resolve", ErrInvalid, st.Phase)
	}
	if st.Phase == StepDue && st.Record == nil {
		return invalid("Step.Record is nil: a due step carries its request (its expiry bounds how long the step is kept as done)")
	}
	return nil
}

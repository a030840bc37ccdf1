package messages

// Valid reports whether o is allow or deny.
func (o Outcome) Valid() bool { return o == OutcomeAllow || o == OutcomeDeny }

// ReasonCodes lists every reason code this version knows, allows first.
func ReasonCodes() []ReasonCode {
	return []ReasonCode{ReasonPolicyAllow, ReasonModeAllow, ReasonScopeGrant, ReasonApproved, ReasonCascade,
		ReasonPolicyDeny, ReasonRejected, ReasonHardStop, ReasonTimeout, ReasonCancelled, ReasonUnavailable}
}

// Outcome returns the outcome every decision with this reason code has, and
// false for a code this version does not know.
func (c ReasonCode) Outcome() (Outcome, bool) {
	switch c {
	case ReasonPolicyAllow, ReasonModeAllow, ReasonScopeGrant, ReasonApproved, ReasonCascade:
		return OutcomeAllow, true
	case ReasonPolicyDeny, ReasonRejected, ReasonHardStop, ReasonTimeout, ReasonCancelled, ReasonUnavailable:
		return OutcomeDeny, true
	}
	return "", false
}

// Valid reports whether s is one of the four scopes. The empty scope is not
// valid here; on a [Response] it means once (see [Response.EffectiveScope]).
func (s Scope) Valid() bool {
	switch s {
	case ScopeOnce, ScopeSession, ScopeAlways, ScopeAlwaysPrefix:
		return true
	}
	return false
}

// Valid reports whether m is reject_soft or reject_hard. The empty mode is
// not valid here; on a rejection it means reject_hard (see
// [Response.EffectiveRejectMode]).
func (m RejectMode) Valid() bool { return m == RejectSoft || m == RejectHard }

// Valid reports whether c is one of the four categories.
func (c Category) Valid() bool {
	switch c {
	case CategoryRead, CategoryWrite, CategoryExec, CategoryMCP:
		return true
	}
	return false
}

// Valid reports whether k is one of the four decider kinds.
func (k DeciderKind) Valid() bool {
	switch k {
	case DeciderPolicy, DeciderApprover, DeciderReaper, DeciderAgent:
		return true
	}
	return false
}

// Valid reports whether s is one of the known states.
func (s State) Valid() bool {
	switch s {
	case StatePending, StateApproved, StateRejected, StateExpired, StateCancelled, StateDecided:
		return true
	}
	return false
}

// Outcome returns the outcome every request in this final state has, and
// false for pending (not decided yet), decided (decided without a human:
// either outcome, read the decision) and a state this version does not know.
func (s State) Outcome() (Outcome, bool) {
	switch s {
	case StateApproved:
		return OutcomeAllow, true
	case StateRejected, StateExpired, StateCancelled:
		return OutcomeDeny, true
	}
	return "", false
}

// Message types carried in the "type" field of broker-published messages.
const (
	TypeApprovalNeeded = "approval_needed"
	TypeResolved       = "resolved"
	TypeGrantEvent     = "grant_event"
)

// Policy modes an admin may set with [AdminOpSetMode] (DESIGN §5).
const (
	ModeAlwaysAsk = "always-ask"
	ModeAutoEdit  = "auto-edit"
	ModeYolo      = "yolo"
)

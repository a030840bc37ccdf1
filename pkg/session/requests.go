package session

import (
	"context"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Requests is the role of the request path: it reads what one request
// needs, creates a request in two steps (Prepare, then Open) and applies
// votes and settlements with compare-and-set. Its methods are safe for
// concurrent use by many goroutines and processes sharing one backend, each
// transition atomic; they return ErrUnavailable (wrapped) when the backend
// cannot be reached, and callers fail closed.
type Requests interface {
	// Lookup reads, in one round trip, the existing record of the request id,
	// the session's stop signal, its session grants and the agent's grants.
	Lookup(ctx context.Context, q LookupQuery) (Lookup, error)

	// Prepare stores req held, in state [StateHeld], unless a record
	// with its id exists; it returns the stored record and whether it was
	// created. It refuses with ErrStopped (and stores nothing) while the
	// session has a stop signal. Nobody can answer a held request until
	// Open makes it pending.
	// A held request is left out of the ListPending methods, Stop and
	// CancelSession; Get, Decide and Settle report ErrNotFound for it; only
	// Lookup returns it (so that an agent retry can open it). If its expiry
	// passes while it is held, the store drops it: ClaimExpired never
	// returns it, since no agent was told it is pending by anyone who could
	// not also tell it the outcome.
	//
	// This is the first step of the broker's two-step create: a caller that
	// never learns whether its Prepare landed (the reply was lost) may
	// answer the agent with a fail-closed deny, because what it may have
	// stored cannot be decided otherwise.
	Prepare(ctx context.Context, req Request) (*Record, bool, error)

	// Open makes a held request pending, unless the session has a stop
	// signal (ErrStopped; the request stays held). Opening a request that is
	// already pending or settled is not applied (Result.Refusal nil for a
	// pending one, ErrSettled for a settled one). A held request whose
	// expiry has passed is not opened (Refusal ErrExpired; the store drops
	// it). ErrNotFound for an unknown request.
	Open(ctx context.Context, sessionID, requestID string) (Result, error)

	// Get returns the record of a request, or ErrNotFound.
	Get(ctx context.Context, sessionID, requestID string) (*Record, error)

	// Decide applies one vote with compare-and-set on pending: a deny settles
	// the request rejected; approvals from distinct approvers settle it
	// approved when ApprovalsRequired is reached. A vote on a settled request
	// or a second vote from the same approver is not applied (Result.Refusal
	// is ErrSettled or ErrDuplicateVote). ErrNotFound for an unknown request.
	// Each counted approval keeps its Vote.Scope (Record.ApprovalScopes).
	//
	// A deny with Vote.Stop sets the session's stop signal in the same step
	// (see [Vote]). An approval in a stopped session is not applied
	// (Refusal ErrStopped; the request stays pending until the stop's
	// rejections reach it): once a stop exists, nothing of the session can
	// be approved until NewTurn.
	Decide(ctx context.Context, sessionID, requestID string, v Vote) (Result, error)

	// Settle moves a pending request to state (approved, rejected or
	// cancelled) with decision; not applied when it already settled.
	// Settling approved in a stopped session is not applied (Refusal
	// ErrStopped), as for Decide. A hard rejection (reject_hard, reason
	// rejected) is refused with ErrInvalid (see [CheckSettle]): only a vote
	// that sets its stop records one.
	Settle(ctx context.Context, sessionID, requestID string, state messages.State, d messages.Decision) (Result, error)
}

// Pending lists the pending requests, by session, agent or team: what a
// cascade, a device's replay and a session's cancel work from.
type Pending interface {
	// ListPendingSession returns the pending requests of a session, oldest first.
	ListPendingSession(ctx context.Context, sessionID string) ([]*Record, error)
	// ListPendingAgent returns the pending requests of an agent id, oldest first.
	ListPendingAgent(ctx context.Context, agentID string) ([]*Record, error)
	// ListPendingTeam returns the pending requests routed to team, oldest first.
	ListPendingTeam(ctx context.Context, team string) ([]*Record, error)
}

// Request is what the broker stores for a request that waits for humans.
// The store keeps every field and returns it unchanged; it interprets only
// the identity fields, Teams, RequestedBy and ApprovalsRequired.
type Request struct {
	ID          string
	SessionID   string
	AgentID     string
	RequestedBy string
	Tool        string
	// Teams are the approver teams the question was routed to; the pending
	// index by team is kept for each of them.
	Teams []string
	// ApprovalsRequired is the number of distinct approvals that settle the
	// request (at least 1).
	ApprovalsRequired int
	// TTL is how long the request may stay pending. The store computes the
	// expiry from its own clock (Redis TIME), never the caller's.
	TTL time.Duration
	// Question is the question the broker published for the request, kept
	// so that cascades, pending replay and the reaper can work from any
	// replica. The store does not interpret it; a store that keeps bytes
	// (the Redis store) encodes it on write and decodes it once per read.
	// Its approval counts and expiry are the record's, not its own.
	Question messages.ApprovalNeeded
	// Escalation is when the request's escalation steps are due, counted
	// from its creation (see [Escalations]); Prepare schedules them in the
	// same atomic step that stores the request. Read on the way in only:
	// records read back may leave it empty.
	Escalation []time.Duration
}

// Record is a stored request with its state.
type Record struct {
	Request
	State     messages.State
	CreatedAt time.Time
	ExpiresAt time.Time
	// Approvals lists the approver ids whose approval has been counted, in
	// order. Settled requests keep it.
	Approvals []string
	// ApprovalScopes is, parallel to Approvals, the scope each counted
	// approver chose (Vote.Scope): once, session, always or always_prefix,
	// or empty when the vote named none (a vote of a broker that predates
	// scopes on votes). Record.ApprovalScope reads empty as once (fail
	// safe: it stands behind no grant). Its length is len(Approvals).
	ApprovalScopes []messages.Scope
	// Decision is the final decision, set when the request settles through
	// Decide, Settle or CancelSession. It is nil while pending and for
	// requests that expired: the broker derives the timeout decision from the
	// record (ExpiresAt, DecidedAt) so that every replica reports the same one.
	Decision *messages.Decision
	// DecidedAt is the store's time of settlement (zero while pending).
	DecidedAt time.Time
	// QuestionErr is set when the stored question could not be read (a
	// damaged or foreign value): Question is then zero. The rest of the
	// record is intact, so the request can still be rejected, cancelled or
	// expired; callers must never allow on it (they fail closed).
	QuestionErr error
}

// LookupQuery names what the hot path needs for one request.
type LookupQuery struct {
	SessionID string
	RequestID string
	AgentID   string
	// SkipGrants says the caller needs no grants (the policy allowed or
	// denied the call, and grants only ever turn an ask into an allow): the
	// store may then read just the record and the stop signal. A store may
	// return grants anyway.
	SkipGrants bool
	// Tool, when set, is the tool of the call: only its grants can allow
	// it, and the store reads no others (the grant index, docs/STATE.md
	// "Grants"). Empty: every grant of the session and of the agent.
	Tool string
	// Programs, with Tool and ProgramsKnown, are the programs of the
	// call's shell sub-commands: the first space-separated word of each
	// command's words joined by single spaces (">" for a write
	// redirection, "<" for a read). The store then reads the tool's own
	// bucket and the buckets of these programs only ([GrantProgram]).
	// ProgramsKnown false means the caller cannot say which programs the
	// call runs: the store reads every grant of Tool, whatever its program.
	// ProgramsKnown with no Programs reads the tool's own bucket only (the
	// grants without patterns, or whose patterns begin with a glob or
	// differ in their first word): right for a call without a shell
	// analysis, which no patterned grant can allow.
	Programs      []string
	ProgramsKnown bool
}

// Lookup is everything the hot path reads for one request, in one round trip.
type Lookup struct {
	// Existing is the stored record with the same request id, if any (an
	// agent retry).
	Existing *Record
	// Stopped is true while the session carries a hard-stop signal.
	Stopped    bool
	StopReason string
	// StopRejections are the hard rejections behind the stop
	// ([StopSignal.Rejections]).
	StopRejections []string
	// Grants are the session's grants, then the agent's, each by creation
	// time then id ([SortGrants]), none expired by the store's clock, and
	// only those the query reads ([LookupQuery.Reads]); nil with
	// SkipGrants. Their slices may be shared
	// with the store's cache: read them, do not modify them.
	Grants []Grant
}

// Stop returns the session's stop signal as read.
func (l *Lookup) Stop() StopSignal {
	return StopSignal{Reason: l.StopReason, Rejections: l.StopRejections}
}

// Vote is one approver's answer to a pending request.
type Vote struct {
	ApproverID string
	Approve    bool
	// Scope, on an approval, is the scope this approver chose; the store
	// keeps it with the approval (Record.ApprovalScopes), so that a grant
	// made when a quorum is reached can name only the approvers who chose
	// a standing answer. Empty is kept as empty (read as once). A deny
	// carries none.
	Scope messages.Scope
	// Decision is stored as the final decision if this vote settles the
	// request (a deny, or the approval that reaches the quorum).
	Decision messages.Decision
	// Stop, on a deny, is the reason of the session's hard-stop signal: the
	// store sets the signal in the same atomic step that settles the
	// request rejected (a reject_hard), so that a rejection without its
	// stop cannot exist. Empty: no stop. Only a deny may carry one. The
	// request's id is added to the stop's rejections (an existing stop
	// keeps its reason, see [StopSignal.Add]).
	Stop string
}

// Result reports what a state transition did.
type Result struct {
	// Applied is true when the call changed the record.
	Applied bool
	// Record is the record after the call (the standing one when not applied).
	Record *Record
	// Refusal says why the call was not applied (ErrSettled, ErrDuplicateVote…).
	Refusal error
}

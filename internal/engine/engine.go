package engine

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
)

// Requests is the store role of one request's life: the engine's reads
// of it and its transitions (one atomic step each, see [session.Store]).
type Requests interface {
	Lookup(ctx context.Context, q session.LookupQuery) (session.Lookup, error)
	Prepare(ctx context.Context, req session.Request) (*session.Record, bool, error)
	Open(ctx context.Context, sessionID, requestID string) (session.Result, error)
	Get(ctx context.Context, sessionID, requestID string) (*session.Record, error)
	Decide(ctx context.Context, sessionID, requestID string, v session.Vote) (session.Result, error)
	Settle(ctx context.Context, sessionID, requestID string, state messages.State, d messages.Decision) (session.Result, error)
	// StepsDone lists the escalation steps of a request that ran.
	StepsDone(ctx context.Context, sessionID, requestID string) ([]session.StepDone, error)
}

// Sessions is the store role of what acts on many requests at once: the
// pending requests a cascade re-checks, a hard stop, an agent's cancel.
type Sessions interface {
	ListPendingSession(ctx context.Context, sessionID string) ([]*session.Record, error)
	ListPendingAgent(ctx context.Context, agentID string) ([]*session.Record, error)
	Stop(ctx context.Context, sessionID string, sig session.StopSignal, mk func(*session.Record) messages.Decision) ([]*session.Record, error)
	CancelSession(ctx context.Context, sessionID string, ids []string, mk func(*session.Record) messages.Decision) ([]*session.Record, error)
	NewTurn(ctx context.Context, sessionID string, turn session.Turn) (bool, error)
}

// Grants is the store role an approval's grant is stored through.
type Grants interface {
	AddGrant(ctx context.Context, g session.Grant) (stored session.Grant, created bool, purged []session.Grant, err error)
}

// Publisher sends what the procedure tells others: a question to a team's
// devices, a decision to its agent, a resolution to a team. Each returns
// once the message is handed to the transport (not delivered); an error is
// the transport's refusal. Safe for concurrent use.
type Publisher interface {
	Ask(team string, q *messages.ApprovalNeeded) error
	// Decision publishes dec to its agent; traceparent, when not "", is
	// the W3C trace context of the request's span (the question's), which
	// the decision carries in its headers so the agent's trace continues.
	Decision(dec *messages.Decision, traceparent string) error
	Resolved(r *messages.Resolved) error
}

// Audit records decisions and grant events. With no audit stream, every
// method does nothing (and Strict is false). Safe for concurrent use.
type Audit interface {
	// Enqueue records dec without waiting: it never blocks the decision
	// path, and keeps retrying a record the stream did not take. The
	// record's parts are passed as values: nothing the decision path holds
	// escapes through this interface to the heap.
	Enqueue(req messages.Request, dec messages.Decision, risk messages.Risk)
	// Append records dec and returns once the stream acknowledged it
	// (idempotent: a repeated append of the same decision is one record),
	// or with the error that kept it out: [ErrUnencodable] for a record
	// that can never be encoded (retrying cannot help).
	Append(ctx context.Context, req messages.Request, dec messages.Decision, risk messages.Risk, esc []messages.EscalationRun) error
	// Strict reports whether an allow reaches its agent only once its
	// record is acknowledged (strict audit mode with a stream).
	Strict() bool
	// Grant records a grant's creation, revocation or expiry, without
	// waiting.
	Grant(ev *messages.GrantEvent)
}

// Acker acknowledges the outbox entry of a record whose effects were
// carried out (see [session.Store] AckEffects): queued, or at once.
type Acker interface {
	Ack(ctx context.Context, rec *session.Record)
}

// PolicySource gives the policy in force; Current is called once per
// message and must be cheap and safe for concurrent use.
type PolicySource interface {
	Current() *policy.Policy
}

// Canary gives the candidate policy of a policy canary for a call it
// covers, or nil: the live policy decides (also whenever the canary's
// state is unknown). Safe for concurrent use; called once per request.
type Canary interface {
	PolicyFor(sessionID, agentID, agentType string) *policy.Policy
}

// Modes gives an admin's mode override for a call: the session's, else the
// agent type's, else "" (the policy decides). Safe for concurrent use.
type Modes interface {
	ModeFor(sessionID, agentType string) policy.Mode
}

// Metrics are the series the procedure counts (the broker registers them;
// docs/OPERATIONS.md names them).
type Metrics struct {
	Decisions   *prometheus.CounterVec // outcome, reason
	Pending     prometheus.Gauge
	StoreErrors *prometheus.CounterVec // op
	Grants      *prometheus.CounterVec // event
	GrantsUsed  prometheus.Counter
	FirstAnswer *prometheus.HistogramVec // team
}

// Config configures an [Engine]. Every field is required except Logger
// (default slog.Default()), Replica, OpenTeams and Tracer.
type Config struct {
	Requests Requests
	Sessions Sessions
	Grants   Grants
	Policy   PolicySource
	Modes    Modes
	// FleetStops, when set, gives the fleet stops (optional: nil, none).
	FleetStops FleetStops
	// Canary, when set, may pick a candidate policy for a request
	// (optional: nil, the live policy decides every request).
	Canary    Canary
	Publisher Publisher
	Audit     Audit
	Acker     Acker
	Metrics   Metrics
	Logger    *slog.Logger
	// Replica names this replica in the decisions its policy makes.
	Replica string
	// StoreTimeout bounds each store call; one that takes longer fails
	// closed.
	StoreTimeout time.Duration
	// OpenTeams lets any approver answer for a team that lists no members
	// (dev mode only).
	OpenTeams bool
	// Tracer makes the spans of the procedure's steps (policy, store,
	// effects) under the caller's span; nil: tracing is off and no span
	// is made.
	Tracer trace.Tracer

	// Breakers, when set, are the outbreak breakers (optional: nil, none).
	Breakers Breakers
}

// Engine runs the decision procedure of DESIGN §4 on one replica. It holds
// no state of its own but the background follow-ups of requests it could
// not open (see Close). Safe for concurrent use.
type Engine struct {
	cfg    Config
	log    *slog.Logger
	m      Metrics
	tracer trace.Tracer // nil: tracing off

	// bgCtx ends at Close; follow-ups run under it, counted in background.
	bgCtx      context.Context
	bgCancel   context.CancelFunc
	background sync.WaitGroup
}

// New checks cfg and returns an engine.
func New(cfg Config) (*Engine, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	switch {
	case cfg.Requests == nil || cfg.Sessions == nil || cfg.Grants == nil:
		return nil, errors.New("engine: Requests, Sessions and Grants (the store) are required")
	case cfg.Policy == nil || cfg.Modes == nil:
		return nil, errors.New("engine: Policy and Modes are required")
	case cfg.Publisher == nil || cfg.Audit == nil || cfg.Acker == nil:
		return nil, errors.New("engine: Publisher, Audit and Acker are required")
	case cfg.Metrics.Decisions == nil || cfg.Metrics.Pending == nil || cfg.Metrics.StoreErrors == nil ||
		cfg.Metrics.Grants == nil || cfg.Metrics.GrantsUsed == nil || cfg.Metrics.FirstAnswer == nil:
		return nil, errors.New("engine: every series of Metrics is required")
	case cfg.StoreTimeout <= 0:
		return nil, errors.New("engine: StoreTimeout must be positive")
	}
	e := &Engine{cfg: cfg, log: cfg.Logger, m: cfg.Metrics, tracer: cfg.Tracer}
	e.bgCtx, e.bgCancel = context.WithCancel(context.Background())
	return e, nil
}

// Close ends the background follow-ups and waits for them. The engine must
// not be used after it.
func (e *Engine) Close() {
	e.bgCancel()
	e.background.Wait()
}

// storeCtx bounds one store call.
func (e *Engine) storeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, e.cfg.StoreTimeout)
}

// storeErr counts and logs a store call that failed where the procedure
// goes on (fails closed or leaves the work to the outbox).
func (e *Engine) storeErr(op string, err error, attrs ...any) {
	e.m.StoreErrors.WithLabelValues(op).Inc()
	e.log.Error("store "+op+" failed", append(attrs, "err", err)...)
}

// mode is the mode override for a call of agentType in sessionID.
func (e *Engine) mode(sessionID, agentType string) policy.Mode {
	return e.cfg.Modes.ModeFor(sessionID, agentType)
}

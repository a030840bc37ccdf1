package broker

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/nats-io/nats.go"
	"go.opentelemetry.io/otel/trace"

	"github.com/signoff-dev/signoff/internal/escalator"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
)

// ModesBucket is the JetStream key-value bucket that holds the admin's mode
// overrides (per session and per agent type), watched by every replica.
const ModesBucket = "SIGNOFF_MODES"

// PolicySource gives the policy in force. *policy.Watcher implements it; a
// fixed policy can be wrapped with [StaticPolicy].
type PolicySource interface {
	// Current returns the policy in force; it is called once per message and
	// must be cheap and safe for concurrent use.
	Current() *policy.Policy
	// Reload re-reads the policy now (admin subject). It returns the error
	// that kept the old policy in force, if any.
	Reload() error
}

// reloadReporter is a [PolicySource] that reports its reloads, file polls
// and admin requests alike (*policy.Watcher): its reloads are counted as
// they happen, not by the admin handler.
type reloadReporter interface {
	OnReload(func(policy.ReloadEvent))
}

// StaticPolicy is a [PolicySource] that never changes.
type StaticPolicy struct{ P *policy.Policy }

// Current returns the fixed policy.
func (s StaticPolicy) Current() *policy.Policy { return s.P }

// Reload reports that a fixed policy cannot be reloaded.
func (s StaticPolicy) Reload() error {
	return errors.New("policy is built in; start the broker with --policy FILE to reload")
}

// Config configures a [Broker]. Zero values take the documented defaults.
type Config struct {
	// tenant makes the broker one tenant's on a [Plane] (nil: the declared
	// tenant of a broker without a tenants file): set by the plane only.
	tenant *tenantState

	// Conn is the NATS connection the broker serves on (required). The
	// broker does not close it; the owner drains it after Run returns.
	Conn *nats.Conn
	// AuditConn, when set, carries the JetStream traffic (audit appends and
	// their acknowledgements, the modes bucket). Optional; Conn otherwise.
	// The broker does not close it.
	AuditConn *nats.Conn
	// Store holds the shared state (required).
	Store session.Store
	// Policy gives the policy in force (required).
	Policy PolicySource
	// Logger receives structured logs (default: slog.Default()).
	Logger *slog.Logger
	// Prefix is the subject prefix (default "signoff.v1").
	Prefix string
	// Replica names this replica in logs and audit records (default: the
	// NATS client id).
	Replica string
	// MaxMessageBytes bounds every incoming message (default 64 KiB).
	MaxMessageBytes int
	// Workers bounds the messages handled at once by this replica
	// (default 256).
	Workers int
	// StoreTimeout bounds each call to the store (default 2 s). A call that
	// takes longer fails closed.
	StoreTimeout time.Duration
	// ReapInterval is the reaper's sweep interval (default 500 ms, so that an
	// expiry is reported within expiry + 1 s even when the request was created
	// while the reaper slept).
	ReapInterval time.Duration
	// OutboxInterval is how often the outbox worker looks for effects whose
	// lease ran out (default 1 s): effects of decisions whose replica died
	// or failed before it acknowledged them are carried out within the
	// store's effect lease plus this.
	OutboxInterval time.Duration
	// GrantExpiryInterval is how often each replica removes the grants
	// whose expiry passed and records them expired (default 30 s; grants
	// stop allowing calls at their expiry whatever this interval).
	GrantExpiryInterval time.Duration
	// DisableReaper turns the in-process reaper off (tests that need to
	// control expiry; never in production).
	DisableReaper bool
	// DisableAudit skips the JetStream audit stream (for NATS servers
	// without JetStream; the broker logs a warning).
	DisableAudit bool
	// AuditReplicas is the audit stream's replica count on a NATS cluster
	// (default 1; use 3 on a 3-node cluster).
	AuditReplicas int
	// AuditMaxAge bounds how long audit records are kept (default 30 days).
	AuditMaxAge time.Duration
	// AuditMode is AuditAsync (default) or AuditStrict: whether an allow
	// waits for its audit record's acknowledgement.
	AuditMode AuditMode
	// AuditAckTimeout bounds the wait for each audit append's
	// acknowledgement (default 2 s); an append not acknowledged by then is
	// retried (async) or denies the allow (strict).
	AuditAckTimeout time.Duration
	// AuditRetryLimit bounds the audit records held in memory for retry
	// (default 65536, about 1–2 KiB each); a failed record past it is lost,
	// counted in signoff_audit_lost_total{reason="overflow"}.
	AuditRetryLimit int
	// AuditDedupWindow is the audit stream's duplicate window (default 2
	// min, JetStream's): an append of a decision older than the window
	// (less the ack timeout and 5 s of clock skew) first looks its record
	// up in the stream (audit.go, late). Under auditMinLateAfter + the
	// margin the broker does not start.
	AuditDedupWindow time.Duration
	// OpenTeams lets any approver answer for a team that lists no members
	// (the built-in policy's "default"). Dev mode only: in production a team
	// without members refuses every answer.
	OpenTeams bool
	// Tracer makes the spans of the decision path (docs/OPERATIONS.md
	// "Traces"), children of the trace context that comes in a message's
	// headers. Nil (the default): tracing is off, and no span is made.
	Tracer trace.Tracer
	// Metrics receives the broker's metrics (default: a private registry,
	// see [Broker.Metrics]).
	Metrics *Metrics
	// RequireSignedResponses accepts only responses signed by one of
	// ApproverKeys (docs/PROTOCOL.md, "Signed responses"); others get an
	// error reply of code forbidden and decide nothing.
	RequireSignedResponses bool
	// ApproverKeys are the public user nkeys ("U…") of the approver bots
	// whose signatures are trusted. When set, a signed response must verify
	// even if signatures are not required.
	ApproverKeys []string
	// SignatureMaxSkew bounds how far a response's signed_at may be from
	// this replica's clock, either way (default 5 min).
	SignatureMaxSkew time.Duration
	// Pagers are the pagers escalation page: steps name (nil: none; see
	// escalator.NewPagers).
	Pagers *escalator.Pagers
	// WebURL is the public base URL of the approver web page: a page links
	// to the question there (empty: no link).
	WebURL string
	// EscalationInterval is the escalator's sweep interval (default 1 s):
	// an escalation step runs within its time plus this.
	EscalationInterval time.Duration
	// EscalationWatch is how often a question that paged is checked for
	// its decision, which resolves the page (default 2 s).
	EscalationWatch time.Duration
	// DisableEscalation turns the in-process escalator off (tests that
	// count Redis round trips; never in production: no ladder would run).
	DisableEscalation bool

	// signatures is built by Validate from the three fields above.
	signatures *signatureGuard
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Prefix == "" {
		c.Prefix = messages.DefaultPrefix
	}
	if c.MaxMessageBytes == 0 {
		c.MaxMessageBytes = messages.DefaultMaxBytes
	}
	if c.Workers == 0 {
		c.Workers = 256
	}
	if c.StoreTimeout == 0 {
		c.StoreTimeout = 2 * time.Second
	}
	if c.ReapInterval == 0 {
		c.ReapInterval = 500 * time.Millisecond
	}
	if c.OutboxInterval == 0 {
		c.OutboxInterval = time.Second
	}
	if c.GrantExpiryInterval == 0 {
		c.GrantExpiryInterval = 30 * time.Second
	}
	if c.AuditReplicas == 0 {
		c.AuditReplicas = 1
	}
	if c.AuditMaxAge == 0 {
		c.AuditMaxAge = 30 * 24 * time.Hour
	}
	if c.AuditMode == "" {
		c.AuditMode = AuditAsync
	}
	if c.AuditAckTimeout == 0 {
		c.AuditAckTimeout = 2 * time.Second
	}
	if c.AuditDedupWindow == 0 {
		c.AuditDedupWindow = 2 * time.Minute
	}
	if c.AuditRetryLimit == 0 {
		c.AuditRetryLimit = 65536
	}
	if c.Metrics == nil {
		c.Metrics = NewMetrics(nil)
	}
	if c.SignatureMaxSkew == 0 {
		c.SignatureMaxSkew = DefaultSignatureMaxSkew
	}
}

// Validate reports the first problem with c. It also prepares the
// signed-response check from RequireSignedResponses and ApproverKeys.
func (c *Config) Validate() error {
	switch {
	case c.Conn == nil:
		return errors.New("broker: Config.Conn is required")
	case c.Store == nil:
		return errors.New("broker: Config.Store is required")
	case c.Policy == nil || c.Policy.Current() == nil:
		return errors.New("broker: Config.Policy is required")
	case c.MaxMessageBytes < 1024:
		return fmt.Errorf("broker: MaxMessageBytes %d is too small (minimum 1024)", c.MaxMessageBytes)
	case c.Workers < 1:
		return fmt.Errorf("broker: Workers %d must be at least 1", c.Workers)
	case c.StoreTimeout < 0 || c.ReapInterval < 0 || c.OutboxInterval < 0 || c.GrantExpiryInterval < 0:
		return errors.New("broker: StoreTimeout, ReapInterval, OutboxInterval and GrantExpiryInterval must not be negative")
	case c.AuditAckTimeout < 0 || c.AuditRetryLimit < 0:
		return errors.New("broker: AuditAckTimeout and AuditRetryLimit must not be negative")
	case c.AuditMode == AuditStrict && c.DisableAudit:
		return errors.New("broker: AuditMode strict needs the audit stream (DisableAudit is set)")
	}
	if _, err := ParseAuditMode(string(c.AuditMode)); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	if c.WebURL != "" {
		if err := escalator.CheckWebURL(c.WebURL); err != nil {
			return fmt.Errorf("broker: %w", err)
		}
	}
	if c.EscalationInterval < 0 || c.EscalationWatch < 0 {
		return errors.New("broker: EscalationInterval and EscalationWatch must not be negative")
	}
	if _, err := messages.NewSubjects(c.Prefix); err != nil {
		return fmt.Errorf("broker: prefix: %w", err)
	}
	g, err := newSignatureGuard(c)
	if err != nil {
		return err
	}
	c.signatures = g
	return nil
}

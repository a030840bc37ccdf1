package client

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Option configures a [Client]; options validate their argument.
type Option func(*options) error

type options struct {
	prefix         string
	sessionID      string
	agentID        string
	agentType      string
	requestedBy    string
	attemptTimeout time.Duration
	retryMin       time.Duration
	retryMax       time.Duration
	statusInterval time.Duration
	reconnectCheck time.Duration
	expiryGrace    time.Duration
	receiptTimeout time.Duration
	logf           func(format string, args ...any)
	// gate is the Signoff-Gate header of every request: which gate sent
	// it and its version (default "sdk/<this module's version>").
	gate   string
	tracer trace.Tracer // nil: the global provider's, at each call
	// statelessTurns: NewTurn does not claim to name every hard
	// rejection heard of (WithStatelessTurns).
	statelessTurns bool
	seen           []string // WithSeen
}

func defaultOptions() options {
	return options{
		prefix:         messages.DefaultPrefix,
		attemptTimeout: 2 * time.Second,
		retryMin:       50 * time.Millisecond,
		retryMax:       2 * time.Second,
		statusInterval: 5 * time.Second,
		reconnectCheck: 100 * time.Millisecond,
		expiryGrace:    2 * time.Second,
		logf:           func(string, ...any) {},
	}
}

// WithSession sets the session id (required): a single NATS subject token.
func WithSession(id string) Option {
	return tokenOption("session_id", id, func(o *options) *string { return &o.sessionID })
}

// WithAgent sets the agent (worker/pod) id that "always" grants attach to
// (required).
func WithAgent(id string) Option {
	return tokenOption("agent_id", id, func(o *options) *string { return &o.agentID })
}

// tokenOption is the Option that sets the field of the options that field
// points at to id, a subject token (what names it in the error).
func tokenOption(what, id string, field func(*options) *string) Option {
	return func(o *options) error {
		if err := messages.ValidateToken(what, id); err != nil {
			return err
		}
		*field(o) = id
		return nil
	}
}

// WithAgentType names the subagent type whose policy layer applies.
func WithAgentType(t string) Option {
	return func(o *options) error { o.agentType = t; return nil }
}

// WithRequestedBy names the human the agent works for; they may not approve
// their own agent's requests.
func WithRequestedBy(user string) Option {
	return func(o *options) error { o.requestedBy = user; return nil }
}

// WithPrefix sets the subject prefix (default "signoff.v1").
func WithPrefix(p string) Option {
	return func(o *options) error {
		if _, err := messages.NewSubjects(p); err != nil {
			return err
		}
		o.prefix = p
		return nil
	}
}

// WithAttemptTimeout bounds each request attempt (default 2 s); a timed-out
// attempt is retried with the same request id until the call's context ends.
func WithAttemptTimeout(d time.Duration) Option {
	return timeoutOption("attempt timeout", d, func(o *options) *time.Duration { return &o.attemptTimeout })
}

// timeoutOption is the Option that sets the field of the options that
// field points at to d, which must be positive (what names it in the
// error).
func timeoutOption(what string, d time.Duration, field func(*options) *time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("%s %s must be positive", what, d)
		}
		*field(o) = d
		return nil
	}
}

// WithStatusInterval sets how often a waiting request asks for its status
// as a safety net (default 5 s); it also asks after every reconnect.
func WithStatusInterval(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return errors.New("status interval must be positive")
		}
		o.statusInterval = d
		return nil
	}
}

// WithLogf receives the client's retry messages (default: discarded).
func WithLogf(f func(format string, args ...any)) Option {
	return func(o *options) error {
		if f == nil {
			return errors.New("nil log function")
		}
		o.logf = f
		return nil
	}
}

// WithReceiptTimeout bounds how long [Client.Request] tries to get the
// broker's receipt (the decision, or "pending") before it gives up with an
// error; by default it keeps retrying until the call's context ends. The wait
// for a pending request's decision is not bounded by it. A hook that must
// answer its host in time uses it to report "no broker" in seconds.
func WithReceiptTimeout(d time.Duration) Option {
	return timeoutOption("receipt timeout", d, func(o *options) *time.Duration { return &o.receiptTimeout })
}

// WithGate names the gate this client asks for (sent as the Signoff-Gate
// header, shown by `signoff admin agents`): one of the messages.Gate*
// kinds, or a name of your own, and its version. Default: "sdk" and this
// module's version. A gate that removes or bypasses itself is what the
// last-seen list exists to notice; the header is information, not
// identity.
func WithGate(kind, version string) Option {
	return func(o *options) error {
		if err := messages.ValidateToken("gate kind", kind); err != nil {
			return err
		}
		g := kind
		if version != "" {
			g += "/" + version
		}
		if k, _ := messages.ParseGate(g); k != kind {
			return fmt.Errorf("client: gate %q/%q: too long or not printable", kind, version)
		}
		o.gate = g
		return nil
	}
}

// WithTracerProvider sets where the client's spans go (default: the
// global provider, otel.GetTracerProvider(), at each call). The client
// makes one client span per request, a child of the context's span, and
// sends its trace context to the brokers in the request's headers (W3C
// traceparent, see pkg/natstrace): the brokers' spans of the decision join
// the agent's trace.
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(o *options) error {
		if tp == nil {
			return errors.New("client: WithTracerProvider: nil provider")
		}
		o.tracer = tp.Tracer(TracerName)
		return nil
	}
}

// TracerName is the instrumentation scope of the client's spans.
const TracerName = "github.com/signoff-dev/signoff/pkg/client"

// WithStatelessTurns is for a client that lives for one call only and
// keeps nothing between processes (see [WithSeen] for one that does), so
// it cannot know every hard rejection its agent heard of: its [Client.NewTurn]
// names only those this client heard and does not say the list is
// complete (messages.TurnRequest SeenComplete false). Such a turn ends a
// stop whether or not the agent heard of the rejections behind it, as
// turns did before turns were tracked; a turn sent before the agent heard
// of one and delayed past its delivery ends its stop too (docs/STATE.md
// "Hard stops and turns"). Long-lived clients should not use it.
func WithStatelessTurns() Option {
	return func(o *options) error {
		o.statelessTurns = true
		return nil
	}
}

// WithSeen starts the client with the hard rejections its agent heard of
// since its last turn that ended a stop, as an earlier client of the same
// session kept them ([Client.Seen]): a gate that runs one process per
// call (a hook) keeps them between processes, so that its turns can be
// tracked. At most messages.MaxCancelIDs ids, each a subject token.
func WithSeen(ids ...string) Option {
	return func(o *options) error {
		if len(ids) > messages.MaxCancelIDs {
			return fmt.Errorf("WithSeen: %d ids, at most %d", len(ids), messages.MaxCancelIDs)
		}
		for i, id := range ids {
			if err := messages.ValidateToken("seen["+strconv.Itoa(i)+"]", id); err != nil {
				return fmt.Errorf("WithSeen: %w", err)
			}
		}
		o.seen = append([]string(nil), ids...)
		return nil
	}
}

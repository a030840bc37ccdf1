package client

import (
	"errors"
	"fmt"
	"time"

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
	return func(o *options) error {
		if err := messages.ValidateToken("session_id", id); err != nil {
			return err
		}
		o.sessionID = id
		return nil
	}
}

// WithAgent sets the agent (worker/pod) id that "always" grants attach to
// (required).
func WithAgent(id string) Option {
	return func(o *options) error {
		if err := messages.ValidateToken("agent_id", id); err != nil {
			return err
		}
		o.agentID = id
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
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("attempt timeout %s must be positive", d)
		}
		o.attemptTimeout = d
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
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("receipt timeout %s must be positive", d)
		}
		o.receiptTimeout = d
		return nil
	}
}

package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"github.com/signoff-dev/signoff/pkg/backoff"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Client asks Signoff before an agent runs a tool call. One Client serves one
// agent session; it is safe for concurrent use.
type Client struct {
	nc   *nats.Conn
	subj messages.Subjects
	o    options

	// seen holds the ids of the hard rejections (reject_hard) this client
	// received since its last new turn, which NewTurn names: a turn ends
	// a stop only when the agent has heard of the rejection behind it.
	mu   sync.Mutex
	seen []string
}

// New returns a client for one session on nc. WithSession and WithAgent are
// required. The client does not own nc.
func New(nc *nats.Conn, opts ...Option) (*Client, error) {
	if nc == nil {
		return nil, errors.New("client: nil NATS connection")
	}
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
	}
	if o.sessionID == "" {
		return nil, errors.New("client: WithSession is required")
	}
	if o.agentID == "" {
		return nil, errors.New("client: WithAgent is required")
	}
	subj, err := messages.NewSubjects(o.prefix)
	if err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return &Client{nc: nc, subj: subj, o: o}, nil
}

// SessionID returns the session this client speaks for.
func (c *Client) SessionID() string { return c.o.sessionID }

// Call is one tool call to ask about.
type Call struct {
	// RequestID is the idempotency key; New generates one when empty. Reuse
	// it to ask again about the same call after a crash.
	RequestID   string
	CallID      string
	Tool        string
	Category    messages.Category
	Arguments   any // a JSON object: a map, a struct, or json.RawMessage
	Description string
	// TTL asks for a shorter or longer wait for approvers (capped by policy).
	TTL time.Duration
	// Cwd is the agent's working directory (absolute), against which the
	// policy resolves relative paths.
	Cwd string
}

// Request asks whether call may run and waits for the final decision: at
// once for calls the policy decides, after the approvers answered (or the
// request expired) for the others. It retries with the same request id on
// timeouts and when no broker answers, and recovers a decision missed while
// disconnected through the status subject. The error is non-nil only when no
// decision could be had (ctx done, invalid call, broker error reply).
func (c *Client) Request(ctx context.Context, call Call) (*messages.Decision, error) {
	return c.request(ctx, call, nil)
}

func (c *Client) request(ctx context.Context, call Call, rest []messages.BatchItem) (*messages.Decision, error) {
	d, err := c.decide(ctx, call, rest)
	if d != nil && d.ReasonCode == messages.ReasonRejected && d.RejectMode == messages.RejectHard {
		c.mu.Lock()
		if len(c.seen) < messages.MaxCancelIDs {
			c.seen = append(c.seen, d.RequestID)
		}
		c.mu.Unlock()
	}
	return d, err
}

func (c *Client) decide(ctx context.Context, call Call, rest []messages.BatchItem) (*messages.Decision, error) {
	req, err := c.build(call, rest)
	if err != nil {
		return nil, err
	}
	data, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("client: encode request: %w", err)
	}
	// Subscribe before sending so the decision of a pending request cannot
	// be published before anyone listens.
	decisions := make(chan *nats.Msg, 4)
	sub, err := c.nc.ChanSubscribe(c.subj.Decision(req.SessionID, req.RequestID), decisions)
	if err != nil {
		return nil, fmt.Errorf("client: subscribe to decision: %w", err)
	}
	defer func() { _ = sub.Unsubscribe() }()

	var rc messages.Receipt
	rctx := ctx
	if c.o.receiptTimeout > 0 {
		var cancel context.CancelFunc
		rctx, cancel = context.WithTimeout(ctx, c.o.receiptTimeout)
		defer cancel()
	}
	if err := c.roundTrip(rctx, c.subj.Req(req.SessionID), data, &rc); err != nil {
		return nil, err
	}
	if rc.Decision != nil {
		return rc.Decision, nil
	}
	if rc.State != messages.StatePending {
		return nil, fmt.Errorf("client: receipt for %s has state %q and no decision", req.RequestID, rc.State)
	}
	return c.await(ctx, req.RequestID, rc.ExpiresAt, decisions)
}

func (c *Client) build(call Call, rest []messages.BatchItem) (messages.Request, error) {
	id := call.RequestID
	if id == "" {
		id = nuid.Next()
	}
	req := messages.Request{
		V:              messages.Version,
		RequestID:      id,
		SessionID:      c.o.sessionID,
		AgentID:        c.o.agentID,
		AgentType:      c.o.agentType,
		RequestedBy:    c.o.requestedBy,
		CallID:         call.CallID,
		Tool:           call.Tool,
		Category:       call.Category,
		Description:    call.Description,
		BatchRemaining: rest,
		TTLMillis:      call.TTL.Milliseconds(),
		Cwd:            call.Cwd,
	}
	args, err := rawArguments(call.Arguments)
	if err != nil {
		return req, err
	}
	req.Arguments = args
	if err := req.Validate(); err != nil {
		return req, fmt.Errorf("client: %w", err)
	}
	return req, nil
}

func rawArguments(a any) (json.RawMessage, error) {
	switch v := a.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return v, nil
	case []byte:
		return json.RawMessage(v), nil
	}
	data, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("client: encode arguments: %w", err)
	}
	return data, nil
}

// await waits for the decision of a pending request on its decision subject,
// asking for its status now and then and after every reconnect, in case the
// decision was published while this connection was away.
func (c *Client) await(ctx context.Context, id string, expires time.Time, decisions <-chan *nats.Msg) (*messages.Decision, error) {
	tick := time.NewTicker(c.o.reconnectCheck)
	defer tick.Stop()
	reconnects := c.nc.Stats().Reconnects
	lastStatus := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case msg := <-decisions:
			d, err := messages.Decode[messages.Decision](msg.Data, messages.DefaultMaxBytes)
			if err != nil || d.RequestID != id {
				continue // not ours or not a decision: the status check recovers
			}
			return &d, nil
		case <-tick.C:
			now := time.Now()
			rc := c.nc.Stats().Reconnects
			due := now.Sub(lastStatus) >= c.o.statusInterval ||
				(!expires.IsZero() && now.After(expires.Add(c.o.expiryGrace)) && now.Sub(lastStatus) >= c.o.expiryGrace)
			if rc == reconnects && !due {
				continue
			}
			reconnects, lastStatus = rc, now
			receipt, err := c.Status(ctx, id)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				if errors.Is(err, messages.ErrNotFound) {
					return nil, fmt.Errorf("client: request %s is unknown to the broker (past its retention?): %w", id, err)
				}
				continue // broker busy or unreachable: keep waiting
			}
			if receipt.Decision != nil {
				return receipt.Decision, nil
			}
		}
	}
}

// Status returns the current receipt of a request of this session.
func (c *Client) Status(ctx context.Context, requestID string) (messages.Receipt, error) {
	var rc messages.Receipt
	data, err := json.Marshal(messages.StatusRequest{V: messages.Version, RequestID: requestID})
	if err != nil {
		return rc, err
	}
	err = c.roundTrip(ctx, c.subj.Status(c.o.sessionID), data, &rc)
	return rc, err
}

// NewTurn tells the broker a new user turn began: it clears the session's
// hard-stop signal. It reports whether a stop signal was set.
func (c *Client) NewTurn(ctx context.Context) (bool, error) {
	var rep messages.TurnReply
	c.mu.Lock()
	seen := slices.Clone(c.seen)
	c.mu.Unlock()
	data, _ := json.Marshal(messages.TurnRequest{V: messages.Version, Seen: seen})
	if err := c.roundTrip(ctx, c.subj.Turn(c.o.sessionID), data, &rep); err != nil {
		return false, err
	}
	c.mu.Lock()
	c.seen = slices.DeleteFunc(c.seen, func(id string) bool { return slices.Contains(seen, id) })
	c.mu.Unlock()
	return rep.StopCleared, nil
}

// Cancel cancels pending requests of the session (all of them when no id is
// given) and returns the ids it cancelled. Requests already decided keep
// their decision.
func (c *Client) Cancel(ctx context.Context, requestIDs ...string) ([]string, error) {
	var rep messages.CancelReply
	data, err := json.Marshal(messages.CancelRequest{V: messages.Version, RequestIDs: requestIDs})
	if err != nil {
		return nil, err
	}
	if err := c.roundTrip(ctx, c.subj.Cancel(c.o.sessionID), data, &rep); err != nil {
		return nil, err
	}
	return rep.Cancelled, nil
}

// roundTrip sends a request and decodes the reply into out, retrying with
// the same body while no broker answers or an attempt times out.
func (c *Client) roundTrip(ctx context.Context, subject string, data []byte, out any) error {
	retry := backoff.Policy{Min: c.o.retryMin, Max: c.o.retryMax}
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, c.o.attemptTimeout)
		msg, err := c.nc.RequestWithContext(actx, subject, data)
		cancel()
		if err == nil {
			if rep, ok := messages.IsErrorReply(msg.Data); ok {
				if rep.Error.Code == messages.CodeUnavailable {
					err = rep.Err() // the broker's store is away: try again
				} else {
					return rep.Err()
				}
			} else if err := json.Unmarshal(msg.Data, out); err != nil {
				return fmt.Errorf("client: bad reply on %s: %w", subject, err)
			} else {
				return nil
			}
		}
		if ctx.Err() != nil {
			return fmt.Errorf("client: %s: %w (last error: %v)", subject, ctx.Err(), err)
		}
		if !retryable(err) {
			return fmt.Errorf("client: %s: %w", subject, err)
		}
		wait := retry.Delay(attempt)
		c.o.logf("signoff: %s attempt %d failed (%v); retrying in %s", subject, attempt, err, wait)
		if serr := backoff.Sleep(ctx, wait); serr != nil {
			return fmt.Errorf("client: %s: %w (last error: %v)", subject, serr, err)
		}
	}
}

func retryable(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, messages.ErrUnavailable) ||
		errors.Is(err, nats.ErrConnectionReconnecting)
}

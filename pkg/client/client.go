package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/signoff-dev/signoff/pkg/backoff"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/natstrace"
)

// Client asks Signoff before an agent runs a tool call. One Client serves one
// agent session; it is safe for concurrent use.
type Client struct {
	nc   *nats.Conn
	subj messages.Subjects
	o    options
	hdr  nats.Header // the Signoff-Gate header, read-only

	// seen holds the ids of the hard rejections this client heard of
	// (its reject_hard decisions, the stop_rejections of its hard_stop
	// denials) since its last new turn that ended a stop, which NewTurn
	// names: a turn ends a stop only when the agent has heard of every
	// rejection behind it.
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
	if o.gate == "" {
		o.gate = messages.GateSDK + "/" + sdkVersion()
	}
	return &Client{nc: nc, subj: subj, o: o, hdr: nats.Header{messages.GateHeader: []string{o.gate}}, seen: o.seen}, nil
}

// sdkVersion is the version of this module in the running binary.
func sdkVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	const path = "github.com/signoff-dev/signoff"
	if bi.Main.Path == path {
		return bi.Main.Version
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			return d.Version
		}
	}
	return "unknown"
}

// Seen returns the hard rejections this client heard of since its last
// turn that ended a stop (what its next [Client.NewTurn] names), oldest
// first: what a gate that runs one process per call keeps for the next
// one ([WithSeen]).
func (c *Client) Seen() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.seen)
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
	// Home is the agent's home directory (absolute): a policy that sets
	// no home: reads ~ as this directory for the call.
	Home string
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
	c.heard(d)
	return d, err
}

// heard adds to seen the hard rejections d tells of: d itself when it is
// a reject_hard, those behind the stop when it is a hard_stop. At most
// messages.MaxCancelIDs are kept, the newest.
func (c *Client) heard(d *messages.Decision) {
	if d == nil {
		return
	}
	var ids []string
	switch d.ReasonCode {
	case messages.ReasonRejected:
		if d.RejectMode == messages.RejectHard {
			ids = []string{d.RequestID}
		}
	case messages.ReasonHardStop:
		ids = d.StopRejections
	}
	if len(ids) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		if !slices.Contains(c.seen, id) {
			c.seen = append(c.seen, id)
		}
	}
	if n := len(c.seen) - messages.MaxCancelIDs; n > 0 {
		c.seen = slices.Delete(c.seen, 0, n)
	}
}

func (c *Client) decide(ctx context.Context, call Call, rest []messages.BatchItem) (d *messages.Decision, err error) {
	req, err := c.build(call, rest)
	if err != nil {
		return nil, err
	}
	ctx, span := c.tracer().Start(ctx, SpanRequest, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("signoff.request_id", req.RequestID), attribute.String("signoff.session_id", req.SessionID),
			attribute.String("signoff.tool", req.Tool)))
	defer func() { endSpan(span, d, err) }()
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
		Home:           call.Home,
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
	if err == nil {
		c.heard(rc.Decision)
	}
	return rc, err
}

// NewTurn tells the broker a new user turn began: it clears the session's
// hard-stop signal. It reports whether a stop signal was set and cleared.
//
// The turn names every hard rejection this client heard of since its last
// turn that ended a stop (messages.TurnRequest SeenComplete): a
// reject_hard decision, and the rejections a hard_stop deny names. The
// stop ends only when the turn names every rejection behind it, so a turn
// sent before the agent heard of a rejection — even one delayed in
// retries until after the rejection was delivered — cannot end it: it
// returns false, and the session stays stopped (its calls are denied
// hard_stop, naming the rejections) until a turn after the agent heard.
// A client made [WithStatelessTurns] does not claim its list is complete.
func (c *Client) NewTurn(ctx context.Context) (bool, error) {
	var rep messages.TurnReply
	c.mu.Lock()
	seen := slices.Clone(c.seen)
	c.mu.Unlock()
	data, _ := json.Marshal(messages.TurnRequest{V: messages.Version, Seen: seen, SeenComplete: !c.o.statelessTurns})
	if err := c.roundTrip(ctx, c.subj.Turn(c.o.sessionID), data, &rep); err != nil {
		return false, err
	}
	if len(rep.Unheard) == 0 {
		// No stop holds: what it named is done with. A stop that holds
		// needs them all named again.
		c.mu.Lock()
		c.seen = slices.DeleteFunc(c.seen, func(id string) bool { return slices.Contains(seen, id) })
		c.mu.Unlock()
	}
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
		// A header of its own per attempt: the gate's, shared, and the
		// trace context of this call.
		send := &nats.Msg{Subject: subject, Data: data, Header: maps.Clone(c.hdr)}
		natstrace.Inject(ctx, send)
		msg, err := c.nc.RequestMsgWithContext(actx, send)
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
		if !Retryable(err) {
			return fmt.Errorf("client: %s: %w", subject, err)
		}
		wait := retry.Delay(attempt)
		c.o.logf("signoff: %s attempt %d failed (%v); retrying in %s", subject, attempt, err, wait)
		if serr := backoff.Sleep(ctx, wait); serr != nil {
			return fmt.Errorf("client: %s: %w (last error: %v)", subject, serr, err)
		}
	}
}

// Retryable reports whether err, the failure of a request to the brokers
// over NATS, is worth another attempt with the same request: no broker
// answered (yet), the connection is reconnecting, or the plane said it is
// unavailable. The client retries these; a harness that talks to the
// brokers itself can do the same.
func Retryable(err error) bool {
	return errors.Is(err, nats.ErrNoResponders) ||
		errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, messages.ErrUnavailable) ||
		errors.Is(err, nats.ErrConnectionReconnecting)
}

// SpanRequest is the name of the client's span of one request.
const SpanRequest = "signoff.client.request"

// tracer is the tracer of the client's spans: WithTracerProvider's, else
// the global provider's (read at each call: an agent may set it up after
// making the client).
func (c *Client) tracer() trace.Tracer {
	if c.o.tracer != nil {
		return c.o.tracer
	}
	return otel.GetTracerProvider().Tracer(TracerName)
}

// endSpan records the decision d (or err) on span and ends it.
func endSpan(span trace.Span, d *messages.Decision, err error) {
	if span.IsRecording() {
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		} else if d != nil {
			span.SetAttributes(attribute.String("signoff.outcome", string(d.Outcome)), attribute.String("signoff.reason_code", string(d.ReasonCode)))
		}
	}
	span.End()
}

// HostHome is the home directory of this process's user ($HOME), cleaned,
// for Call.Home: what the agent's ~ means when the hook or the gateway runs
// beside it. "" when there is none or the protocol would refuse it (a
// relative path, glob characters): the policy then keeps its own home.
func HostHome() string {
	h, err := os.UserHomeDir()
	if err != nil || !path.IsAbs(h) {
		return ""
	}
	h = path.Clean(h)
	r := messages.Request{V: messages.Version, RequestID: "x", SessionID: "x", AgentID: "x", Tool: "x", Home: h}
	if r.Validate() != nil {
		return ""
	}
	return h
}

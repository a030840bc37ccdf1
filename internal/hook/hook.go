package hook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"github.com/signoff-dev/signoff/internal/agentcfg"
	"github.com/signoff-dev/signoff/internal/buildinfo"
	"github.com/signoff-dev/signoff/internal/natsurl"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Defaults of [Config].
const (
	// DefaultDeadline is a margin under the smallest hook timeout the hosts
	// have documented (60 s, Claude Code's default before it became 600 s),
	// so that the hook answers first with any version and any default.
	DefaultDeadline = 55 * time.Second
	// DefaultCancelGrace is the part of the deadline kept for cancelling a
	// request still pending and writing the answer.
	DefaultCancelGrace = time.Second
)

// Config shapes one hook run.
type Config struct {
	// Host is the host whose format is spoken (required).
	Host Host
	// Agent is the connection and identity (required).
	Agent agentcfg.Config
	// Deadline is when, counted from the start, the hook has answered
	// (default DefaultDeadline). It must be shorter than the host's hook
	// timeout: docs/AGENTS.md shows matching settings.
	Deadline time.Duration
	// CancelGrace is kept at the end of the deadline to cancel a pending
	// request (default DefaultCancelGrace, at most a quarter of Deadline).
	CancelGrace time.Duration
	// Session, when set, is the Signoff session of every event instead of
	// the host's session id: for NATS users pinned to their sessions
	// (deploy/nats, auth-per-agent.conf template 2).
	Session string
	// Logger receives one record per event: the decision, or why the hook
	// refused (default: discarded; stderr belongs to the host).
	Logger *slog.Logger
	// Connect opens the NATS connection (default Agent.Connect). Tests
	// inject faults here.
	Connect func(ctx context.Context, name string) (*nats.Conn, error)
}

func (c *Config) setDefaults() {
	if c.Deadline == 0 {
		c.Deadline = DefaultDeadline
	}
	if c.CancelGrace == 0 {
		c.CancelGrace = min(DefaultCancelGrace, c.Deadline/4)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Connect == nil {
		c.Connect = func(ctx context.Context, name string) (*nats.Conn, error) { return c.Agent.Connect(ctx, name) }
	}
}

// Validate reports settings the hook cannot work with.
func (c *Config) Validate() error {
	if _, err := ParseHost(string(c.Host)); err != nil {
		return err
	}
	if c.Session != "" && agentcfg.Token(c.Session) != c.Session {
		return fmt.Errorf("session %q is not a single subject token", c.Session)
	}
	switch {
	case c.Deadline <= 0:
		return fmt.Errorf("deadline %s must be positive", c.Deadline)
	case c.CancelGrace <= 0 || c.CancelGrace >= c.Deadline:
		return fmt.Errorf("cancel grace %s must be positive and shorter than the deadline %s", c.CancelGrace, c.Deadline)
	}
	return nil
}

// Exit codes of [Run].
const (
	// ExitOK: the answer (if any) is the JSON on stdout.
	ExitOK = 0
	// ExitError: a non-blocking error on an event that cannot block.
	ExitError = 1
	// ExitBlock: the hosts block the call (or the prompt) and show stderr.
	ExitBlock = 2
)

// Run handles the hook event on stdin and writes the host's answer on stdout
// (or the reason of a refusal on stderr); it returns the exit code. It
// never lets a call through on an error: a panic, a hang past the deadline,
// bad input, an unknown event, no NATS, no broker or an error reply all
// answer deny (exit code 2, the hosts' "block").
func Run(ctx context.Context, cfg Config, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg.setDefaults()
	ans := &answerer{stdout: stdout, stderr: stderr, host: cfg.Host, log: cfg.Logger.With("host", string(cfg.Host))}
	if err := cfg.Validate(); err != nil {
		return ans.fail("", fmt.Errorf("configuration: %w", err))
	}
	// The watchdog answers at the deadline; the handler stops a little
	// before it, and stops waiting for approvers CancelGrace before it, to
	// cancel what is pending.
	// The watchdog's clock ignores ctx's cancellation (a SIGTERM from the
	// host): the handler then withdraws its pending request and answers,
	// within the deadline still.
	hard, cancelHard := context.WithTimeout(context.WithoutCancel(ctx), cfg.Deadline)
	defer cancelHard()
	work, cancelWork := context.WithTimeout(ctx, cfg.Deadline-cfg.CancelGrace/4)
	defer cancelWork()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				ans.fail(ans.eventName(), fmt.Errorf("internal error (%v); the call is denied to be safe\n%s", r, debug.Stack()))
			}
		}()
		handle(work, cfg, stdin, ans)
	}()
	select {
	case <-done:
	case <-hard.Done():
		// The handler did not answer in time (a hung read of stdin, a
		// connection that ignores its deadline): answer for it. It keeps
		// running until the process exits, which follows at once.
		ans.fail(ans.eventName(), fmt.Errorf("no answer within the hook deadline of %s; the call is denied to be safe", cfg.Deadline))
	}
	return ans.code()
}

// handle reads the event and answers it through ans.
func handle(ctx context.Context, cfg Config, stdin io.Reader, ans *answerer) {
	in, err := ReadInput(stdin)
	if err != nil {
		ans.fail("", err)
		return
	}
	ans.setEvent(in.HookEventName, in.SessionID)
	switch cfg.Host.eventKind(in.HookEventName) {
	case kindGate:
		gate(ctx, cfg, in, ans)
	case kindTurn:
		newTurn(ctx, cfg, in, ans)
	case kindEnd:
		endSession(ctx, cfg, in, ans)
	case kindVerify:
		verify(ctx, cfg, in, ans)
	case kindIgnore:
		ans.write(nil, ExitOK)
	default:
		ans.fail(in.HookEventName, fmt.Errorf("%w: unknown %s hook event %q; configure signoff only for the events docs/AGENTS.md lists", errInput, cfg.Host, in.HookEventName))
	}
}

// session opens a client for the event's session on a new connection,
// with what the session's earlier hook processes heard (seenState).
func session(ctx context.Context, cfg Config, in Input) (*client.Client, *nats.Conn, *seenState, error) {
	sessionID := cfg.Session
	if sessionID == "" {
		if in.SessionID == "" {
			return nil, nil, nil, fmt.Errorf("%w: session_id is missing", errInput)
		}
		sessionID = agentcfg.Token(in.SessionID)
	}
	nc, err := cfg.Connect(ctx, "signoff-hook-"+string(cfg.Host))
	if err != nil {
		return nil, nil, nil, err
	}
	agentType := agentcfg.Token(in.AgentType)
	gate := messages.GateClaudeCode
	if cfg.Host == Codex {
		gate = messages.GateCodex
	}
	// A hook process lives for one call: what its agent heard is kept in
	// the session's state file. Unreadable, it counts as nothing heard:
	// the turn then ends no stop (fail closed).
	st := loadSeen(sessionID)
	opts := append(cfg.Agent.ClientOptions(sessionID, agentType), client.WithGate(gate, buildinfo.Version()))
	if st.err == nil {
		opts = append(opts, client.WithSeen(st.loaded...))
	}
	c, err := client.New(nc, opts...)
	if err != nil {
		nc.Close()
		return nil, nil, nil, err
	}
	return c, nc, st, nil
}

// gate asks Signoff about the event's tool call and answers with the
// decision.
func gate(ctx context.Context, cfg Config, in Input, ans *answerer) {
	if err := in.checkToolCall(); err != nil {
		ans.fail(in.HookEventName, err)
		return
	}
	call := toCall(in)
	c, nc, st, err := session(ctx, cfg, in)
	if err != nil {
		ans.fail(in.HookEventName, err)
		return
	}
	defer nc.Close()
	defer keepSeen(st, c, ans)
	wait, stop := context.WithTimeout(ctx, time.Until(deadlineOf(ctx))-cfg.CancelGrace*3/4)
	defer stop()
	// The request lives as long as the hook's deadline, a little past the
	// wait, so that the hook's own cancellation settles it rather than a
	// race with the broker's expiry. It is the configured deadline, not the
	// time left, so that a host's retry sends the very same request.
	call.TTL = cfg.Deadline
	size := len(in.ToolInput) + len(call.Description) + requestOverhead
	summarised := false
	if limit := int(nc.MaxPayload()); size > limit {
		args, ok := summarise(call.Tool, in.ToolInput,
			fmt.Sprintf("the call is over the NATS server's max_payload of %d bytes", limit))
		if !ok {
			ans.fail(in.HookEventName, tooLarge(call.Tool, size, nats.ErrMaxPayload))
			return
		}
		call.Arguments, summarised = args, true
	}
	d, err := c.Request(wait, call)
	if errors.Is(err, messages.ErrTooLarge) && !summarised {
		// Over the broker's own limit: nothing was stored, so the same
		// request id carries the shortened call.
		var args json.RawMessage
		if args, summarised = summarise(call.Tool, in.ToolInput, "the call is over "+limitSetting); summarised {
			call.Arguments = args
			d, err = c.Request(wait, call)
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, messages.ErrTooLarge) || errors.Is(err, nats.ErrMaxPayload):
		ans.fail(in.HookEventName, tooLarge(call.Tool, size, err))
		return
	case wait.Err() != nil && ctx.Err() == nil:
		d = giveUp(ctx, c, call)
	default:
		// The request may exist (a broker took it but its receipt was
		// lost, or the host interrupted the hook with SIGTERM while it
		// waited): cancel it, briefly, so no approver is asked in vain.
		cctx, cstop := context.WithTimeout(context.WithoutCancel(ctx), cfg.CancelGrace/2)
		_, _ = c.Cancel(cctx, call.RequestID)
		cstop()
		ans.fail(in.HookEventName, fmt.Errorf("no decision from Signoff: %w%s", err, natsurl.PermissionHint(nc)))
		return
	}
	if d.Outcome != messages.OutcomeAllow && d.Outcome != messages.OutcomeDeny {
		ans.fail(in.HookEventName, fmt.Errorf("Signoff sent a decision with outcome %q, which is neither allow nor deny", d.Outcome))
		return
	}
	if d.Tool == "" {
		d.Tool = call.Tool
	}
	if summarised && d.Outcome == messages.OutcomeAllow && (d.Edited() || d.DecidedBy.Kind == messages.DeciderApprover) {
		d = summarisedApproval(d)
	}
	out, err := cfg.Host.output(in.HookEventName, in, d)
	if err != nil {
		ans.fail(in.HookEventName, err)
		return
	}
	ans.logger().Info("decision", "request_id", d.RequestID, "tool", d.Tool, "outcome", string(d.Outcome),
		"reason_code", string(d.ReasonCode), "reason", d.Reason, "decided_by", d.DecidedBy.ID)
	ans.write(out, ExitOK)
}

// giveUp cancels a request that is still pending at the deadline and
// returns the deny the hook answers with. A decision that arrived in the
// meantime wins over the cancellation, as the broker settles only once.
func giveUp(ctx context.Context, c *client.Client, call client.Call) *messages.Decision {
	reason := "no approver answered within the hook's deadline; the request was cancelled"
	if _, err := c.Cancel(ctx, call.RequestID); err != nil {
		reason = "no approver answered within the hook's deadline and cancelling the request failed (" + err.Error() + "); an approval that comes later is not applied to this call"
	}
	if rc, err := c.Status(ctx, call.RequestID); err == nil && rc.Decision != nil &&
		rc.Decision.ReasonCode != messages.ReasonCancelled {
		return rc.Decision
	}
	return &messages.Decision{
		V: messages.Version, RequestID: call.RequestID, SessionID: c.SessionID(), Tool: call.Tool,
		Outcome: messages.OutcomeDeny, ReasonCode: messages.ReasonTimeout, Reason: reason,
		LLMMessage: "Tool '" + call.Tool + "' was not run: approval did not arrive in time (" + reason + ").",
		DecidedBy:  messages.Decider{Kind: messages.DeciderAgent},
	}
}

// toCall maps the host's tool call onto a Signoff call, keeping the host's
// tool name and arguments as they are (the policy knows the hosts' names).
// The request id is the tool-use id made a token, so that a host that runs
// the hook twice for one call gets the same decision; without one it is
// random.
func toCall(in Input) client.Call {
	id := agentcfg.Token(in.ToolUseID)
	if id == "" {
		id = nuid.Next()
	}
	callID := in.ToolUseID
	if messages.ValidateToken("call_id", callID) != nil {
		callID = id
	}
	return client.Call{
		RequestID:   id,
		CallID:      callID,
		Tool:        in.ToolName,
		Arguments:   in.ToolInput,
		Description: safeDescription(in.description()),
		Cwd:         in.cwd(),
		Home:        client.HostHome(),
	}
}

// safeDescription keeps a description the protocol accepts, and drops one it
// would refuse (too long, control characters): it is for approvers' eyes
// only and must not turn an allowed call into a refused request.
func safeDescription(s string) string {
	r := messages.Request{V: messages.Version, RequestID: "x", SessionID: "x", AgentID: "x", Tool: "x", Description: s}
	if r.Validate() != nil {
		return ""
	}
	return s
}

// newTurn tells the broker a new user turn began (clearing a hard stop).
// A failure does not block the prompt — tool calls stay stopped, which is
// the safe side — but the user is told.
func newTurn(ctx context.Context, cfg Config, in Input, ans *answerer) {
	c, nc, st, err := session(ctx, cfg, in)
	if err == nil {
		defer nc.Close()
		_, err = c.NewTurn(ctx)
		keepSeen(st, c, ans)
	}
	switch {
	case err != nil:
		tellUser(cfg, ans, "Signoff could not start a new turn ("+err.Error()+"); if an approver stopped the last turn, tool calls stay denied until it can.")
	case st.err != nil:
		tellUser(cfg, ans, "Signoff could not read what this session heard of hard rejections ("+st.err.Error()+"); if an approver stopped the last turn, it stays stopped: the agent's next tool call is denied, naming the rejection, and the prompt after that lifts the stop.")
	default:
		ans.write(nil, ExitOK)
	}
}

// tellUser answers a prompt event with msg for the user, without blocking
// the prompt.
func tellUser(cfg Config, ans *answerer, msg string) {
	out, _ := json.Marshal(hookOutput{SystemMessage: msg})
	if cfg.Host == Codex {
		out = nil // Codex's UserPromptSubmit output has no room for it
	}
	ans.note(msg)
	ans.write(out, ExitOK)
}

// keepSeen writes what c heard to the session's state file; a failure
// is noted, not fatal: a lost id keeps a stop, the safe side.
func keepSeen(st *seenState, c *client.Client, ans *answerer) {
	if err := st.keep(c.Seen()); err != nil {
		ans.note("could not keep what this session heard of hard rejections: " + err.Error())
	}
}

// endSession cancels the session's pending requests and removes its
// state file (a session resumed later starts from nothing heard: a stop
// then holds until its next hard_stop names the rejection, the safe side).
func endSession(ctx context.Context, cfg Config, in Input, ans *answerer) {
	c, nc, st, err := session(ctx, cfg, in)
	if err == nil {
		defer nc.Close()
		_, err = c.Cancel(ctx)
		st.forget()
	}
	if err != nil {
		ans.fail(in.HookEventName, fmt.Errorf("cancelling the session's pending requests: %w", err))
		return
	}
	ans.write(nil, ExitOK)
}

func deadlineOf(ctx context.Context) time.Time {
	dl, _ := ctx.Deadline()
	return dl
}

// answerer writes the hook's one answer: the first of write and fail wins,
// so the watchdog and a late handler cannot both answer.
type answerer struct {
	stdout, stderr io.Writer
	host           Host
	log            *slog.Logger
	mu             sync.Mutex
	event          string
	done           bool
	exit           int
}

// setEvent records the event being answered (and adds it to the log
// records). The watchdog reads both, hence the lock.
func (a *answerer) setEvent(event, session string) {
	a.mu.Lock()
	a.event = event
	a.log = a.log.With("event", event, "session_id", session)
	a.mu.Unlock()
}

// logger is the answer's logger.
func (a *answerer) logger() *slog.Logger {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.log
}

func (a *answerer) eventName() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.event
}

// write answers with out on stdout and exit code code.
func (a *answerer) write(out []byte, code int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return
	}
	a.done, a.exit = true, code
	if len(out) == 0 {
		return
	}
	if _, err := a.stdout.Write(append(out, '\n')); err != nil {
		// The host may not have read the answer, and silence is not a
		// deny in either host: block.
		a.exit = ExitBlock
		fmt.Fprintf(a.stderr, "signoff: %swriting the answer failed: %v\n", a.host.refusal(a.event), err)
	}
}

// note writes a line on stderr without answering.
func (a *answerer) note(msg string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.done {
		fmt.Fprintln(a.stderr, "signoff:", msg)
	}
}

// fail refuses: the reason goes to stderr, which the hosts show to the
// model (and the user) on exit code 2. It returns the exit code.
func (a *answerer) fail(event string, err error) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done {
		return a.exit
	}
	code := ExitBlock
	if event != "" && !a.host.blocksOnExit2(event) {
		code = ExitError
	}
	a.done, a.exit = true, code
	a.log.Warn("refused", "exit", code, "err", err.Error())
	msg := err.Error()
	if code == ExitBlock {
		msg = a.host.refusal(event) + msg
	}
	fmt.Fprintln(a.stderr, strings.TrimSpace("signoff: "+msg))
	return code
}

func (a *answerer) code() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.done {
		return ExitBlock
	}
	return a.exit
}

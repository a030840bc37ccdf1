package terminal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/term"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Name is the channel's name (Approver.Channel of its answers).
const Name = "terminal"

// ErrNoOperator means the bot's config names no terminal operator.
var ErrNoOperator = errors.New("terminal: no operator configured (set terminal.approver)")

// ErrAlreadyRunning means Run was called on a channel that is running.
var ErrAlreadyRunning = errors.New("terminal: channel is already running")

// ErrInputClosed is what CheckHealth reports once the input has ended: the
// terminal still shows questions but can no longer answer them.
var ErrInputClosed = errors.New("terminal: input closed; questions can no longer be answered here")

// Options are the optional parts of a terminal channel.
type Options struct {
	// Logger receives warnings (input closed, output failing); default
	// slog.Default().
	Logger *slog.Logger
	// Device labels this terminal in answers (Approver.Device); default
	// the host name.
	Device string
	// Now is the clock for "time left" (tests); default time.Now.
	Now func() time.Time
	// Tick is how often the prompt's time left is rewritten on a
	// terminal; default 1 s.
	Tick time.Duration
	// Open is set on a plane whose NATS has no authorization: the
	// terminal says so when it starts (approverbot.OpenPlaneText).
	Open bool
	// Shows reports whether the operator may see q: questions it refuses
	// are never shown here (their commands included), as the web page
	// hides them from non-members. Default: every question (a terminal
	// built without a bot config); the bot's terminal passes
	// Config.Admits of its operator.
	Shows func(approverbot.Question) bool
	// Interrupt is called for Ctrl-C in raw mode, where the terminal sends
	// no signal; default: send os.Interrupt to this process, so Ctrl-C
	// shuts the bot down as it would in a normal terminal.
	Interrupt func()
	// Size is the terminal's width and height in character cells (tests);
	// default: the output terminal's, 80×24 when it has none or it is not
	// known.
	Size func() (cols, rows int)
	// KeyGuard is how long after a question takes the prompt from another
	// the keys that answer are not taken for it (keyGuard); default 600 ms,
	// negative: none.
	KeyGuard time.Duration
	// SwapGuard is how long the keys that answer wait after a question
	// takes the place of one that left the prompt without this
	// operator's answer (settled elsewhere, withdrawn by its agent): the
	// new one says so, and what differs, above its keys (swapGuard);
	// default 2.5 s (none when KeyGuard is negative), negative: none.
	SwapGuard time.Duration
}

// Channel is the terminal channel. Create it with [New]; the bot calls Ask
// and Resolve (which never block on the operator) and Run.
type Channel struct {
	in    io.Reader
	out   io.Writer
	o     Options
	color bool

	// events are the questions and resolutions the prompt has yet to take.
	events *approverbot.Queue[event]

	mu      sync.Mutex
	running bool

	inputClosed atomic.Bool
}

var _ approverbot.Channel = (*Channel)(nil)

// event is a question or a resolution handed over by the bot, or the id
// of a question the operator may no longer see.
type event struct {
	q    *approverbot.Question
	r    *messages.Resolved
	hide string
}

// New returns a terminal channel that reads keys from in and writes to out
// for the operator the bot's config names (terminal.approver). When in is a
// terminal, Run puts it in raw mode and restores it on return.
func New(in io.Reader, out io.Writer, o Options) *Channel {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Device == "" {
		if h, err := os.Hostname(); err == nil {
			o.Device = h
		}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Interrupt == nil {
		o.Interrupt = interruptSelf
	}
	if o.KeyGuard == 0 {
		o.KeyGuard = keyGuard
	}
	if o.SwapGuard == 0 {
		o.SwapGuard = swapGuard
		if o.KeyGuard < 0 {
			o.SwapGuard = -1
		}
	}
	if o.Tick <= 0 {
		o.Tick = time.Second
	}
	if o.Size == nil {
		o.Size = func() (int, int) { return sizeOf(out) }
	}
	return &Channel{in: in, out: out, o: o, color: useColor(out, os.Getenv("NO_COLOR")),
		events: approverbot.NewQueue[event]()}
}

// interruptSelf delivers os.Interrupt to this process.
func interruptSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		_ = p.Signal(os.Interrupt)
	}
}

// rawConner is a file whose descriptor can be used without Fd, which
// would switch it to blocking mode and so disable read deadlines.
type rawConner interface {
	SyscallConn() (syscall.RawConn, error)
}

// control runs fn with v's file descriptor; false when v has none.
func control(v any, fn func(fd int)) bool {
	f, ok := v.(rawConner)
	if !ok {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	return rc.Control(func(fd uintptr) { fn(int(fd)) }) == nil
}

// isTerminal reports whether v is a terminal.
func isTerminal(v any) bool {
	tty := false
	control(v, func(fd int) { tty = term.IsTerminal(fd) })
	return tty
}

// sizeOf is the size of the terminal v in character cells: 80×24 when v
// is not a terminal or its size is not known.
func sizeOf(v any) (cols, rows int) {
	cols, rows = 80, 24
	control(v, func(fd int) {
		if w, h, err := term.GetSize(fd); err == nil && w > 0 && h > 0 {
			cols, rows = w, h
		}
	})
	return cols, rows
}

// useColor reports whether to colour out: only a terminal, and only when
// NO_COLOR (https://no-color.org) is unset or empty.
func useColor(out io.Writer, noColor string) bool {
	return noColor == "" && isTerminal(out)
}

// Name implements [approverbot.Channel].
func (c *Channel) Name() string { return Name }

// Ask implements [approverbot.Channel]: the question is queued for the
// prompt (or updated, when it is already shown), unless Options.Shows
// refuses it to the operator: then it leaves the queue and the prompt.
func (c *Channel) Ask(_ context.Context, q approverbot.Question) error {
	if c.o.Shows != nil && !c.o.Shows(q) {
		// Not (or no longer) the operator's: taken off the screen's
		// queue if a copy that admitted them put it there.
		c.push(event{hide: q.Request.RequestID})
		return nil
	}
	c.push(event{q: &q})
	return nil
}

// Resolve implements [approverbot.Channel]: the question leaves the queue,
// and its prompt is abandoned if it is the one being answered.
func (c *Channel) Resolve(_ context.Context, r messages.Resolved) error {
	c.push(event{r: &r})
	return nil
}

// CheckHealth implements [approverbot.Channel]: it fails once the input has
// ended.
func (c *Channel) CheckHealth(context.Context) error {
	if c.inputClosed.Load() {
		return ErrInputClosed
	}
	return nil
}

func (c *Channel) push(e event) { c.events.Push(e) }

// deadliner is an input whose reads can be interrupted (a pollable file:
// a pty, a pipe opened by the program).
type deadliner interface{ SetReadDeadline(time.Time) error }

// Run implements [approverbot.Channel]: it prompts the operator until ctx
// is done. An input that supports read deadlines is released when Run
// returns; one that does not (os.Stdin) leaves one goroutine blocked in
// Read until the next keystroke or the end of the input, which then reads
// nothing more.
func (c *Channel) Run(ctx context.Context, r approverbot.Responder) error {
	c.mu.Lock()
	if c.running {
		c.mu.Unlock()
		return ErrAlreadyRunning
	}
	c.running = true
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.running = false
		c.mu.Unlock()
	}()

	op, ok := r.Approver(Name, "")
	if !ok {
		return ErrNoOperator
	}
	raw := false
	if isTerminal(c.in) {
		var old *term.State
		var err error
		control(c.in, func(fd int) { old, err = term.MakeRaw(fd) })
		if err != nil {
			return fmt.Errorf("terminal: raw mode: %w", err)
		}
		raw = true
		defer control(c.in, func(fd int) { _ = term.Restore(fd, old) })
		// Bracketed paste: a paste comes marked, and is not taken for
		// keys pressed (input.go).
		fmt.Fprint(c.out, "\x1b[?2004h")
		defer fmt.Fprint(c.out, "\x1b[?2004l")
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rd := newReader(c.in, raw)
	go rd.run(ctx)
	defer func() {
		cancel()
		if d, ok := c.in.(deadliner); ok && d.SetReadDeadline(time.Now()) == nil {
			<-rd.done
			_ = d.SetReadDeadline(time.Time{})
		}
	}()

	u := &ui{
		c:     c,
		r:     r,
		op:    op,
		st:    style{on: c.color},
		raw:   raw,
		out:   &screen{w: c.out, crlf: raw && isTerminal(c.out), log: c.o.Logger},
		items: map[string]*item{},
	}
	u.run(ctx, rd.events)
	return nil
}

// screen writes to the operator's terminal and remembers whether the
// cursor is mid-line (after a prompt). In raw mode the terminal no longer
// turns "\n" into "\r\n", so screen does.
type screen struct {
	w      io.Writer
	crlf   bool
	mid    bool
	log    *slog.Logger
	failed bool
}

func (s *screen) print(text string) {
	if text == "" {
		return
	}
	s.mid = !strings.HasSuffix(text, "\n")
	if s.crlf {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	if _, err := io.WriteString(s.w, text); err != nil && !s.failed {
		s.failed = true
		s.log.Warn("terminal output failed; questions are no longer shown", "err", err)
	}
}

// println ends a pending prompt line, then writes text and a newline.
func (s *screen) println(text string) {
	s.breakLine()
	s.print(text + "\n")
}

// breakLine moves to a new line if the cursor is after a prompt.
func (s *screen) breakLine() {
	if s.mid {
		s.print("\n")
	}
}

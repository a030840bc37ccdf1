package terminal_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/terminal"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// waitFor bounds every wait for output or a decision.
const waitFor = 10 * time.Second

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

// screen collects what a channel printed, without colours and carriage
// returns, and lets a test wait for text in order.
type screen struct {
	t    *testing.T
	mu   sync.Mutex
	raw  bytes.Buffer
	mark int // expect searches from here
	grew chan struct{}
}

func newScreen(t *testing.T) *screen { return &screen{t: t, grew: make(chan struct{}, 1)} }

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.raw.Write(p)
	s.mu.Unlock()
	select {
	case s.grew <- struct{}{}:
	default:
	}
	return len(p), nil
}

// text is everything printed so far, as the operator reads it.
func (s *screen) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.ReplaceAll(ansi.ReplaceAllString(s.raw.String(), ""), "\r", "")
}

// expect waits until want appears after the previous expectation and
// returns the text from there to the end of want.
func (s *screen) expect(want string) string {
	s.t.Helper()
	deadline := time.After(waitFor)
	for {
		all := s.text()
		if i := strings.Index(all[s.mark:], want); i >= 0 {
			from := s.mark
			s.mark += i + len(want)
			return all[from:s.mark]
		}
		select {
		case <-s.grew:
		case <-time.After(50 * time.Millisecond):
		case <-deadline:
			s.t.Fatalf("the terminal never printed %q; it printed:\n%s", want, all)
		}
	}
}

// ttyPair is a pseudo-terminal: the channel runs on tty, the test plays
// the operator on master.
type ttyPair struct {
	master, tty *os.File
	out         *screen
}

func openPTY(t *testing.T) *ttyPair {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("open a pseudo-terminal: %v", err)
	}
	p := &ttyPair{master: master, tty: tty, out: newScreen(t)}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		_, _ = io.Copy(p.out, master)
	}()
	t.Cleanup(func() {
		_ = tty.Close()
		_ = master.Close()
		<-copied
	})
	return p
}

func (p *ttyPair) typeKeys(t *testing.T, keys string) {
	t.Helper()
	if _, err := p.master.WriteString(keys); err != nil {
		t.Fatalf("type %q: %v", keys, err)
	}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// botConfig serves team with the terminal operator; alice, bob and carol
// are in the default team, carol, dave and erin in oncall.
func botConfig(operator string, teams ...string) string {
	return `
teams: [` + strings.Join(teams, ", ") + `]
approvers:
  alice: {}
  bob: {}
  carol: {display: Carol}
  dave: {}
  erin: {}
terminal: {approver: ` + operator + `}
`
}

// runBot runs a bot with ch on the plane until the test ends; the returned
// function stops it and returns Run's error.
func runBot(t *testing.T, p *brokertest.Plane, yaml string, ch approverbot.Channel) (stop func() error) {
	t.Helper()
	cfg, err := approverbot.ParseConfig([]byte(yaml), "bot.yaml")
	if err != nil {
		t.Fatal(err)
	}
	bot, err := approverbot.New(cfg, p.NATS.Connect(t), []approverbot.Channel{ch}, approverbot.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- bot.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(waitFor):
				runErr = errors.New("the bot did not stop")
			}
		})
		return runErr
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("bot: %v", err)
		}
	})
	return stop
}

// ttyBot runs a terminal channel on a fresh pseudo-terminal in a bot.
func ttyBot(t *testing.T, p *brokertest.Plane, yaml string, o terminal.Options) (*ttyPair, func() error) {
	t.Helper()
	tp := openPTY(t)
	o.Logger = quiet()
	if o.KeyGuard == 0 {
		// The tests type as soon as a prompt shows; the guard has a test
		// of its own (TestKeysMeantForTheQuestionThatLeftAreNotTaken).
		o.KeyGuard = -1
	}
	if o.Interrupt == nil {
		// The default would signal the test process.
		o.Interrupt = func() { t.Error("unexpected interrupt") }
	}
	if o.Device == "" {
		o.Device = "test-tty"
	}
	stop := runBot(t, p, yaml, terminal.New(tp.tty, tp.tty, o))
	tp.out.expect("answering as")
	return tp, stop
}

// pending asks from agent and waits until the brokers announced the
// question. Tests ask their first question before the bot starts, so the
// bot's start-up replay lists it (see TestReplayKeepsQuestionsThatArriveDuringIt
// in the approverbot package for why a question asked during the replay
// may be cleared).
func pending(t *testing.T, p *brokertest.Plane, agent *client.Client, team, id, command string) *brokertest.Pending {
	t.Helper()
	device := p.Approver(team)
	req := brokertest.Ask(context.Background(), agent, id, "bash", brokertest.Bash(command))
	device.NextAsk(id)
	return req
}

func TestTerminalAnswersThroughAPseudoTerminal(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	ctx := context.Background()

	t.Run("s approves for the session", func(t *testing.T) {
		req := pending(t, p, p.Agent("sess-s", "agent-1"), "default", "req-s", "make deploy")
		tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{})
		shown := tp.out.expect("› ")
		for _, want := range []string{"▶ bash", "team default", "command: \"make deploy\"", "session sess-s, agent agent-1",
			"make deploy  ask", "time left", "[y] once", "[s] session", "[n] reject", "[x] reject+stop", "[k] skip"} {
			if !strings.Contains(shown, want) {
				t.Errorf("the question does not show %q:\n%s", want, shown)
			}
		}
		tp.typeKeys(t, "s")
		d := req.Wait(t)
		brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
		if d.Scope != messages.ScopeSession || d.DecidedBy.ID != "bob" || d.DecidedBy.Channel != "terminal" || d.DecidedBy.Device != "test-tty" {
			t.Errorf("decision %+v, want session scope decided by bob on terminal test-tty", d)
		}
		// It says what the session was granted.
		tp.out.expect("✓ bash make deploy approved (session: ")
		tp.out.expect(" for agent agent-1 in session sess-s: \"bash(make deploy)\")\n")
	})

	t.Run("n rejects softly with the feedback line typed after it", func(t *testing.T) {
		req := pending(t, p, p.Agent("sess-n", "agent-1"), "default", "req-n", "npm install")
		tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{})
		tp.out.expect("› ")
		tp.typeKeys(t, "n")
		tp.out.expect("feedback for the agent")
		tp.typeKeys(t, "Use yarx\x7fn\r") // a typo fixed with Backspace
		d := req.Wait(t)
		brokertest.WantDecision(t, d, messages.OutcomeDeny, messages.ReasonRejected)
		if d.RejectMode != messages.RejectSoft || d.Feedback != "Use yarn" {
			t.Errorf("decision %s/%q, want reject_soft with feedback %q", d.RejectMode, d.Feedback, "Use yarn")
		}
		tp.out.expect("✗ bash npm install rejected: Use yarn\n")
	})

	t.Run("x rejects hard and an empty feedback line sends none", func(t *testing.T) {
		req := pending(t, p, p.Agent("sess-x", "agent-1"), "default", "req-x", "make clean")
		tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{})
		tp.out.expect("› ")
		tp.typeKeys(t, "x")
		tp.out.expect("reject and stop: feedback")
		tp.typeKeys(t, "\r")
		d := req.Wait(t)
		if d.RejectMode != messages.RejectHard || d.Feedback != "" {
			t.Errorf("decision %s/%q, want reject_hard without feedback", d.RejectMode, d.Feedback)
		}
		tp.out.expect("✗ bash make clean rejected (stop)\n")
	})

	t.Run("Esc takes a rejection back before anything is sent", func(t *testing.T) {
		req := pending(t, p, p.Agent("sess-esc", "agent-1"), "default", "req-esc", "make docs")
		tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{})
		tp.out.expect("› ")
		tp.typeKeys(t, "n")
		tp.out.expect("feedback for the agent")
		tp.typeKeys(t, "no\x1b")
		tp.out.expect("nothing was sent")
		tp.out.expect("[y] once")
		tp.typeKeys(t, "y")
		d := req.Wait(t)
		brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
		tp.out.expect("✓ bash make docs approved (once)\n")
	})

	t.Run("a grants exactly what the prompt shows", func(t *testing.T) {
		req := pending(t, p, p.Agent("sess-a", "agent-a"), "default", "req-a", "make deploy")
		tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{})
		shown := tp.out.expect("› ")
		// The keys line names the grant by count; the card's always row
		// right above says exactly what.
		m := regexp.MustCompile(`always      would grant (.+?)\n`).FindStringSubmatch(shown)
		if m == nil || !strings.Contains(shown, "[a] always: 1 bash pattern (above)  [n]") {
			t.Fatalf("no [a] key or always row on a question that offers Always:\n%s", shown)
		}
		// a shows the standing grant and waits: a second a, or any other
		// key, goes back; A grants it (red team AL F7).
		tp.typeKeys(t, "a")
		confirm := tp.out.expect("grants Always")
		if !strings.Contains(confirm, "Always is a standing grant: "+strings.TrimPrefix(m[1], "")) || !strings.Contains(confirm, "for agent agent-a") {
			t.Errorf("the confirmation does not say what Always grants:\n%s", confirm)
		}
		tp.typeKeys(t, "a")
		tp.out.expect("Always not granted; back to the keys")
		tp.out.expect("› ")
		if d, _ := req.Peek(); d != nil {
			t.Fatalf("a then a decided the call: %+v", d)
		}
		tp.typeKeys(t, "a")
		tp.out.expect("grants Always")
		tp.typeKeys(t, "A")
		d := req.Wait(t)
		brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
		if len(d.GrantedPattern) == 0 {
			t.Fatalf("decision %+v granted no pattern", d)
		}
		var granted []string
		for _, g := range d.GrantedPattern {
			granted = append(granted, "bash("+g+")")
		}
		if got := strings.Join(granted, ", "); got != m[1] {
			t.Errorf("the prompt promised %q, the broker granted %q", m[1], got)
		}
		if !strings.Contains(shown, "would grant "+m[1]+"\n") || !strings.Contains(shown, "for agent agent-a, in any working directory") {
			t.Errorf("the question does not say the grant is for agent agent-a:\n%s", shown)
		}
		tp.out.expect("✓ bash make deploy approved (always: 1 bash pattern for agent agent-a: " + strconv.Quote(m[1]) + ")\n")
	})

	t.Run("no a key when the question offers no Always", func(t *testing.T) {
		req := pending(t, p, p.Agent("sess-na", "agent-1"), "default", "req-na", "make $(whoami)")
		tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{})
		shown := tp.out.expect("› ")
		// The brokers say why; the question shows it in place of the key.
		if strings.Contains(shown, "[a]") || !strings.Contains(shown, "always      not offered: it asks every time: ") {
			t.Errorf("a question without Always shows an [a] key or does not say Always is not offered:\n%s", shown)
		}
		tp.typeKeys(t, "a")
		tp.out.expect("Always is not offered: it asks every time: ")
		tp.out.expect("› ")
		tp.typeKeys(t, "y")
		d := req.Wait(t)
		if d.Scope != messages.ScopeOnce {
			t.Errorf("scope %q after a refused a then y, want once", d.Scope)
		}
	})

	t.Run("a question settled on another device closes its prompt", func(t *testing.T) {
		device := p.Approver("default")
		agent := p.Agent("sess-else", "agent-1")
		req := brokertest.Ask(ctx, agent, "req-else-1", "bash", brokertest.Bash("make deploy"))
		q := device.NextAsk("req-else-1")
		tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{})
		tp.out.expect("› ")
		tp.typeKeys(t, "n")
		tp.out.expect("feedback for the agent")
		tp.typeKeys(t, "half-typed")
		rep := device.Respond(messages.Response{RequestID: q.Request.RequestID, SessionID: q.Request.SessionID,
			Approver: messages.Approver{ID: "alice", Channel: "web"}, Approved: true, Scope: messages.ScopeOnce, Digest: q.Digest})
		if !rep.Applied {
			t.Fatalf("alice's answer was not applied: %+v", rep)
		}
		if d := req.Wait(t); d.DecidedBy.ID != "alice" {
			t.Fatalf("decided by %q, want alice", d.DecidedBy.ID)
		}
		tp.out.expect("⏭ bash make deploy decided by alice via web (approved)\n")
		tp.out.expect("prompt closed")
		// The rest of the feedback and its Enter must not answer anything.
		tp.typeKeys(t, " more\ry")
		req2 := brokertest.Ask(ctx, agent, "req-else-2", "bash", brokertest.Bash("make test"))
		between := tp.out.expect("command: \"make test\"")
		if strings.Contains(between, "✓") || strings.Contains(between, "✗") || strings.Contains(between, "!") {
			t.Errorf("keys typed with no question waiting answered something:\n%s", between)
		}
		tp.out.expect("› ")
		tp.typeKeys(t, "y")
		if d := req2.Wait(t); d.DecidedBy.ID != "bob" || d.Scope != messages.ScopeOnce {
			t.Errorf("second question decided %+v, want once by bob", d)
		}
	})

	t.Run("questions are prompted oldest first and k skips one to the end", func(t *testing.T) {
		agent := p.Agent("sess-q", "agent-1")
		first := pending(t, p, agent, "default", "req-q-1", "make one")
		tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{})
		tp.out.expect("command: \"make one\"")
		tp.out.expect("› ")
		second := brokertest.Ask(ctx, agent, "req-q-2", "bash", brokertest.Bash("make two"))
		tp.out.expect("+ new question: bash make two (team default; 1 waiting)")
		tp.typeKeys(t, "k")
		tp.out.expect("skipped; it comes back after 1 other question(s)")
		tp.out.expect("command: \"make two\"")
		tp.out.expect("› ")
		tp.typeKeys(t, "y")
		if d := second.Wait(t); d.RequestID != "req-q-2" || d.Outcome != messages.OutcomeAllow {
			t.Fatalf("second decision %+v", d)
		}
		tp.out.expect("✓ bash make two approved (once)")
		tp.out.expect("command: \"make one\"")
		tp.out.expect("› ")
		tp.typeKeys(t, "s")
		if d := first.Wait(t); d.Scope != messages.ScopeSession {
			t.Fatalf("first decision %+v, want session", d)
		}
	})

	t.Run("an operator outside the routed team is told the answer was not applied", func(t *testing.T) {
		device := p.Approver("default")
		req := brokertest.Ask(ctx, p.Agent("sess-dave", "agent-1"), "req-dave", "bash", brokertest.Bash("make deploy"))
		q := device.NextAsk("req-dave")
		tp, _ := ttyBot(t, p, botConfig("dave", "default"), terminal.Options{})
		tp.out.expect("› ")
		tp.typeKeys(t, "y")
		tp.out.expect(`! bash make deploy: your answer was not applied: approver "dave" is not a member of team default`)
		select {
		case <-time.After(200 * time.Millisecond):
		case <-doneCh(req):
			t.Fatal("a refused answer settled the request")
		}
		device.Approve(q, "alice", messages.ScopeOnce)
		if d := req.Wait(t); d.DecidedBy.ID != "alice" {
			t.Errorf("decided by %q, want alice", d.DecidedBy.ID)
		}
		tp.out.expect("⏭ bash make deploy decided by alice via test (approved)")
	})

	t.Run("help and unknown keys explain themselves", func(t *testing.T) {
		req := pending(t, p, p.Agent("sess-help", "agent-1"), "default", "req-help", "make help")
		tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{})
		tp.out.expect("› ")
		tp.typeKeys(t, "?")
		help := tp.out.expect("this help")
		for _, want := range []string{"approve this call once", "approve for the session: ", "for agent agent-1 in session sess-help, ", ": \"bash(make help)\"\n", "reject and stop (hard)", "skip"} {
			if !strings.Contains(help, want) {
				t.Errorf("help lacks %q:\n%s", want, help)
			}
		}
		tp.typeKeys(t, "z")
		tp.out.expect("unknown key 'z'; press ? for help")
		tp.typeKeys(t, "Y") // upper case works too
		brokertest.WantDecision(t, req.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	})
}

// doneCh closes when the request has a result.
func doneCh(p *brokertest.Pending) <-chan struct{} {
	c := make(chan struct{})
	go func() {
		_, _ = p.Result()
		close(c)
	}()
	return c
}

func TestTerminalCountsQuorumVotes(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	device := p.Approver("oncall")
	req := brokertest.Ask(context.Background(), p.Agent("sess-k", "agent-1"), "req-k", "bash", brokertest.Bash("kubectl rollout restart deploy/api"))
	q := device.NextAsk("req-k")
	tp, _ := ttyBot(t, p, botConfig("carol", "oncall"), terminal.Options{})
	shown := tp.out.expect("› ")
	if !strings.Contains(shown, "0 of 2 needed, none yet") || !strings.Contains(shown, "team oncall") {
		t.Errorf("a quorum question does not show its approvals:\n%s", shown)
	}
	tp.typeKeys(t, "y")
	tp.out.expect("✓ bash kubectl rollout restart deploy/api approved (once) — approval 1 of 2 counted; waiting for other approvers")
	device.Approve(q, "dave", messages.ScopeOnce)
	d := req.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	tp.out.expect("⏭ bash kubectl rollout restart deploy/api decided by dave via test (approved)")
}

// ttyState reads the tty's mode through SyscallConn: Fd would switch the
// file to blocking mode and defeat the channel's read deadline.
func ttyState(t *testing.T, f *os.File) *term.State {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var st *term.State
	if cerr := rc.Control(func(fd uintptr) { st, err = term.GetState(int(fd)) }); cerr != nil {
		t.Fatal(cerr)
	}
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestTerminalRawModeIsRestoredAndCtrlCInterrupts(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	tp := openPTY(t)
	before := ttyState(t, tp.tty)
	var interrupts atomic.Int32
	ch := terminal.New(tp.tty, tp.tty, terminal.Options{Logger: quiet(), KeyGuard: -1, Interrupt: func() { interrupts.Add(1) }})
	stop := runBot(t, p, botConfig("bob", "default"), ch)
	tp.out.expect("press a key")
	if during := ttyState(t, tp.tty); reflect.DeepEqual(before, during) {
		t.Fatal("the tty is not in raw mode while the channel runs")
	}
	tp.typeKeys(t, "\x03")
	tp.out.expect("^C")
	if n := interrupts.Load(); n != 1 {
		t.Errorf("Ctrl-C called Interrupt %d times, want 1", n)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if after := ttyState(t, tp.tty); !reflect.DeepEqual(before, after) {
		t.Error("the tty's mode was not restored when the channel stopped")
	}
}

func TestTerminalReadsLinesWhenTheInputIsNotATerminal(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	ctx := context.Background()
	agent := p.Agent("sess-line", "agent-1")
	req := pending(t, p, agent, "default", "req-line-1", "make deploy")
	r, w := io.Pipe()
	t.Cleanup(func() { _ = w.Close() })
	out := newScreen(t)
	ch := terminal.New(r, out, terminal.Options{Logger: quiet(), Device: "pipe", KeyGuard: -1})
	runBot(t, p, botConfig("bob", "default"), ch)
	out.expect("type a key, then Enter")
	out.expect("› ")
	if _, err := io.WriteString(w, "yes\n"); err != nil {
		t.Fatal(err)
	}
	out.expect("type one key, then Enter")
	if _, err := io.WriteString(w, "s\n"); err != nil {
		t.Fatal(err)
	}
	if d := req.Wait(t); d.Scope != messages.ScopeSession {
		t.Fatalf("decision %+v, want session", d)
	}
	out.expect("✓ bash make deploy approved (session: ")
	out.expect(" for agent agent-1 in session sess-line: \"bash(make deploy)\")\n")

	// A new session: bash is approved for the rest of sess-line.
	agent = p.Agent("sess-line-2", "agent-1")
	req = brokertest.Ask(ctx, agent, "req-line-2", "bash", brokertest.Bash("npm install"))
	out.expect("› ")
	if _, err := io.WriteString(w, "n\nUse yarn\n"); err != nil {
		t.Fatal(err)
	}
	d := req.Wait(t)
	if d.RejectMode != messages.RejectSoft || d.Feedback != "Use yarn" {
		t.Fatalf("decision %s/%q, want reject_soft with feedback Use yarn", d.RejectMode, d.Feedback)
	}
	out.expect("✗ bash npm install rejected: Use yarn\n")
	if s := out.text(); strings.Contains(s, "\x1b") {
		t.Errorf("output that is not a terminal was coloured:\n%q", s)
	}

	if err := ch.CheckHealth(ctx); err != nil {
		t.Fatalf("CheckHealth with the input open: %v", err)
	}
	_ = w.Close()
	out.expect("input closed")
	if err := ch.CheckHealth(ctx); !errors.Is(err, terminal.ErrInputClosed) {
		t.Fatalf("CheckHealth after the input closed = %v, want ErrInputClosed", err)
	}
	brokertest.Ask(ctx, agent, "req-line-3", "bash", brokertest.Bash("make show-only"))
	out.expect("command: \"make show-only\"")
	out.expect("always")
	time.Sleep(100 * time.Millisecond) // a prompt would follow at once
	all := out.text()
	if tail := all[strings.LastIndex(all, "make show-only"):]; strings.Contains(tail, "›") {
		t.Errorf("a question was prompted after the input closed:\n%s", tail)
	}
}

func TestRunWithoutAnOperatorFails(t *testing.T) {
	ch := terminal.New(strings.NewReader(""), io.Discard, terminal.Options{Logger: quiet()})
	err := ch.Run(context.Background(), noOperator{})
	if !errors.Is(err, terminal.ErrNoOperator) {
		t.Fatalf("Run = %v, want ErrNoOperator", err)
	}
}

// noOperator is a Responder whose config has no terminal operator.
type noOperator struct{ approverbot.Responder }

func (noOperator) Approver(string, string) (approverbot.Approver, bool) {
	return approverbot.Approver{}, false
}

func TestConfigRefusesATerminalOperatorWhoIsNotAnApprover(t *testing.T) {
	_, err := approverbot.ParseConfig([]byte("approvers: {alice: {}}\nterminal: {approver: mallory}\n"), "bot.yaml")
	if err == nil || !strings.Contains(err.Error(), `terminal.approver: "mallory" is not in approvers`) {
		t.Fatalf("ParseConfig = %v, want the unknown terminal approver named", err)
	}
}

func TestTerminalCountsDownTheTimeLeft(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	req := pending(t, p, p.Agent("sess-clock", "agent-1"), "default", "req-clock", "make deploy")
	var skew atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{Now: clock, Tick: 20 * time.Millisecond})
	leftRE := regexp.MustCompile(`⏳ ([0-9hms]+) left`)
	first := leftRE.FindAllStringSubmatch(tp.out.expect("› "), -1)
	if len(first) == 0 {
		t.Fatalf("the prompt shows no time left:\n%s", tp.out.text())
	}
	was, err := time.ParseDuration(first[len(first)-1][1])
	if err != nil {
		t.Fatal(err)
	}
	skew.Store(int64(2 * time.Minute))
	deadline := time.Now().Add(waitFor)
	for {
		m := leftRE.FindAllStringSubmatch(tp.out.text(), -1)
		now, _ := time.ParseDuration(m[len(m)-1][1])
		if now <= was-2*time.Minute+2*time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the prompt's time left stayed at %s (was %s; the clock moved 2m):\n%s", now, was, tp.out.text())
		}
		time.Sleep(20 * time.Millisecond)
	}
	tp.typeKeys(t, "y")
	req.Wait(t)
}

// On a plane whose NATS has no authorization the terminal says so when it
// starts.
func TestTheTerminalSaysAnOpenPlaneIsOpen(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{Open: true})
	tp.out.expect("no authorization (dev mode)")
}

package channeltest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Wait bounds every wait of the suite.
const Wait = 10 * time.Second

// Setup is what the suite asks of one harness.
type Setup struct {
	// As is the approver id the harness answers as: "alice" (a member of
	// team default) or "dave" (a configured approver who is not).
	As string
	// Logger receives the channel's logs; the suite checks them for the
	// harness's secrets.
	Logger *slog.Logger
}

// Harness drives one channel through its fake service: it builds the
// channel, acts as a person on it (the roles below) and names its secrets.
type Harness interface {
	// Config is the bot config (YAML) of the channel: team default,
	// approvers alice (display Alice), bob and dave mapped to users of
	// the fake, the channel enabled and pointed at its fake.
	Config() string
	// Channel builds the channel from the parsed config and serves its
	// routes (for HTTP channels); the suite runs it in a bot.
	Channel(t *testing.T, cfg *approverbot.Config) approverbot.Channel
	// Secrets are strings that must never reach the logs (tokens,
	// signing secrets).
	Secrets() []string

	Approving
	Answering
	Faults
}

// Approving is a person answering approval questions on the channel.
type Approving interface {
	// Shown waits until question id shows with its controls and returns
	// the text a person reads and the choices its controls offer.
	Shown(t *testing.T, id string) (text string, choices []approverbot.Choice)
	// Choose picks choice on question id as Setup.As, with feedback where
	// the channel takes it, and returns what the channel told them.
	Choose(t *testing.T, id string, choice approverbot.Choice, feedback string) string
	// Settled waits until question id shows as settled, with no controls,
	// and returns the text a person reads.
	Settled(t *testing.T, id string) string
	// Feedback reports whether rejections carry the feedback Choose got.
	Feedback() bool
}

// Answering is a person answering an agent's ask-user questions.
type Answering interface {
	// Asked waits until ask-user question id shows with its answer
	// controls and returns the text a person reads and, per question of
	// the tool, the option labels its controls offer (nil for a question
	// answered in words only).
	Asked(t *testing.T, id string) (text string, options [][]string)
	// Answer answers ask-user question id as Setup.As, as a person does on
	// the channel: picks name options by index (a tool that asks one
	// question with options), or carry the text typed (a tool that takes
	// words). It returns what the channel told them.
	Answer(t *testing.T, id string, picks []approverbot.Pick) string
}

// Faults cut the channel off from its service and bring it back.
type Faults interface {
	// Break makes the channel's service unreachable; false when the
	// channel has none to lose (the web page is its own service). Heal
	// makes it reachable again; false when it cannot come back (a
	// terminal's closed input).
	Break() bool
	Heal() bool
}

// Factory makes a harness for one test.
type Factory func(t *testing.T, s Setup) Harness

// world is one test's plane and bot.
type world struct {
	plane   *brokertest.Plane
	h       Harness
	ch      approverbot.Channel
	device  *brokertest.Approver
	session string
	seq     int
	// logs are the bot's and the channel's logs.
	logs *brokertest.LogBuffer
}

// start runs a plane and a bot with the harness's channel; the logs are
// checked for secrets when the test ends.
func start(t *testing.T, newHarness Factory, as string) *world {
	t.Helper()
	p := brokertest.Start(t, brokertest.Options{Policy: Policy})
	log, logs := Logger()
	h := newHarness(t, Setup{As: as, Logger: log})
	cfg, err := approverbot.ParseConfig([]byte(h.Config()), "channeltest.yaml")
	if err != nil {
		t.Fatalf("the harness's config: %v", err)
	}
	if strings.Join(cfg.Teams, ",") != "default" {
		t.Fatalf("the harness's config serves teams %v, want [default]", cfg.Teams)
	}
	ch := h.Channel(t, cfg)
	bot, err := approverbot.New(cfg, p.NATS.Connect(t), []approverbot.Channel{ch}, approverbot.Options{Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { // after the bot stopped (cleanups run last first)
		s := logs.String()
		for _, secret := range h.Secrets() {
			if secret != "" && strings.Contains(s, secret) {
				t.Errorf("a secret (%.4s…) appears in the logs", secret)
			}
		}
	})
	brokertest.Run(t, "bot.Run", bot.Run)
	return &world{plane: p, h: h, ch: ch, device: p.Approver("default"), session: sessionOf(t), logs: logs}
}

// sessionOf is a session id for the test: its name, shortened with a hash
// of the whole when it is too long for a session id (with the agent's
// suffixes).
func sessionOf(t *testing.T) string {
	s := "s-" + strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	if len(s) <= 90 {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	return s[:70] + "-" + hex.EncodeToString(sum[:6])
}

// ask has an agent ask about a bash command; it returns the pending call and
// the question as the brokers announced it. Each question comes from a new
// session and agent, so no grant an earlier answer gave covers it.
func (w *world) ask(t *testing.T, command string) (*brokertest.Pending, messages.ApprovalNeeded) {
	t.Helper()
	w.seq++
	id := fmt.Sprintf("ct-%d-%d", time.Now().UnixNano()%1_000_000, w.seq)
	agent := w.plane.Agent(fmt.Sprintf("%s-%d", w.session, w.seq), fmt.Sprintf("agent-%d", w.seq))
	pend := brokertest.Ask(t.Context(), agent, id, "bash", brokertest.Bash(command))
	return pend, w.device.NextAsk(id)
}

// Policy is the plane's policy: brokertest's default, with AskUserQuestion
// and ask_human (declared under tools.answer) asking the default team.
const Policy = `
mode: auto-edit
tools:
  answer: [ask_human]
rules:
` + brokertest.DefaultRules + `  - { rule: "bash(helm *)", action: ask, step_up: true }
  - { rule: AskUserQuestion, action: ask }
  - { rule: ask_human, action: ask }
` + brokertest.DefaultTeams

// askUser has an agent call an ask-user tool; it returns the pending call
// and the question as the brokers announced it.
func (w *world) askUser(t *testing.T, tool string, args any) (*brokertest.Pending, messages.ApprovalNeeded) {
	t.Helper()
	w.seq++
	id := fmt.Sprintf("ct-%d-%d", time.Now().UnixNano()%1_000_000, w.seq)
	agent := w.plane.Agent(fmt.Sprintf("%s-%d", w.session, w.seq), fmt.Sprintf("agent-%d", w.seq))
	pend := brokertest.Ask(t.Context(), agent, id, tool, args)
	return pend, w.device.NextAsk(id)
}

// Run runs the suite.
func Run(t *testing.T, newHarness Factory) {
	t.Run("the question shows every fact", func(t *testing.T) { testFacts(t, newHarness) })
	t.Run("each control sends its answer", func(t *testing.T) { testChoices(t, newHarness) })
	t.Run("Session and Always say what they grant, or why not", func(t *testing.T) { testOffers(t, newHarness) })
	t.Run("a resolution elsewhere removes the controls", func(t *testing.T) { testResolution(t, newHarness) })
	t.Run("a refused answer is shown", func(t *testing.T) { testRefusal(t, newHarness) })
	t.Run("an ask-user question shows its options and takes an answer", func(t *testing.T) { testAnswers(t, newHarness) })
	t.Run("unhealthy while the service is unreachable", func(t *testing.T) { testHealth(t, newHarness) })
	t.Run("approve with changes, or says it cannot", func(t *testing.T) { testEdits(t, newHarness) })
	t.Run("what the approver sees is what runs", func(t *testing.T) { testDeception(t, newHarness) })
	t.Run("a step-up question is approved only where a passkey can be asked for", func(t *testing.T) { testStepUp(t, newHarness) })
}

func testFacts(t *testing.T, newHarness Factory) {
	w := start(t, newHarness, "alice")
	_, q := w.ask(t, "git push origin main && make build")
	text, choices := w.h.Shown(t, q.Request.RequestID)
	v := approverbot.Present(approverbot.Question{ApprovalNeeded: q}, approverbot.Limits{})
	facts := []struct{ what, want string }{
		{"the tool", v.Tool},
		{"the command", "git push origin main"},
		{"the team", v.Team},
		{"the agent", v.AgentID},
		{"how the agent's identity is known", v.Identity},
		{"why it asks", firstWords(v.Why, 4)},
	}
	for _, s := range v.Subcommands {
		facts = append(facts, struct{ what, want string }{"the sub-command " + s.Command, s.Command})
	}
	if !v.Always.Offered || len(v.Always.Patterns) == 0 {
		t.Fatalf("test setup: the broker offers no Always patterns: %+v", q.Always)
	}
	for _, p := range v.Always.Patterns {
		facts = append(facts, struct{ what, want string }{"what Always grants", p})
	}
	for _, f := range facts {
		if f.want == "" || !strings.Contains(text, f.want) {
			t.Errorf("the question does not show %s (%q):\n%s", f.what, f.want, text)
		}
	}
	if l := strings.ToLower(text); !strings.Contains(l, "left") && !strings.Contains(l, "expires") {
		t.Errorf("the question does not show the time left:\n%s", text)
	}
	if !slices.Equal(choices, approverbot.Choices) {
		t.Errorf("choices %v, want every choice %v", choices, approverbot.Choices)
	}

	// A question no standing grant may cover offers no Always.
	_, q2 := w.ask(t, "make $(whoami)")
	if q2.Always != nil {
		t.Fatalf("test setup: the broker offers Always on an unprefixable command")
	}
	if _, choices := w.h.Shown(t, q2.Request.RequestID); slices.Contains(choices, approverbot.ChoiceAlways) {
		t.Errorf("a question without Always offers it: %v", choices)
	}
}

// firstWords is the start of s, to find a prose fact in a channel's layout
// (which may wrap or clip it).
func firstWords(s string, n int) string {
	f := strings.Fields(s)
	return strings.Join(f[:min(n, len(f))], " ")
}

func testChoices(t *testing.T, newHarness Factory) {
	w := start(t, newHarness, "alice")
	for _, c := range approverbot.Choices {
		t.Run(string(c), func(t *testing.T) {
			pend, q := w.ask(t, "git push origin main")
			id := q.Request.RequestID
			if _, choices := w.h.Shown(t, id); !slices.Contains(choices, c) {
				t.Fatalf("the question offers %v, not %s", choices, c)
			}
			reply := w.h.Choose(t, id, c, "use the staging remote")
			d := pend.Wait(t)
			if d.DecidedBy.ID != "alice" || d.DecidedBy.Channel != w.ch.Name() {
				t.Errorf("decided by %+v, want alice via %s", d.DecidedBy, w.ch.Name())
			}
			switch c {
			case approverbot.ChoiceOnce, approverbot.ChoiceSession, approverbot.ChoiceAlways:
				want := map[approverbot.Choice]messages.Scope{approverbot.ChoiceOnce: messages.ScopeOnce,
					approverbot.ChoiceSession: messages.ScopeSession, approverbot.ChoiceAlways: q.Always.Scope}[c]
				if d.Outcome != messages.OutcomeAllow || d.Scope != want {
					t.Errorf("decision %s scope %q, want allow %q", d.Outcome, d.Scope, want)
				}
				if c == approverbot.ChoiceAlways && !slices.Equal(d.GrantedPattern, q.Always.Patterns) {
					t.Errorf("Always granted %v, the question offered %v", d.GrantedPattern, q.Always.Patterns)
				}
			default:
				mode := messages.RejectSoft
				if c == approverbot.ChoiceRejectStop {
					mode = messages.RejectHard
				}
				if d.Outcome != messages.OutcomeDeny || d.EffectiveRejectMode() != mode {
					t.Errorf("decision %s %q, want deny %q", d.Outcome, d.RejectMode, mode)
				}
				if w.h.Feedback() && d.Feedback != "use the staging remote" {
					t.Errorf("feedback %q, want the one typed", d.Feedback)
				}
			}
			if reply == "" {
				t.Error("the channel told the approver nothing")
			}
			w.h.Settled(t, id)
		})
	}
}

func testResolution(t *testing.T, newHarness Factory) {
	w := start(t, newHarness, "alice")
	pend, q := w.ask(t, "git push origin main")
	id := q.Request.RequestID
	w.h.Shown(t, id)
	if rep := w.device.Approve(q, "bob", messages.ScopeOnce); !rep.Applied {
		t.Fatalf("bob's answer from another device was not applied: %+v", rep)
	}
	pend.Wait(t)
	text := w.h.Settled(t, id)
	if !strings.Contains(strings.ToLower(text), "bob") {
		t.Errorf("the settled question does not say bob decided:\n%s", text)
	}
}

func testRefusal(t *testing.T, newHarness Factory) {
	// dave is a configured approver but not a member of team default: the
	// brokers refuse his answer, and the channel must say so — or, on a
	// channel that shows a question only to the answerers the brokers
	// name (HidesFromNonMembers), never show it to him at all.
	w := start(t, newHarness, "dave")
	pend, q := w.ask(t, "git push origin main")
	id := q.Request.RequestID
	if hider, ok := w.h.(NonMemberHiding); ok && hider.HidesFromNonMembers() {
		hider.NotShown(t, id)
		if hider.Addressable() {
			reply := strings.ToLower(w.h.Choose(t, id, approverbot.ChoiceOnce, ""))
			if !strings.Contains(reply, "unknown question") {
				t.Errorf("dave answering a question he is not shown: %q, want it unknown", reply)
			}
		}
	} else {
		w.h.Shown(t, id)
		reply := w.h.Choose(t, id, approverbot.ChoiceOnce, "")
		l := strings.ToLower(reply)
		if !strings.Contains(l, "not applied") && !strings.Contains(l, `"applied":false`) {
			t.Errorf("dave is not told his answer was refused: %q", reply)
		}
		if !strings.Contains(l, "member") {
			t.Errorf("dave is not told why (not a member of the team): %q", reply)
		}
	}
	if d, _ := pend.Peek(); d != nil {
		t.Errorf("a refused answer decided the call: %+v", d)
	}
}

// NonMemberHiding is a harness of a channel that shows a question only to
// the answerers its copies name (messages.Answerers).
type NonMemberHiding interface {
	HidesFromNonMembers() bool
	// NotShown fails the test if question id shows to Setup.As within a
	// while after it was asked.
	NotShown(t *testing.T, id string)
	// Addressable reports whether an answer can name a question the
	// channel does not show (the web page's API takes a request id; it
	// must then answer "unknown question"). A terminal answers only the
	// question it prompts, so it has no way to name one it never showed.
	Addressable() bool
}

func testHealth(t *testing.T, newHarness Factory) {
	w := start(t, newHarness, "alice")
	ctx := context.Background()
	eventually(t, "the channel reports healthy at start", func() error { return w.ch.CheckHealth(ctx) }, true)
	if !w.h.Break() {
		t.Logf("%s has no service to lose; it stays healthy", w.ch.Name())
		if err := w.ch.CheckHealth(ctx); err != nil {
			t.Errorf("CheckHealth = %v", err)
		}
		return
	}
	// Traffic reaches the broken service (a channel may learn of it from
	// a failed delivery).
	w.ask(t, "git push origin main")
	eventually(t, "the channel reports unhealthy while its service is unreachable", func() error { return w.ch.CheckHealth(ctx) }, false)
	if !w.h.Heal() {
		return
	}
	_, q := w.ask(t, "git push origin main")
	w.h.Shown(t, q.Request.RequestID)
	eventually(t, "the channel reports healthy once its service is back", func() error { return w.ch.CheckHealth(ctx) }, true)
}

// eventually polls check until it passes (healthy: nil error) or Wait ends.
func eventually(t *testing.T, what string, check func() error, healthy bool) {
	t.Helper()
	deadline := time.Now().Add(Wait)
	for {
		err := check()
		if (err == nil) == healthy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: CheckHealth = %v", what, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func testAnswers(t *testing.T, newHarness Factory) {
	w := start(t, newHarness, "alice")
	pend, q := w.askUser(t, "AskUserQuestion", map[string]any{"questions": []any{map[string]any{
		"question": "Which database should the service use?", "header": "DB", "multiSelect": false,
		"options": []any{
			map[string]any{"label": "Postgres", "description": "relational, already in the stack"},
			map[string]any{"label": "Mongo", "description": "documents"},
		}}}})
	if q.AskUser == nil || len(q.AskUser.Questions) != 1 {
		t.Fatalf("test setup: the broker did not mark the question ask-user: %+v", q.AskUser)
	}
	id := q.Request.RequestID
	text, options := w.h.Asked(t, id)
	for _, want := range []string{"Which database should the service use?", "Postgres", "Mongo", "relational, already in the stack"} {
		if !strings.Contains(text, want) {
			t.Errorf("the question does not show %q:\n%s", want, text)
		}
	}
	if len(options) != 1 || !slices.Equal(options[0], []string{"Postgres", "Mongo"}) {
		t.Errorf("the controls offer %q, want [[Postgres Mongo]]", options)
	}
	reply := w.h.Answer(t, id, []approverbot.Pick{{Question: 0, Options: []int{1}}})
	d := pend.Wait(t)
	if d.Outcome != messages.OutcomeAllow || string(d.Answer) != `{"Which database should the service use?":"Mongo"}` {
		t.Errorf("decision %s with answer %s, want allow with Mongo", d.Outcome, d.Answer)
	}
	if d.DecidedBy.ID != "alice" || d.DecidedBy.Channel != w.ch.Name() {
		t.Errorf("decided by %+v, want alice via %s", d.DecidedBy, w.ch.Name())
	}
	if reply == "" {
		t.Error("the channel told the approver nothing")
	}
	if settled := w.h.Settled(t, id); !strings.Contains(settled, "Mongo") {
		t.Errorf("the settled question does not show the answer:\n%s", settled)
	}

	// A tool that takes words.
	pend, q = w.askUser(t, "ask_human", map[string]any{"prompt": "Which region should the cluster run in?"})
	id = q.Request.RequestID
	if text, _ := w.h.Asked(t, id); !strings.Contains(text, "Which region should the cluster run in?") {
		t.Errorf("the question does not show the agent's arguments:\n%s", text)
	}
	w.h.Answer(t, id, []approverbot.Pick{{Text: "eu-west-1"}})
	if d := pend.Wait(t); string(d.Answer) != `"eu-west-1"` {
		t.Errorf("the free-text answer reached the agent as %s", d.Answer)
	}
	w.h.Settled(t, id)
}

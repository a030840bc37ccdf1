package terminal_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/channeltest"
	"github.com/signoff-dev/signoff/internal/approverbot/terminal"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

func TestTerminalAnswersSeveralQuestionsOnOneLine(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: channeltest.Policy})
	device := p.Approver("default")
	agent := p.Agent("sess-ask", "agent-1")
	bash := pending(t, p, agent, "default", "req-bash", "make deploy")
	r, w := io.Pipe()
	t.Cleanup(func() { _ = w.Close() })
	out := newScreen(t)
	ch := terminal.New(r, out, terminal.Options{Logger: quiet(), Device: "pipe", KeyGuard: -1})
	runBot(t, p, botConfig("bob", "default"), ch)
	type_ := func(s string) {
		t.Helper()
		if _, err := io.WriteString(w, s); err != nil {
			t.Fatal(err)
		}
	}
	// r on a question that asks for an approval only.
	out.expect("› ")
	type_("r\n")
	out.expect("asks for an approval, not an answer")
	type_("y\n")
	bash.Wait(t)

	ask := brokertest.Ask(context.Background(), agent, "req-ask", "AskUserQuestion", map[string]any{"questions": []any{
		map[string]any{"question": "Which database?", "header": "DB", "options": []any{map[string]any{"label": "Postgres", "description": "relational"}, map[string]any{"label": "Mongo"}}},
		map[string]any{"question": "Which features?", "multiSelect": true, "options": []any{map[string]any{"label": "Auth"}, map[string]any{"label": "Logs"}}},
	}})
	device.NextAsk("req-ask")
	out.expect("Question 1 (DB, pick one): Which database?")
	out.expect("1. Postgres — relational")
	out.expect("Question 2 (pick any): Which features?")
	out.expect("[r] answer")
	type_("r\n")
	out.expect("separated by ;")
	type_("1,2; 2\n") // two options on a single-choice question
	out.expect("takes one option")
	type_("r\n")
	type_("2; 1,2\n")
	if d := ask.Wait(t); string(d.Answer) != `{"Which database?":"Mongo","Which features?":"Auth, Logs"}` || d.DecidedBy.ID != "bob" {
		t.Fatalf("the agent got %s from %s", d.Answer, d.DecidedBy.ID)
	}
	out.expect("✓ AskUserQuestion answered: Which database? → Mongo; Which features? → Auth, Logs")
}

// The terminal the bot builds from its config shows its operator only the
// questions of their teams that the brokers name them an answerer of: dave
// is on call, not in team default, so a default question and its command
// never reach his screen.
func TestTheBotsTerminalShowsItsOperatorOnlyTheirTeamsQuestions(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: channeltest.Policy})
	agent := p.Agent("sess-teams", "agent-1")
	pending(t, p, agent, "default", "req-default", "make deploy-secret-target")
	pending(t, p, agent, "oncall", "req-oncall", "kubectl get pods")
	out := runBuiltBot(t, p, botConfig("dave", "default", "oncall"))
	// The bot delivers its replay in order: once the on-call question is
	// prompted, the default one has been handed to the terminal too.
	out.expect("req-oncall")
	out.expect("› ")
	if s := out.text(); strings.Contains(s, "req-default") || strings.Contains(s, "deploy-secret-target") {
		t.Fatalf("dave's terminal shows team default's question:\n%s", s)
	}
}

// escalationPolicy routes deploys to oncall; after a while the escalation
// adds team default, whose members are others.
const escalationPolicy = `
mode: auto-edit
ttl: 1m
teams:
  default: {members: [alice]}
  oncall:
    members: [dave]
    escalation:
      - {after: 200ms, add_team: default}
      - {after: 600ms, remind: true}
rules:
  - {rule: "bash(deploy *)", action: ask, route: oncall}
`

// runBuiltBot runs a bot whose channels the config builds (the terminal
// on a pipe) and returns the screen.
func runBuiltBot(t *testing.T, p *brokertest.Plane, yaml string) *screen {
	t.Helper()
	cfg, err := approverbot.ParseConfig([]byte(yaml), "bot.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r, w := io.Pipe()
	t.Cleanup(func() { _ = w.Close() })
	out := newScreen(t)
	chs, err := approverbot.Build(cfg, quiet(), r, out)
	if err != nil {
		t.Fatal(err)
	}
	bot, err := approverbot.New(cfg, p.NATS.Connect(t), chs, approverbot.Options{Logger: quiet()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go func() { _ = bot.Run(ctx) }()
	out.expect("answering as")
	return out
}

// Who sees a question routed to two teams is judged per team: dave may use
// only team default here, and default's copies name alice, so neither the
// added team's copy nor its reminder shows him the deploy (red team of
// issue 25: the board once paired the last copy's team with every copy's
// answerers).
func TestTheTerminalJudgesEachTeamOfAnEscalatedQuestion(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: escalationPolicy, EscalationInterval: 50 * time.Millisecond})
	cfg := strings.Replace(botConfig("dave", "default", "oncall"), "dave: {}", "dave: {teams: [default]}", 1)
	daves := runBuiltBot(t, p, cfg)
	agent := p.Agent("sess-esc", "agent-1")
	device := p.Approver("default")
	brokertest.Ask(context.Background(), agent, "req-esc", "bash", brokertest.Bash("deploy secret-target"))
	for q := device.NextAsk("req-esc"); q.Reminder == 0; q = device.NextAsk("req-esc") {
	}
	// The reminder of default's copy reached a device; give the bot, which
	// subscribes alike, a moment to show it if it were going to.
	time.Sleep(300 * time.Millisecond)
	if s := daves.text(); strings.Contains(s, "secret-target") {
		t.Fatalf("dave (team default only, not a member of it) is shown the deploy:\n%s", s)
	}
}

// The member of a team an escalation adds is shown the question when it
// is added, not only at a later reminder, and not never (red team of issue
// 25: a copy that only adds a team was not a change).
func TestTheTerminalShowsAQuestionToTheTeamAnEscalationAdds(t *testing.T) {
	noReminder := strings.Replace(escalationPolicy, "{after: 600ms, remind: true}", "{after: 50s, remind: true}", 1)
	p := brokertest.Start(t, brokertest.Options{Policy: noReminder, EscalationInterval: 50 * time.Millisecond})
	alices := runBuiltBot(t, p, botConfig("alice", "default", "oncall"))
	agent := p.Agent("sess-add", "agent-1")
	brokertest.Ask(context.Background(), agent, "req-add", "bash", brokertest.Bash("deploy added-team"))
	alices.expect("deploy added-team")
}

// TestKeysMeantForTheQuestionThatLeftAreNotTaken (red team Y1): a second
// y typed while the first one's answer was in flight, or a key pressed as
// the question was settled elsewhere, must not answer the question that
// takes the prompt a moment later, which the operator has not read: keys
// that answer are not taken for KeyGuard after a question replaced
// another; after it they are.
func TestKeysMeantForTheQuestionThatLeftAreNotTaken(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: channeltest.Policy})
	agent := p.Agent("sess-guard", "agent-1")
	first := pending(t, p, agent, "default", "req-guard-1", "npm test")
	second := pending(t, p, agent, "default", "req-guard-2", "make deploy")
	r, w := io.Pipe()
	t.Cleanup(func() { _ = w.Close() })
	out := newScreen(t)
	ch := terminal.New(r, out, terminal.Options{Logger: quiet(), Device: "pipe", KeyGuard: 2 * time.Second})
	runBot(t, p, botConfig("bob", "default"), ch)
	out.expect("› ")
	// The second question is queued before the keys are typed (it reaches
	// the bot after the first, at once or a moment later): otherwise the
	// second y finds no question at all, which tests nothing.
	for deadline := time.Now().Add(waitFor); ; time.Sleep(20 * time.Millisecond) {
		if s := out.text(); strings.Contains(s, "more waiting)") || strings.Contains(s, "new question: ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the terminal never showed the second question waiting:\n%s", out.text())
		}
	}
	// Two presses at once: the first answers the question on screen.
	if _, err := io.WriteString(w, "y\ny\n"); err != nil {
		t.Fatal(err)
	}
	if d := first.Wait(t); d.Outcome != messages.OutcomeAllow {
		t.Fatalf("the first question: %+v", d)
	}
	out.expect("may have been meant for that one")
	if d, _ := second.Peek(); d != nil {
		t.Fatalf("the second question was answered by a key typed for the first: %+v", d)
	}
	time.Sleep(2100 * time.Millisecond)
	if _, err := io.WriteString(w, "n\nnot now\n"); err != nil {
		t.Fatal(err)
	}
	if d := second.Wait(t); d.RejectMode != messages.RejectSoft || d.Feedback != "not now" {
		t.Fatalf("the second question, answered after the guard: %+v", d)
	}
}

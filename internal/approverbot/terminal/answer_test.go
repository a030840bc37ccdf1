package terminal_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/channeltest"
	"github.com/signoff-dev/signoff/internal/approverbot/terminal"
	"github.com/signoff-dev/signoff/internal/brokertest"
)

func TestTerminalAnswersSeveralQuestionsOnOneLine(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{Policy: channeltest.Policy})
	device := p.Approver("default")
	agent := p.Agent("sess-ask", "agent-1")
	bash := pending(t, p, agent, "default", "req-bash", "make deploy")
	r, w := io.Pipe()
	t.Cleanup(func() { _ = w.Close() })
	out := newScreen(t)
	ch := terminal.New(r, out, terminal.Options{Logger: quiet(), Device: "pipe"})
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
	cfg, err := approverbot.ParseConfig([]byte(botConfig("dave", "default", "oncall")), "bot.yaml")
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
	// The bot delivers its replay in order: once the on-call question is
	// prompted, the default one has been handed to the terminal too.
	out.expect("req-oncall")
	out.expect("› ")
	if s := out.text(); strings.Contains(s, "req-default") || strings.Contains(s, "deploy-secret-target") {
		t.Fatalf("dave's terminal shows team default's question:\n%s", s)
	}
}

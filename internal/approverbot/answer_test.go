package approverbot

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/messages"
)

func askQuestion(args string) Question {
	ask := messages.ParseAskUser(json.RawMessage(args))
	q := Question{}
	q.Request.RequestID, q.Request.SessionID, q.Request.Tool = "r1", "s1", "AskUserQuestion"
	q.Request.Arguments = json.RawMessage(args)
	q.AskUser = &ask
	return q
}

const twoQuestions = `{"questions":[{"question":"Which database should the service use for its data?","header":"DB","options":[{"label":"Postgres","description":"relational"},{"label":"Mongo"}]},
{"question":"Which features?","options":[{"label":"Auth"},{"label":"Logs"}],"multiSelect":true}]}`

func TestAnswerOfNamesTheToolsOwnTexts(t *testing.T) {
	q := askQuestion(twoQuestions)
	// The view clips the question; the answer keys on the full text.
	v := Present(q, Limits{Prose: 20})
	if v.Ask == nil || !strings.HasSuffix(v.Ask.Questions[0].Question, "…") {
		t.Fatalf("the view does not clip the question: %+v", v.Ask)
	}
	raw, err := AnswerOf(q, []Pick{{Question: 0, Options: []int{0}}, {Question: 1, Options: []int{0, 1}, Text: "metrics"}})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	_ = json.Unmarshal(raw, &got)
	if got["Which database should the service use for its data?"] != "Postgres" || got["Which features?"] != "Auth, Logs, metrics" {
		t.Errorf("answer %s", raw)
	}
	for _, bad := range [][]Pick{
		{{Question: 2, Options: []int{0}}},
		{{Question: 0, Options: []int{5}}},
		{{Question: 0, Options: []int{0, 1}}},
		{{Question: 0, Text: "  "}},
		nil,
	} {
		if _, err := AnswerOf(q, bad); !errors.Is(err, ErrNoAnswer) {
			t.Errorf("AnswerOf(%+v) = %v, want ErrNoAnswer", bad, err)
		}
	}
	if _, err := AnswerOf(Question{}, []Pick{{Text: "x"}}); !errors.Is(err, ErrNoAnswer) {
		t.Errorf("an answer to a question that takes none: %v", err)
	}
	free := askQuestion(`{"prompt":"region?"}`)
	if raw, err := AnswerOf(free, []Pick{{Text: " eu-west-1 "}}); err != nil || string(raw) != `"eu-west-1"` {
		t.Errorf("free text answer %s, %v", raw, err)
	}
}

func TestChooseAnswerRefusesWhatChooseRefuses(t *testing.T) {
	q := askQuestion(twoQuestions)
	q.Request.RequestedBy = "alice"
	raw := json.RawMessage(`"Postgres"`)
	if _, err := ChooseAnswer(q, raw, "alice", "web", "d"); !errors.Is(err, ErrChoice) {
		t.Errorf("an answer to one's own request: %v", err)
	}
	a, err := ChooseAnswer(q, raw, "bob", "web", "d")
	if err != nil || !a.Approved || a.Scope != messages.ScopeOnce || string(a.Answer) != `"Postgres"` {
		t.Errorf("ChooseAnswer = %+v, %v", a, err)
	}
	if _, err := ChooseAnswer(q, json.RawMessage(`{"Other?":"x"}`), "bob", "web", "d"); !errors.Is(err, ErrNoAnswer) {
		t.Errorf("an answer to another question: %v", err)
	}
	bash := Question{}
	bash.Request.RequestID, bash.Request.Tool = "r2", "bash"
	if _, err := ChooseAnswer(bash, raw, "bob", "web", "d"); !errors.Is(err, ErrNoAnswer) {
		t.Errorf("an answer to bash: %v", err)
	}
	if err := checkAnswerField(q, Answer{Approved: false, Answer: raw}); !errors.Is(err, ErrNoAnswer) {
		t.Errorf("an answer on a rejection: %v", err)
	}
}

func TestAskLines(t *testing.T) {
	v := Present(askQuestion(twoQuestions), Limits{})
	got := strings.Join(v.AskLines(), "\n")
	for _, want := range []string{"Question 1 (DB, pick one): Which database", "  1. Postgres — relational", "  2. Mongo", "Question 2 (pick any): Which features?"} {
		if !strings.Contains(got, want) {
			t.Errorf("AskLines lacks %q:\n%s", want, got)
		}
	}
	if Present(Question{}, Limits{}).AskLines() != nil {
		t.Error("a question without ask_user has ask lines")
	}
}

func TestParseAnswerLine(t *testing.T) {
	q := askQuestion(twoQuestions)
	for _, tt := range []struct {
		line string
		want string // the answer, or the error's start
	}{
		{"1; 1,2", `{"Which database should the service use for its data?":"Postgres","Which features?":"Auth, Logs"}`},
		{"2; logs and traces", `{"Which database should the service use for its data?":"Mongo","Which features?":"logs and traces"}`},
		{"; 2", `{"Which features?":"Logs"}`},
		{"Postgres 16", `{"Which database should the service use for its data?":"Postgres 16"}`},
		{"1,2", "choice not offered: not an answer: the answer question"},
		{"3", "choice not offered: not an answer: option 3 does not exist"},
		{"1; 2; 3", "choice not offered: not an answer: question 3 does not exist"},
	} {
		raw, err := AnswerOf(q, ParseAnswerLine(q, tt.line))
		got := string(raw)
		if err != nil {
			got = err.Error()
		}
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("ParseAnswerLine(%q) → %s, want %s", tt.line, got, tt.want)
		}
	}
	free := askQuestion(`{"prompt":"region?"}`)
	if raw, err := AnswerOf(free, ParseAnswerLine(free, "1; eu")); err != nil || string(raw) != `"1; eu"` {
		t.Errorf("a free-text line %s, %v", raw, err)
	}
}

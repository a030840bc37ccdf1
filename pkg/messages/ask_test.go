package messages

import (
	"encoding/json"
	"strings"
	"testing"
)

const claudeAsk = `{"questions":[
 {"question":"Which database?","header":"DB","options":[{"label":"Postgres","description":"relational"},{"label":"Mongo"}],"multiSelect":false},
 {"question":"Which features?","header":"Features","options":[{"label":"Auth"},{"label":"Logs"},{"label":"Auth"}],"multiSelect":true},
 {"question":"Which database?","options":[{"label":"dup"}]},
 {"header":"no question"}]}`

func TestParseAskUser(t *testing.T) {
	a := ParseAskUser(json.RawMessage(claudeAsk))
	if len(a.Questions) != 2 {
		t.Fatalf("questions %+v, want 2 (the duplicate and the one without text dropped)", a.Questions)
	}
	q0, q1 := a.Questions[0], a.Questions[1]
	if q0.Question != "Which database?" || q0.Header != "DB" || q0.MultiSelect || len(q0.Options) != 2 ||
		q0.Options[0] != (AskOption{Label: "Postgres", Description: "relational"}) {
		t.Errorf("first question %+v", q0)
	}
	if !q1.MultiSelect || len(q1.Options) != 2 {
		t.Errorf("second question %+v: want multi-select with the duplicate label dropped", q1)
	}
	// The one-question shape of other agents, options as strings.
	a = ParseAskUser(json.RawMessage(`{"question":"Deploy\nnow?\u202e","choices":["yes","no"],"multi_select":true}`))
	if len(a.Questions) != 1 || a.Questions[0].Question != "Deploy now?" || len(a.Questions[0].Options) != 2 || !a.Questions[0].MultiSelect {
		t.Errorf("one-question shape: %+v", a)
	}
	for _, raw := range []string{`{}`, `[]`, `"x"`, `{"questions":"Which?"}`, `{"prompt":"x"}`} {
		if a := ParseAskUser(json.RawMessage(raw)); len(a.Questions) != 0 {
			t.Errorf("ParseAskUser(%s) = %+v, want no questions", raw, a)
		}
	}
	long := `{"question":"` + strings.Repeat("é", 900) + `"}`
	if q := ParseAskUser(json.RawMessage(long)).Questions[0].Question; len(q) > maxAskText+len("…") || !strings.HasSuffix(q, "…") {
		t.Errorf("a long question is not clipped: %d bytes", len(q))
	}
}

func TestAskUserAnswers(t *testing.T) {
	a := ParseAskUser(json.RawMessage(claudeAsk))
	raw, err := a.Answers(map[string][]string{"Which database?": {"Postgres"}, "Which features?": {"Auth", "Logs"}},
		map[string]string{"Which features?": " and metrics "})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]string
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got["Which database?"] != "Postgres" || got["Which features?"] != "Auth, Logs, and metrics" || len(got) != 2 {
		t.Errorf("answers %s", raw)
	}
	for _, bad := range []struct {
		picked map[string][]string
		want   string
	}{
		{map[string][]string{"Which database?": {"Postgres", "Mongo"}}, "takes one option"},
		{map[string][]string{"Which database?": {"Oracle"}}, `option "Oracle" is not offered`},
		{map[string][]string{"Which OS?": {"Linux"}}, "not one of the questions"},
		{map[string][]string{}, "answers none"},
	} {
		if _, err := a.Answers(bad.picked, nil); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Answers(%v) = %v, want %q", bad.picked, err, bad.want)
		}
	}
	free := AskUser{}
	raw, err = free.Answers(nil, map[string]string{"": "staging"})
	if err != nil || string(raw) != `"staging"` {
		t.Errorf("free text answer %s, %v", raw, err)
	}
}

func TestAskUserCheck(t *testing.T) {
	a := ParseAskUser(json.RawMessage(claudeAsk))
	for raw, want := range map[string]string{
		`{"Which database?":"Postgres"}`:       "",
		`{"Which database?":"anything typed"}`: "",
		`"Postgres"`:                           "",
		`"  "`:                                 "empty",
		`true`:                                 "must be a string or an object",
		`null`:                                 "must be a string or an object",
		`{}`:                                   "answers none",
		`{"Other?":"x"}`:                       "not one of the questions",
		`{"Which database?":""}`:               "non-empty string",
		`{"Which database?":3}`:                "non-empty string",
		`{"Which database?":"a\u0007b"}`:       "control",
		`{"Which database?":"` + strings.Repeat("x", MaxAnswerBytes) + `"}`: "at most",
	} {
		err := a.Check(json.RawMessage(raw))
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("Check(%.40s) = %v, want %q", raw, err, want)
		}
	}
	free := AskUser{}
	for raw, want := range map[string]string{`"yes"`: "", `" "`: "empty", `{"a":"b"}`: "must be a string", `"\u202e"`: "bidi"} {
		err := free.Check(json.RawMessage(raw))
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("free Check(%s) = %v, want %q", raw, err, want)
		}
	}
}

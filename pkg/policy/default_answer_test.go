package policy

import (
	"encoding/json"
	"testing"
)

// The built-in policy sends the ask-user tools' questions to people: in
// auto-edit they are read-tier and would otherwise be allowed unasked,
// answering nobody.
func TestBuiltinPolicyAsksPeopleTheAgentsQuestions(t *testing.T) {
	p := Default()
	for _, tool := range []string{"AskUserQuestion", "ask_user", "ask_user_question", "ask_followup_question"} {
		d := p.Evaluate(Call{Tool: tool, Arguments: json.RawMessage(`{"questions":[{"question":"Which database?","options":[{"label":"Postgres"},{"label":"SQLite"}]}]}`)})
		if d.Action != Ask || !p.AnswersUser(tool) {
			t.Errorf("%s → %s (%s), answers the user: %v", tool, d.Action, d.Reason, p.AnswersUser(tool))
		}
	}
	if d := p.Evaluate(Call{Tool: "TodoWrite", Arguments: json.RawMessage(`{}`)}); d.Action != Allow {
		t.Errorf("TodoWrite → %s: the rule must name only the ask-user tools", d.Action)
	}
}

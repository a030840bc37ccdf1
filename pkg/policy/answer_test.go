package policy

import (
	"slices"
	"strings"
	"testing"
)

func TestAnswerTools(t *testing.T) {
	p, err := Parse([]byte("tools:\n  answer: [Ask_Human, mcp__chat__ask]\n  tiers: { ask_human: read }\n"), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for tool, want := range map[string]bool{
		"AskUserQuestion": true, "ask_user": true, "ASK_HUMAN": true, "mcp__chat__ask": true,
		"bash": false, "write": false, "mcp__chat__send": false, "ask_human2": false,
	} {
		if got := p.AnswersUser(tool); got != want {
			t.Errorf("AnswersUser(%q) = %v, want %v", tool, got, want)
		}
	}
	if got := p.AnswerTools(); !slices.Equal(got, []string{"ask_human", "mcp__chat__ask"}) {
		t.Errorf("AnswerTools() = %v", got)
	}
	// Without tools.answer only the built-in ones answer.
	p, err = Parse([]byte("mode: always-ask\n"), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.AnswersUser("ask_human") || !p.AnswersUser("AskUserQuestion") {
		t.Error("a policy without tools.answer: wrong ask-user tools")
	}
}

func TestAnswerToolsErrors(t *testing.T) {
	tests := []struct{ src, want string }{
		{"tools:\n  answer: [bash]\n", `policy.yaml:2:12: tools.answer[0]: tool "bash" has arguments the policy judges`},
		{"tools:\n  answer: [Write]\n", `tools.answer[0]: tool "Write" has arguments the policy judges`},
		{"tools:\n  answer: [run_it]\n  shell: [run_it]\n", `tools.answer[0]: tool "run_it" has arguments the policy judges`},
		{"tools:\n  answer: [upload]\n  paths: [upload]\n", `tool "upload" has arguments the policy judges`},
		{"tools:\n  answer: [grep]\n", `tool "grep" has arguments the policy judges`},
		{"tools:\n  answer: [\"ask_*\"]\n", `tools.answer[0]: tool names in tools.answer must be exact names, not globs`},
		{"tools:\n  answer: [ask_human, ASK_HUMAN]\n", `tools.answer[1]: tool "ASK_HUMAN" is listed twice`},
		{"tools:\n  answer: [AskUserQuestion]\n", `tool "AskUserQuestion" is listed twice (the built-in ask-user tools`},
		{"tools:\n  answer: ask_human\n", `tools.answer`},
		{"tools:\n  answer: [\"a b\"]\n", `contains whitespace`},
		{"tools:\n  answers: [ask_human]\n", `unknown key "answers" (want tiers, shell, paths or answer)`},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.src), "policy.yaml")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want an error containing %q", tt.src, err, tt.want)
		}
	}
}

// Tools whose prompt is a person's decision (the ask-user class and the
// plan-approval tools) ask in every mode, ungrantably: a group or glob
// allow, an agent type's allow and yolo do not answer them; a static rule
// naming the tool exactly does, and a deny still denies.
func TestToolsOnlyAPersonAnswers(t *testing.T) {
	plain := `mode: auto-edit
tools: { answer: [ask_human] }
rules:
  - { rule: "@read", action: allow }
  - { rule: "*", action: allow }
agents:
  planner:
    rules:
      - { rule: ExitPlanMode, action: allow }
`
	// The rules naming the tools come after the catch-alls: the last
	// matching rule wins, and a catch-all allow answers no person's tool.
	named := strings.Replace(plain, "agents:", `  - { rule: ExitPlanMode, action: allow }
  - { rule: exit_plan_mode, action: deny }
agents:`, 1)
	pp, pn := mustParse(t, plain), mustParse(t, named)
	for _, tt := range []struct {
		name  string
		p     *Policy
		tool  string
		agent string
		mode  Mode
		want  Action
	}{
		{"ExitPlanMode asks in auto-edit under @read and * allows", pp, "ExitPlanMode", "", "", Ask},
		{"ExitPlanMode asks in yolo", pp, "ExitPlanMode", "", ModeYolo, Ask},
		{"exit_plan_mode asks", pp, "exit_plan_mode", "", ModeYolo, Ask},
		{"plan_mode_respond asks", pp, "plan_mode_respond", "", "", Ask},
		{"AskUserQuestion asks in yolo", pp, "AskUserQuestion", "", ModeYolo, Ask},
		{"ask_followup_question asks", pp, "ask_followup_question", "", "", Ask},
		{"a declared answer tool asks", pp, "Ask_Human", "", ModeYolo, Ask},
		{"an agent type's allow naming it does not answer it", pp, "ExitPlanMode", "planner", "", Ask},
		{"TodoWrite stays allowed", pp, "TodoWrite", "", "", Allow},
		{"EnterPlanMode (a restriction) stays allowed", pp, "enter_plan_mode", "", "", Allow},
		{"a static rule naming ExitPlanMode allows it", pn, "exitplanmode", "", "", Allow},
		{"a static deny denies", pn, "exit_plan_mode", "", ModeYolo, Deny},
		{"other person tools still ask", pn, "AskUserQuestion", "", "", Ask},
	} {
		d := tt.p.Evaluate(Call{Tool: tt.tool, AgentType: tt.agent, Mode: tt.mode, Arguments: []byte(`{"plan":"1. do it"}`)})
		if d.Action != tt.want || d.Action == Ask && d.Grantable {
			t.Errorf("%s: %s → %s (grantable %v, %s: %s), want %s, not grantable", tt.name, tt.tool, d.Action, d.Grantable, d.Layer, d.Reason, tt.want)
		}
		if d.Action == Ask && tt.p.AnswersUser(tt.tool) != slices.Contains([]string{"AskUserQuestion", "ask_followup_question", "Ask_Human"}, tt.tool) {
			t.Errorf("%s: AnswersUser(%s) = %v", tt.name, tt.tool, tt.p.AnswersUser(tt.tool))
		}
	}
}

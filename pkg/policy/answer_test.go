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

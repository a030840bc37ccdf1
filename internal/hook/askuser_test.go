package hook

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/messages"
)

func TestAnswersInputGivesClaudeCodeItsAnswers(t *testing.T) {
	input := json.RawMessage(`{"questions":[{"question":"Which\ndatabase?","header":"DB","options":[{"label":"Postgres"},{"label":"Mongo"}],"multiSelect":false},
		{"question":"Which features?","options":[{"label":"Auth"},{"label":"Logs"}],"multiSelect":true}],"metadata":{"source":"plan"}}`)
	for _, tt := range []struct {
		name         string
		host         Host
		tool, answer string
		want         string // the answers object; "" for not ok
	}{
		{"both answered, keyed as shown", ClaudeCode, "AskUserQuestion", `{"Which database?":"Postgres","Which features?":"Auth, Logs"}`,
			`{"Which\ndatabase?":"Postgres","Which features?":"Auth, Logs"}`},
		{"one answered", ClaudeCode, "AskUserQuestion", `{"Which features?":"Logs"}`, `{"Which features?":"Logs"}`},
		{"a key that names no question", ClaudeCode, "AskUserQuestion", `{"Which OS?":"Linux"}`, ""},
		{"free text to several questions", ClaudeCode, "AskUserQuestion", `"Postgres"`, ""},
		{"another tool", ClaudeCode, "ask_user", `{"Which features?":"Logs"}`, ""},
		{"another host", Codex, "AskUserQuestion", `{"Which features?":"Logs"}`, ""},
		{"no answer", ClaudeCode, "AskUserQuestion", ``, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, ok := answersInput(tt.host, tt.tool, input, json.RawMessage(tt.answer))
			if (tt.want != "") != ok {
				t.Fatalf("ok %v, want %v (%s)", ok, tt.want != "", out)
			}
			if !ok {
				return
			}
			var got map[string]json.RawMessage
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if string(got["answers"]) != tt.want {
				t.Errorf("answers %s, want %s", got["answers"], tt.want)
			}
			if string(got["metadata"]) != `{"source":"plan"}` || len(got["questions"]) == 0 {
				t.Errorf("the tool's own input is not kept: %s", out)
			}
		})
	}
	one := json.RawMessage(`{"questions":[{"question":"Region?"}]}`)
	if out, ok := answersInput(ClaudeCode, "AskUserQuestion", one, json.RawMessage(`"eu-west-1"`)); !ok || string(out) != `{"answers":{"Region?":"eu-west-1"},"questions":[{"question":"Region?"}]}` {
		t.Errorf("free text to one question: %s %v", out, ok)
	}
}

func TestAnsweredOutputAllowsWithTheAnswers(t *testing.T) {
	in := Input{ToolName: "AskUserQuestion", ToolInput: json.RawMessage(`{"questions":[{"question":"Region?"}]}`)}
	d := &messages.Decision{Outcome: messages.OutcomeAllow, Tool: "AskUserQuestion", Answer: json.RawMessage(`"eu-west-1"`),
		DecidedBy: messages.Decider{Kind: messages.DeciderApprover, ID: "alice"}}
	out, ok := answeredOutput(ClaudeCode, "PreToolUse", in, d)
	if !ok || !strings.Contains(string(out), `"permissionDecision":"allow"`) || !strings.Contains(string(out), `"updatedInput":{"answers":{"Region?":"eu-west-1"}`) {
		t.Errorf("PreToolUse: %s %v", out, ok)
	}
	out, ok = answeredOutput(ClaudeCode, "PermissionRequest", in, d)
	if !ok || string(out) != `{"hookSpecificOutput":{"hookEventName":"PermissionRequest","decision":{"behavior":"allow","updatedInput":{"answers":{"Region?":"eu-west-1"},"questions":[{"question":"Region?"}]}}}}` {
		t.Errorf("PermissionRequest: %s %v", out, ok)
	}
	// A deny, or an answer that cannot be put in the input, goes the
	// usual way (a deny with the answer in the reason).
	deny := *d
	deny.Outcome = messages.OutcomeDeny
	if _, ok := answeredOutput(ClaudeCode, "PreToolUse", in, &deny); ok {
		t.Error("a deny became an answer")
	}
	two := Input{ToolName: "AskUserQuestion", ToolInput: json.RawMessage(`{"questions":[{"question":"A?"},{"question":"B?"}]}`)}
	if _, ok := answeredOutput(ClaudeCode, "PreToolUse", two, d); ok {
		t.Error("free text to two questions became answers")
	}
	if out, err := ClaudeCode.answer("PreToolUse", d); err != nil || !strings.Contains(string(out), `"permissionDecision":"deny"`) || !strings.Contains(string(out), "eu-west-1") {
		t.Errorf("the fallback: %s %v", out, err)
	}
}

// TestOutputDecidesWhichUpdatedInput: output is the one place that picks
// the updatedInput of an allow — the answers of an AskUserQuestion, or the
// approver's edited arguments of any other call — and denies an edited
// approval of an ask-user call, which the brokers never send.
func TestOutputDecidesWhichUpdatedInput(t *testing.T) {
	ask := Input{ToolName: "AskUserQuestion", ToolInput: json.RawMessage(`{"questions":[{"question":"Region?"}]}`)}
	bash := Input{ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"make deploy"}`)}
	by := messages.Decider{Kind: messages.DeciderApprover, ID: "alice"}
	tests := []struct {
		name string
		in   Input
		d    messages.Decision
		want []string
		not  []string
	}{
		{"an answer becomes the answers", ask,
			messages.Decision{Outcome: messages.OutcomeAllow, Tool: "AskUserQuestion", Answer: json.RawMessage(`"eu-west-1"`), DecidedBy: by},
			[]string{`"permissionDecision":"allow"`, `"updatedInput":{"answers":{"Region?":"eu-west-1"}`}, nil},
		{"an edit becomes the edited input", bash,
			messages.Decision{Outcome: messages.OutcomeAllow, Tool: "Bash", UpdatedArguments: json.RawMessage(`{"command":"make plan"}`), DecidedBy: by},
			[]string{`"permissionDecision":"allow"`, `"updatedInput":{"command":"make plan"}`}, []string{"answers"}},
		{"an edited ask-user call is denied", ask,
			messages.Decision{Outcome: messages.OutcomeAllow, Tool: "AskUserQuestion", UpdatedArguments: json.RawMessage(`{"questions":[{"question":"Anything?"}]}`), DecidedBy: by},
			[]string{`"permissionDecision":"deny"`, "ask-user"}, []string{"updatedInput", "Anything?"}},
		{"an answer with an edit is denied", ask,
			messages.Decision{Outcome: messages.OutcomeAllow, Tool: "AskUserQuestion", Answer: json.RawMessage(`"eu-west-1"`),
				UpdatedArguments: json.RawMessage(`{"questions":[{"question":"Region?"}],"answers":{"Region?":"us-east-1"}}`), DecidedBy: by},
			[]string{`"permissionDecision":"deny"`}, []string{"updatedInput", "us-east-1", "eu-west-1"}},
		{"an answer with an edit on another tool is denied", bash,
			messages.Decision{Outcome: messages.OutcomeAllow, Tool: "Bash", Answer: json.RawMessage(`"yes"`),
				UpdatedArguments: json.RawMessage(`{"command":"rm -rf /"}`), DecidedBy: by},
			[]string{`"permissionDecision":"deny"`}, []string{"updatedInput", "rm -rf"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := ClaudeCode.output("PreToolUse", tt.in, &tt.d)
			if err != nil {
				t.Fatal(err)
			}
			wantHolds(t, "output", string(out), tt.want, tt.not)
		})
	}
}

// In Claude Code's plan mode an allow would skip the mode the user set
// (red team AT F7): the hook says nothing and lets the host decide; a deny
// still denies, and ExitPlanMode and answers are answered as ever.
func TestPlanModeLeavesAllowsToTheHost(t *testing.T) {
	by := messages.Decider{Kind: messages.DeciderApprover, ID: "alice"}
	allow := messages.Decision{Outcome: messages.OutcomeAllow, Tool: "Write", DecidedBy: by}
	write := Input{ToolName: "Write", PermissionMode: "plan", ToolInput: json.RawMessage(`{"file_path":"src/main.go","content":"x"}`)}
	if out, err := ClaudeCode.output("PreToolUse", write, &allow); err != nil || out != nil {
		t.Errorf("an allow in plan mode: %s, %v; want nothing", out, err)
	}
	if out, err := ClaudeCode.output("PermissionRequest", write, &allow); err != nil || out != nil {
		t.Errorf("a PermissionRequest allow in plan mode: %s, %v; want nothing (the host's prompt)", out, err)
	}
	write.PermissionMode = "default"
	if out, _ := ClaudeCode.output("PreToolUse", write, &allow); !strings.Contains(string(out), `"permissionDecision":"allow"`) {
		t.Errorf("an allow outside plan mode: %s", out)
	}
	write.PermissionMode = "plan"
	deny := messages.Decision{Outcome: messages.OutcomeDeny, Tool: "Write", Reason: "no", DecidedBy: by}
	if out, _ := ClaudeCode.output("PreToolUse", write, &deny); !strings.Contains(string(out), `"permissionDecision":"deny"`) {
		t.Errorf("a deny in plan mode: %s", out)
	}
	exit := Input{ToolName: "ExitPlanMode", PermissionMode: "plan", ToolInput: json.RawMessage(`{"plan":"x"}`)}
	approved := messages.Decision{Outcome: messages.OutcomeAllow, Tool: "ExitPlanMode", DecidedBy: by}
	if out, _ := ClaudeCode.output("PreToolUse", exit, &approved); !strings.Contains(string(out), `"permissionDecision":"allow"`) {
		t.Errorf("an approved ExitPlanMode in plan mode: %s", out)
	}
	ask := Input{ToolName: "AskUserQuestion", PermissionMode: "plan", ToolInput: json.RawMessage(`{"questions":[{"question":"Region?"}]}`)}
	answered := messages.Decision{Outcome: messages.OutcomeAllow, Tool: "AskUserQuestion", Answer: json.RawMessage(`"eu-west-1"`), DecidedBy: by}
	if out, _ := ClaudeCode.output("PreToolUse", ask, &answered); !strings.Contains(string(out), `"answers"`) {
		t.Errorf("an answer in plan mode: %s", out)
	}
}

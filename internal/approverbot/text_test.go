package approverbot_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/card"
	"github.com/signoff-dev/signoff/pkg/messages"
)

func TestSplitArgsShowsWhatThePolicyJudged(t *testing.T) {
	cases := []struct {
		name, raw     string
		command, rest string
	}{
		{"a shell command comes out as it is", `{"command":"echo \u003cb\u003e \u0026\u0026 ls\nrm x"}`, "echo <b> && ls\nrm x", ""},
		// In the agent's order: no argument moved ahead of the others (red
		// team AG F1).
		{"other arguments stay JSON, in the agent's order", `{"path":"/etc/hosts","content":"127.0.0.1 x"}`, "", "{\n  \"path\": \"/etc/hosts\",\n  \"content\": \"127.0.0.1 x\"\n}"},
		{"nested values are indented under their key, in the agent's order (red team AL F3)", `{"z":{"b":1,"a":[true]},"a":"x"}`, "", "{\n  \"z\": {\n    \"b\": 1,\n    \"a\": [\n      true\n    ]\n  },\n  \"a\": \"x\"\n}"},
		{"a repeated key shows its last value, as the policy read it", `{"command":"ls","command":"rm -rf /"}`, "rm -rf /", ""},
		{"a command that is not a string stays in the JSON", `{"command":["rm","-rf"]}`, "", "{\n  \"command\": [\n    \"rm\",\n    \"-rf\"\n  ]\n}"},
		{"numbers keep their digits", `{"n":12345678901234567890}`, "", "{\n  \"n\": 12345678901234567890\n}"},
		{"no arguments show nothing", ``, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			command, rest := card.SplitArgs(json.RawMessage(c.raw), 1000, nil)
			if command != c.command || rest != c.rest {
				t.Errorf("SplitArgs = %q, %q; want %q, %q", command, rest, c.command, c.rest)
			}
		})
	}
}

func TestSettledTextsUseNoInternalNames(t *testing.T) {
	alice := messages.Decider{Kind: messages.DeciderApprover, ID: "alice", Channel: "web"}
	cases := []struct {
		name string
		r    messages.Resolved
		want string
	}{
		{"an Always on a shell prefix reads always", messages.Resolved{State: messages.StateApproved, Decision: messages.Decision{
			ReasonCode: messages.ReasonApproved, Scope: messages.ScopeAlwaysPrefix, DecidedBy: alice}}, "✓ approved (always) by alice via web"},
		{"a standing grant is said plainly", messages.Resolved{State: messages.StateApproved, Decision: messages.Decision{
			ReasonCode: messages.ReasonScopeGrant, Reason: `allowed by a standing session grant (auto-edit mode asks for exec-tier command "make")`,
			DecidedBy: messages.Decider{Kind: messages.DeciderPolicy}}}, "✓ allowed: an earlier Session or Always approval covers it"},
		{"a cascade names who gave the grant", messages.Resolved{State: messages.StateApproved, Decision: messages.Decision{
			ReasonCode: messages.ReasonCascade, Reason: "allowed by the grant that approved r1 (alice)", DecidedBy: alice}},
			"✓ allowed: covered by the grant alice via web gave on another question"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := approverbot.OutcomeLine(c.r)
			if got != c.want {
				t.Errorf("OutcomeLine = %q, want %q", got, c.want)
			}
			for _, internal := range []string{"always_prefix", "standing", "auto-edit"} {
				if strings.Contains(got, internal) {
					t.Errorf("%q leaks %q", got, internal)
				}
			}
		})
	}
}

func TestChooseLeavesAnUnknownQuestionToRespond(t *testing.T) {
	var q approverbot.Question
	q.Request.RequestID = "r-gone"
	a, err := approverbot.Choose(q, approverbot.ChoiceAlways, "alice", "slack", "d", "")
	if err != nil || a.Scope != messages.ScopeAlways || a.RequestID != "r-gone" {
		t.Errorf("Choose on an unknown question = %+v, %v; want the answer, for Respond to refuse as unknown", a, err)
	}
}

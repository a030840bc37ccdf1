package approverbot_test

import (
	"encoding/json"
	"testing"

	"github.com/signoff-dev/signoff/internal/approverbot"
)

func TestSplitArgsShowsWhatThePolicyJudged(t *testing.T) {
	cases := []struct {
		name, raw     string
		command, rest string
	}{
		{"a shell command comes out as it is", `{"command":"echo \u003cb\u003e \u0026\u0026 ls\nrm x"}`, "echo <b> && ls\nrm x", ""},
		{"other arguments stay JSON, keys sorted", `{"path":"/etc/hosts","content":"127.0.0.1 x"}`, "", "{\n  \"content\": \"127.0.0.1 x\",\n  \"path\": \"/etc/hosts\"\n}"},
		{"a repeated key shows its last value, as the policy read it", `{"command":"ls","command":"rm -rf /"}`, "rm -rf /", ""},
		{"a command that is not a string stays in the JSON", `{"command":["rm","-rf"]}`, "", "{\n  \"command\": [\n    \"rm\",\n    \"-rf\"\n  ]\n}"},
		{"numbers keep their digits", `{"n":12345678901234567890}`, "", "{\n  \"n\": 12345678901234567890\n}"},
		{"no arguments show nothing", ``, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			command, rest := approverbot.SplitArgs(json.RawMessage(c.raw), 1000, nil)
			if command != c.command || rest != c.rest {
				t.Errorf("SplitArgs = %q, %q; want %q, %q", command, rest, c.command, c.rest)
			}
		})
	}
}

package hook

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/signoff-dev/signoff/pkg/messages"
)

func TestSummariseKeepsThePathAndDescribesTheContent(t *testing.T) {
	big := strings.Repeat("é", 3000) // 6000 bytes; the head is cut on a rune
	edits, _ := json.Marshal([]map[string]string{{"old_string": "a", "new_string": big}})
	tests := []struct {
		name, tool, args string
		summarised       []string // the arguments replaced
	}{
		{"a Write's content", "Write", `{"file_path":"/w/a.txt","content":` + quote(big) + `}`, []string{"content"}},
		{"both strings of an Edit", "Edit", `{"file_path":"/w/a.txt","old_string":` + quote(big) + `,"new_string":` + quote(big) + `}`, []string{"old_string", "new_string"}},
		{"a MultiEdit's edits", "MultiEdit", `{"file_path":"/w/a.txt","edits":` + string(edits) + `}`, []string{"edits"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, ok := summarise(tt.tool, json.RawMessage(tt.args), "why")
			if !ok {
				t.Fatal("not summarised")
			}
			var in, got map[string]json.RawMessage
			_ = json.Unmarshal([]byte(tt.args), &in)
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatal(err)
			}
			if string(got["file_path"]) != `"/w/a.txt"` {
				t.Fatalf("the path changed: %s", got["file_path"])
			}
			for _, name := range tt.summarised {
				var s string
				if err := json.Unmarshal(got[name], &s); err != nil {
					t.Fatalf("%s is not a text: %s", name, got[name])
				}
				var orig string
				if json.Unmarshal(in[name], &orig) != nil {
					orig = string(in[name])
				}
				want := fmt.Sprintf("[Signoff: %d bytes not sent (why); SHA-256 %x; the first ", len(orig), sha256.Sum256([]byte(orig)))
				if !strings.HasPrefix(s, want) || !utf8.ValidString(s) || len(s) > headBytes+300 {
					t.Fatalf("%s = %.200q…, want it to start %q", name, s, want)
				}
			}
		})
	}
	if _, ok := summarise("Bash", json.RawMessage(`{"command":`+quote(big)+`}`), "why"); ok {
		t.Error("a shell command was summarised: its text is what the policy judges")
	}
	if _, ok := summarise("Write", json.RawMessage(`{"file_path":"/w/a","content":"short"}`), "why"); ok {
		t.Error("a Write with nothing to shorten was summarised")
	}
}

func TestAnEditedApprovalOfASummarisedCallIsADeny(t *testing.T) {
	d := summarisedApproval(&messages.Decision{Tool: "Write", Outcome: messages.OutcomeAllow, UpdatedArguments: json.RawMessage(`{"content":"[Signoff: …"}`)})
	if d.Outcome != messages.OutcomeDeny || d.UpdatedArguments != nil || !strings.Contains(d.LLMMessage, "smaller calls") {
		t.Fatalf("decision %+v", d)
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }

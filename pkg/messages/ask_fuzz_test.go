package messages

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzParseAskUser: whatever an agent sends as an ask-user tool's
// arguments, the questions read from it are bounded, one-line and
// unambiguous, and an answer picking an option of each is one Check
// accepts.
func FuzzParseAskUser(f *testing.F) {
	f.Add([]byte(claudeAsk))
	f.Add([]byte(`{"question":"Deploy?","choices":["yes","no"]}`))
	f.Add([]byte(`{"questions":[{"question":"a\u2028b","options":["x",{"label":"x"},{"label":""}]}]}`))
	f.Add([]byte(`{"questions":[{"question":"\u202eevil","options":[{"label":"\u0000"}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a := ParseAskUser(json.RawMessage(data))
		if len(a.Questions) > MaxAskQuestions {
			t.Fatalf("%d questions", len(a.Questions))
		}
		seen := map[string]bool{}
		picked := map[string][]string{}
		for _, q := range a.Questions {
			if q.Question == "" || strings.ContainsAny(q.Question, "\n\r\t\u2028\u202e") || seen[q.Question] {
				t.Fatalf("question %q is empty, not one line, or repeated", q.Question)
			}
			seen[q.Question] = true
			if len(q.Options) > MaxAskOptions {
				t.Fatalf("%d options", len(q.Options))
			}
			labels := map[string]bool{}
			for _, o := range q.Options {
				if o.Label == "" || labels[o.Label] || strings.ContainsAny(o.Label, "\n\r\u202e") {
					t.Fatalf("option %q is empty, repeated or not one line", o.Label)
				}
				labels[o.Label] = true
			}
			if len(q.Options) > 0 {
				picked[q.Question] = []string{q.Options[0].Label}
			}
		}
		if len(picked) == 0 {
			return
		}
		raw, err := a.Answers(picked, nil)
		if err != nil {
			t.Fatalf("an answer picking the first options: %v", err)
		}
		if err := a.Check(raw); err != nil {
			t.Fatalf("Check refuses what Answers built (%s): %v", raw, err)
		}
	})
}

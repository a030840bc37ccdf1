package replay

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
)

// A record stored clipped (too large for a stream message) is judged on
// the arguments it kept; one that kept only their size and digest is
// skipped as clipped rather than judged on the {} left in their place.
func TestReplaySkipsAClippedRecord(t *testing.T) {
	cand, err := policy.Parse([]byte("mode: auto-edit\nrules:\n  - { rule: \"bash(*)\", action: deny }\n"), "cand.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rec := messages.AuditRecord{V: 1,
		Request:  messages.Request{V: 1, RequestID: "r1", SessionID: "s1", AgentID: "a", Tool: "bash", Arguments: json.RawMessage(`{"command":"ls"}`)},
		Decision: messages.Decision{V: 1, RequestID: "r1", SessionID: "s1", Outcome: messages.OutcomeAllow, ReasonCode: messages.ReasonPolicyAllow}}
	whole, err := rec.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	clipped := rec.Clip(len(whole), 0)
	data, err := clipped.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Records(context.Background(), cand, time.Time{}, func(yield func([]byte)) error {
		yield(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Skipped[skipClipped] != 1 || len(rep.Changes) != 0 {
		t.Errorf("report %+v: want the record skipped as clipped", rep)
	}
	// The same record whole, or clipped with its arguments kept, is
	// judged: the candidate denies it.
	kept := rec.Clip(len(whole), 1<<10)
	keptData, err := kept.AppendJSON(nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"whole": whole, "clipped with its arguments": keptData} {
		rep, err = Records(context.Background(), cand, time.Time{}, func(yield func([]byte)) error {
			yield(data)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Changes) != 1 {
			t.Errorf("%s: report %+v: want the record judged allow→deny", name, rep)
		}
	}
}

package engine

import (
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/messages"
)

func TestEveryReasonCodeHasTexts(t *testing.T) {
	f := facts{Tool: "bash", Detail: "why", By: messages.Decider{ID: "alice"}, Scope: messages.ScopeSession, Mode: messages.RejectHard, Feedback: "no", Approved: "r-1"}
	for _, code := range messages.ReasonCodes() {
		if decisionTexts[code] == nil {
			t.Errorf("%s has no row in decisionTexts", code)
			continue
		}
		dec := newDecision(code, f)
		want, _ := code.Outcome()
		if dec.Outcome != want || dec.ReasonCode != code || dec.Reason == "" {
			t.Errorf("newDecision(%s) = outcome %q, code %q, reason %q; want outcome %q and a reason", code, dec.Outcome, dec.ReasonCode, dec.Reason, want)
		}
		// DESIGN §3: a deny tells the agent what happened; an allow does not.
		if deny := want == messages.OutcomeDeny; deny != (dec.LLMMessage != "") {
			t.Errorf("newDecision(%s): llm_message %q on a %s", code, dec.LLMMessage, want)
		}
		if dec.LLMMessage != "" && !strings.Contains(dec.LLMMessage, "'bash'") {
			t.Errorf("newDecision(%s): llm_message %q does not name the tool", code, dec.LLMMessage)
		}
	}
	if len(decisionTexts) != len(messages.ReasonCodes()) {
		t.Errorf("decisionTexts has %d rows, pkg/messages knows %d codes", len(decisionTexts), len(messages.ReasonCodes()))
	}
}

func TestHardStopHasOneTextWhereverItIsDecided(t *testing.T) {
	// The requests pending at the reject and the later ones get the same
	// reason from the same stop signal.
	pending := newDecision(messages.ReasonHardStop, facts{Tool: "bash", Detail: "bob rejected bash (r-1)"})
	e := &Engine{}
	later := e.hardStopped(&messages.Request{Tool: "bash"}, "v1", "bob rejected bash (r-1)")
	if pending.Reason != later.Reason || pending.LLMMessage != later.LLMMessage || later.RejectMode != messages.RejectHard {
		t.Errorf("hard_stop texts differ: %q / %q", pending.Reason, later.Reason)
	}
}

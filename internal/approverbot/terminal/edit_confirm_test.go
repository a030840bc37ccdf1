package terminal_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot/terminal"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// TestTheChangedCallIsShownBeforeItIsSent (red team AL F2, F7): the line
// editor draws keys, and a drawing can differ from the line (a combining
// mark took a cell off the screen per Backspace while it took a rune off
// the line). So Enter shows the changed call as it will be sent, and only
// y sends it; Backspace takes a character with its combining marks, as
// the screen shows it. A y that came before the call could be read (typed
// or pasted with the line) is not taken; nor is the A that confirms
// Always when it came with the a.
func TestTheChangedCallIsShownBeforeItIsSent(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})

	t.Run("Backspace takes a character with its marks, and the call is shown before y", func(t *testing.T) {
		req := pending(t, p, p.Agent("sess-e1", "agent-1"), "default", "req-e1", "make deploy")
		tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{})
		tp.out.expect("› ")
		tp.typeKeys(t, "e")
		tp.out.expect("approve with changes")
		// "pre" + U+0301 + "vu", then three Backspaces: u, v, and é.
		tp.typeKeys(t, "\x15make deploy && git push -f # pre\u0301vu\x7f\x7f\x7f\r")
		shown := tp.out.expect("y approves this changed call once")
		if !strings.Contains(shown, `command: "make deploy && git push -f # pr"`) {
			t.Fatalf("the changed call shown is not the line typed:\n%s", shown)
		}
		if d, _ := req.Peek(); d != nil {
			t.Fatalf("Enter sent the changed call before y: %+v", d)
		}
		tp.typeKeys(t, "\x1b")
		tp.out.expect("nothing was sent")
		tp.typeKeys(t, "y")
		d := req.Wait(t)
		brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
		if len(d.UpdatedArguments) != 0 {
			t.Errorf("Esc then y approved the changed call: %s", d.UpdatedArguments)
		}
	})

	t.Run("a y typed with the line is not taken", func(t *testing.T) {
		req := pending(t, p, p.Agent("sess-e2", "agent-1"), "default", "req-e2", "make deploy")
		tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{KeyGuard: 700 * time.Millisecond})
		tp.out.expect("› ")
		time.Sleep(800 * time.Millisecond) // past the guard of the first question
		tp.typeKeys(t, "e")
		tp.out.expect("approve with changes")
		tp.typeKeys(t, "\x15make deploy-staging\ry")
		tp.out.expect("key 'y' ignored")
		if d, _ := req.Peek(); d != nil {
			t.Fatalf("a y pasted with the line sent the changed call: %+v", d)
		}
		time.Sleep(800 * time.Millisecond)
		tp.typeKeys(t, "y")
		d := req.Wait(t)
		var args map[string]any
		if err := json.Unmarshal(d.UpdatedArguments, &args); err != nil || args["command"] != "make deploy-staging" {
			t.Fatalf("decision %+v runs %s, want the changed command", d, d.UpdatedArguments)
		}
	})

	t.Run("an A typed with the a is not taken", func(t *testing.T) {
		req := pending(t, p, p.Agent("sess-e3", "agent-3"), "default", "req-e3", "make deploy")
		tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{KeyGuard: 700 * time.Millisecond})
		tp.out.expect("› ")
		tp.typeKeys(t, "aA")
		tp.out.expect("key 'A' ignored")
		if d, _ := req.Peek(); d != nil {
			t.Fatalf("aA granted Always at once: %+v", d)
		}
		time.Sleep(800 * time.Millisecond)
		tp.typeKeys(t, "A")
		if d := req.Wait(t); d.Scope != messages.ScopeAlwaysPrefix {
			t.Fatalf("decision %+v, want an Always grant", d)
		}
	})
}

package terminal_test

import (
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot/terminal"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// TestAPasteIsNotAnAnswer: red team AR R8 — a paste arrived as keys, and
// pasting "sudo systemctl restart nginx" into the approver's window
// answered with its first letter: Session. The bot asks the terminal to
// bracket pastes, and takes no answer from inside the brackets.
func TestAPasteIsNotAnAnswer(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	req := pending(t, p, p.Agent("sess-paste", "agent-a"), "default", "req-paste", "make release")
	tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{})
	tp.out.expect("› ")
	tp.out.mu.Lock()
	raw := tp.out.raw.String()
	tp.out.mu.Unlock()
	if !strings.Contains(raw, "\x1b[?2004h") {
		t.Fatalf("the bot did not ask the terminal to bracket pastes:\n%q", raw)
	}
	tp.typeKeys(t, "\x1b[200~sudo systemctl restart nginx\x1b[201~")
	tp.out.expect("it came in a paste")
	time.Sleep(100 * time.Millisecond)
	if d, _ := req.Peek(); d != nil {
		t.Fatalf("a paste decided the call: %+v", d)
	}
	// Nor does a paste confirm an Always opened by hand.
	tp.typeKeys(t, "a")
	tp.out.expect("grants Always")
	time.Sleep(700 * time.Millisecond) // past the key guard
	tp.typeKeys(t, "\x1b[200~A\x1b[201~")
	tp.out.expect("Always not granted; back to the keys")
	time.Sleep(100 * time.Millisecond)
	if d, _ := req.Peek(); d != nil {
		t.Fatalf("a pasted A granted Always: %+v", d)
	}
	tp.typeKeys(t, "y")
	brokertest.WantDecision(t, req.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
}

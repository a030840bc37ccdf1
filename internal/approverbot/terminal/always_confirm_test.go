package terminal_test

import (
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot/terminal"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// keyLine is the line the cursor sits on, as the operator sees it: the
// text after the last line break or carriage return (a redraw's "\r\x1b[K"
// replaces the line).
func (s *screen) keyLine() string {
	s.mu.Lock()
	raw := s.raw.String()
	s.mu.Unlock()
	if i := strings.LastIndexAny(raw, "\r\n"); i >= 0 {
		raw = raw[i+1:]
	}
	return ansi.ReplaceAllString(raw, "")
}

// TestTheCountdownRedrawsTheAlwaysConfirmation: red team AP F4 — the
// countdown put the plain key prompt over "[A] grants Always" within a
// second, while the next A still granted. Every redraw draws the line of
// the mode the keys are in.
func TestTheCountdownRedrawsTheAlwaysConfirmation(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	req := pending(t, p, p.Agent("sess-ap4", "agent-a"), "default", "req-ap4", "make release")
	tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{Tick: 10 * time.Millisecond})
	tp.out.expect("› ")
	tp.typeKeys(t, "a")
	tp.out.expect("grants Always")
	// Enough ticks for several redraws.
	time.Sleep(200 * time.Millisecond)
	if l := tp.out.keyLine(); !strings.Contains(l, "[A] (shift+a) grants Always") || !strings.Contains(l, " left › ") {
		t.Fatalf("the line the keys answer reads %q after the countdown, want the Always confirmation with the time left", l)
	}
	tp.typeKeys(t, "x")
	tp.out.expect("Always not granted; back to the keys")
	time.Sleep(100 * time.Millisecond)
	if l := tp.out.keyLine(); strings.Contains(l, "grants Always") || !strings.Contains(l, " left › ") {
		t.Fatalf("back at the keys, the line reads %q", l)
	}
	if d, _ := req.Peek(); d != nil {
		t.Fatalf("the call was decided: %+v", d)
	}
}

// TestCapsLockDoesNotMakeTwoPressesOfAAGrant: red team AP F4 — under Caps
// Lock every a comes as A, so "a, a" granted Always for 30 days. The key
// that confirms is the other case of the key that opened the preview, as
// received: one key pressed twice never grants.
func TestCapsLockDoesNotMakeTwoPressesOfAAGrant(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	req := pending(t, p, p.Agent("sess-caps", "agent-a"), "default", "req-caps", "make release")
	tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{})
	tp.out.expect("› ")
	tp.typeKeys(t, "A")
	// The echo is the key as received: Caps Lock shows.
	shown := tp.out.expect("grants Always")
	if !strings.HasPrefix(shown, "A\n") || !strings.Contains(shown, "[a] (lower-case a") || !strings.Contains(shown, "Caps Lock") {
		t.Fatalf("opened with A, the confirmation does not ask for a lower-case a:\n%s", shown)
	}
	tp.typeKeys(t, "A")
	tp.out.expect("Always not granted; back to the keys")
	tp.out.expect("› ")
	time.Sleep(100 * time.Millisecond)
	if d, _ := req.Peek(); d != nil {
		t.Fatalf("A, A (Caps Lock's a, a) decided the call: %+v", d)
	}
	tp.typeKeys(t, "A")
	tp.out.expect("grants Always")
	tp.typeKeys(t, "a")
	d := req.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if d.Scope != messages.ScopeAlways && d.Scope != messages.ScopeAlwaysPrefix {
		t.Fatalf("A then a: scope %s, want an Always grant", d.Scope)
	}
}

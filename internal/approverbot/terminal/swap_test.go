package terminal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot/terminal"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/client"
)

// TestAKeyIsNotTakenForAQuestionThatTookThePlaceOfTheOneRead: red team AP
// F11 — the agent withdrew the question being read (staging) and asked a
// look-alike at once (prod); a y pressed 1.2 s later, past the key guard,
// approved the new one, whose prompt read the same. The question that
// takes the place of one that left under the operator says so and what
// differs, and holds the keys back for SwapGuard.
func TestAKeyIsNotTakenForAQuestionThatTookThePlaceOfTheOneRead(t *testing.T) {
	p := brokertest.Start(t, brokertest.Options{})
	agent := p.Agent("sess-swap", "agent-1")
	device := p.Approver("default")
	ask := func(id, cwd string) <-chan error {
		done := make(chan error, 1)
		go func() {
			_, err := agent.Request(context.Background(), client.Call{RequestID: id, Tool: "bash", Cwd: cwd,
				Arguments: brokertest.Bash("make migrate-db")})
			done <- err
		}()
		device.NextAsk(id)
		return done
	}
	ask("req-swap-a", "/srv/staging/app")
	tp, _ := ttyBot(t, p, botConfig("bob", "default"), terminal.Options{KeyGuard: 600 * time.Millisecond})
	tp.out.expect("/srv/staging/app")
	tp.out.expect("› ")
	if _, err := agent.Cancel(context.Background(), "req-swap-a"); err != nil {
		t.Fatal(err)
	}
	second := ask("req-swap-b", "/srv/prod/app")
	note := tp.out.expect("took the place of the one you were reading")
	rest := tp.out.expect("› ")
	if !strings.Contains(note+rest, "directory /srv/staging/app → /srv/prod/app") {
		t.Errorf("the new question does not say what differs from the one that left:\n%s%s", note, rest)
	}
	// The red team's y, 1.2 s after the swap: past the 0.6 s key guard.
	time.Sleep(1200 * time.Millisecond)
	tp.typeKeys(t, "y")
	tp.out.expect("key 'y' ignored: it came as this question took the place of the one you were reading")
	select {
	case err := <-second:
		t.Fatalf("the look-alike was decided by a key meant for the question read: %v", err)
	case <-time.After(200 * time.Millisecond):
	}
	// Read, then answered: taken.
	time.Sleep(1500 * time.Millisecond)
	tp.typeKeys(t, "y")
	tp.out.expect("✓ bash make migrate-db approved (once)")
	select {
	case err := <-second:
		if err != nil {
			t.Fatalf("the second question: %v", err)
		}
	case <-time.After(waitFor):
		t.Fatal("the second question was not decided")
	}
}

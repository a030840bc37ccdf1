package channeltest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// Editor is a harness whose channel offers approve with changes.
type Editor interface {
	// Edit opens the editor on question id as Setup.As, puts text in it
	// in place of the call's command (the questions of the suite are bash
	// calls), approves the changed call and returns what the channel
	// told them.
	Edit(t *testing.T, id, text string) string
}

// NoEditor is a harness whose channel cannot edit a call.
type NoEditor interface {
	// TryEdit asks the channel to edit question id the way a user would
	// try (a command, a reply) and returns what the channel told them.
	TryEdit(t *testing.T, id string) string
}

// testEdits checks approve with changes: an edit the policy accepts
// settles the question with the edited call, one it denies is refused and
// leaves the question open (a plain answer still settles it), an edit that
// cannot be sent says why. A channel that cannot edit must say so.
func testEdits(t *testing.T, newHarness Factory) {
	w := start(t, newHarness, "alice")
	switch h := w.h.(type) {
	case Editor:
		testEditor(t, w, h)
	case NoEditor:
		_, q := w.ask(t, "git push origin main")
		id := q.Request.RequestID
		w.h.Shown(t, id)
		if reply := h.TryEdit(t, id); !strings.Contains(strings.ToLower(reply), "cannot") {
			t.Errorf("trying to edit, the user is not told the channel cannot: %q", reply)
		}
	default:
		t.Fatalf("the harness implements neither channeltest.Editor nor channeltest.NoEditor")
	}
}

func testEditor(t *testing.T, w *world, h Editor) {
	t.Run("an edit the policy accepts runs the edited call", func(t *testing.T) {
		pend, q := w.ask(t, "git push origin main")
		id := q.Request.RequestID
		w.h.Shown(t, id)
		reply := h.Edit(t, id, "git push origin staging")
		d := pend.Wait(t)
		if d.Outcome != messages.OutcomeAllow || d.DecidedBy.ID != "alice" || d.DecidedBy.Channel != w.ch.Name() {
			t.Fatalf("decision %+v", d)
		}
		var args map[string]any
		if err := json.Unmarshal(d.UpdatedArguments, &args); err != nil || args["command"] != "git push origin staging" {
			t.Fatalf("the decision runs %s, want the edited command", d.UpdatedArguments)
		}
		if reply == "" {
			t.Error("the channel told the approver nothing")
		}
		w.h.Settled(t, id)
	})
	t.Run("an edit the policy denies is refused and the question stays open", func(t *testing.T) {
		pend, q := w.ask(t, "git push origin main")
		id := q.Request.RequestID
		w.h.Shown(t, id)
		reply := h.Edit(t, id, "rm -rf /srv")
		if l := strings.ToLower(reply); (!strings.Contains(l, "not applied") && !strings.Contains(l, `"applied":false`)) || !strings.Contains(l, "denied by the policy") {
			t.Errorf("the approver is not told the policy denies the edit: %q", reply)
		}
		if d, _ := pend.Peek(); d != nil {
			t.Fatalf("a refused edit decided the call: %+v", d)
		}
		w.h.Shown(t, id)
		w.h.Choose(t, id, "approve", "")
		if d := pend.Wait(t); d.Outcome != messages.OutcomeAllow || len(d.UpdatedArguments) != 0 {
			t.Fatalf("the plain approval after a refused edit: %+v", d)
		}
	})
	t.Run("a command holding a character the card escapes is not sent", func(t *testing.T) {
		// Red team AP F3: an overlay strikes the text through in an
		// editor, which shows it raw; the card escapes it, and so the
		// editors' gate refuses it, whichever channel it was typed on.
		pend, q := w.ask(t, "git push origin main")
		id := q.Request.RequestID
		w.h.Shown(t, id)
		reply := h.Edit(t, id, "git push origin ma\u0336in")
		if l := strings.ToLower(reply); (!strings.Contains(l, "not sent") && !strings.Contains(l, "invalid_request")) || !strings.Contains(l, "u+0336") {
			t.Errorf("a command with an overlay: %q", reply)
		}
		if d, _ := pend.Peek(); d != nil {
			t.Fatalf("an edit with an overlay decided the call: %+v", d)
		}
		if rep := w.device.Reject(q, "bob", messages.RejectSoft, ""); !rep.Applied {
			t.Fatalf("bob's rejection: %+v", rep)
		}
		pend.Wait(t)
	})
	t.Run("an empty command is not sent", func(t *testing.T) {
		pend, q := w.ask(t, "git push origin main")
		id := q.Request.RequestID
		w.h.Shown(t, id)
		reply := h.Edit(t, id, "")
		if l := strings.ToLower(reply); (!strings.Contains(l, "not sent") && !strings.Contains(l, "invalid_request")) || !strings.Contains(l, "empty") {
			t.Errorf("an empty command: %q", reply)
		}
		if d, _ := pend.Peek(); d != nil {
			t.Fatalf("an empty edit decided the call: %+v", d)
		}
		if rep := w.device.Reject(q, "bob", messages.RejectSoft, ""); !rep.Applied {
			t.Fatalf("bob's rejection: %+v", rep)
		}
		pend.Wait(t)
	})
}

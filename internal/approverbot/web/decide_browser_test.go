package web

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// TestBrowserAnOpenEditTurnsTheCardsApprovalsOff (red team AP F10): with
// Edit… open and the command changed, the card's own Approve, a few rows
// above Approve with changes, approved the unedited call and dropped the
// edit without a word. While the editor is open, Approve, Session and
// Always are off; Approve with changes sends the edit; Cancel brings them
// back.
func TestBrowserAnOpenEditTurnsTheCardsApprovalsOff(t *testing.T) {
	r := startRig(t, 1, "[default]", Options{ResolvedLinger: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	browser := startBrowser(t, 1000, 2000)
	alice := newBrowserPage(t, browser, "alice")
	alice.login(r.srv.URL, "alice", alicePassword)

	req := brokertest.Ask(ctx, r.plane.Agent("sess-ed", "pod-ed/claude"), "req-ed", "bash", brokertest.Bash("make deploy"))
	alice.cardShown("req-ed")
	off := `[...document.querySelectorAll('#q-req-ed button[data-action]')].filter((b) => b.disabled).map((b) => b.dataset.action).join(',')`
	if got := alice.eval(off); got != "" {
		t.Fatalf("buttons off before any edit: %q", got)
	}
	alice.do("open the editor", chromedp.Click(chromedp.CSS(`#q-req-ed [data-edit-open]`)))
	alice.do("change the command", chromedp.Evaluate[chromedp.Void](`(() => {
		const ta = document.querySelector('#q-req-ed .edit-text');
		ta.value = 'make deploy ENV=staging';
		ta.dispatchEvent(new Event('input', { bubbles: true }));
	})()`))
	if got := alice.eval(off); got != "approve,session,always" {
		t.Fatalf("with the editor open the buttons off are %q, want approve,session,always", got)
	}
	// A click on the card's Approve (a disabled button takes none) and a
	// script's click send nothing.
	alice.do("click Approve", chromedp.Evaluate[chromedp.Void](`document.querySelector('#q-req-ed button[data-action="approve"]').click()`))
	time.Sleep(500 * time.Millisecond)
	if d, _ := req.Peek(); d != nil {
		t.Fatalf("the card's Approve decided the call while an edit was open: %+v", d)
	}
	// Cancel brings them back, and Approve approves the call as it was.
	alice.do("cancel the edit", chromedp.Click(chromedp.CSS(`#q-req-ed [data-edit-cancel]`)))
	if got := alice.eval(off); got != "" {
		t.Fatalf("after Cancel the buttons off are %q, want none", got)
	}
	alice.clickSent("req-ed", actionApprove)
	d := req.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if d.UpdatedArguments != nil {
		t.Errorf("a plain approval carried changes: %s", d.UpdatedArguments)
	}

	// Approve with changes, with the editor open, sends the edit.
	edited := brokertest.Ask(ctx, r.plane.Agent("sess-ed2", "pod-ed/claude"), "req-ed2", "bash", brokertest.Bash("make deploy"))
	alice.cardShown("req-ed2")
	alice.do("open the editor", chromedp.Click(chromedp.CSS(`#q-req-ed2 [data-edit-open]`)))
	alice.do("change the command", chromedp.Evaluate[chromedp.Void](`(() => {
		const ta = document.querySelector('#q-req-ed2 .edit-text');
		ta.value = 'make deploy ENV=staging';
		ta.dispatchEvent(new Event('input', { bubbles: true }));
	})()`))
	alice.do("approve with changes", chromedp.Click(chromedp.CSS(`#q-req-ed2 [data-edit-send]`)))
	if d := edited.Wait(t); !strings.Contains(string(d.UpdatedArguments), `"make deploy ENV=staging"`) {
		t.Errorf("approve with changes sent %s", d.UpdatedArguments)
	}
	alice.noProblems()
}

// TestBrowserAMovedOptionIsNotPicked (red team AP F5): on an ask-user card
// the pick is the decision and Send answer only sends it, but the move
// guard held buttons only: a click aimed at one option of a moving card
// landed on another. An option that moved within the guard, or slid under
// a resting pointer, is not picked; pointed at once it stays put, it is.
func TestBrowserAMovedOptionIsNotPicked(t *testing.T) {
	const guard = 3 * time.Second
	r := startRigOn(t, brokertest.Options{Policy: answerPolicy}, "[default]", Options{ResolvedLinger: 200 * time.Millisecond, MoveGuard: guard})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	browser := startBrowser(t, 1000, 2000)
	alice := newBrowserPage(t, browser, "alice")
	alice.login(r.srv.URL, "alice", alicePassword)

	agent := r.plane.Agent("sess-opt", "pod-opt")
	above := brokertest.Ask(ctx, agent, "req-above", "ask_human", map[string]any{"prompt": "Anything to add?"})
	alice.cardShown("req-above")
	brokertest.Ask(ctx, agent, "req-opt", "AskUserQuestion", map[string]any{"questions": []any{
		map[string]any{"question": "Which environment?", "multiSelect": false,
			"options": []any{map[string]any{"label": "staging"}, map[string]any{"label": "production"}}},
	}})
	alice.cardShown("req-opt")
	time.Sleep(guard + 300*time.Millisecond) // both cards have stayed put

	// The card above is settled elsewhere and leaves: the options move up.
	carol, carolCSRF := r.login(t, "carol", "carol-password")
	if status, _, raw := r.respond(t, carol, carolCSRF, "req-above", actionRejectSoft, ""); status != 200 {
		t.Fatalf("carol's rejection: %s", raw)
	}
	brokertest.WantDecision(t, above.Wait(t), messages.OutcomeDeny, messages.ReasonRejected)
	alice.cardGone("req-above", 5*time.Second)
	const staging = `#q-req-opt input[name="ask-req-opt-0"][value="0"]`
	alice.do("click staging", chromedp.Click(chromedp.CSS(staging)))
	if got := alice.poll("the moved card says the pick was not taken",
		`document.querySelector('#q-req-opt .reply.moved')?.textContent ?? ''`, 2*time.Second); !strings.Contains(got, "Not picked") {
		t.Fatalf("reply %q", got)
	}
	if alice.eval(`document.querySelector('`+staging+`').checked ? 'checked' : ''`) != "" {
		t.Fatal("an option of a moving card was picked")
	}
	// Once it has stayed put and is pointed at, the pick is taken.
	time.Sleep(guard + 300*time.Millisecond)
	alice.aim(staging)
	alice.do("click staging again", chromedp.Click(chromedp.CSS(staging)))
	alice.poll("the pick is taken", `document.querySelector('`+staging+`').checked ? 'checked' : ''`, 2*time.Second)
	alice.noProblems()
}

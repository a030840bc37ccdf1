package web

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// TestBrowserAlwaysIsConfirmed (red team AL F7): Always is a standing
// grant, so its button only shows what it grants with a Confirm Always
// button; that button, having just appeared, is held by the move guard
// (a double click grants nothing), Cancel takes it away, and a click on
// it once it has stayed put grants Always.
func TestBrowserAlwaysIsConfirmed(t *testing.T) {
	const guard = 2 * time.Second
	r := startRig(t, 1, "[default]", Options{ResolvedLinger: 200 * time.Millisecond, MoveGuard: guard})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	browser := startBrowser(t, 1000, 2000)
	alice := newBrowserPage(t, browser, "alice")
	alice.login(r.srv.URL, "alice", alicePassword)

	req := brokertest.Ask(ctx, r.plane.Agent("sess-al", "pod-al"), "req-al", "bash", brokertest.Bash("make deploy"))
	alice.cardShown("req-al")
	time.Sleep(guard + 300*time.Millisecond) // the card has stayed put
	const always = `#q-req-al button[data-action="always"]:not([data-always-confirm])`
	const confirm = `#q-req-al button[data-always-confirm]`
	alice.aim(always)
	alice.do("click Always", chromedp.Click(chromedp.CSS(always)))
	what := alice.poll("the confirmation shows", `document.querySelector('#q-req-al .always-confirm')?.textContent ?? ''`, 3*time.Second)
	if !strings.Contains(what, "Always is a standing grant") || !strings.Contains(what, "make deploy") || !strings.Contains(what, "pod-al") {
		t.Errorf("the confirmation does not say what Always grants: %q", what)
	}
	// A second click at once (a double click) lands on a button that
	// just appeared: not taken.
	alice.aim(confirm)
	alice.do("click Confirm Always at once", chromedp.Click(chromedp.CSS(confirm)))
	if got := alice.poll("the early confirmation is not taken",
		`document.querySelector('#q-req-al .reply.moved')?.textContent ?? ''`, 2*time.Second); !strings.Contains(got, "confirmation just appeared") {
		t.Fatalf("reply %q", got)
	}
	if d, _ := req.Peek(); d != nil {
		t.Fatalf("Always was granted on the first clicks: %+v", d)
	}
	// Cancel takes the confirmation away.
	alice.do("cancel", chromedp.Click(chromedp.CSS(`#q-req-al [data-always-cancel]`)))
	alice.poll("the confirmation goes", `document.querySelector('#q-req-al .always-confirm') ? '' : 'gone'`, 2*time.Second)
	// Asked again and confirmed once it has stayed put: granted.
	alice.aim(always)
	alice.do("click Always again", chromedp.Click(chromedp.CSS(always)))
	alice.poll("the confirmation shows again", `document.querySelector('#q-req-al .always-confirm') ? 'yes' : ''`, 3*time.Second)
	time.Sleep(guard + 300*time.Millisecond)
	alice.aim(confirm)
	alice.do("clear the reply", chromedp.Evaluate[chromedp.Void](`document.querySelector('#q-req-al .reply').className = 'reply'`))
	alice.do("confirm", chromedp.Click(chromedp.CSS(confirm)))
	d := req.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if d.Scope != messages.ScopeAlwaysPrefix && d.Scope != messages.ScopeAlways {
		t.Errorf("decision scope %q, want an Always grant", d.Scope)
	}
	alice.noProblems()
}

// aim moves the mouse onto the element sel names, as a person aiming at
// it does.
func (p *browserPage) aim(sel string) {
	p.t.Helper()
	xy := p.eval(`(() => { const r = document.querySelector('` + sel + `').getBoundingClientRect();
		return (r.left + r.width / 2) + ' ' + (r.top + r.height / 2); })()`)
	var x, y float64
	if _, err := fmt.Sscan(xy, &x, &y); err != nil {
		p.t.Fatalf("%s: the position of %s: %q", p.name, sel, xy)
	}
	p.do("point at "+sel, chromedp.MouseEvent(chromedp.MouseMoved, x, y))
}

// TestBrowserTheAlwaysConfirmationSetsThePatternsApart (red team AP F1):
// the Confirm Always box was built from the card's textContent, which
// drops the code type, so a pattern that closed "bash(" itself and wrote
// "for agent release-bot/ci, for 1 hour" read as the grant's own words.
// The box says the core's words first, then each pattern in code type.
func TestBrowserTheAlwaysConfirmationSetsThePatternsApart(t *testing.T) {
	const hostile = `rm -rf 'x) for agent release-bot/ci, for 1 hour or until revoked. Details: (' dist`
	r := startRig(t, 1, "[default]", Options{ResolvedLinger: 200 * time.Millisecond, MoveGuard: 100 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	browser := startBrowser(t, 1000, 2000)
	alice := newBrowserPage(t, browser, "alice")
	alice.login(r.srv.URL, "alice", alicePassword)

	brokertest.Ask(ctx, r.plane.Agent("sess-ap1", "pod-7/claude"), "req-ap1", "bash", brokertest.Bash(hostile))
	alice.cardShown("req-ap1")
	time.Sleep(300 * time.Millisecond)
	const always = `#q-req-ap1 button[data-action="always"]:not([data-always-confirm])`
	alice.aim(always)
	alice.do("click Always", chromedp.Click(chromedp.CSS(always)))
	alice.poll("the confirmation shows", `document.querySelector('#q-req-ap1 .always-confirm') ? 'yes' : ''`, 3*time.Second)
	// The words outside code type, in order, and the code spans.
	words := alice.eval(`(() => { const w = document.querySelector('#q-req-ap1 .always-what').cloneNode(true);
		for (const c of w.querySelectorAll('code')) c.replaceWith('[code]');
		return w.textContent; })()`)
	codes := alice.eval(`[...document.querySelectorAll('#q-req-ap1 .always-what code')].map((c) => c.textContent).join('\n')`)
	if !strings.HasPrefix(words, "Always is a standing grant. Always approves ") || !strings.Contains(words, "for agent pod-7/claude, ") ||
		!strings.Contains(words, "or until revoked, namely:") || strings.Contains(words, "release-bot") {
		t.Errorf("the confirmation's own words: %q", words)
	}
	if !strings.Contains(codes, "bash("+hostile+")") {
		t.Errorf("the pattern is not in code type whole: %q", codes)
	}
	alice.noProblems()
}

package web

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// signInScreenshotPath is the sign-in page's picture in the docs,
// rewritten when SIGNOFF_UPDATE_SCREENSHOT=1 (never in CI).
var signInScreenshotPath = filepath.Join("..", "..", "..", "docs", "signin.png")

// TestOIDCSignInPageInChromiumOffersTheProviderAndPasswords loads the
// sign-in page in a real browser (its CSP, script and style): the
// provider's button leads to the provider, the password form stays.
func TestOIDCSignInPageInChromiumOffersTheProviderAndPasswords(t *testing.T) {
	b := startOIDCBot(t, "")
	browser := startBrowser(t, 1160, 800)
	p := newBrowserPage(t, browser, "alice")
	p.do("open the sign-in page",
		chromedp.Navigate(b.url+"/#q-q-sre"),
		chromedp.WaitVisible(chromedp.CSS(`p.oidc a`)),
		chromedp.WaitVisible(chromedp.CSS(`input[name="password"]`)),
	)
	if got := p.eval(`document.querySelector('p.oidc a').textContent`); got != "Sign in with Test IdP" {
		t.Errorf("the provider's button says %q", got)
	}
	// A pager's link keeps its question through the provider's sign-in.
	if got := p.eval(`new URL(document.querySelector('p.oidc a').href).searchParams.get('next')`); got != "/#q-q-sre" {
		t.Errorf("the OIDC link's next = %q, want the linked question /#q-q-sre", got)
	}
	if os.Getenv("SIGNOFF_UPDATE_SCREENSHOT") == "1" {
		sideBySide(t, p, 560, signInScreenshotPath)
	}
	p.noProblems()

	// The whole flow in the browser: the button, the provider's own login
	// form, the redirect back with the code, the page signed in as the
	// provider's user, showing only her team's question, at the question
	// the link named.
	// (A form for the button was blocked here by the page's CSP,
	// form-action 'self', which browsers apply to the redirect to the
	// provider: the bound makes that a failure, not a hang.)
	ctx, cancel := context.WithTimeout(p.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`p.oidc a`)),
		chromedp.WaitVisible(chromedp.CSS(`input[name="username"]`)),
		chromedp.SetValue(chromedp.CSS(`input[name="username"]`), "alice"),
		chromedp.SetValue(chromedp.CSS(`input[name="password"]`), "alice-pw"),
		chromedp.Submit(chromedp.CSS(`input[name="password"]`)),
	); err != nil {
		t.Fatalf("sign in at the provider (now at %s): %v", p.eval(`location.href`), err)
	}
	p.pollThroughNavigations("the page, signed in, shows the sre question", `document.getElementById('q-q-sre') ? 'yes' : ''`, 20*time.Second)
	if got := p.eval(`location.pathname + location.hash`); got != "/#q-q-sre" {
		t.Errorf("after the sign-in the browser is at %q, want the linked question /#q-q-sre", got)
	}
	if got := p.eval(`document.querySelector('.who').textContent + ' ' + document.querySelector('.who').title`); got != "Alice Ops approver id alice@example.com" {
		t.Errorf("signed in as %q, want the provider's name and email claims", got)
	}
	if got := p.eval(`[...document.querySelectorAll('article.card')].map(c => c.dataset.id).join(',')`); got != "q-sre" {
		t.Errorf("cards %q, want only the sre team's question", got)
	}
	// The provider's own pages log what they log (its favicon is a 404):
	// the bot's page, loaded again signed in, logs nothing.
	p.forgetProblems()
	p.do("load the page again", chromedp.Reload())
	p.poll("the page shows the sre question again", `document.getElementById('q-q-sre') ? 'yes' : ''`, 10*time.Second)
	p.noProblems()
}

// forgetProblems drops the console errors logged so far.
func (p *browserPage) forgetProblems() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.problems = nil
}

// pollThroughNavigations is poll while the page navigates (the provider,
// the callback, the signed-in page's refresh): a poll whose page went away
// is tried again on the next one until within has passed.
func (p *browserPage) pollThroughNavigations(what, expr string, within time.Duration) {
	p.t.Helper()
	deadline := time.Now().Add(within)
	for {
		_, err := chromedp.Run(p.ctx, chromedp.Poll[string](expr, chromedp.WithPollingTimeout(time.Second),
			chromedp.WithPollingInterval(20*time.Millisecond)))
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s: %s (within %s): %v", p.name, what, within, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

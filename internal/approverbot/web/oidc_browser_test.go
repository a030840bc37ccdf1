package web

import (
	"os"
	"path/filepath"
	"testing"

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
		chromedp.WaitVisible(chromedp.CSS(`form[action="/login/oidc"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`input[name="password"]`)),
	)
	if got := p.eval(`document.querySelector('form[action="/login/oidc"] button').textContent`); got != "Sign in with Test IdP" {
		t.Errorf("the provider's button says %q", got)
	}
	// A pager's link keeps its question through the provider's sign-in.
	if got := p.eval(`document.querySelector('form[action="/login/oidc"] input[name="next"]').value`); got != "/#q-q-sre" {
		t.Errorf("the OIDC form's next = %q, want the linked question /#q-q-sre", got)
	}
	if os.Getenv("SIGNOFF_UPDATE_SCREENSHOT") == "1" {
		sideBySide(t, p, 560, signInScreenshotPath)
	}
	if len(p.problems) > 0 {
		t.Errorf("console errors: %v", p.problems)
	}
}

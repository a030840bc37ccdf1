package web

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/signoff-dev/signoff/internal/approverbot"
)

func TestSafeNextLeadsOnlyToThePage(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
		ok   bool
	}{
		{"none is the page", "", "/", true},
		{"the page", "/", "/", true},
		{"a question's card", "/#q-req-1", "/#q-req-1", true},
		{"an escaped request id stays escaped", "/#q-req%2F1", "/#q-req%2F1", true},
		{"a fragment with a slash and dots is not a path", "/#q-a/../b", "/#q-a/../b", true},
		{"an empty fragment", "/#", "/", true},
		{"an absolute URL", "https://evil.example/", "/", false},
		{"an absolute URL with the fragment", "https://evil.example/#q-req-1", "/", false},
		{"a scheme-relative URL", "//evil.example/", "/", false},
		{"a scheme-relative URL with a backslash", "/\\evil.example", "/", false},
		{"backslashes", "\\\\evil.example", "/", false},
		{"a javascript URL", "javascript:alert(1)", "/", false},
		{"a relative path", "evil.example", "/", false},
		{"another path", "/api/questions", "/", false},
		{"a path that cleans to the page", "/./", "/", false},
		{"an escaped slash", "/%2F%2Fevil.example", "/", false},
		{"a query", "/?next=https://evil.example", "/", false},
		{"an empty query", "/?", "/", false},
		{"a tab in the host's place", "/\t/evil.example", "/", false},
		{"a newline (header splitting)", "/\r\nSet-Cookie: x=1", "/", false},
		{"a space", "/ #q-1", "/", false},
		{"too long", "/#q-" + strings.Repeat("a", maxNext), "/", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := safeNext(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Fatalf("safeNext(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestSignInLeadsToTheQuestionAndNowhereElse(t *testing.T) {
	s := startServer(t, testConfig(t, "", "{insecure_cookies: true}"), Options{}, nil)
	form := func(next string) string {
		return "approver=alice&password=" + url.QueryEscape(alicePassword) + "&next=" + url.QueryEscape(next)
	}
	tests := []struct {
		name, next, want string
	}{
		{"a question's card", "/#q-req-7", "/#q-req-7"},
		{"no next", "", "/"},
		{"an off-site URL leads to the page", "https://evil.example/#q-req-7", "/"},
		{"a scheme-relative URL leads to the page", "//evil.example", "/"},
		{"another path leads to the page", "/logout", "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := s.client(t)
			res := s.do(t, c, "POST", "/login", form(tt.next), "Content-Type", "application/x-www-form-urlencoded")
			if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != tt.want {
				t.Fatalf("got %s to %q, want 303 to %q", res.Status, res.Header.Get("Location"), tt.want)
			}
			// Signed in either way: a refused next costs the approver nothing.
			if got := s.do(t, c, "GET", "/api/session", ""); got.StatusCode != http.StatusOK {
				t.Fatalf("GET /api/session after the sign-in: %s", got.Status)
			}
			// Signed in, /login?next= leads on the same way.
			again := s.do(t, c, "GET", "/login?next="+url.QueryEscape(tt.next), "")
			if again.StatusCode != http.StatusSeeOther || again.Header.Get("Location") != tt.want {
				t.Fatalf("GET /login?next= signed in: %s to %q, want 303 to %q", again.Status, again.Header.Get("Location"), tt.want)
			}
		})
	}

	// A wrong password keeps next in the form for the second try; an
	// off-site one is not written into the form.
	bad := s.do(t, s.client(t), "POST", "/login", "approver=alice&password=wrong&next="+url.QueryEscape("/#q-req-7"),
		"Content-Type", "application/x-www-form-urlencoded")
	if body := readBody(t, bad); bad.StatusCode != http.StatusUnauthorized || !strings.Contains(body, `name="next" value="/#q-req-7"`) {
		t.Fatalf("a failed sign-in (%s) lost next: %s", bad.Status, body)
	}
	page := s.do(t, s.client(t), "GET", "/login?next="+url.QueryEscape("https://evil.example/"), "")
	if body := readBody(t, page); !strings.Contains(body, `name="next" value="/"`) || strings.Contains(body, "evil.example") {
		t.Fatalf("the sign-in form carries an off-site next: %s", body)
	}
}

// A pager's link, <web-url>/#q-<id>, opened signed out: the sign-in leads
// to the question's card, scrolled into view and highlighted; a link to a
// question that is not open says so, and highlights the card once it
// arrives; an off-site next, in the address or forged into the form, leads
// to the page and nowhere else.
func TestBrowserAPagersLinkOpensTheQuestionAfterTheSignIn(t *testing.T) {
	var qs []approverbot.Question
	for i := range 12 {
		qs = append(qs, question(fmt.Sprintf("req-filler-%02d", i), fmt.Sprintf("make step-%d", i)))
	}
	qs = append(qs, question("req-target", "kubectl rollout restart deploy/api"))
	s := startServer(t, testConfig(t, "", "{insecure_cookies: true}"), Options{}, newFakeResponder(qs...))
	browser := startBrowser(t, 1000, 700)
	signIn := func(p *browserPage) {
		p.t.Helper()
		p.do("sign in",
			chromedp.WaitVisible(chromedp.CSS(`input[name="approver"]`)),
			chromedp.SetValue(chromedp.CSS(`input[name="approver"]`), "alice"),
			chromedp.SetValue(chromedp.CSS(`input[name="password"]`), alicePassword),
			chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.CSS(`#conn.live`)),
		)
	}

	alice := newBrowserPage(t, browser, "alice")
	alice.do("open the pager's link", chromedp.Navigate(s.srv.URL+"/#q-req-target"))
	alice.poll("the sign-in form carries the question", `document.querySelector('input[name="next"]')?.value === '/#q-req-target' ? 'yes' : ''`, 5*time.Second)
	if got := alice.eval(`location.pathname + location.hash`); got != "/login#q-req-target" {
		t.Fatalf("signed out, the link led to %q, want the sign-in with the fragment", got)
	}
	signIn(alice)
	if got := alice.eval(`location.pathname + location.hash`); got != "/#q-req-target" {
		t.Fatalf("after the sign-in the page is at %q, want /#q-req-target", got)
	}
	alice.poll("the card is highlighted", `document.querySelector('#q-req-target.deeplinked') ? 'yes' : ''`, 5*time.Second)
	view := alice.poll("the card is scrolled into view", `(() => {
		const r = document.getElementById('q-req-target').getBoundingClientRect();
		return r.top >= 0 && r.top < innerHeight && scrollY > 0 ? 'in view' : '';
	})()`, 5*time.Second)
	if view != "in view" {
		t.Fatal(view)
	}
	if got := alice.eval(`String(document.querySelectorAll('.card.deeplinked').length) + String(document.querySelectorAll('.deeplink-missing').length)`); got != "10" {
		t.Fatalf("%s highlighted cards and notices, want one card and no notice", got)
	}

	// A question that is not open (answered meanwhile, or never asked).
	alice.do("open a link to a settled question", chromedp.Navigate(s.srv.URL+"/#q-req-late"), chromedp.WaitVisible(chromedp.CSS(`#conn.live`)))
	got := alice.poll("the page says the question is not open",
		`document.querySelector('.deeplink-missing')?.textContent ?? ''`, 5*time.Second)
	if !strings.Contains(got, "req-late is not open") {
		t.Fatalf("the notice says %q", got)
	}
	if n := alice.eval(`String(document.querySelectorAll('.card.deeplinked').length)`); n != "0" {
		t.Fatalf("%s cards highlighted for a question that is not open", n)
	}
	// It arrives after all (the bot was still catching up): highlighted,
	// the notice gone.
	late := question("req-late", "make release")
	s.resp.add(late)
	if err := s.ch.Ask(context.Background(), late); err != nil {
		t.Fatal(err)
	}
	alice.poll("the late card is highlighted", `document.querySelector('#q-req-late.deeplinked') && !document.querySelector('.deeplink-missing') ? 'yes' : ''`, 5*time.Second)

	// A hostile fragment is text, not markup.
	alice.do("open a hostile link", chromedp.Navigate(s.srv.URL+"/#q-%3Cimg%20src%3Dx%20onerror%3Dwindow.pwned%3D1%3E"))
	alice.poll("the notice shows the id as text", `document.querySelector('.deeplink-missing')?.textContent.includes('<img') ? 'yes' : ''`, 5*time.Second)
	if got := alice.eval(`String(document.querySelectorAll('main img').length) + typeof window.pwned`); got != "0undefined" {
		t.Fatalf("the fragment became markup (%s)", got)
	}
	alice.noProblems()

	// An off-site next in the sign-in's address is not taken into the form.
	bob := newBrowserPage(t, browser, "bob")
	bob.do("open a sign-in link with an off-site next", chromedp.Navigate(s.srv.URL+"/login?next="+url.QueryEscape("https://evil.example/#q-req-target")))
	signIn(bob)
	if got := bob.eval(`location.origin + location.pathname + location.hash`); got != s.srv.URL+"/" {
		t.Fatalf("the sign-in led to %q, want %s/", got, s.srv.URL)
	}
	// A form forged with an off-site next: the server refuses it.
	for _, forged := range []string{"https://evil.example/", "//evil.example/", "/\\evil.example/"} {
		carol := newBrowserPage(t, browser, "carol")
		carol.do("open the sign-in", chromedp.Navigate(s.srv.URL+"/login"), chromedp.WaitVisible(chromedp.CSS(`input[name="approver"]`)))
		carol.eval(`document.querySelector('input[name="next"]').value = ` + strconv.Quote(forged) + `, 'set'`)
		signIn(carol)
		if got := carol.eval(`location.origin + location.pathname + location.hash`); got != s.srv.URL+"/" {
			t.Fatalf("a forged next %q led to %q, want %s/", forged, got, s.srv.URL)
		}
	}
}

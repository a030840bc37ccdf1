package web

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// tallQuestion is a shell call whose dangerous line comes first and a
// long, dull here-document after it: its card is taller than a window.
func tallQuestion(id string) approverbot.Question {
	cmd := "cd ~ && rm -rf .ssh .gnupg\ncat > .github/workflows/ci.yml <<'EOF'\nname: ci\n"
	for i := range 240 {
		cmd += fmt.Sprintf("- name: step-%d\n  run: make check-%d\n", i, i)
	}
	cmd += "EOF\necho 'workflow updated'"
	q := question(id, cmd)
	q.Risk.Subcommands = []messages.Verdict{
		{Command: "cd ~", Action: "allow"}, {Command: "rm -rf .ssh .gnupg", Action: "ask"},
		{Command: "cat", Action: "allow"}, {Command: "echo 'workflow updated'", Action: "allow"},
	}
	return q
}

// TestBrowserATallCardIsOpenedAtItsHeadAndSaysItsVerdictByItsButtons
// (red team AG F12, F10): the deep link and a notification's click open a
// card at its head, not its middle; a card taller than the window says
// its verdict again right above its buttons, a card that fits does not.
func TestBrowserATallCardIsOpenedAtItsHeadAndSaysItsVerdictByItsButtons(t *testing.T) {
	var qs []approverbot.Question
	for i := range 6 {
		qs = append(qs, question(fmt.Sprintf("req-short-%d", i), fmt.Sprintf("make step-%d", i)))
	}
	qs = append(qs, tallQuestion("req-tall"))
	s := startServer(t, testConfig(t, "", "{insecure_cookies: true}"), Options{}, newFakeResponder(qs...))
	browser := startBrowser(t, 1000, 1000)
	alice := newBrowserPage(t, browser, "alice")
	alice.login(s.srv.URL, "alice", alicePassword)
	alice.cardShown("req-tall")

	head := `(() => {
		const r = document.getElementById('q-req-tall').getBoundingClientRect();
		return r.top >= 0 && r.top < 120 && scrollY > 0 ? 'head' : 'top ' + Math.round(r.top);
	})()`
	alice.eval(`location.hash = '#q-req-tall', 'ok'`)
	if got := alice.poll("the deep link scrolls to the card's head", head, 5*time.Second); got != "head" {
		t.Fatalf("the deep link left the card's %s", got)
	}
	recap := `(() => {
		const r = document.querySelector('#q-req-tall .recap');
		if (!r || r.hidden) return 'none';
		const next = r.nextElementSibling;
		return (next && next.classList.contains('buttons') ? 'above the buttons: ' : 'elsewhere: ') + r.textContent.replace(/\s+/g, ' ');
	})()`
	if got := alice.eval(recap); !strings.HasPrefix(got, "above the buttons: ") || !strings.Contains(got, "rm -rf .ssh .gnupg") ||
		strings.Contains(got, "workflow updated") {
		t.Errorf("the tall card's recap: %s", got)
	}
	if got := alice.eval(`(() => { const r = document.querySelector('#q-req-short-0 .recap'); return r && !r.hidden ? 'shown' : 'none'; })()`); got != "none" {
		t.Errorf("a card that fits the window repeats its verdict (%s): %s", got, alice.eval(`(() => { const c = document.getElementById('q-req-short-0'); return c.offsetHeight + ' ' + innerHeight + ' ' + c.querySelector('.recap').offsetHeight + ' ' + c.querySelector('.recap').hidden; })()`))
	}

	// A notification about the tall question, clicked while the page
	// is elsewhere, opens its deep link.
	alice.eval(pageFakes)
	alice.eval(`window.__instances = []; const N = window.Notification; window.Notification = class extends N { constructor(t, o) { super(t, o); window.__instances.push(this); } }; window.Notification.permission = 'granted'; window.Notification.requestPermission = N.requestPermission; 'ok'`)
	alice.eval(`localStorage.setItem('signoff.notify', 'on'), history.replaceState(null, '', '/'), scrollTo(0, 0), window.__setHidden(true), 'ok'`)
	late := tallQuestion("req-tall-2")
	s.resp.add(late)
	if err := s.ch.Ask(context.Background(), late); err != nil {
		t.Fatal(err)
	}
	alice.poll("a notification", `window.__instances.length ? 'yes' : ''`, 5*time.Second)
	alice.eval(`scrollTo(0, 0), window.__setHidden(false), window.__instances[0].onclick(), 'ok'`)
	if got := alice.poll("the click opens the deep link", `location.hash === '#q-req-tall-2' && document.querySelector('#q-req-tall-2.deeplinked') ? 'yes' : location.hash`, 5*time.Second); got != "yes" {
		t.Fatalf("after the click the address is %q", got)
	}
	head2 := strings.ReplaceAll(head, "q-req-tall'", "q-req-tall-2'")
	if got := alice.poll("at the card's head", head2, 5*time.Second); got != "head" {
		t.Errorf("the notification's click left the card's %s", got)
	}
	alice.noProblems()
}

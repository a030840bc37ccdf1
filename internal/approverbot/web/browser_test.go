package web

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// The browser tests drive the Debian chromium package through the DevTools
// protocol (chromedp): the page's script, its event stream and its CSP are
// only proven in a real browser.

// chromium finds the browser; a machine without it fails the test, because
// a skipped browser test would pass CI without testing the page.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium or chromium-browser on PATH: install chromium (make test installs it: scripts/test-deps.sh)")
	return ""
}

// startBrowser starts one headless chromium for the test and returns its
// root context; pages are browser contexts of it (separate cookie jars).
// --no-sandbox: CI runs as root, where chromium's sandbox cannot start.
func startBrowser(t *testing.T, width, height int) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox,
		chromedp.WindowSize(width, height),
		chromedp.Flag("disable-gpu", true),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// browserPage is one signed-in approver in a browser context of its own.
type browserPage struct {
	t    *testing.T
	name string
	ctx  context.Context

	mu       sync.Mutex
	problems []string // console errors and uncaught exceptions
}

func newBrowserPage(t *testing.T, browser context.Context, name string) *browserPage {
	t.Helper()
	ctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	p := &browserPage{t: t, name: name, ctx: ctx}
	msgs := chromedp.Console(ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				p.mu.Lock()
				p.problems = append(p.problems, m.String())
				p.mu.Unlock()
			}
		}
	}()
	return p
}

// do runs actions, failing the test with the page's name.
func (p *browserPage) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, actions...); err != nil {
		p.t.Fatalf("%s: %s: %v", p.name, what, err)
	}
}

// poll waits until a JavaScript expression is truthy and returns its value
// as a string; within is the time limit.
func (p *browserPage) poll(what, expr string, within time.Duration) string {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Poll[string](expr, chromedp.WithPollingTimeout(within),
		chromedp.WithPollingInterval(20*time.Millisecond)))
	if err != nil {
		p.t.Fatalf("%s: %s (within %s): %v", p.name, what, within, err)
	}
	return v
}

func (p *browserPage) eval(expr string) string {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		p.t.Fatalf("%s: evaluate %s: %v", p.name, expr, err)
	}
	return v
}

// login signs in through the form and waits until the event stream is live.
func (p *browserPage) login(base, id, password string) {
	p.t.Helper()
	p.do("sign in",
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`input[name="approver"]`)),
		chromedp.SetValue(chromedp.CSS(`input[name="approver"]`), id),
		chromedp.SetValue(chromedp.CSS(`input[name="password"]`), password),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		// A query wait, unlike a poll, survives the navigation.
		chromedp.WaitVisible(chromedp.CSS(`#conn.live`)),
	)
}

// click presses a card's button.
func (p *browserPage) click(id, action string) {
	p.t.Helper()
	p.do("click "+action, chromedp.Click(chromedp.CSS(`#q-`+id+` button[data-action="`+action+`"]`)))
}

// clickSent clicks a card's button until the page sends the answer (its
// reply line leaves the empty state): a click that lands while the list
// moves (a card added above, a timer's re-render) reaches no button, and a
// person would click again.
func (p *browserPage) clickSent(id, action string) {
	p.t.Helper()
	sent := `(() => { const r = document.querySelector('#q-` + id + ` .reply'); return r && r.className !== 'reply' ? 'sent' : ''; })()`
	for try := 0; try < 3; try++ {
		p.click(id, action)
		v, err := chromedp.Run(p.ctx, chromedp.Poll[string](sent, chromedp.WithPollingTimeout(3*time.Second),
			chromedp.WithPollingInterval(20*time.Millisecond)))
		if err == nil && v == "sent" {
			return
		}
	}
	p.t.Fatalf("%s: the click on %s of %s sent nothing", p.name, action, id)
}

// outcome waits for a card's settled text.
func (p *browserPage) outcome(id string, within time.Duration) string {
	p.t.Helper()
	return p.poll("the card of "+id+" shows how it was settled",
		`(() => { const o = document.querySelector('#q-`+id+` .outcome'); return o && !o.hidden ? o.textContent : ''; })()`, within)
}

// cardShown waits until a question's card with its buttons is on the page.
func (p *browserPage) cardShown(id string) {
	p.t.Helper()
	p.poll("the card of "+id+" appears",
		`document.querySelector('#q-`+id+` button[data-action="approve"]') ? 'yes' : ''`, 15*time.Second) // generous: a passing wait ends at once
}

// cardGone waits until a question's card has left the page.
func (p *browserPage) cardGone(id string, within time.Duration) {
	p.t.Helper()
	p.poll("the card of "+id+" goes", `document.getElementById('q-`+id+`') === null ? 'gone' : ''`, within)
}

func (p *browserPage) noProblems() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.problems {
		p.t.Errorf("%s: browser console: %s", p.name, m)
	}
}

func TestBrowserApproversSeeOneQuestionLive(t *testing.T) {
	const linger = time.Second
	r := startRig(t, 2, "[default, oncall]", Options{ResolvedLinger: linger})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	browser := startBrowser(t, 1000, 900)
	alice := newBrowserPage(t, browser, "alice")
	bob := newBrowserPage(t, browser, "bob")
	alice.login(r.srv.URL, "alice", alicePassword)
	bob.login(r.srv.URL, "bob", bobPassword)

	// An agent asks; both browsers show the question live.
	agent := r.plane.Agent("sess-web", "pod-7")
	deploy := brokertest.Ask(ctx, agent, "req-deploy", "bash", brokertest.Bash("make deploy"))
	alice.cardShown("req-deploy")
	bob.cardShown("req-deploy")
	if got := bob.eval(`document.querySelector('#q-req-deploy .command').textContent`); got != "$ make deploy" {
		t.Fatalf("bob's card shows the command %q", got)
	}

	// Alice approves: bob's card shows who decided within a second, then goes.
	alice.click("req-deploy", actionApprove)
	// It says which device: alice may be signed in on two.
	if got := bob.outcome("req-deploy", time.Second); got != "Approved (once) by Alice via web (Headless Chrome on Linux)" {
		t.Fatalf("bob's card says %q", got)
	}
	if bob.eval(`document.querySelector('#q-req-deploy .answer') ? 'buttons' : 'none'`) != "none" {
		t.Fatal("bob's settled card still has its buttons")
	}
	if got := alice.poll("alice's card shows the broker's reply",
		`document.querySelector('#q-req-deploy .reply.ok')?.textContent ?? ''`, time.Second); got != "Done: Approved (once) by Alice via web (Headless Chrome on Linux)" {
		t.Fatalf("alice's reply %q", got)
	}
	bob.cardGone("req-deploy", linger+2*time.Second)
	d := deploy.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if d.DecidedBy.ID != "alice" || d.DecidedBy.Channel != "web" || d.DecidedBy.Device != "Headless Chrome on Linux" {
		t.Fatalf("decided by %+v, want alice via web from headless Chrome", d.DecidedBy)
	}

	// The event streams drop (a proxy restarts): a question asked and one
	// settled meanwhile show once the browsers reconnect and re-fetch.
	away := brokertest.Ask(ctx, r.plane.Agent("sess-web-3", "pod-8"), "req-away", "bash", brokertest.Bash("make clean"))
	bob.cardShown("req-away")
	r.ch.hub.mu.Lock()
	for s := range r.ch.hub.subs {
		r.ch.hub.dropLocked(s)
	}
	r.ch.hub.mu.Unlock()
	carol, carolCSRF := r.login(t, "carol", "carol-password")
	if status, _, raw := r.respond(t, carol, carolCSRF, "req-away", actionSession, ""); status != 200 {
		t.Fatalf("carol's approval: %s", raw)
	}
	brokertest.WantDecision(t, away.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	missed := brokertest.Ask(ctx, r.plane.Agent("sess-web-4", "pod-8"), "req-missed", "bash", brokertest.Bash("make lint"))
	r.waitQuestion(t, carol, "req-missed")
	if n := r.ch.hub.count(); n != 0 {
		t.Fatalf("%d event streams reconnected before the test could miss an event", n)
	}
	bob.cardShown("req-missed")
	if got := bob.outcome("req-away", 5*time.Second); got != "Settled while this page was offline" {
		t.Fatalf("bob's card of a question settled while offline says %q", got)
	}
	bob.cardGone("req-away", linger+2*time.Second)
	alice.cardShown("req-missed")
	alice.click("req-missed", actionRejectSoft)
	brokertest.WantDecision(t, missed.Wait(t), messages.OutcomeDeny, messages.ReasonRejected)

	// A hostile command renders as text; bob rejects it hard with feedback.
	const hostile = `echo "<img src=x onerror=window.pwned=1>" > notes.html`
	stopped := brokertest.Ask(ctx, r.plane.Agent("sess-web-2", "pod-9"), "req-hostile", "bash", brokertest.Bash(hostile))
	alice.cardShown("req-hostile")
	bob.cardShown("req-hostile")
	if got := alice.eval(`document.querySelector('#q-req-hostile .command').textContent`); got != "$ "+hostile {
		t.Fatalf("alice's card shows %q, want the command as text", got)
	}
	if got := alice.eval(`String(document.querySelectorAll('#q-req-hostile img').length) + typeof window.pwned`); got != "0undefined" {
		t.Fatalf("the hostile command became markup (%s)", got)
	}
	bob.do("type feedback", chromedp.SendKeys(chromedp.CSS(`#q-req-hostile .feedback`), "use the staging target"))
	bob.click("req-hostile", actionRejectHard)
	if got := alice.outcome("req-hostile", time.Second); got != `Rejected & stopped by Bob via web (Headless Chrome on Linux): "use the staging target"` {
		t.Fatalf("alice's card says %q", got)
	}
	d = stopped.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeDeny, messages.ReasonRejected)
	if d.RejectMode != messages.RejectHard || d.Feedback != "use the staging target" {
		t.Fatalf("decision %+v, want reject_hard with bob's feedback", d)
	}

	if os.Getenv("SIGNOFF_UPDATE_SCREENSHOT") == "1" {
		updateScreenshot(t, r, browser)
	}
	alice.noProblems()
	bob.noProblems()
	if strings.Contains(alice.eval(`document.body.innerText`), "offline") {
		t.Fatal("alice's page went offline")
	}
}

func TestBrowserOnAPhoneTheBarFitsAndOnesOwnRequestCannotBeApproved(t *testing.T) {
	r := startRig(t, 1, "[default]", Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	browser := startBrowser(t, 360, 800)
	alice := newBrowserPage(t, browser, "alice")
	alice.do("a phone's viewport", chromedp.EmulateViewport(360, 800, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	alice.login(r.srv.URL, "alice", alicePassword)

	// The bar: the display name alone (the id is its title), Sign out on
	// one line, beside the name.
	if got := alice.eval(`document.querySelector('.who').textContent`); got != "Alice" {
		t.Errorf("the bar names the approver %q, want Alice", got)
	}
	if got := alice.eval(`document.querySelector('.who').title`); got != "approver id alice" {
		t.Errorf("the name's title %q", got)
	}
	geometry := alice.eval(`(() => {
		const b = document.getElementById('logout').getBoundingClientRect();
		const w = document.querySelector('.who').getBoundingClientRect();
		const line = parseFloat(getComputedStyle(document.getElementById('logout')).lineHeight) || 20;
		const oneLine = document.getElementById('logout').scrollHeight <= Math.max(44, line * 1.6) + 1;
		const sameRow = Math.abs((b.top + b.bottom) / 2 - (w.top + w.bottom) / 2) < 8;
		return JSON.stringify({oneLine, sameRow, right: b.right <= window.innerWidth});
	})()`)
	if geometry != `{"oneLine":true,"sameRow":true,"right":true}` {
		t.Errorf("on a 360 px phone the bar does not fit: %s", geometry)
	}

	// A request alice's agent made on her behalf: the brokers refuse her
	// approval, so the approving buttons are disabled with the reason; she
	// may reject it.
	mine := r.plane.Agent("sess-mine", "pod-9", client.WithRequestedBy("alice"))
	brokertest.Ask(ctx, mine, "req-mine", "bash", brokertest.Bash("make deploy"))
	alice.poll("alice's own request shows", `document.getElementById('q-req-mine') ? 'yes' : ''`, 5*time.Second)
	state := alice.eval(`JSON.stringify([...document.querySelectorAll('#q-req-mine button[data-action]')].map(b => b.dataset.action + ':' + (b.disabled ? 'off' : 'on')))`)
	if state != `["approve:off","session:off","always:off","reject_soft:on","reject_hard:on"]` {
		t.Errorf("buttons on one's own request: %s", state)
	}
	if why := alice.eval(`document.querySelector('#q-req-mine button[data-action="approve"]').title`); !strings.Contains(why, "on your behalf") {
		t.Errorf("the disabled approve button does not say why: %q", why)
	}
	if note := alice.eval(`document.querySelector('#q-req-mine .notice').textContent`); !strings.Contains(note, "another approver must approve it") {
		t.Errorf("the card does not say why it cannot be answered: %q", note)
	}
	alice.noProblems()
}

// TestBrowserAMovedButtonIsNotTaken (red team AB2): when a card above
// settles and leaves, the cards below move up, and a click aimed at one
// question's Approve would land on the next one's; an agent can make that
// happen at will by withdrawing its own older request. An approving button
// that moved or appeared within the guard is not taken: the card says so,
// nothing is sent, and a click once it has stayed put is.
func TestBrowserAMovedButtonIsNotTaken(t *testing.T) {
	const guard = 3 * time.Second // long beside a click's round trip on a loaded machine
	r := startRig(t, 1, "[default]", Options{ResolvedLinger: 200 * time.Millisecond, MoveGuard: guard})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	browser := startBrowser(t, 1000, 2000) // every card in view: a click scrolls nothing
	alice := newBrowserPage(t, browser, "alice")
	alice.login(r.srv.URL, "alice", alicePassword)

	above := brokertest.Ask(ctx, r.plane.Agent("sess-above", "pod-1"), "req-above", "bash", brokertest.Bash("make decoy"))
	below := brokertest.Ask(ctx, r.plane.Agent("sess-below", "pod-2"), "req-below", "bash", brokertest.Bash("make release"))
	alice.cardShown("req-above")
	alice.cardShown("req-below")
	time.Sleep(guard + 300*time.Millisecond) // both cards have stayed put

	// Another approver rejects the card above; once it has gone, the card
	// below is where it was: a click on its Approve now is not taken.
	carol, carolCSRF := r.login(t, "carol", "carol-password")
	if status, _, raw := r.respond(t, carol, carolCSRF, "req-above", actionRejectSoft, ""); status != 200 {
		t.Fatalf("carol's rejection: %s", raw)
	}
	brokertest.WantDecision(t, above.Wait(t), messages.OutcomeDeny, messages.ReasonRejected)
	alice.cardGone("req-above", 5*time.Second)
	alice.click("req-below", actionApprove)
	if got := alice.poll("the moved card says the click was not taken",
		`document.querySelector('#q-req-below .reply.moved')?.textContent ?? ''`, 2*time.Second); !strings.Contains(got, "moved under the pointer") {
		t.Fatalf("reply %q", got)
	}
	if alice.eval(`document.querySelector('#q-req-below button[data-action="approve"]') ? 'open' : 'settled'`) != "open" {
		t.Fatal("the moved card's question was answered")
	}

	// A question that appears is a button under the pointer too.
	fresh := brokertest.Ask(ctx, r.plane.Agent("sess-fresh", "pod-3"), "req-fresh", "bash", brokertest.Bash("make fresh"))
	alice.cardShown("req-fresh")
	alice.click("req-fresh", actionApprove)
	alice.poll("the new card says the click was not taken", `document.querySelector('#q-req-fresh .reply.moved') ? 'yes' : ''`, 2*time.Second)

	// Once they have stayed put, a click without pointing again is still
	// not taken (the card slid under a resting pointer); pointed at, the
	// same clicks answer.
	time.Sleep(guard + 300*time.Millisecond)
	alice.do("clear the reply", chromedp.Evaluate[chromedp.Void](`document.querySelector('#q-req-below .reply').className = 'reply'`))
	alice.click("req-below", actionApprove)
	alice.poll("a click without pointing is not taken", `document.querySelector('#q-req-below .reply.moved') ? 'yes' : ''`, 2*time.Second)
	alice.pointAt("req-below", actionApprove)
	alice.do("clear the reply", chromedp.Evaluate[chromedp.Void](`document.querySelector('#q-req-below .reply').className = 'reply'`))
	alice.clickSent("req-below", actionApprove)
	brokertest.WantDecision(t, below.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	alice.click("req-fresh", actionRejectSoft) // a rejection is never held back
	alice.poll("the rejection is sent", `document.querySelector('#q-req-fresh .reply:not(.moved)')?.className !== 'reply' ? 'yes' : ''`, 3*time.Second)
	brokertest.WantDecision(t, fresh.Wait(t), messages.OutcomeDeny, messages.ReasonRejected)
	alice.noProblems()
}

// pointAt moves the mouse onto a card's button, as a person aiming at it
// does.
func (p *browserPage) pointAt(id, action string) {
	p.t.Helper()
	p.aim(`#q-` + id + ` button[data-action="` + action + `"]`)
}

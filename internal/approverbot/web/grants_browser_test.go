package web

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// grantsScreenshotPath is the Grants view's picture in the docs
// (docs/APPROVERS.md), rewritten when SIGNOFF_UPDATE_SCREENSHOT=1.
var grantsScreenshotPath = filepath.Join("..", "..", "..", "docs", "grants.png")

// sessionGrantIDs lists the ids of a session's grants, as the brokers keep
// them.
func sessionGrantIDs(t *testing.T, p *brokertest.Plane, session string) []string {
	t.Helper()
	data, _ := json.Marshal(messages.AdminRequest{V: messages.Version, SessionID: session})
	var rep messages.AdminReply
	raw := p.RawRequest(p.Subjects.Admin(messages.AdminOpListGrants), data)
	if err := json.Unmarshal(raw, &rep); err != nil || !rep.OK {
		t.Fatalf("list grants: %s", raw)
	}
	var ids []string
	for _, g := range rep.Grants {
		ids = append(ids, g.ID)
	}
	return ids
}

// TestBrowserApproveForTheSessionThenRevokeTheGrant is the walk-through of
// docs/APPROVERS.md in a real browser against real brokers on Redis: the
// card says what Session grants, the click grants exactly that, the Grants
// view lists it with who approved it, from which request, and when; Revoke
// ends it (a refusal is shown), and the next call asks again.
func TestBrowserApproveForTheSessionThenRevokeTheGrant(t *testing.T) {
	r := startRigOn(t, brokertest.Options{Replicas: 2, Redis: true}, "[default]", Options{ResolvedLinger: time.Second})
	p := r.plane
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	browser := startBrowser(t, 1000, 900)
	alice := newBrowserPage(t, browser, "alice")
	alice.login(r.srv.URL, "alice", alicePassword)

	// The card says, in visible text, what Session grants.
	agent := p.Agent("sess-npm", "pod-7")
	first := brokertest.Ask(ctx, agent, "req-npm", "bash", brokertest.Bash("npm install left-pad"))
	alice.cardShown("req-npm")
	if got := alice.eval(`document.querySelector('#q-req-npm .session-offer').innerText`); got != "SESSION would allow bash(npm install left-pad) for agent pod-7 in session sess-npm" &&
		got != "Session would allow bash(npm install left-pad) for agent pod-7 in session sess-npm" {
		t.Fatalf("the card's Session line reads %q", got)
	}
	alice.click("req-npm", actionSession)
	d := first.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if d.Scope != messages.ScopeSession {
		t.Fatalf("scope %q, want session", d.Scope)
	}
	// The grant covers the session's next npm install, not its git push.
	brokertest.WantDecision(t, brokertest.Ask(ctx, agent, "req-npm-2", "bash", brokertest.Bash("npm install left-pad")).Wait(t),
		messages.OutcomeAllow, messages.ReasonScopeGrant)
	brokertest.Ask(ctx, agent, "req-push", "bash", brokertest.Bash("git push origin main"))
	alice.cardShown("req-push")

	// A second grant, of another session, that bob revokes from elsewhere
	// while alice's list still shows it.
	other := brokertest.Ask(ctx, p.Agent("sess-other", "pod-8"), "req-other", "bash", brokertest.Bash("npm run build"))
	alice.cardShown("req-other")
	alice.clickSent("req-other", actionSession)
	other.Wait(t)
	ids, otherIDs := sessionGrantIDs(t, p, "sess-npm"), sessionGrantIDs(t, p, "sess-other")
	if len(ids) != 1 || len(otherIDs) != 1 {
		t.Fatalf("grants: sess-npm %v, sess-other %v", ids, otherIDs)
	}
	id, otherID := ids[0], otherIDs[0]

	// The Grants view lists both with their facts.
	alice.do("open the Grants view", chromedp.Click(chromedp.CSS(`.tabs a[data-tab="grants"]`)))
	alice.poll("the Grants view lists the grant", `document.getElementById('g-`+id+`') && document.getElementById('g-`+otherID+`') ? 'yes' : ''`, 10*time.Second)
	if got := alice.eval(`document.getElementById('questions').offsetParent === null ? 'hidden' : 'shown'`); got != "hidden" {
		t.Errorf("the questions stay shown in the Grants view")
	}
	item := alice.eval(`document.getElementById('g-` + id + `').innerText`)
	for _, want := range []string{"bash(npm install left-pad)", "session sess-npm", "Alice via web", "req-npm", "ends with the session", id,
		time.Now().UTC().Format("2006-01-02")} {
		if !strings.Contains(item, want) {
			t.Errorf("the grant's item lacks %q:\n%s", want, item)
		}
	}
	if os.Getenv("SIGNOFF_UPDATE_SCREENSHOT") == "1" {
		saveScreenshot(t, alice, grantsScreenshotPath, 1000, 760)
	}
	// On a phone the view fits the screen: no sideways scrolling, the
	// Revoke button within reach.
	alice.do("a phone's viewport", chromedp.EmulateViewport(360, 800, chromedp.EmulateScale(2), chromedp.EmulateMobile))
	if got := alice.poll("the layout settles", `(() => {
		const b = document.querySelector('#g-`+id+` button[data-revoke]').getBoundingClientRect();
		return JSON.stringify({scroll: document.documentElement.scrollWidth <= window.innerWidth, button: b.right <= window.innerWidth && b.width > 0});
	})()`, 2*time.Second); got != `{"scroll":true,"button":true}` {
		t.Errorf("on a 360 px phone the Grants view does not fit: %s", got)
	}
	alice.do("back to the desktop", chromedp.EmulateViewport(1000, 900))

	bob, bobCSRF := r.login(t, "bob", bobPassword)
	res := r.do(t, bob, "POST", "/api/grants/revoke", `{"grant_id":"`+otherID+`"}`, "Content-Type", "application/json", csrfHeader, bobCSRF)
	if res.StatusCode != 200 {
		t.Fatalf("bob's revocation: %s: %s", res.Status, readBody(t, res))
	}
	alice.do("revoke a grant bob revoked already", chromedp.Click(chromedp.CSS(`#g-`+otherID+` button[data-revoke]`)))
	if got := alice.poll("the refusal is shown", `document.querySelector('#g-`+otherID+` .reply.error')?.textContent ?? ''`, 5*time.Second); !strings.Contains(got, "Not revoked: grant "+otherID+" is not there") {
		t.Errorf("the refusal reads %q", got)
	}

	alice.do("revoke", chromedp.Click(chromedp.CSS(`#g-`+id+` button[data-revoke]`)))
	if got := alice.poll("the revocation is confirmed", `document.querySelector('#g-`+id+` .reply.ok')?.textContent ?? ''`, 5*time.Second); got != "Revoked: bash(npm install left-pad) for agent pod-7 in session sess-npm. The next such call asks again." {
		t.Errorf("the confirmation reads %q", got)
	}
	if got := sessionGrantIDs(t, p, "sess-npm"); len(got) != 0 {
		t.Fatalf("grants of sess-npm after the revocation: %v", got)
	}
	alice.do("refresh", chromedp.Click(chromedp.CSS(`#grants-refresh`)))
	alice.poll("the list is empty", `document.getElementById('grants-empty').hidden ? '' : 'empty'`, 5*time.Second)

	// The next such call asks again; back on the questions, alice sees it.
	again := brokertest.Ask(ctx, agent, "req-npm-3", "bash", brokertest.Bash("npm install left-pad"))
	alice.do("back to the questions", chromedp.Click(chromedp.CSS(`.tabs a[data-tab="questions"]`)))
	alice.cardShown("req-npm-3")
	alice.click("req-npm-3", actionApprove)
	brokertest.WantDecision(t, again.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
	// The browser logs the refusal's 404 as a failed load: expected.
	alice.forget("the server responded with a status of 404")
	alice.noProblems()
}

// forget drops the console problems that hold substr (expected ones).
func (p *browserPage) forget(substr string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	kept := p.problems[:0]
	for _, m := range p.problems {
		if !strings.Contains(m, substr) {
			kept = append(kept, m)
		}
	}
	p.problems = kept
}

// saveScreenshot saves what page shows at width × height as a PNG.
func saveScreenshot(t *testing.T, page *browserPage, path string, width, height int64) {
	t.Helper()
	page.do("set the viewport",
		chromedp.EmulateViewport(width, height),
		chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0); document.activeElement.blur()`),
		chromedp.Sleep(300*time.Millisecond),
	)
	data, err := chromedp.Run(page.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d KiB)", path, len(data)>>10)
}

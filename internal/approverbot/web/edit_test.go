package web

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// respondEdit answers through POST /api/respond with an edit.
func (r *rig) respondEdit(t *testing.T, c *http.Client, csrf, id, action, edit string) (int, RespondResult, string) {
	t.Helper()
	return r.respondWith(t, c, csrf, RespondRequest{RequestID: id, Action: action, Edit: &edit})
}

func TestEditsThroughTheHTTPAPI(t *testing.T) {
	r := startRig(t, 2, "[default, oncall]", Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	alice, csrf := r.login(t, "alice", alicePassword)

	pending := brokertest.Ask(ctx, r.plane.Agent("sess-edit-api", "pod-7"), "req-q", "mcp__db__query", map[string]any{"sql": "delete from users"})
	v := r.waitQuestion(t, alice, "req-q")
	if !strings.Contains(v.HTML, `class="editor"`) || !strings.Contains(v.HTML, "&#34;sql&#34;: &#34;delete from users&#34;") {
		t.Fatalf("the card has no JSON editor with the arguments:\n%s", v.HTML)
	}
	if v.Edit == nil || v.Edit.Shell || v.Edit.Text != "{\n  \"sql\": \"delete from users\"\n}" {
		t.Fatalf("the API lists the editor as %+v", v.Edit)
	}
	for _, tt := range []struct{ name, action, edit, want string }{
		{"not JSON", actionApprove, `{"sql": `, "not valid JSON"},
		{"not an object", actionApprove, `["select 1"]`, "must be a JSON object"},
		{"two values", actionApprove, `{"sql":"select 1"} {}`, "more than one JSON value"},
		{"with a rejection", actionRejectSoft, `{"sql":"select 1"}`, "goes with an approval"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, _, raw := r.respondEdit(t, alice, csrf, "req-q", tt.action, tt.edit)
			if status != http.StatusBadRequest || !strings.Contains(raw, tt.want) {
				t.Fatalf("%d %s, want 400 with %q", status, raw, tt.want)
			}
		})
	}
	if d, _ := pending.Peek(); d != nil {
		t.Fatalf("a refused edit decided: %+v", d)
	}
	status, out, raw := r.respondEdit(t, alice, csrf, "req-q", actionApprove, "{\n  \"sql\": \"select count(*) from users\"\n}")
	if status != http.StatusOK || !out.Applied || !strings.HasPrefix(out.Message, "Done: Approved with changes (once) by Alice") {
		t.Fatalf("edit: %d %s", status, raw)
	}
	d := pending.Wait(t)
	if string(d.UpdatedArguments) != `{"sql":"select count(*) from users"}` {
		t.Fatalf("decision carries %s", d.UpdatedArguments)
	}

	// A quorum question offers no editor, and the API refuses an edit.
	carol, carolCSRF := r.login(t, "carol", "carol-password")
	brokertest.Ask(ctx, r.plane.Agent("sess-edit-quorum", "pod-8"), "req-k", "bash", brokertest.Bash("kubectl get pods"))
	v = r.waitQuestion(t, carol, "req-k")
	if strings.Contains(v.HTML, `class="editor"`) || strings.Contains(v.HTML, "data-edit-open") || v.Edit != nil {
		t.Fatal("a quorum question offers an editor")
	}
	if status, _, raw := r.respondEdit(t, carol, carolCSRF, "req-k", actionApprove, "kubectl get pods -A"); status != http.StatusBadRequest || !strings.Contains(raw, "several approvals") {
		t.Fatalf("edit on a quorum question: %d %s", status, raw)
	}
}

func TestBrowserApproveWithChanges(t *testing.T) {
	r := startRig(t, 2, "[default]", Options{ResolvedLinger: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	browser := startBrowser(t, 1000, 900)
	alice := newBrowserPage(t, browser, "alice")
	bob := newBrowserPage(t, browser, "bob")
	alice.login(r.srv.URL, "alice", alicePassword)
	bob.login(r.srv.URL, "bob", bobPassword)

	// A shell call: the editor holds its command as text.
	deploy := brokertest.Ask(ctx, r.plane.Agent("sess-edit-web", "pod-7"), "req-deploy", "bash", brokertest.Bash("make deploy ENV=prod"))
	alice.cardShown("req-deploy")
	bob.cardShown("req-deploy")
	if got := alice.eval(`document.querySelector('#q-req-deploy .editor').hidden ? 'hidden' : 'shown'`); got != "hidden" {
		t.Fatalf("the editor is %s before Edit… is pressed", got)
	}
	alice.do("open the editor", chromedp.Click(chromedp.CSS(`#q-req-deploy [data-edit-open]`)))
	if got := alice.eval(`document.querySelector('#q-req-deploy .edit-text').value`); got != "make deploy ENV=prod" {
		t.Fatalf("the editor starts from %q, want the command", got)
	}
	// An empty command is refused on the page: nothing is sent.
	alice.do("empty the command", chromedp.SetValue(chromedp.CSS(`#q-req-deploy .edit-text`), "   "),
		chromedp.Click(chromedp.CSS(`#q-req-deploy [data-edit-send]`)))
	if got := alice.poll("the page shows the problem", `document.querySelector('#q-req-deploy .edit-error:not([hidden])')?.textContent ?? ''`, time.Second); !strings.Contains(got, "empty") {
		t.Fatalf("error %q", got)
	}
	if d, _ := deploy.Peek(); d != nil {
		t.Fatalf("an empty edit decided: %+v", d)
	}
	// A change the policy denies: refused by the brokers, the question
	// stays open, the editor too.
	alice.do("type a denied command", chromedp.SetValue(chromedp.CSS(`#q-req-deploy .edit-text`), "rm -rf /srv/app"),
		chromedp.Click(chromedp.CSS(`#q-req-deploy [data-edit-send]`)))
	got := alice.poll("the brokers' refusal shows", `document.querySelector('#q-req-deploy .reply.warn')?.textContent ?? ''`, 5*time.Second)
	if !strings.Contains(got, "denied by the policy") {
		t.Fatalf("reply %q", got)
	}
	if alice.eval(`document.querySelector('#q-req-deploy .editor').hidden ? 'hidden' : 'shown'`) != "shown" {
		t.Fatal("the editor closed after a refused change")
	}
	// The accepted change settles it everywhere and the agent runs it.
	alice.do("type the staging command", chromedp.SetValue(chromedp.CSS(`#q-req-deploy .edit-text`), "make deploy ENV=staging"),
		chromedp.Click(chromedp.CSS(`#q-req-deploy [data-edit-send]`)))
	if got := bob.outcome("req-deploy", 5*time.Second); !strings.HasPrefix(got, "Approved with changes (once) by Alice via web") || !strings.Contains(got, "make deploy ENV=staging") {
		t.Fatalf("bob's card says %q", got)
	}
	d := deploy.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if string(d.UpdatedArguments) != `{"command":"make deploy ENV=staging"}` {
		t.Fatalf("the agent got %s", d.UpdatedArguments)
	}

	// Another tool: the editor holds its arguments as JSON, checked before
	// sending.
	query := brokertest.Ask(ctx, r.plane.Agent("sess-edit-web-2", "pod-8"), "req-sql", "mcp__db__query", map[string]any{"sql": "delete from users"})
	bob.cardShown("req-sql")
	bob.do("open the editor", chromedp.Click(chromedp.CSS(`#q-req-sql [data-edit-open]`)))
	if got := bob.eval(`JSON.parse(document.querySelector('#q-req-sql .edit-text').value).sql`); got != "delete from users" {
		t.Fatalf("the JSON editor starts from %q", got)
	}
	for _, bad := range []struct{ text, want string }{{`{"sql": `, "not valid JSON"}, {`["select 1"]`, "must be a JSON object"}} {
		bob.do("type "+bad.text, chromedp.SetValue(chromedp.CSS(`#q-req-sql .edit-text`), bad.text),
			chromedp.Click(chromedp.CSS(`#q-req-sql [data-edit-send]`)))
		if got := bob.poll("the page shows the problem", `document.querySelector('#q-req-sql .edit-error:not([hidden])')?.textContent ?? ''`, time.Second); !strings.Contains(got, bad.want) {
			t.Fatalf("typing %s shows %q, want %q", bad.text, got, bad.want)
		}
	}
	bob.do("type valid arguments", chromedp.SetValue(chromedp.CSS(`#q-req-sql .edit-text`), `{"sql": "select count(*) from users"}`),
		chromedp.Click(chromedp.CSS(`#q-req-sql [data-edit-send]`)))
	bob.poll("bob's reply", `document.querySelector('#q-req-sql .reply.ok')?.textContent ?? ''`, 5*time.Second)
	if d := query.Wait(t); string(d.UpdatedArguments) != `{"sql":"select count(*) from users"}` {
		t.Fatalf("the agent got %s", d.UpdatedArguments)
	}
	alice.noProblems()
	bob.noProblems()
}

// TestListedCardsNameTheirDigest (red team AB3): the cards GET
// /api/questions and the event stream deliver carry the digest of the
// version they show, so the page's answers name it and the bot refuses one
// given on another version; the listing states it for scripts too.
func TestListedCardsNameTheirDigest(t *testing.T) {
	r := startRig(t, 1, "[default]", Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	alice, csrf := r.login(t, "alice", alicePassword)
	pending := brokertest.Ask(ctx, r.plane.Agent("sess-digest", "pod-7"), "req-digest", "bash", brokertest.Bash("make deploy"))
	v := r.waitQuestion(t, alice, "req-digest")
	if v.Digest == "" || !strings.Contains(v.HTML, `data-digest="`+v.Digest+`"`) {
		t.Fatalf("listed card digest %q, html %s", v.Digest, v.HTML)
	}
	status, res, raw := r.respondWith(t, alice, csrf, RespondRequest{RequestID: "req-digest", Action: actionApprove, Digest: "sha256:0000"})
	if status != 200 || res.Applied || !strings.Contains(res.Reason+res.Message, "digest") {
		t.Fatalf("an approval naming another version: %d %s", status, raw)
	}
	if status, res, raw = r.respondWith(t, alice, csrf, RespondRequest{RequestID: "req-digest", Action: actionApprove}); status != 200 || !res.Applied {
		t.Fatalf("an approval naming the listed version: %d %s", status, raw)
	}
	brokertest.WantDecision(t, pending.Wait(t), messages.OutcomeAllow, messages.ReasonApproved)
}

// TestBrowserTheEditorShowsEveryLine (red team AG F3): the editor of a
// 12-line script shows all 12 lines — no line behind a scroll bar, which
// an edit of the first would approve unread — and says how many there
// are, also after lines are added.
func TestBrowserTheEditorShowsEveryLine(t *testing.T) {
	script := "rm -rf build   # clean the build output first\n"
	for i := 1; i <= 10; i++ {
		script += "# note: the cache is rebuilt by make; nothing else is touched\n"
	}
	script += "git push --force origin main"
	s := startServer(t, testConfig(t, "", "{insecure_cookies: true}"), Options{}, newFakeResponder(question("req-lines", script)))
	browser := startBrowser(t, 1000, 900)
	alice := newBrowserPage(t, browser, "alice")
	alice.login(s.srv.URL, "alice", alicePassword)
	alice.cardShown("req-lines")
	alice.do("open the editor", chromedp.Click(chromedp.CSS(`#q-req-lines [data-edit-open]`)))
	fits := `(() => {
		const ta = document.querySelector('#q-req-lines .edit-text');
		return ta.scrollHeight <= ta.clientHeight + 1 ? 'fits' : 'hides ' + (ta.scrollHeight - ta.clientHeight) + 'px of ' + ta.scrollHeight;
	})()`
	if got := alice.eval(fits); got != "fits" {
		t.Errorf("the editor of a 12-line script %s", got)
	}
	if got := alice.eval(`document.querySelector('#q-req-lines .edit-lines').textContent`); !strings.Contains(got, "12 lines") {
		t.Errorf("the editor's line count says %q", got)
	}
	alice.do("add two lines", chromedp.SendKeys(chromedp.CSS(`#q-req-lines .edit-text`), "\nmake\nmake"))
	if got := alice.eval(fits); got != "fits" {
		t.Errorf("after two more lines the editor %s", got)
	}
	if got := alice.eval(`document.querySelector('#q-req-lines .edit-lines').textContent`); !strings.Contains(got, "14 lines") {
		t.Errorf("after two more lines the count says %q", got)
	}
	alice.noProblems()
}

package web

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// pageFakes replaces, in the page, what a headless browser cannot show or
// play with recorders: window.Notification (permission "default" until
// requestPermission, which counts its calls), AudioContext (counts the
// oscillators of each chime), and the page's visibility and focus, which
// window.__setHidden(bool) switches as a tab going to the background and
// coming back does.
const pageFakes = `(() => {
	window.__notes = []; window.__asked = 0; window.__closed = []; window.__osc = 0;
	class FakeNotification {
		constructor(title, opts) { this.tag = opts.tag; window.__notes.push({title, body: opts.body, tag: opts.tag}); }
		close() { window.__closed.push(this.tag); }
		static requestPermission() { window.__asked++; FakeNotification.permission = 'granted'; return Promise.resolve('granted'); }
	}
	FakeNotification.permission = 'default';
	window.Notification = FakeNotification;
	window.AudioContext = class {
		constructor() { this.state = 'running'; this.currentTime = 0; this.destination = {}; }
		resume() { return Promise.resolve(); }
		createOscillator() { window.__osc++; return {frequency: {}, connect() {}, start() {}, stop() {}}; }
		createGain() { return {gain: {setValueAtTime() {}, exponentialRampToValueAtTime() {}}, connect() {}}; }
	};
	let hidden = false;
	Object.defineProperty(document, 'visibilityState', {configurable: true, get: () => hidden ? 'hidden' : 'visible'});
	Object.defineProperty(document, 'hidden', {configurable: true, get: () => hidden});
	document.hasFocus = () => !hidden;
	window.__setHidden = (h) => {
		hidden = h;
		document.dispatchEvent(new Event('visibilitychange'));
		if (!h) window.dispatchEvent(new Event('focus'));
	};
	return 'ok';
})()`

func TestBrowserNotifiesOfQuestionsWhileInTheBackground(t *testing.T) {
	r := startRig(t, 1, "[default]", Options{ResolvedLinger: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	browser := startBrowser(t, 1000, 900)
	alice := newBrowserPage(t, browser, "alice")
	alice.login(r.srv.URL, "alice", alicePassword)
	other := r.plane.Approver("default")

	if got := alice.eval(`document.title`); got != "Signoff · approvals" {
		t.Fatalf("title with nothing open %q", got)
	}
	if got := alice.eval(`document.getElementById('sound').textContent`); got != "Sound: off" {
		t.Errorf("the sound is not off by default: %q", got)
	}
	alice.eval(pageFakes)

	// Permission is asked from the click, once; the choice is kept.
	alice.do("enable notifications", chromedp.Click(chromedp.CSS(`#notify`)))
	alice.poll("notifications are on", `document.getElementById('notify').textContent === 'Notifications: on' ? 'on' : ''`, 2*time.Second)
	alice.do("turn notifications off and on", chromedp.Click(chromedp.CSS(`#notify`)), chromedp.Click(chromedp.CSS(`#notify`)))
	alice.poll("notifications are on again", `document.getElementById('notify').getAttribute('aria-pressed') === 'true' ? 'on' : ''`, 2*time.Second)
	if got := alice.eval(`String(window.__asked)`); got != "1" {
		t.Errorf("the browser was asked for permission %s times, want once", got)
	}
	// The sound: a chime on turning it on, so the approver hears it.
	alice.do("turn the sound on", chromedp.Click(chromedp.CSS(`#sound`)))
	if got := alice.eval(`document.getElementById('sound').textContent + ' ' + window.__osc`); got != "Sound: on 2" {
		t.Errorf("after turning the sound on: %q, want the label on and one two-tone chime", got)
	}

	// The tab goes to the background; two questions arrive.
	alice.eval(`window.__setHidden(true), 'ok'`)
	agent := r.plane.Agent("sess-notify", "pod-1")
	deploy := brokertest.Ask(ctx, agent, "req-n1", "bash", brokertest.Bash("make deploy"))
	alice.cardShown("req-n1")
	note := alice.poll("a notification for the question", `window.__notes.length ? JSON.stringify(window.__notes[0]) : ''`, 2*time.Second)
	var n struct{ Title, Body, Tag string }
	if err := json.Unmarshal([]byte(note), &n); err != nil {
		t.Fatal(err)
	}
	if n.Title != "Signoff: bash needs an answer" || n.Body != "make deploy" || n.Tag != "signoff-req-n1" {
		t.Errorf("notification %+v", n)
	}
	brokertest.Ask(ctx, r.plane.Agent("sess-notify-2", "pod-2"), "req-n2", "bash", brokertest.Bash("make clean"))
	alice.cardShown("req-n2")
	alice.poll("the title counts two open", `document.title === '(2) Signoff · approvals' ? 'yes' : ''`, 2*time.Second)
	if got := alice.eval(`(() => { const m = document.getElementById('new'); return m.hidden ? 'hidden' : m.textContent; })()`); got != "2 new" {
		t.Errorf("the new marker says %q, want 2 new", got)
	}
	if got := alice.eval(`window.__notes.length + ' notes, ' + window.__osc + ' oscillators'`); got != "2 notes, 6 oscillators" {
		t.Errorf("after two questions: %s, want a notification and a chime each", got)
	}

	// One is settled elsewhere: the count, the marker and its
	// notification follow.
	q1 := other.NextAsk("req-n1")
	if rep := other.Approve(q1, "bob", messages.ScopeOnce); !rep.Applied {
		t.Fatalf("bob's approval: %+v", rep)
	}
	deploy.Wait(t)
	alice.poll("the title counts one open", `document.title === '(1) Signoff · approvals' ? 'yes' : ''`, 3*time.Second)
	if got := alice.eval(`document.getElementById('new').textContent + ' / closed ' + window.__closed.join(',')`); got != "1 new / closed signoff-req-n1" {
		t.Errorf("after a question settled elsewhere: %q", got)
	}

	// The approver comes back: nothing is new any more. A question that
	// arrives while they look raises no notification.
	alice.eval(`window.__setHidden(false), 'ok'`)
	alice.poll("the new marker goes", `document.getElementById('new').hidden ? 'yes' : ''`, 2*time.Second)
	brokertest.Ask(ctx, r.plane.Agent("sess-notify-3", "pod-3"), "req-n3", "bash", brokertest.Bash("make lint"))
	alice.cardShown("req-n3")
	alice.poll("the title counts two open", `document.title === '(2) Signoff · approvals' ? 'yes' : ''`, 2*time.Second)
	if got := alice.eval(`window.__notes.length + ' ' + document.getElementById('new').hidden`); got != "2 true" {
		t.Errorf("a question arriving while the approver looks: %s, want no notification and no marker", got)
	}

	// The choices are kept for the next visit.
	alice.do("reload", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#conn.live`)))
	if got := alice.eval(`document.getElementById('sound').textContent + ' ' + localStorage.getItem('signoff.notify')`); got != "Sound: on on" {
		t.Errorf("after a reload: %q, want the sound and notifications still on", got)
	}
	if got := alice.eval(`document.title`); got != "(2) Signoff · approvals" {
		t.Errorf("title after a reload %q", got)
	}
	alice.noProblems()
}

const answerPolicy = `
mode: auto-edit
tools:
  answer: [ask_human]
rules:
  - { rule: AskUserQuestion, action: ask }
  - { rule: ask_human, action: ask }
teams:
  default: { members: [alice, bob, carol] }
`

func TestBrowserAnswersAnAskUserQuestion(t *testing.T) {
	r := startRigOn(t, brokertest.Options{Policy: answerPolicy, Redis: true, Replicas: 2}, "[default]", Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	browser := startBrowser(t, 1000, 1200)
	alice := newBrowserPage(t, browser, "alice")
	bob := newBrowserPage(t, browser, "bob")
	alice.login(r.srv.URL, "alice", alicePassword)
	bob.login(r.srv.URL, "bob", bobPassword)

	agent := r.plane.Agent("sess-ask", "pod-1")
	asked := brokertest.Ask(ctx, agent, "req-ask", "AskUserQuestion", map[string]any{"questions": []any{
		map[string]any{"question": "Which database?", "header": "DB", "multiSelect": false,
			"options": []any{map[string]any{"label": "Postgres", "description": "relational"}, map[string]any{"label": "<b>Mongo</b>"}}},
		map[string]any{"question": "Which features?", "multiSelect": true,
			"options": []any{map[string]any{"label": "Auth"}, map[string]any{"label": "Logs"}, map[string]any{"label": "Metrics"}}},
	}})
	alice.cardShown("req-ask")
	bob.cardShown("req-ask")
	form := alice.eval(`JSON.stringify([...document.querySelectorAll('#q-req-ask .ask-q')].map(q => ({
		legend: q.querySelector('legend').textContent,
		options: [...q.querySelectorAll('.ask-opt')].map(o => o.querySelector('input').type + ':' + o.textContent)})))`)
	want := `[{"legend":"DB Which database?","options":["radio:Postgresrelational","radio:<b>Mongo</b>"]},` +
		`{"legend":"Which features? (pick any)","options":["checkbox:Auth","checkbox:Logs","checkbox:Metrics"]}]`
	if form != want {
		t.Fatalf("the answer form\n got %s\nwant %s", form, want)
	}

	// Bob starts picking; an update of the card (a vote elsewhere would
	// do the same) keeps what he picked.
	bob.do("bob picks Mongo", chromedp.Click(chromedp.CSS(`#q-req-ask input[name="ask-req-ask-0"][value="1"]`)))
	alice.do("alice picks",
		chromedp.Click(chromedp.CSS(`#q-req-ask input[name="ask-req-ask-0"][value="0"]`)),
		chromedp.Click(chromedp.CSS(`#q-req-ask input[name="ask-req-ask-1"][value="0"]`)),
		chromedp.Click(chromedp.CSS(`#q-req-ask input[name="ask-req-ask-1"][value="1"]`)),
		chromedp.SendKeys(chromedp.CSS(`#q-req-ask .ask-q[data-q="1"] .ask-text`), "tracing"),
	)
	alice.click("req-ask", actionAnswer)
	d := asked.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	var got map[string]string
	if err := json.Unmarshal(d.Answer, &got); err != nil {
		t.Fatalf("answer %s: %v", d.Answer, err)
	}
	if got["Which database?"] != "Postgres" || got["Which features?"] != "Auth, Logs, tracing" || len(got) != 2 {
		t.Errorf("the agent got %s", d.Answer)
	}
	if d.DecidedBy.ID != "alice" || d.DecidedBy.Channel != "web" {
		t.Errorf("decided by %+v", d.DecidedBy)
	}
	if out := bob.outcome("req-ask", 2*time.Second); !strings.HasPrefix(out, "Answered by Alice via web") || !strings.Contains(out, "Which database? → Postgres") {
		t.Errorf("bob's card says %q", out)
	}

	// A tool declared under tools.answer takes free text.
	free := brokertest.Ask(ctx, agent, "req-free", "ask_human", map[string]any{"prompt": "Which region?"})
	bob.cardShown("req-free")
	bob.do("bob types", chromedp.SendKeys(chromedp.CSS(`#q-req-free .ask-text`), "eu-west-1"))
	bob.click("req-free", actionAnswer)
	if d := free.Wait(t); string(d.Answer) != `"eu-west-1"` || d.DecidedBy.ID != "bob" {
		t.Errorf("free-text answer %s by %s", d.Answer, d.DecidedBy.ID)
	}

	// An answer with nothing picked is refused on the page, and nothing
	// is sent.
	empty := brokertest.Ask(ctx, agent, "req-empty", "ask_human", map[string]any{"prompt": "Anything?"})
	alice.cardShown("req-empty")
	alice.click("req-empty", actionAnswer)
	reply := alice.poll("the page says the answer is empty", `document.querySelector('#q-req-empty .reply.error')?.textContent ?? ''`, 2*time.Second)
	if !strings.Contains(reply, "empty") {
		t.Errorf("reply to an empty answer %q", reply)
	}
	if d, _ := empty.Peek(); d != nil {
		t.Errorf("an empty answer decided the call: %+v", d)
	}
	alice.noProblems()
	bob.noProblems()
}

func TestAnswersThroughTheHTTPAPIAreChecked(t *testing.T) {
	r := startRigOn(t, brokertest.Options{Policy: answerPolicy}, "[default]", Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	carol, csrf := r.login(t, "carol", "carol-password")
	agent := r.plane.Agent("sess-api-ask", "pod-1")
	asked := brokertest.Ask(ctx, agent, "req-api-ask", "AskUserQuestion", map[string]any{"questions": []any{
		map[string]any{"question": "Which database?", "options": []any{map[string]any{"label": "Postgres"}, map[string]any{"label": "Mongo"}}}}})
	bash := brokertest.Ask(ctx, agent, "req-api-bash", "bash", brokertest.Bash("make deploy"))
	v := r.waitQuestion(t, carol, "req-api-ask")
	if !strings.Contains(strings.Join(v.Actions, ","), actionAnswer) || v.Question.AskUser == nil || v.Summary != "Which database?" {
		t.Fatalf("the listed question: actions %v, ask_user %+v, summary %q", v.Actions, v.Question.AskUser, v.Summary)
	}
	if bv := r.waitQuestion(t, carol, "req-api-bash"); strings.Contains(strings.Join(bv.Actions, ","), actionAnswer) {
		t.Fatalf("bash offers an answer: %v", bv.Actions)
	}
	post := func(body string) (int, string) {
		res := r.do(t, carol, "POST", "/api/respond", body, "Content-Type", "application/json", csrfHeader, csrf)
		return res.StatusCode, readBody(t, res)
	}
	for _, bad := range []struct{ body, want string }{
		{`{"request_id":"req-api-ask","action":"answer","picks":[{"question":0,"options":[0,1]}]}`, "takes one option"},
		{`{"request_id":"req-api-ask","action":"answer","picks":[{"question":3,"options":[0]}]}`, "question 4 does not exist"},
		{`{"request_id":"req-api-ask","action":"answer","picks":[{"question":0,"options":[7]}]}`, "option 8 does not exist"},
		{`{"request_id":"req-api-ask","action":"answer","picks":[]}`, "answers none"},
		{`{"request_id":"req-api-ask","action":"approve","picks":[{"question":0,"options":[0]}]}`, "picks go with action answer"},
		{`{"request_id":"req-api-ask","action":"answer","feedback":"x","picks":[{"question":0,"options":[0]}]}`, "feedback goes with a rejection"},
		{`{"request_id":"req-api-bash","action":"answer","picks":[{"question":0,"text":"done"}]}`, "asks for an approval, not an answer"},
	} {
		status, raw := post(bad.body)
		if status != 400 || !strings.Contains(raw, bad.want) {
			t.Errorf("POST %s = %d %s, want 400 with %q", bad.body, status, raw, bad.want)
		}
	}
	if d, _ := asked.Peek(); d != nil {
		t.Fatalf("a refused answer decided the call: %+v", d)
	}
	status, raw := post(`{"request_id":"req-api-ask","digest":"` + r.digestOf(t, carol, "req-api-ask") + `","action":"answer","picks":[{"question":0,"options":[1],"text":"with replicas"}]}`)
	if status != 200 || !strings.Contains(raw, `"applied":true`) {
		t.Fatalf("the answer: %d %s", status, raw)
	}
	if d := asked.Wait(t); string(d.Answer) != `{"Which database?":"Mongo, with replicas"}` {
		t.Errorf("the agent got %s", d.Answer)
	}
	if d, _ := bash.Peek(); d != nil {
		t.Errorf("bash was decided: %+v", d)
	}
}

const reminderPolicy = `
mode: auto-edit
ttl: 1m
teams:
  default:
    members: [alice, bob, carol]
    escalation:
      - { after: 3s, remind: true }
`

func TestBrowserARemindersNotifiesAgain(t *testing.T) {
	r := startRigOn(t, brokertest.Options{Policy: reminderPolicy, Redis: true, EscalationInterval: 100 * time.Millisecond}, "[default]", Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	browser := startBrowser(t, 1000, 900)
	alice := newBrowserPage(t, browser, "alice")
	alice.login(r.srv.URL, "alice", alicePassword)
	alice.eval(pageFakes)
	alice.do("enable notifications", chromedp.Click(chromedp.CSS(`#notify`)))
	alice.poll("notifications are on", `document.getElementById('notify').textContent === 'Notifications: on' ? 'on' : ''`, 2*time.Second)

	// The question, then its reminder three seconds later, while the page is
	// in the background: a notification each.
	alice.eval(`window.__setHidden(true), 'ok'`)
	brokertest.Ask(ctx, r.plane.Agent("sess-remind", "pod-1"), "req-r1", "bash", brokertest.Bash("make deploy"))
	alice.cardShown("req-r1")
	if first := alice.poll("a notification for the question", `window.__notes.length ? window.__notes[0].title : ''`, 2*time.Second); first != "Signoff: bash needs an answer" {
		t.Errorf("the question's notification %q", first)
	}
	// The approver looks, then leaves again: the reminder makes the
	// question new again.
	alice.eval(`window.__setHidden(false), window.__setHidden(true), 'ok'`)
	if got := alice.eval(`String(document.getElementById('new').hidden)`); got != "true" {
		t.Fatalf("the new marker did not clear when the approver looked")
	}
	note := alice.poll("a notification for the reminder", `window.__notes.length > 1 ? window.__notes[1].title : ''`, 8*time.Second)
	if note != "Still waiting: bash needs an answer" {
		t.Errorf("the reminder's notification %q", note)
	}
	if got := alice.eval(`document.getElementById('new').textContent + ' ' + document.getElementById('q-req-r1').classList.contains('fresh')`); got != "1 new true" {
		t.Errorf("the reminded question is not marked new: %s", got)
	}
	alice.noProblems()
}

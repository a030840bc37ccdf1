package web

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdpwebauthn "github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// stepUpPolicy: helm commands need step-up; terraform ones need two
// stepped-up approvals (team pair).
const stepUpPolicy = `
mode: auto-edit
rules:
  - { rule: "bash(helm *)", action: ask, step_up: true }
  - { rule: "bash(terraform *)", action: ask, route: pair, step_up: true }
teams:
  default: { members: [alice, bob, carol] }
  pair:    { members: [alice, bob], approvals_required: 2 }
`

// startStepUpRig is startRigOn with step-up configured: the page serves on
// http://localhost:<port>, its WebAuthn relying party.
func startStepUpRig(t *testing.T) (*rig, string) {
	t.Helper()
	return startStepUpRigWith(t, "")
}

// startStepUpRigWith is startStepUpRig with more web.webauthn settings
// (YAML flow-map entries, each after a comma).
func startStepUpRigWith(t *testing.T, webauthn string) (*rig, string) {
	t.Helper()
	p := brokertest.Start(t, brokertest.Options{Policy: stepUpPolicy})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://localhost:" + strings.TrimPrefix(ln.Addr().String(), "127.0.0.1:")
	cfg := testConfig(t, "[default, pair]", `{insecure_cookies: true, webauthn: {rp_id: localhost, origins: ["`+base+`"]`+webauthn+`}}`)
	ch, err := New(cfg, Options{Logger: quietLogger(), MoveGuard: -1})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	bot, err := approverbot.New(cfg, p.NATS.Connect(t), []approverbot.Channel{ch}, approverbot.Options{Logger: quietLogger()})
	if err != nil {
		t.Fatalf("approverbot.New: %v", err)
	}
	mux := http.NewServeMux()
	ch.Register(mux)
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	brokertest.Run(t, "bot.Run", bot.Run)
	for ch.responder() == nil {
		time.Sleep(time.Millisecond)
	}
	return &rig{plane: p, server: &server{ch: ch, srv: srv}}, base
}

// startStepUpBrowser is startBrowser with localhost resolved to the
// test server's 127.0.0.1 (a WebAuthn relying party id cannot be an IP
// address, and localhost is a secure context over plain HTTP).
func startStepUpBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox,
		chromedp.WindowSize(1000, 1000),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("host-resolver-rules", "MAP localhost 127.0.0.1"),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// addVirtualAuthenticator gives the page a CTAP2 security key that
// verifies its user and answers without a touch.
func (p *browserPage) addVirtualAuthenticator() {
	p.t.Helper()
	p.addVirtualKey(true)
}

// enterEnrollCode waits for the page to ask for the one-time enrollment
// code of a first key after a password sign-in, and types code.
func (p *browserPage) enterEnrollCode(code string) {
	p.t.Helper()
	p.poll("the page asks for the enrollment code", `document.getElementById('key-code-row').hidden ? '' : 'yes'`, 10*time.Second)
	p.do("type the enrollment code", chromedp.SetValue(chromedp.CSS(`#key-code`), code))
}

// addVirtualKey gives the page a CTAP2 security key that answers without
// a touch and can verify its user (a PIN, a fingerprint) when uv, or
// proves presence only.
func (p *browserPage) addVirtualKey(uv bool) {
	p.t.Helper()
	p.do("add a virtual authenticator", chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := cdp.Call(ctx, t, cdpwebauthn.Enable, cdpwebauthn.EnableParams{}); err != nil {
			return err
		}
		_, err := cdp.Call(ctx, t, cdpwebauthn.AddVirtualAuthenticator, cdpwebauthn.AddVirtualAuthenticatorParams{
			Options: &cdpwebauthn.VirtualAuthenticatorOptions{
				Protocol: cdpwebauthn.AuthenticatorProtocolCtap2, Transport: cdpwebauthn.AuthenticatorTransportUsb,
				HasResidentKey: true, HasUserVerification: uv, IsUserVerified: uv,
				AutomaticPresenceSimulation: true,
			}})
		return err
	}))
}

// respondJS is a script that posts an answer from the page and returns
// "<status> <body>".
func respondJS(body string) string {
	return `(async () => {
		const b = ` + body + `;
		const card = document.getElementById('q-' + b.request_id);
		if (!b.digest && card) b.digest = card.dataset.digest; // as the page sends its card's
		const res = await fetch('/api/respond', {method: 'POST', headers: {'Content-Type': 'application/json',
			'X-CSRF-Token': document.querySelector('meta[name="csrf-token"]').content}, body: JSON.stringify(b)});
		return res.status + ' ' + await res.text();
	})()`
}

func (p *browserPage) await(what, expr string) string {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		p.t.Fatalf("%s: %s: %v", p.name, what, err)
	}
	return v
}

func TestBrowserStepUpRegistersAKeyAndApprovesWithAFreshAssertionOnly(t *testing.T) {
	r, base := startStepUpRig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	browser := startStepUpBrowser(t)
	alice := newBrowserPage(t, browser, "alice")
	alice.login(base, "alice", alicePassword)
	alice.addVirtualAuthenticator()

	// Registration: the page adds alice's security key; the bot lists it.
	alice.enterEnrollCode(aliceEnrollCode)
	alice.do("name the key", chromedp.SetValue(chromedp.CSS(`#key-name`), "virtual key"))
	alice.do("add a key", chromedp.Click(chromedp.CSS(`#key-add`)))
	alice.poll("the key is listed", `document.querySelectorAll('#keys-list li.key').length === 1 ? 'yes' : ''`, 10*time.Second)
	if got := r.ch.stepUp.list("alice"); len(got) != 1 || got[0].Name != "virtual key" {
		t.Fatalf("alice's credentials %+v, want the virtual key", got)
	}
	credID := r.ch.stepUp.list("alice")[0].ID

	// A step-up question: the card says so; Approve asks the key, and the
	// decision and its audit carry the key's id.
	agent := r.plane.Agent("sess-stepup", "pod-7")
	helm := brokertest.Ask(ctx, agent, "req-helm", "bash", brokertest.Bash("helm upgrade web ./chart"))
	alice.cardShown("req-helm")
	if note := alice.eval(`document.querySelector('#q-req-helm .stepup')?.textContent ?? ''`); !strings.Contains(note, "passkey or security key") {
		t.Fatalf("the step-up card does not say approving needs a key: %q", note)
	}
	if os.Getenv("SIGNOFF_UPDATE_SCREENSHOT") == "1" {
		stepUpScreenshot(t, alice)
	}

	// Without the assertion, the bot refuses (curl as bob) ...
	bob, bobCSRF := r.login(t, "bob", bobPassword)
	status, _, raw := r.respond(t, bob, bobCSRF, "req-helm", actionApprove, "")
	if status != http.StatusForbidden || !strings.Contains(raw, "step_up_required") {
		t.Fatalf("an approval without the assertion through the page: %d %s", status, raw)
	}
	// ... and so do the brokers, to a response sent past the bot.
	q, ok := r.ch.responder().Lookup("req-helm")
	if !ok || q.StepUp == nil {
		t.Fatal("the question carries no step_up")
	}
	rep := r.plane.Approver("default").Respond(messages.Response{V: messages.Version, RequestID: "req-helm", SessionID: q.Request.SessionID,
		Approver: messages.Approver{ID: "bob", Channel: "web"}, Approved: true, Digest: q.ShownDigest()})
	if rep.Applied || !strings.Contains(rep.Reason, "needs step-up") {
		t.Fatalf("the brokers' reply to an approval without step-up: %+v", rep)
	}

	alice.click("req-helm", actionApprove)
	d := helm.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if su := d.DecidedBy.StepUp; su == nil || su.CredentialID != credID || su.Method != messages.StepUpWebAuthn || !su.UserVerified {
		t.Fatalf("decided_by.step_up %+v, want alice's key %s, user verified", d.DecidedBy.StepUp, credID)
	}

	// Replays: an assertion made for one question does not approve
	// another, and one used once is not taken again.
	tf := brokertest.Ask(ctx, r.plane.Agent("sess-stepup-2", "pod-8"), "req-tf", "bash", brokertest.Bash("terraform apply"))
	other := brokertest.Ask(ctx, r.plane.Agent("sess-stepup-3", "pod-9"), "req-other", "bash", brokertest.Bash("helm rollback web"))
	alice.cardShown("req-tf")
	alice.cardShown("req-other")
	got := alice.await("assert for req-tf, send for req-other", `(async () => {
		window.tfAssertion = await window.signoffStepUp('req-tf');
		return await `+respondJS(`{request_id: 'req-other', action: 'approve', step_up: window.tfAssertion}`)+`;
	})()`)
	if !strings.HasPrefix(got, "403 ") || !strings.Contains(got, "no step-up in progress for this question") {
		t.Fatalf("an assertion for req-tf sent for req-other: %s", got)
	}
	got = alice.await("approve req-tf with its assertion", respondJS(`{request_id: 'req-tf', action: 'approve', step_up: window.tfAssertion}`))
	var res RespondResult
	if !strings.HasPrefix(got, "200 ") || json.Unmarshal([]byte(strings.TrimPrefix(got, "200 ")), &res) != nil || !res.Applied || res.State != messages.StatePending {
		t.Fatalf("alice's stepped-up approval of the quorum question: %s", got)
	}
	got = alice.await("replay it", respondJS(`{request_id: 'req-tf', action: 'approve', step_up: window.tfAssertion}`))
	if !strings.HasPrefix(got, "403 ") || !strings.Contains(got, "no step-up in progress") {
		t.Fatalf("a replayed assertion: %s", got)
	}
	got = alice.await("replay it against a new challenge", `(async () => {
		await fetch('/api/stepup/begin', {method: 'POST', headers: {'Content-Type': 'application/json',
			'X-CSRF-Token': document.querySelector('meta[name="csrf-token"]').content}, body: JSON.stringify({request_id: 'req-tf'})});
		return await `+respondJS(`{request_id: 'req-tf', action: 'approve', step_up: window.tfAssertion}`)+`;
	})()`)
	if !strings.HasPrefix(got, "403 ") || !strings.Contains(strings.ToLower(got), "challenge") {
		t.Fatalf("a replayed assertion against a new challenge: %s", got)
	}
	if d, _ := tf.Peek(); d != nil {
		t.Fatalf("the quorum question was decided by replays: %+v", d)
	}
	alice.click("req-other", actionRejectSoft) // a rejection needs no key
	brokertest.WantDecision(t, other.Wait(t), messages.OutcomeDeny, messages.ReasonRejected)

	// Removal: the key is gone, and a step-up cannot start without one.
	alice.do("remove the key", chromedp.Click(chromedp.CSS(`#keys-list .key-remove`)))
	alice.poll("the key is gone", `document.querySelectorAll('#keys-list li.key').length === 0 ? 'yes' : ''`, 5*time.Second)
	got = alice.await("step up without a key", `(async () => { try { await window.signoffStepUp('req-tf'); return 'ok'; } catch (e) { return e.message; } })()`)
	if !strings.Contains(got, "none registered") {
		t.Fatalf("a step-up without a key: %q", got)
	}

	// The audit of people holds the key's life: added, a step-up that
	// approved, the replays refused, removed.
	kinds := map[messages.PersonEventKind]int{}
	for _, e := range r.peopleRecords(t) {
		if e.Approver == "alice" && e.Method == "webauthn" {
			kinds[e.Kind]++
		}
	}
	if kinds[messages.PersonAuthenticatorAdded] != 1 || kinds[messages.PersonStepUp] < 1 ||
		kinds[messages.PersonStepUpFailed] < 2 || kinds[messages.PersonAuthenticatorRemoved] != 1 {
		t.Errorf("alice's webauthn records in the audit of people: %v, want one added, a step-up, the refused replays, one removed", kinds)
	}
	// The refusals above log 403 and 412 in the console on purpose: the
	// page's own problems are checked by the other browser tests.
}

// stepUpScreenshot writes docs/web-step-up.png: a step-up card.
func stepUpScreenshot(t *testing.T, p *browserPage) {
	t.Helper()
	png, err := chromedp.Run(p.ctx, chromedp.Screenshot(chromedp.CSS(`#q-req-helm`)))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.WriteFile("../../../docs/web-step-up.png", png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// With web.webauthn.user_verification: required, only a key that
// verifies its user (a PIN, a fingerprint) is taken: alice's key, which
// proves presence only, cannot be added (with "preferred" it could);
// bob's, which verifies him, is, and his approval's evidence says he was
// verified.
func TestBrowserStepUpRequiredUserVerificationTakesOnlyKeysThatVerify(t *testing.T) {
	r, base := startStepUpRigWith(t, ", user_verification: required")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	browser := startStepUpBrowser(t)
	alice := newBrowserPage(t, browser, "alice")
	alice.login(base, "alice", alicePassword)
	alice.addVirtualKey(false)
	alice.enterEnrollCode(aliceEnrollCode)
	alice.do("name the key", chromedp.SetValue(chromedp.CSS(`#key-name`), "presence-only key"))
	alice.do("add a key", chromedp.Click(chromedp.CSS(`#key-add`)))
	alice.poll("the page says the key was not added", `document.querySelector('#keys-status.error')?.textContent ?? ''`, 10*time.Second)
	if got := r.ch.stepUp.list("alice"); len(got) != 0 {
		t.Fatalf("a key that cannot verify its user was registered: %+v", got)
	}

	bob := newBrowserPage(t, browser, "bob")
	bob.login(base, "bob", bobPassword)
	bob.addVirtualKey(true)
	bob.enterEnrollCode(bobEnrollCode)
	bob.do("name the key", chromedp.SetValue(chromedp.CSS(`#key-name`), "verifying key"))
	bob.do("add a key", chromedp.Click(chromedp.CSS(`#key-add`)))
	bob.poll("the key is listed", `document.querySelectorAll('#keys-list li.key').length === 1 ? 'yes' : ''`, 10*time.Second)
	helm := brokertest.Ask(ctx, r.plane.Agent("sess-uv", "pod-7"), "req-helm", "bash", brokertest.Bash("helm upgrade web ./chart"))
	bob.cardShown("req-helm")
	bob.click("req-helm", actionApprove)
	d := helm.Wait(t)
	brokertest.WantDecision(t, d, messages.OutcomeAllow, messages.ReasonApproved)
	if su := d.DecidedBy.StepUp; su == nil || !su.UserVerified {
		t.Fatalf("decided_by.step_up %+v, want user verified", d.DecidedBy.StepUp)
	}
}

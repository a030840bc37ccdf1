package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// handleCredentials serves GET /api/webauthn/credentials: the signed-in
// approver's authenticators.
func (c *Channel) handleCredentials(w http.ResponseWriter, r *http.Request) {
	p, ok := c.principal(r)
	if !ok {
		c.unauthorized(w, r)
		return
	}
	creds := c.stepUp.list(p.approver)
	// first_key: what adding the first key needs besides this sign-in
	// ("" nothing, "code" the enrollment code, "unavailable" one that was
	// not issued); the page asks for the code only then.
	first := ""
	if len(creds) == 0 {
		first = c.firstKeyProof(p)
	}
	writeJSON(w, http.StatusOK, map[string]any{"credentials": creds, "available": c.stepUp.rp != nil, "first_key": first})
}

// enrollFreshness is how recent a sign-in must be to add or remove an
// authenticator. The second factor must not be enrollable with the first
// alone when that is a session cookie someone took: a page left signed in,
// a cookie copied. (A proxy that signs people in, web.trusted_header,
// decides freshness itself.)
const enrollFreshness = 10 * time.Minute

// staleForEnroll writes the refusal and returns true when p's sign-in is
// too old to change their authenticators.
func (c *Channel) staleForEnroll(w http.ResponseWriter, p principal) bool {
	if p.sess == nil || c.now().Sub(p.sess.signedIn) <= enrollFreshness {
		return false
	}
	writeError(w, http.StatusForbidden, "sign_in_again",
		fmt.Sprintf("adding or removing a security key needs a sign-in in the last %s: sign out and in again", enrollFreshness))
	return true
}

// cannotEnroll writes the refusal and returns true when authenticators
// cannot be changed now: WebAuthn is unavailable, or p's sign-in is too
// old (staleForEnroll).
func (c *Channel) cannotEnroll(w http.ResponseWriter, p principal) bool {
	if c.stepUp.rp == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", c.stepUp.why)
		return true
	}
	return c.staleForEnroll(w, p)
}

// handleRegisterBegin serves POST /api/webauthn/register/begin: the
// options for navigator.credentials.create.
// Once the approver has a key, the body carries one's assertion
// ({confirm}, keychange.go).
func (c *Channel) handleRegisterBegin(w http.ResponseWriter, r *http.Request, p principal) {
	if c.cannotEnroll(w, p) {
		return
	}
	var body struct {
		Confirm    json.RawMessage `json:"confirm"`
		EnrollCode string          `json:"enroll_code"`
	}
	if err := decodeJSONBody(w, r, &body); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "the body must be JSON {}, {enroll_code} or {confirm}")
		return
	}
	if !c.confirmedKeyChange(w, p, keyChange{Action: "add"}, body.Confirm) {
		return
	}
	u := c.stepUp.user(p)
	if len(u.creds) == 0 && !c.firstKeyAllowed(w, p, body.EnrollCode) {
		return
	}
	exclude := make([]protocol.CredentialDescriptor, 0, len(u.creds))
	for _, cr := range u.creds {
		exclude = append(exclude, cr.Descriptor())
	}
	opts, data, err := c.stepUp.rp.BeginRegistration(u, webauthn.WithExclusions(exclude),
		webauthn.WithAuthenticatorSelection(protocol.AuthenticatorSelection{UserVerification: c.stepUp.uv}))
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal", "cannot start the registration: "+err.Error())
		return
	}
	if err := c.stepUp.start(registerKey(p.approver), data, c.now()); err != nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, opts)
}

// registerFinish is POST /api/webauthn/register/finish's body.
type registerFinish struct {
	Name       string          `json:"name"`
	Credential json.RawMessage `json:"credential"`
}

// handleRegisterFinish serves POST /api/webauthn/register/finish: it
// verifies the new credential and stores it for the approver.
func (c *Channel) handleRegisterFinish(w http.ResponseWriter, r *http.Request, p principal) {
	if c.cannotEnroll(w, p) {
		return
	}
	var body registerFinish
	if err := decodeJSONBody(w, r, &body); err != nil || len(body.Credential) == 0 {
		writeError(w, http.StatusBadRequest, "invalid_request", "the body must be JSON {name, credential}")
		return
	}
	data, ok := c.stepUp.take(registerKey(p.approver), c.now())
	if !ok {
		writeError(w, http.StatusBadRequest, "invalid_request", "no registration in progress (it expired, or was finished): start again")
		return
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes(body.Credential)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", "the authenticator's answer cannot be read: "+errText(err))
		return
	}
	cred, err := c.stepUp.rp.CreateCredential(c.stepUp.user(p), data, parsed)
	if err != nil {
		c.log.Warn("web: authenticator registration refused", "approver", p.approver, "err", errText(err))
		writeError(w, http.StatusBadRequest, "invalid_request", "the authenticator's answer does not verify: "+errText(err))
		return
	}
	name := cleanLine(strings.TrimSpace(body.Name), 60)
	if name == "" {
		name = "authenticator"
	}
	if err := c.stepUp.add(p.approver, credential{Credential: *cred, Name: name, AddedAt: c.now().UTC()}); err != nil {
		if errors.Is(err, errTooManyCredentials) || errors.Is(err, errKnownCredential) {
			writeError(w, http.StatusConflict, "conflict", err.Error())
		} else {
			c.log.Error("web: authenticator not registered", "approver", p.approver, "err", err)
			writeError(w, http.StatusServiceUnavailable, "unavailable", "the authenticator was not registered: "+err.Error())
		}
		return
	}
	c.recordPerson(r, messages.PersonAuthenticatorAdded, p.approver, "webauthn", credentialID(cred.ID)+" "+strqs(name))
	writeJSON(w, http.StatusOK, map[string]any{"credentials": c.stepUp.list(p.approver)})
}

// handleCredentialRemove serves POST /api/webauthn/credentials/remove
// {id, confirm}: it removes one of the approver's authenticators, once one
// of them confirmed it (keychange.go).
func (c *Channel) handleCredentialRemove(w http.ResponseWriter, r *http.Request, p principal) {
	if c.staleForEnroll(w, p) {
		return
	}
	var body struct {
		ID      string          `json:"id"`
		Confirm json.RawMessage `json:"confirm"`
	}
	if err := decodeJSONBody(w, r, &body); err != nil || body.ID == "" {
		writeError(w, http.StatusBadRequest, "invalid_request", "the body must be JSON {id, confirm}")
		return
	}
	if !c.confirmedKeyChange(w, p, keyChange{Action: "remove", ID: body.ID}, body.Confirm) {
		return
	}
	removed, err := c.stepUp.remove(p.approver, body.ID)
	if err != nil {
		c.log.Error("web: authenticator not removed", "approver", p.approver, "err", err)
		writeError(w, http.StatusServiceUnavailable, "unavailable", "the authenticator was not removed: "+err.Error())
		return
	}
	if !removed {
		writeError(w, http.StatusNotFound, "not_found", "you have no authenticator "+strqs(body.ID))
		return
	}
	c.recordPerson(r, messages.PersonAuthenticatorRemoved, p.approver, "webauthn", strqs(body.ID))
	writeJSON(w, http.StatusOK, map[string]any{"credentials": c.stepUp.list(p.approver)})
}

// handleStepUpBegin serves POST /api/stepup/begin {request_id}: the
// options for navigator.credentials.get, with a challenge bound to the
// question.
func (c *Channel) handleStepUpBegin(w http.ResponseWriter, r *http.Request, p principal) {
	var body struct {
		RequestID string `json:"request_id"`
	}
	if err := decodeJSONBody(w, r, &body); err != nil || body.RequestID == "" {
		writeError(w, http.StatusBadRequest, "invalid_request", "the body must be JSON {request_id}")
		return
	}
	q, ok := c.lookupFor(p, body.RequestID)
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "unknown question "+cleanLine(body.RequestID, 80))
		return
	}
	if !q.NeedsStepUp() {
		writeError(w, http.StatusBadRequest, "invalid_request", "this question needs no step-up")
		return
	}
	if c.stepUp.rp == nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", c.stepUp.why)
		return
	}
	u := c.stepUp.user(p)
	if len(u.creds) == 0 {
		writeError(w, http.StatusPreconditionFailed, "no_authenticator",
			"approving this call needs a passkey or security key, and you have none registered: add one under Security keys")
		return
	}
	digest := q.ShownDigest()
	challenge, err := questionChallenge(q.Request.RequestID, digest)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal", "cannot start the step-up: "+errText(err))
		return
	}
	c.beginAssertion(w, u, challenge, assertKey(p.approver, q.Request.RequestID, digest), "step-up")
}

// beginAssertion answers with the options for navigator.credentials.get
// that have one of u's keys sign challenge, and keeps the ceremony under
// key for its finish; what names the ceremony ("step-up") in the error of
// one that cannot start.
func (c *Channel) beginAssertion(w http.ResponseWriter, u user, challenge []byte, key, what string) {
	opts, data, err := c.stepUp.rp.BeginLogin(u, webauthn.WithChallenge(challenge),
		webauthn.WithUserVerification(c.stepUp.uv))
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal", "cannot start the "+what+": "+errText(err))
		return
	}
	if err := c.stepUp.start(key, data, c.now()); err != nil {
		writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, opts)
}

// lookupFor is the open or known question id as p may see it.
func (c *Channel) lookupFor(p principal, id string) (approverbot.Question, bool) {
	resp := c.responder()
	if resp == nil {
		return approverbot.Question{}, false
	}
	q, ok := resp.Lookup(id)
	if !ok || !c.sees(p, q) {
		return approverbot.Question{}, false
	}
	return q, true
}

// errStepUpAssertion: the assertion of an approval does not verify.
var errStepUpAssertion = fmt.Errorf("%w: the passkey or security key's assertion is refused", approverbot.ErrStepUp)

// verifyStepUp checks raw, the assertion sent with p's approval of q,
// against the ceremony started for q (which it ends), and returns the
// evidence the response carries.
func (c *Channel) verifyStepUp(p principal, q approverbot.Question, raw json.RawMessage) (*messages.StepUp, error) {
	if c.stepUp.rp == nil {
		return nil, fmt.Errorf("%w: %s", errNoStepUp, c.stepUp.why)
	}
	data, ok := c.stepUp.take(assertKey(p.approver, q.Request.RequestID, q.ShownDigest()), c.now())
	if !ok {
		return nil, fmt.Errorf("%w: no step-up in progress for this question (it expired, was used, or was started for another question): confirm again", errStepUpAssertion)
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: it cannot be read: %s", errStepUpAssertion, errText(err))
	}
	cred, err := c.stepUp.rp.ValidateLogin(c.stepUp.user(p), data, parsed)
	if err != nil {
		c.log.Warn("web: step-up assertion refused", "approver", p.approver, "request_id", q.Request.RequestID, "err", errText(err))
		return nil, fmt.Errorf("%w: %s", errStepUpAssertion, errText(err))
	}
	if cred.Authenticator.CloneWarning {
		return nil, fmt.Errorf("%w: the authenticator's signature counter went back (a cloned authenticator?)", errStepUpAssertion)
	}
	c.stepUp.update(p.approver, cred)
	c.log.Info("web: step-up verified", "approver", p.approver, "request_id", q.Request.RequestID, "credential", credentialID(cred.ID))
	return &messages.StepUp{Method: messages.StepUpWebAuthn, CredentialID: credentialID(cred.ID),
		AssertedAt: c.now().UTC(), UserVerified: parsed.Response.AuthenticatorData.Flags.HasUserVerified()}, nil
}

// errText is err's text with the library's details, on one line.
func errText(err error) string {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.DevInfo != "" {
		return cleanLine(pe.Details+": "+pe.DevInfo, 200)
	}
	return cleanLine(err.Error(), 200)
}

// isJSONNull reports whether raw is absent or null.
func isJSONNull(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

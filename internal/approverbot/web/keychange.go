package web

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/go-webauthn/webauthn/protocol"
)

// Changing an approver's authenticators once they have one needs one of
// them: a fresh sign-in alone (staleForEnroll) is the first factor, and a
// person who has it — a password watched over a shoulder, an OIDC session
// on a borrowed laptop — must not be able to enroll a key of their own nor
// remove the owner's. So adding a key or removing one first asks an
// existing key for an assertion whose challenge is bound to the approver,
// the change and the key it removes (POST /api/webauthn/confirm/begin);
// the change carries it in `confirm`. The first key needs none: there is
// nothing to confirm with. An approver who lost every key is reset by an
// operator (the credentials file).

// keyChange is a change of an approver's authenticators.
type keyChange struct {
	Action string `json:"action"` // "add" or "remove"
	ID     string `json:"id"`     // the key removed ("" to add)
}

func (k keyChange) valid() bool {
	return (k.Action == "add" && k.ID == "") || (k.Action == "remove" && k.ID != "")
}

func (k keyChange) ceremonyKey(approver string) string {
	return "keychange\x00" + approver + "\x00" + k.Action + "\x00" + k.ID
}

// challenge is random, then bound to the approver and the change.
func (k keyChange) challenge(approver string) ([]byte, error) {
	return boundChallenge("signoff-key-change-v1", approver, k.Action, k.ID)
}

// handleKeyChangeBegin serves POST /api/webauthn/confirm/begin {action,
// id}: the options for navigator.credentials.get that confirm the change
// with one of the approver's keys.
func (c *Channel) handleKeyChangeBegin(w http.ResponseWriter, r *http.Request, p principal) {
	if c.cannotEnroll(w, p) {
		return
	}
	var k keyChange
	if err := decodeJSONBody(w, r, &k); err != nil || !k.valid() {
		writeError(w, http.StatusBadRequest, "invalid_request", `the body must be JSON {"action": "add"} or {"action": "remove", "id": KEY}`)
		return
	}
	u := c.stepUp.user(p)
	if len(u.creds) == 0 {
		writeError(w, http.StatusPreconditionFailed, "no_authenticator", "you have no security key to confirm with")
		return
	}
	// A removal names one of the approver's keys: a ceremony is kept only
	// for a change that could happen.
	if k.Action == "remove" && !slices.ContainsFunc(u.creds, func(cr credential) bool { return credentialID(cr.ID) == k.ID }) {
		writeError(w, http.StatusNotFound, "not_found", "you have no authenticator "+strqs(k.ID))
		return
	}
	challenge, err := k.challenge(p.approver)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal", "cannot start the confirmation: "+errText(err))
		return
	}
	c.beginAssertion(w, u, challenge, k.ceremonyKey(p.approver), "confirmation")
}

// confirmedKeyChange checks that p may make change k: nothing to check
// while p has no key; else confirm must be an assertion by one of p's keys
// for the ceremony begun for k (which it ends). On a refusal it writes the
// answer and returns false.
func (c *Channel) confirmedKeyChange(w http.ResponseWriter, p principal, k keyChange, confirm json.RawMessage) bool {
	u := c.stepUp.user(p)
	if len(u.creds) == 0 {
		return true
	}
	refuse := func(why string) bool {
		c.log.Warn("web: authenticator change refused", "approver", p.approver, "action", k.Action, "why", why)
		writeError(w, http.StatusForbidden, "confirm_with_a_key",
			"changing your security keys needs one of them: "+why)
		return false
	}
	if isJSONNull(confirm) {
		return refuse("confirm with a key you have (POST /api/webauthn/confirm/begin, then send its assertion as confirm)")
	}
	data, ok := c.stepUp.take(k.ceremonyKey(p.approver), c.now())
	if !ok {
		return refuse("no confirmation in progress for this change (it expired, was used, or was begun for another change): confirm again")
	}
	parsed, err := protocol.ParseCredentialRequestResponseBytes(confirm)
	if err != nil {
		return refuse("the assertion cannot be read: " + errText(err))
	}
	cred, err := c.stepUp.rp.ValidateLogin(u, data, parsed)
	if err != nil {
		return refuse("the assertion does not verify: " + errText(err))
	}
	if cred.Authenticator.CloneWarning {
		return refuse("the authenticator's signature counter went back (a cloned authenticator?)")
	}
	c.stepUp.update(p.approver, cred)
	c.log.Info("web: authenticator change confirmed", "approver", p.approver, "action", k.Action, "by", credentialID(cred.ID))
	return true
}

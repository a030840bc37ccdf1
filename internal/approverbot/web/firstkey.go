package web

import (
	"fmt"
	"net/http"
	"sort"
	"time"

	"golang.org/x/crypto/bcrypt"
)

// An approver's first security key is their second factor: who adds it
// decides who passes every step-up after. A fresh sign-in is required for
// any key change (staleForEnroll), and once a key exists a change needs
// one of them (keychange.go). The first key has no key to confirm with, so
// with web.webauthn.first_key "verified" (the default) it needs a proof
// the bot itself checks, more than a session:
//
//   - an authentication by the OIDC provider in the last enrollFreshness,
//     by the ID token's auth_time: a sign-in that reused the provider's
//     older session (a borrowed laptop) does not count, and the page
//     offers to sign in again with prompt=login; or
//   - the approver's one-time enrollment code: an operator issues it
//     (`approver-bot enroll-code`), gives the code to the person through
//     another channel and puts its bcrypt hash in
//     approvers.<id>.enroll_code_hash.
//
// A sign-in by the trusted_header proxy proves nothing the bot can check
// about when the person authenticated: it needs the code too.
// "any_sign_in" lets a fresh sign-in of any kind add the first key (small
// setups where whoever holds the password is the approver).

// firstKeyProof says what the first key of p needs besides the fresh
// sign-in: "" (nothing more), "code" (the enrollment code), or
// "unavailable" (a code would be needed and none was issued).
func (c *Channel) firstKeyProof(p principal) string {
	switch {
	case c.stepUp.firstKey == FirstKeyAnySignIn,
		p.sess != nil && p.sess.oidc != nil && c.freshAuthentication(p.sess.oidc):
		return ""
	case c.cfg.Approvers[p.approver].Key(KeyEnrollCodeHash) == "":
		return "unavailable"
	}
	return "code"
}

// freshAuthentication reports whether the provider authenticated the
// person of an OIDC session within enrollFreshness.
func (c *Channel) freshAuthentication(id *oidcIdentity) bool {
	return !id.authTime.IsZero() && c.now().Sub(id.authTime) <= enrollFreshness && !id.authTime.After(c.now().Add(time.Minute))
}

// firstKeyAllowed checks the proof of p's first key; code is what the page
// sent. On a refusal it writes the answer, logs it and returns false.
func (c *Channel) firstKeyAllowed(w http.ResponseWriter, p principal, code string) bool {
	refuse := func(why string) bool {
		c.log.Warn("web: first authenticator refused", "approver", p.approver, "why", why)
		writeError(w, http.StatusForbidden, "first_key_needs_proof", "your first security key needs more than a password: "+why)
		return false
	}
	switch c.firstKeyProof(p) {
	case "":
		return true
	case "unavailable":
		return refuse(c.firstKeyHow("ask an operator for a one-time enrollment code (approver-bot enroll-code)"))
	}
	if code == "" {
		return refuse(c.firstKeyHow("enter the one-time enrollment code your operator gave you"))
	}
	hash := c.cfg.Approvers[p.approver].Key(KeyEnrollCodeHash)
	if bcrypt.CompareHashAndPassword([]byte(hash), []byte(code)) != nil {
		return refuse("the enrollment code is not the one issued to you")
	}
	// One code, one first key: after a reset (or removing every key) the
	// old code, which others may have seen, adds nothing.
	if c.stepUp.codeUsed(p.approver, hash) {
		return refuse(c.firstKeyHow("this enrollment code added a key already; ask an operator for a new one (approver-bot enroll-code)"))
	}
	c.stepUp.beginWithCode(p.approver, hash)
	c.log.Info("web: first authenticator allowed by its enrollment code", "approver", p.approver)
	return true
}

// firstKeyHow is what a refused first key can do instead: how, or, with
// OIDC, authenticate at the provider again.
func (c *Channel) firstKeyHow(how string) string {
	if c.oidc == nil {
		return how
	}
	return how + "; or sign in again at " + c.oidc.cfg.label() + ", which asks for your credentials (" +
		oidcStartPath + "?reauth=1), and add the key within " + enrollFreshness.String()
}

// checkEnrollCodes refuses a config whose enrollment code hashes are not
// bcrypt hashes.
func (c *Channel) checkEnrollCodes() error {
	ids := make([]string, 0, len(c.cfg.Approvers))
	for id := range c.cfg.Approvers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if h := c.cfg.Approvers[id].Key(KeyEnrollCodeHash); h != "" {
			if _, err := bcrypt.Cost([]byte(h)); err != nil {
				return fmt.Errorf("approvers.%s.%s: not a bcrypt hash (make one with `approver-bot enroll-code`): %w", id, KeyEnrollCodeHash, err)
			}
		}
	}
	return nil
}

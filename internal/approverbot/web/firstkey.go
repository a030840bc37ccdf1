package web

import (
	"fmt"
	"net/http"
	"sort"

	"golang.org/x/crypto/bcrypt"
)

// An approver's first security key is their second factor: who adds it
// decides who passes every step-up after. A fresh sign-in is required for
// any key change (staleForEnroll), and once a key exists a change needs
// one of them (keychange.go). The first key has no key to confirm with, so
// with web.webauthn.first_key "verified" (the default) it needs a proof
// that is more than the password a step-up exists to back up:
//
//   - a sign-in with the OIDC provider (the company's own factors), or by
//     the authenticating proxy of web.trusted_header; or
//   - the approver's one-time enrollment code: an operator issues it
//     (`approver-bot enroll-code`), gives the code to the person through
//     another channel and puts its bcrypt hash in
//     approvers.<id>.enroll_code_hash.
//
// "any_sign_in" lets a password alone add the first key (small setups
// where whoever holds the password is the approver).

// firstKeyProof says what the first key of p needs besides the fresh
// sign-in: "" (nothing more), "code" (the enrollment code), or
// "unavailable" (a code would be needed and none was issued).
func (c *Channel) firstKeyProof(p principal) string {
	switch {
	case c.stepUp.firstKey == FirstKeyAnySignIn,
		p.sess != nil && p.sess.oidc != nil,
		c.web.TrustedHeader != "":
		return ""
	case c.cfg.Approvers[p.approver].Key(KeyEnrollCodeHash) == "":
		return "unavailable"
	}
	return "code"
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
		how := "ask an operator for a one-time enrollment code (approver-bot enroll-code)"
		if c.oidc != nil {
			how = "sign in with " + c.oidc.cfg.label() + ", or " + how
		}
		return refuse(how)
	}
	if code == "" {
		return refuse("enter the one-time enrollment code your operator gave you")
	}
	if bcrypt.CompareHashAndPassword([]byte(c.cfg.Approvers[p.approver].Key(KeyEnrollCodeHash)), []byte(code)) != nil {
		return refuse("the enrollment code is not the one issued to you")
	}
	c.log.Info("web: first authenticator allowed by its enrollment code", "approver", p.approver)
	return true
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

package messages

import "time"

// PersonEventKind says what a person did: sign-ins, failed sign-ins,
// sign-outs, step-ups and changes of their authenticators.
type PersonEventKind string

// Kinds of [PersonEvent].
const (
	PersonSignIn               PersonEventKind = "sign_in"
	PersonSignInFailed         PersonEventKind = "sign_in_failed"
	PersonSignOut              PersonEventKind = "sign_out"
	PersonStepUp               PersonEventKind = "step_up"
	PersonStepUpFailed         PersonEventKind = "step_up_failed"
	PersonAuthenticatorAdded   PersonEventKind = "authenticator_added"
	PersonAuthenticatorRemoved PersonEventKind = "authenticator_removed"
)

// PersonEvent is the audit record of something a person did on an
// approver bot (who, when, from where), sent by the bot on
// signoff.v1.people and appended by a broker to the audit stream beside the
// decisions (docs/PROTOCOL.md, "Audit of people").
type PersonEvent struct {
	V    int             `json:"v"`
	Kind PersonEventKind `json:"kind"`
	// Approver is the approver id, or for a failed sign-in the id tried
	// (or the provider's subject) when there was one.
	Approver string `json:"approver,omitempty"`
	// Channel is the bot's channel (web); Method how they proved who they
	// are (password, oidc, proxy, webauthn).
	Channel string `json:"channel"`
	Method  string `json:"method,omitempty"`
	// Remote is the client's address and UserAgent its User-Agent.
	Remote    string `json:"remote,omitempty"`
	UserAgent string `json:"user_agent,omitempty"`
	// Detail says more: why a sign-in failed, the teams it gave, the
	// authenticator's id.
	Detail string    `json:"detail,omitempty"`
	At     time.Time `json:"at"`
}

// Validate checks the kind, the channel (a subject token), the bounds of
// the texts and the time.
func (e *PersonEvent) Validate() error {
	switch e.Kind {
	case PersonSignIn, PersonSignInFailed, PersonSignOut, PersonStepUp, PersonStepUpFailed,
		PersonAuthenticatorAdded, PersonAuthenticatorRemoved:
	default:
		return enumError("kind", string(e.Kind), "sign_in, sign_in_failed, sign_out, step_up, step_up_failed, authenticator_added or authenticator_removed")
	}
	if err := checkToken("channel", e.Channel); err != nil {
		return err
	}
	for _, f := range []struct {
		name, v string
		max     int
	}{{"approver", e.Approver, MaxIDBytes}, {"method", e.Method, MaxIDBytes}, {"remote", e.Remote, MaxIDBytes},
		{"user_agent", e.UserAgent, MaxDisplayBytes}, {"detail", e.Detail, MaxPersonDetailBytes}} {
		if err := checkLine(f.name, f.v, f.max); err != nil {
			return err
		}
	}
	if e.At.IsZero() {
		return &FieldError{Field: "at", Problem: "is required (RFC 3339), got none"}
	}
	return nil
}

// MaxPersonDetailBytes bounds a [PersonEvent]'s detail.
const MaxPersonDetailBytes = 1 << 10

package messages

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// SigningDomain names what a signature over [Response.SigningBytes] is for.
// It is the first value of the signing bytes, so a signature made for a
// Signoff response is not valid for any other message the same key signs.
const SigningDomain = "signoff-response-v1"

// signingMarker starts the signing bytes. 0xFF never occurs in UTF-8, and
// the NATS connect nonce an nkey also signs is text from the server's INFO
// JSON (always valid UTF-8 once decoded): a NATS server, honest or not, can
// never get a client to sign the bytes of a response while authenticating.
const signingMarker = 0xFF

// SignatureLen is the length in bytes of a response signature (ed25519)
// before encoding.
const SignatureLen = 64

// SigningBytes returns the bytes an approver signs for r and a broker
// verifies: every field but Signature, in a fixed order, each written as a
// netstring (decimal byte length, ':', the bytes, ','), after a 0xFF byte
// and the netstring of [SigningDomain]:
//
//	v, request_id, session_id, approver.id, approver.display,
//	approver.channel, approver.device, approved ("true" or "false"), scope,
//	reject_mode, feedback, answer, signed_at, key_id
//
// and, only when the response carries updated_arguments, a netstring with
// them (in the answer's canonical form), then, only when it carries a
// digest, a netstring with the digest, then, only when it carries step_up,
// a netstring with "step_up:", its method, ':', its credential_id, ':',
// its asserted_at (as signed_at) and ":uv" when user_verified; so the
// signing bytes of a response without any of them are what they always
// were. (They cannot be told apart by position, but they can by content:
// canonical arguments start with '{', a digest with "sha256:", step-up
// evidence with "step_up:".) Then, only when approver_groups is not empty, a
// netstring of "groups:" and the groups joined by LF (a group holds no
// control character).
//
// Values are taken as sent: an omitted scope is "", not "once". The answer
// is its JSON with insignificant whitespace removed and '<', '>', '&',
// U+2028 and U+2029 written as \u escapes (what encoding/json sends), so
// that re-encoding a response does not change its signing bytes; an answer
// that is not valid JSON is taken byte for byte. signed_at is written in UTC
// as RFC 3339 with nanoseconds and no trailing zeros ("" when zero).
//
// The bytes are never valid UTF-8 and never the same for two responses that
// differ in any field but Signature. See docs/PROTOCOL.md, "Signed
// responses".
func (r *Response) SigningBytes() []byte {
	fields := [...]string{
		SigningDomain,
		strconv.Itoa(r.V),
		r.RequestID,
		r.SessionID,
		r.Approver.ID,
		r.Approver.Display,
		r.Approver.Channel,
		r.Approver.Device,
		strconv.FormatBool(r.Approved),
		string(r.Scope),
		string(r.RejectMode),
		r.Feedback,
		string(canonicalAnswer(r.Answer)),
		formatSignedAt(r.SignedAt),
		r.KeyID,
	}
	var edit []byte
	if len(r.UpdatedArguments) > 0 {
		edit = canonicalAnswer(r.UpdatedArguments)
	}
	n := 1 + len(edit) + 12 + len(r.Digest) + 12
	for _, f := range fields {
		n += len(f) + 12
	}
	b := make([]byte, 0, n)
	b = append(b, signingMarker)
	for _, f := range fields {
		b = appendNetstring(b, f)
	}
	if len(r.UpdatedArguments) > 0 {
		b = appendNetstring(b, edit)
	}
	if r.Digest != "" {
		b = appendNetstring(b, r.Digest)
	}
	if r.StepUp != nil {
		b = appendNetstring(b, r.StepUp.signingText())
	}
	if len(r.ApproverGroups) > 0 {
		b = appendNetstring(b, "groups:"+strings.Join(r.ApproverGroups, "\n"))
	}
	return b
}

// appendNetstring appends f as a field of the signing bytes: its length in
// bytes, a colon, f and a comma.
func appendNetstring[T string | []byte](b []byte, f T) []byte {
	b = strconv.AppendInt(b, int64(len(f)), 10)
	b = append(b, ':')
	b = append(b, f...)
	return append(b, ',')
}

// signingText is the step-up evidence as the signing bytes hold it.
func (s *StepUp) signingText() string {
	t := "step_up:" + s.Method + ":" + s.CredentialID + ":" + formatSignedAt(s.AssertedAt)
	if s.UserVerified {
		t += ":uv"
	}
	return t
}

// canonicalAnswer returns the answer as encoding/json sends a
// json.RawMessage: compact, with HTML-significant characters escaped. Both
// steps are idempotent, so the signer (holding the value before encoding)
// and the broker (holding the bytes received) compute the same form.
func canonicalAnswer(raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, raw); err != nil {
		return raw
	}
	var out bytes.Buffer
	json.HTMLEscape(&out, compact.Bytes())
	return out.Bytes()
}

func formatSignedAt(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// EncodeSignature returns the wire form of a signature: unpadded base64url
// (RFC 4648 §5), 86 characters for an ed25519 signature.
func EncodeSignature(sig []byte) string { return base64.RawURLEncoding.EncodeToString(sig) }

// DecodeSignature parses the wire form of a signature. It fails with a
// [*FieldError] on "signature" unless s is unpadded base64url of exactly
// [SignatureLen] bytes.
func DecodeSignature(s string) ([]byte, error) {
	if s == "" {
		return nil, &FieldError{Field: "signature", Problem: "is missing"}
	}
	if base64.RawURLEncoding.DecodedLen(len(s)) != SignatureLen {
		return nil, &FieldError{Field: "signature", Problem: "must be " +
			strconv.Itoa(base64.RawURLEncoding.EncodedLen(SignatureLen)) +
			" characters of unpadded base64url (an ed25519 signature), got " + strconv.Itoa(len(s))}
	}
	sig, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, &FieldError{Field: "signature", Problem: "is not unpadded base64url: " + err.Error(), Err: err}
	}
	return sig, nil
}

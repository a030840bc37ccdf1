package webhook

import (
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
)

// Headers of the signed requests, both directions.
const (
	HeaderTimestamp = "X-Signoff-Timestamp"
	HeaderSignature = "X-Signoff-Signature"
	// HeaderEvent names the type of an outgoing event.
	HeaderEvent = "X-Signoff-Event"
	// HeaderDelivery identifies one delivery across its retries.
	HeaderDelivery = "X-Signoff-Delivery"
)

// MaxSkew is how far a signed request's timestamp may be from now.
const MaxSkew = 5 * time.Minute

// Errors of request verification. Both are answered with 401.
var (
	// ErrBadSignature: the signature header is missing, malformed or does
	// not match the body.
	ErrBadSignature = errors.New("signature is missing or does not match (want " + HeaderSignature + ": sha256=<hex HMAC-SHA256(secret, timestamp + \".\" + body)>)")
	// ErrStaleRequest: the timestamp header is missing, not unix seconds,
	// or more than five minutes away from now.
	ErrStaleRequest = errors.New("timestamp is missing, not unix seconds, or more than 5 minutes from now (" + HeaderTimestamp + ")")
)

// Signature returns the signature header value of body sent at timestamp
// (unix seconds, as written in the timestamp header):
// "sha256=" + hex HMAC-SHA256(secret, timestamp + "." + body).
func Signature(secret, timestamp string, body []byte) string {
	return "sha256=" + hex.EncodeToString(mac(secret, timestamp, body))
}

func mac(secret, timestamp string, body []byte) []byte {
	return approverbot.HMAC(secret, []byte(timestamp), []byte("."), body)
}

// Sign sets the timestamp and signature headers of a request with body
// sent at t.
func Sign(h http.Header, secret string, t time.Time, body []byte) {
	ts := strconv.FormatInt(t.Unix(), 10)
	h.Set(HeaderTimestamp, ts)
	h.Set(HeaderSignature, Signature(secret, ts, body))
}

// Verify checks the timestamp and signature headers of a request with
// body against secret at now. It returns [ErrStaleRequest] or
// [ErrBadSignature].
func Verify(secret string, h http.Header, body []byte, now time.Time) error {
	ts := h.Get(HeaderTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || !approverbot.WithinSkew(sec, now, MaxSkew) {
		return ErrStaleRequest
	}
	if !approverbot.HexMatches(h.Get(HeaderSignature), "sha256=", mac(secret, ts, body)) {
		return ErrBadSignature
	}
	return nil
}

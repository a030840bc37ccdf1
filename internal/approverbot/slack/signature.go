package slack

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// MaxSkew is how far a request's timestamp may be from now: Slack's
// documented replay window.
const MaxSkew = 5 * time.Minute

// Headers of Slack's request signing.
const (
	HeaderSignature = "X-Slack-Signature"
	HeaderTimestamp = "X-Slack-Request-Timestamp"
)

// Verify checks that body was signed by Slack with secret, as documented in
// "Verifying requests from Slack": the timestamp header is within [MaxSkew]
// of now, and the signature header is "v0=" followed by the hex
// HMAC-SHA256 of "v0:{timestamp}:{body}". It returns [ErrStaleRequest] or
// [ErrBadSignature].
func Verify(secret string, h http.Header, body []byte, now time.Time) error {
	tsHeader := h.Get(HeaderTimestamp)
	ts, err := strconv.ParseInt(strings.TrimSpace(tsHeader), 10, 64)
	if err != nil {
		return ErrStaleRequest
	}
	if skew := now.Sub(time.Unix(ts, 0)); skew > MaxSkew || skew < -MaxSkew {
		return ErrStaleRequest
	}
	sig, ok := strings.CutPrefix(h.Get(HeaderSignature), "v0=")
	if !ok {
		return ErrBadSignature
	}
	got, err := hex.DecodeString(sig)
	if err != nil {
		return ErrBadSignature
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:"))
	mac.Write([]byte(tsHeader))
	mac.Write([]byte(":"))
	mac.Write(body)
	if !hmac.Equal(got, mac.Sum(nil)) {
		return ErrBadSignature
	}
	return nil
}

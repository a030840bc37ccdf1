package slack

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/internal/approverbot"
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
	if err != nil || !approverbot.WithinSkew(ts, now, MaxSkew) {
		return ErrStaleRequest
	}
	want := approverbot.HMAC(secret, []byte("v0:"), []byte(tsHeader), []byte(":"), body)
	if !approverbot.HexMatches(h.Get(HeaderSignature), "v0=", want) {
		return ErrBadSignature
	}
	return nil
}

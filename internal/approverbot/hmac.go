package approverbot

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// The checks of a request signed with HMAC-SHA256 and a timestamp, as
// Slack signs its requests to the bot and the webhook channel signs both
// ways: each service puts its own parts and prefix in.

// WithinSkew reports whether a request's timestamp sec (unix seconds) is
// at most maxSkew away from now, either way.
func WithinSkew(sec int64, now time.Time, maxSkew time.Duration) bool {
	skew := now.Sub(time.Unix(sec, 0))
	return skew <= maxSkew && skew >= -maxSkew
}

// HMAC is the HMAC-SHA256 with secret of the parts, in order.
func HMAC(secret string, parts ...[]byte) []byte {
	m := hmac.New(sha256.New, []byte(secret))
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// HexMatches reports whether sig, a signature header's value, is prefix
// followed by the hex of want (compared in constant time).
func HexMatches(sig, prefix string, want []byte) bool {
	s, ok := strings.CutPrefix(sig, prefix)
	if !ok {
		return false
	}
	got, err := hex.DecodeString(s)
	return err == nil && hmac.Equal(got, want)
}

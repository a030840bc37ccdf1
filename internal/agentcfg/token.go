package agentcfg

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/signoff-dev/signoff/pkg/messages"
)

// maxTokenBytes is the longest token [Token] returns, the protocol's limit
// for ids (docs/PROTOCOL.md, Tokens and limits).
const maxTokenBytes = 128

// Token maps s to a single subject token that the protocol accepts as a
// session, request or agent id. The mapping is stable (the same s always
// gives the same token) and injective:
//
//   - ASCII letters, digits, '-', '_', ':', '/', '@', '+' and '=' stay as
//     they are; every other byte, '~' included, becomes '~' followed by two
//     upper-case hex digits ("a.b" → "a~2Eb", "a~b" → "a~7Eb").
//   - When the escaped form is longer than 128 bytes, the token is "~h"
//     followed by the hex SHA-256 of s. An escape is always '~' and an
//     upper-case hex digit, never "~h", so the two forms cannot meet.
//
// An empty s gives "".
func Token(s string) string {
	if s == "" {
		return ""
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if plainTokenByte(c) {
			b.WriteByte(c)
			continue
		}
		const hexDigits = "0123456789ABCDEF"
		b.WriteByte('~')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0x0f])
		if b.Len() > maxTokenBytes {
			break
		}
	}
	if b.Len() > maxTokenBytes {
		sum := sha256.Sum256([]byte(s))
		return "~h" + hex.EncodeToString(sum[:])
	}
	return b.String()
}

func plainTokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-_:/@+=", c) >= 0
}

// validToken reports whether s is acceptable as an id as it stands.
func validToken(field, s string) error { return messages.ValidateToken(field, s) }

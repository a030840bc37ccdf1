package tenancy

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// RequestInfoHeader is the header a NATS server sets on every request that
// crosses a service import with share:true. The server overwrites one a
// client sets, so it cannot be forged from a tenant account.
const RequestInfoHeader = "Nats-Request-Info"

// RequestInfo is what the broker reads of [RequestInfoHeader]: the
// requester's account and authenticated user. The header's "name" is the
// client's own connection name, chosen by the client: it is never read.
type RequestInfo struct {
	// Account is the account name (config-file mode) or public key
	// (operator mode).
	Account string `json:"acc"`
	// User is the authenticated user: its nkey public key, user name, or
	// (operator mode) its user JWT's public key.
	User string `json:"user"`
}

// ErrBadRequestInfo is returned for a header that is not the server's.
var ErrBadRequestInfo = errors.New("malformed " + RequestInfoHeader + " header")

// ParseRequestInfo decodes the header's value. Only acc and user are kept;
// a header without an account is refused.
// It runs on every request: a scan of the object's members reads the two
// strings without decoding the rest (scanRequestInfo); what the scan does
// not take on (escapes, anything malformed) goes to encoding/json, which the
// fuzz test holds it equal to.
func ParseRequestInfo(value string) (RequestInfo, error) {
	ri, ok := scanRequestInfo(value)
	if !ok {
		ri = RequestInfo{}
		if err := json.Unmarshal([]byte(value), &ri); err != nil {
			return RequestInfo{}, fmt.Errorf("%w: %v", ErrBadRequestInfo, err)
		}
	}
	if ri.Account == "" {
		return RequestInfo{}, fmt.Errorf("%w: no account", ErrBadRequestInfo)
	}
	return ri, nil
}

// scanRequestInfo reads acc and user from a JSON object whose member names
// and string values hold no escapes, as nats-server writes it. It reports
// false for anything else (the caller decodes with encoding/json). Like
// encoding/json, the last of duplicate members wins.
func scanRequestInfo(s string) (ri RequestInfo, ok bool) {
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return ri, false
	}
	i = skipSpace(s, i+1)
	if i < len(s) && s[i] == '}' {
		return ri, skipSpace(s, i+1) == len(s)
	}
	for {
		key, j, ok := plainString(s, i)
		if !ok {
			return ri, false
		}
		if j = skipSpace(s, j); j >= len(s) || s[j] != ':' {
			return ri, false
		}
		j = skipSpace(s, j+1)
		switch key {
		case "acc", "user":
			v, k, ok := plainString(s, j)
			if !ok {
				return ri, false
			}
			if key == "acc" {
				ri.Account = v
			} else {
				ri.User = v
			}
			j = k
		default:
			// encoding/json matches member names without regard to case.
			if strings.EqualFold(key, "acc") || strings.EqualFold(key, "user") {
				return ri, false
			}
			if j, ok = skipValue(s, j); !ok {
				return ri, false
			}
		}
		j = skipSpace(s, j)
		switch {
		case j < len(s) && s[j] == ',':
			i = skipSpace(s, j+1)
		case j < len(s) && s[j] == '}':
			return ri, skipSpace(s, j+1) == len(s)
		default:
			return ri, false
		}
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// plainString reads a JSON string at s[i] that holds no escape and no
// control or non-ASCII byte (those go to encoding/json, which also checks
// UTF-8).
func plainString(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", i, false
	}
	for j := i + 1; j < len(s); j++ {
		switch c := s[j]; {
		case c == '"':
			return s[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return "", j, false
		}
	}
	return "", i, false
}

// skipValue skips one value of the fields the broker does not read:
// plain strings, numbers, literals, and arrays of plain strings (tags,
// alts). Anything else reports false.
func skipValue(s string, i int) (int, bool) {
	if i >= len(s) {
		return i, false
	}
	switch c := s[i]; {
	case c == '"':
		_, j, ok := plainString(s, i)
		return j, ok
	case c == '[':
		j := skipSpace(s, i+1)
		if j < len(s) && s[j] == ']' {
			return j + 1, true
		}
		for {
			_, k, ok := plainString(s, j)
			if !ok {
				return k, false
			}
			k = skipSpace(s, k)
			if k < len(s) && s[k] == ']' {
				return k + 1, true
			}
			if k >= len(s) || s[k] != ',' {
				return k, false
			}
			j = skipSpace(s, k+1)
		}
	case c == '-' || (c >= '0' && c <= '9'):
		// Only integers without leading zeros (rtt and id): anything else
		// is left to encoding/json.
		j := i
		if c == '-' {
			j++
		}
		start := j
		for j < len(s) && (s[j] >= '0' && s[j] <= '9') {
			j++
		}
		return j, j > start && (s[start] != '0' || j == start+1)
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if strings.HasPrefix(s[i:], lit) {
				return i + len(lit), true
			}
		}
		return i, false
	}
}

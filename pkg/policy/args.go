package policy

import (
	"bytes"
	"encoding/json"
	"unicode"
	"unicode/utf8"
)

// argValue is one top-level argument of interest.
type argValue struct {
	key string
	raw []byte // the raw JSON value
}

// scanArgs appends to dst every top-level member of the JSON object data
// whose key is one of names, in document order. Unlike encoding/json it
// compares keys exactly (encoding/json folds case, so {"path":".env",
// "PATH":"x"} would be judged by the wrong member) and it reports every
// duplicate, so the caller can judge them all. Empty or null data is an
// empty object.
func scanArgs(dst []argValue, data []byte, names []string) ([]argValue, error) {
	dst, _, err := scanArgsOthers(dst, data, names, nil, false)
	return dst, err
}

// scanArgsOthers is scanArgs that also appends to others, when keep is
// set, the keys of the members that are none of names, as written.
func scanArgsOthers(dst []argValue, data []byte, names []string, others []string, keep bool) ([]argValue, []string, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || string(data) == "null" {
		return dst, others, nil
	}
	if !json.Valid(data) {
		return dst, others, errArgsNotJSON
	}
	if data[0] != '{' {
		return dst, others, errArgsNotObject
	}
	i := skipSpace(data, 1)
	for i < len(data) && data[i] != '}' {
		kEnd := skipString(data, i)
		rawKey := data[i:kEnd]
		i = skipSpace(data, kEnd)
		i = skipSpace(data, i+1) // ':'
		vEnd := skipValue(data, i)
		if key, ok := matchKey(rawKey, names); ok {
			dst = append(dst, argValue{key: key, raw: data[i:vEnd]})
		} else if keep {
			others = append(others, unquoteKey(rawKey))
		}
		i = skipSpace(data, vEnd)
		if i < len(data) && data[i] == ',' {
			i = skipSpace(data, i+1)
		}
	}
	return dst, others, nil
}

// matchKey reports which of names the quoted JSON key rawKey spells.
// Names are written in lower case without separators ("filepath"); a key
// matches whatever its case and its '_' or '-' separators (file_path,
// filePath, FILE-PATH), so that no agent's spelling hides a path.
func matchKey(rawKey []byte, names []string) (string, bool) {
	inner := rawKey[1 : len(rawKey)-1]
	if bytes.IndexByte(inner, '\\') >= 0 {
		var k string
		if json.Unmarshal(rawKey, &k) != nil {
			return "", false
		}
		inner = []byte(k)
	}
	for _, n := range names {
		if keyEqual(inner, n) {
			return n, true
		}
	}
	return "", false
}

// keyEqual compares a key with a normalized name, ignoring case and the
// separators '_' and '-'. Case is Unicode simple folding, as Go's
// encoding/json matches keys to fields (a server decoding {"pathſ": …}
// fills its field "paths": U+017F folds to s, U+212A to k), so a key the
// tool's server reads as a path key is one here too (red team AF F6). It
// does not allocate.
func keyEqual(key []byte, name string) bool {
	j := 0
	for i := 0; i < len(key); {
		c := key[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRune(key[i:])
			c = asciiFold(r)
			i += size
			if c == 0 {
				return false
			}
		} else {
			i++
		}
		if c == '_' || c == '-' {
			continue
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if j >= len(name) || name[j] != c {
			return false
		}
		j++
	}
	return j == len(name)
}

// asciiFold returns the ASCII letter r folds to under Unicode simple
// folding, or 0 when there is none.
func asciiFold(r rune) byte {
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		if f < utf8.RuneSelf {
			return byte(f)
		}
	}
	return 0
}

// argStrings returns the strings a raw JSON value holds: one for a string,
// each item for an array of strings. ok is false for anything else (a
// number, an object, an array holding a non-string).
func argStrings(raw []byte, dst []string) ([]string, bool) {
	if s, ok := argString(raw); ok {
		return append(dst, s), true
	}
	if len(raw) == 0 || raw[0] != '[' {
		return dst, false
	}
	var items []string
	if json.Unmarshal(raw, &items) != nil {
		return dst, false
	}
	return append(dst, items...), true
}

// argString returns the string a raw JSON value holds; ok is false when the
// value is not a string.
func argString(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// The scanners below run on input json.Valid accepted.

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\r', '\n':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string starting at b[i] == '"'.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index just past the value starting at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default:
		for i < len(b) {
			switch b[i] {
			case ',', '}', ']', ' ', '\t', '\r', '\n':
				return i
			}
			i++
		}
		return i
	}
}

// unquoteKey returns the key a quoted JSON key spells (as written when it
// does not decode, which json.Valid has ruled out).
func unquoteKey(rawKey []byte) string {
	var k string
	if json.Unmarshal(rawKey, &k) != nil {
		return string(rawKey)
	}
	return k
}

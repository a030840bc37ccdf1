package messages

import (
	"bytes"
	"encoding/json"
)

// decodeRequestFast decodes the common shape of a [Request] without
// reflection: every broker decision starts by decoding one, and
// encoding/json spent about a tenth of the broker's CPU on it (docs/BENCHMARKS.md,
// "Eighth sitting").
//
// It handles a subset of what json.Unmarshal accepts and gives exactly
// json.Unmarshal's result on it: a JSON object whose keys are the
// Request's field names written exactly (or names no field answers to),
// each once, whose string fields hold strings without escapes, whose
// numbers are integers of at most 18 digits, and whose arguments are any
// valid JSON value but null. Anything else (an escape, a null, a key that
// matches a field only case-insensitively as encoding/json allows, a
// duplicate key, a syntax error) returns false with r in an unspecified
// state, and the caller decodes with json.Unmarshal instead, errors
// included. FuzzDecodeRequestFast holds it to that.
//
// data has passed checkEnvelope: valid UTF-8, an object.
func decodeRequestFast(data []byte, r *Request) bool {
	seen := 0
	_, ok := scanObject(data, 0, true, func(key []byte, data []byte, i int) (int, bool) {
		f, known := requestField(key)
		if !known {
			return skipUnknown(key, requestFieldNames[:], data, i)
		}
		if seen&(1<<f) != 0 {
			return 0, false
		}
		seen |= 1 << f
		switch f {
		case fieldV:
			n, j, ok := plainInt(data, i)
			r.V = int(n)
			return j, ok
		case fieldTTL:
			n, j, ok := plainInt(data, i)
			r.TTLMillis = n
			return j, ok
		case fieldArguments:
			raw, j, ok := rawValue(data, i)
			r.Arguments = raw
			return j, ok
		case fieldBatch:
			return batchItems(data, i, &r.BatchRemaining)
		}
		s, j, ok := plainString(data, i)
		if ok {
			*r.stringField(f) = string(s)
		}
		return j, ok
	})
	return ok
}

const (
	fieldV = iota
	fieldRequestID
	fieldSessionID
	fieldAgentID
	fieldAgentType
	fieldRequestedBy
	fieldCallID
	fieldTool
	fieldCategory
	fieldArguments
	fieldDescription
	fieldCwd
	fieldHome
	fieldBatch
	fieldTTL
	fieldIdentity
	numRequestFields
)

// requestFieldNames are the JSON names of Request's fields, by field
// constant; TestRequestFieldNames checks them against the struct tags.
var requestFieldNames = [numRequestFields]string{
	fieldV: "v", fieldRequestID: "request_id", fieldSessionID: "session_id", fieldAgentID: "agent_id",
	fieldAgentType: "agent_type", fieldRequestedBy: "requested_by", fieldCallID: "call_id", fieldTool: "tool",
	fieldCategory: "category", fieldArguments: "arguments", fieldDescription: "description", fieldCwd: "cwd",
	fieldHome: "home", fieldBatch: "batch_remaining", fieldTTL: "ttl_ms",
	fieldIdentity: "identity",
}

func requestField(key []byte) (int, bool) {
	for f, name := range requestFieldNames {
		if string(key) == name {
			return f, true
		}
	}
	return 0, false
}

// stringField is the string-typed field f.
func (r *Request) stringField(f int) *string {
	switch f {
	case fieldRequestID:
		return &r.RequestID
	case fieldSessionID:
		return &r.SessionID
	case fieldAgentID:
		return &r.AgentID
	case fieldAgentType:
		return &r.AgentType
	case fieldRequestedBy:
		return &r.RequestedBy
	case fieldCallID:
		return &r.CallID
	case fieldTool:
		return &r.Tool
	case fieldCategory:
		return (*string)(&r.Category)
	case fieldDescription:
		return &r.Description
	case fieldCwd:
		return &r.Cwd
	case fieldHome:
		return &r.Home
	case fieldIdentity:
		return (*string)(&r.Identity)
	}
	panic("messages: no string field")
}

var batchItemNames = []string{"tool", "arguments"}

// batchItems decodes batch_remaining: an array of objects of tool and
// arguments. An empty array is an empty slice, not nil, as encoding/json
// makes it.
func batchItems(data []byte, i int, out *[]BatchItem) (int, bool) {
	if i >= len(data) || data[i] != '[' {
		return 0, false
	}
	items := make([]BatchItem, 0, 4)
	i = skipSpaces(data, i+1)
	if i < len(data) && data[i] == ']' {
		*out = items
		return i + 1, true
	}
	for {
		var it BatchItem
		var seenTool, seenArgs bool
		j, ok := scanObject(data, i, false, func(key []byte, data []byte, i int) (int, bool) {
			switch {
			case string(key) == "tool" && !seenTool:
				seenTool = true
				s, j, ok := plainString(data, i)
				it.Tool = string(s)
				return j, ok
			case string(key) == "arguments" && !seenArgs:
				seenArgs = true
				raw, j, ok := rawValue(data, i)
				it.Arguments = raw
				return j, ok
			case string(key) == "tool" || string(key) == "arguments":
				return 0, false // a duplicate
			}
			return skipUnknown(key, batchItemNames, data, i)
		})
		if !ok {
			return 0, false
		}
		items = append(items, it)
		var end bool
		if i, end, ok = nextItem(data, j, ']'); !ok {
			return 0, false
		} else if end {
			*out = items
			return i, true
		}
	}
}

// scanObject walks the object at data[i:] (after spaces), calling field
// with each key and the index of its value (after spaces); field returns
// the index just past the value. At the top level nothing but spaces may
// follow the object. It returns the index past the object.
func scanObject(data []byte, i int, top bool, field func(key, data []byte, i int) (int, bool)) (int, bool) {
	i = skipSpaces(data, i)
	if i >= len(data) || data[i] != '{' {
		return 0, false
	}
	i = skipSpaces(data, i+1)
	if i < len(data) && data[i] == '}' {
		i++
	} else {
		for {
			key, j, ok := plainString(data, i)
			if !ok {
				return 0, false
			}
			i = skipSpaces(data, j)
			if i >= len(data) || data[i] != ':' {
				return 0, false
			}
			if i, ok = field(key, data, skipSpaces(data, i+1)); !ok {
				return 0, false
			}
			var end bool
			if i, end, ok = nextItem(data, i, '}'); !ok {
				return 0, false
			} else if end {
				break
			}
		}
	}
	if top {
		if skipSpaces(data, i) != len(data) {
			return 0, false
		}
	}
	return i, true
}

// skipUnknown skips the value of a key that names no field, unless the key
// matches one case-insensitively: encoding/json would decode it into that
// field (by Unicode simple folding, so "ſession_id" is session_id), which
// the fast path leaves to it.
func skipUnknown(key []byte, names []string, data []byte, i int) (int, bool) {
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return 0, false
		}
	}
	return skipValue(data, i, 0)
}

// plainString reads the string at data[i:] when it holds no escape and no
// control character, and returns its contents (aliasing data) and the
// index past its closing quote.
func plainString(data []byte, i int) ([]byte, int, bool) {
	if i >= len(data) || data[i] != '"' {
		return nil, 0, false
	}
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return data[i+1 : j], j + 1, true
		case c == '\\' || c < 0x20:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

// plainInt reads an integer written as JSON writes it (-?(0|[1-9][0-9]*)),
// of at most 18 digits so that it cannot overflow an int64.
func plainInt(data []byte, i int) (int64, int, bool) {
	neg := i < len(data) && data[i] == '-'
	if neg {
		i++
	}
	start := i
	var n int64
	for i < len(data) && data[i] >= '0' && data[i] <= '9' {
		n = n*10 + int64(data[i]-'0')
		i++
	}
	digits := i - start
	if digits == 0 || digits > 18 || digits > 1 && data[start] == '0' {
		return 0, 0, false
	}
	if i < len(data) && (data[i] == '.' || data[i] == 'e' || data[i] == 'E') {
		return 0, 0, false
	}
	if neg {
		n = -n
	}
	return n, i, true
}

// rawValue returns a copy of the JSON value at data[i:], as
// json.RawMessage keeps it, and the index past it. null is left to
// encoding/json.
func rawValue(data []byte, i int) (json.RawMessage, int, bool) {
	if i < len(data) && data[i] == 'n' {
		return nil, 0, false
	}
	j, ok := skipValue(data, i, 0)
	if !ok {
		return nil, 0, false
	}
	return append(json.RawMessage(nil), data[i:j]...), j, true
}

// maxSkipDepth bounds the nesting skipValue follows; deeper values go to
// encoding/json (whose own limit is 10,000).
const maxSkipDepth = 256

// skipValue checks the JSON value at data[i:] against the JSON grammar and
// returns the index past it.
func skipValue(data []byte, i, depth int) (int, bool) {
	if i >= len(data) || depth > maxSkipDepth {
		return 0, false
	}
	switch c := data[i]; {
	case c == '"':
		return skipString(data, i)
	case c == '{':
		i = skipSpaces(data, i+1)
		if i < len(data) && data[i] == '}' {
			return i + 1, true
		}
		for {
			j, ok := skipString(data, i)
			if !ok {
				return 0, false
			}
			var end bool
			i = skipSpaces(data, j)
			if i >= len(data) || data[i] != ':' {
				return 0, false
			}
			if i, ok = skipValue(data, skipSpaces(data, i+1), depth+1); !ok {
				return 0, false
			}
			if i, end, ok = nextItem(data, i, '}'); !ok || end {
				return i, ok
			}
		}
	case c == '[':
		i = skipSpaces(data, i+1)
		if i < len(data) && data[i] == ']' {
			return i + 1, true
		}
		for {
			var ok, end bool
			if i, ok = skipValue(data, i, depth+1); !ok {
				return 0, false
			}
			if i, end, ok = nextItem(data, i, ']'); !ok || end {
				return i, ok
			}
		}
	case c == 't':
		return skipLiteral(data, i, "true")
	case c == 'f':
		return skipLiteral(data, i, "false")
	case c == 'n':
		return skipLiteral(data, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return skipNumber(data, i)
	}
	return 0, false
}

func skipLiteral(data []byte, i int, lit string) (int, bool) {
	if !bytes.HasPrefix(data[i:], []byte(lit)) {
		return 0, false
	}
	return i + len(lit), true
}

// skipString checks a string with its escapes (data is valid UTF-8).
func skipString(data []byte, i int) (int, bool) {
	if i >= len(data) || data[i] != '"' {
		return 0, false
	}
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return j + 1, true
		case c < 0x20:
			return 0, false
		case c == '\\':
			j++
			if j >= len(data) {
				return 0, false
			}
			switch data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(data) {
					return 0, false
				}
				for _, h := range data[j+1 : j+5] {
					if !isHex(h) {
						return 0, false
					}
				}
				j += 4
			default:
				return 0, false
			}
		}
	}
	return 0, false
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// skipNumber checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func skipNumber(data []byte, i int) (int, bool) {
	if data[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
			n++
		}
		return n
	}
	start := i
	if n := digits(); n == 0 || n > 1 && data[start] == '0' {
		return 0, false
	}
	if i < len(data) && data[i] == '.' {
		i++
		if digits() == 0 {
			return 0, false
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, false
		}
	}
	return i, true
}

// nextItem reads what follows an item of an object or array at data[i:]:
// the closer (end is true, next is past it) or a comma (next is the
// following item, after spaces).
func nextItem(data []byte, i int, closer byte) (next int, end, ok bool) {
	i = skipSpaces(data, i)
	switch {
	case i >= len(data):
		return 0, false, false
	case data[i] == closer:
		return i + 1, true, true
	case data[i] == ',':
		return skipSpaces(data, i+1), false, true
	}
	return 0, false, false
}

func skipSpaces(data []byte, i int) int {
	for i < len(data) && isJSONSpace(data[i]) {
		i++
	}
	return i
}

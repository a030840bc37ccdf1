package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// retryConflict checks an agent's retry of a request id that is stored
// (DESIGN §3: the request id is the idempotency key; a retry with
// different content is an invalid_request). It returns nil when req is the
// stored request again, and otherwise a field error on request_id naming
// the fields that differ — as payment APIs answer a reused idempotency key.
//
// The stored request is the one in the record's question, compared as
// JSON values: whitespace and key order inside the arguments do not count,
// any field the protocol gains does. A key repeated in an object counts,
// with its values in their order: {"command":"rm -rf /","command":"ls"}
// is not {"command":"ls"} — a retry of an approved call must not carry a
// value nobody saw, which a tool that reads the first of repeated keys
// would run. Numbers compare by their JSON text (json.Number): one that no
// float64 holds (1e999) is still a value, never a reason to skip the
// comparison. Automatic decisions are not stored, so a retry of one is
// evaluated afresh whatever its content (docs/PROTOCOL.md).
//
// A retry that cannot be compared — the stored question is unreadable, or
// either request cannot be read back as JSON values — is a conflict too
// (fail closed): the stored receipt, an approval perhaps, belongs to the
// stored call, and only a retry shown to be that call may receive it.
func retryConflict(stored *session.Record, req *messages.Request) error {
	q, err := Question(stored)
	if err != nil {
		return &messages.FieldError{Field: "request_id", Problem: fmt.Sprintf(
			"%q is stored, but its request cannot be read to compare this retry with (%v); a new call needs a new request_id", req.RequestID, err)}
	}
	was := q.Request
	was.BatchRemaining = q.BatchRemaining // stored once, at the top level
	a, errA := contentOf(&was)
	b, errB := contentOf(req)
	if err := errors.Join(errA, errB); err != nil {
		return &messages.FieldError{Field: "request_id", Problem: fmt.Sprintf(
			"%q was already used, and this retry cannot be compared with the stored request (%v); a new call needs a new request_id", req.RequestID, err)}
	}
	var diff []string
	for k := range a {
		if bk, ok := b[k]; !ok || a[k] != bk {
			diff = append(diff, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			diff = append(diff, k)
		}
	}
	if len(diff) == 0 {
		return nil
	}
	slices.Sort(diff)
	return &messages.FieldError{Field: "request_id", Problem: fmt.Sprintf(
		"%q was already used for a different request (%s differs); a retry must repeat the request unchanged, a new call needs a new request_id",
		req.RequestID, strings.Join(diff, ", "))}
}

// contentOf is a request as JSON values by field, each in its canonical
// form (canonicalJSON), without the version and the identity (the
// broker's mark, not the agent's content: a request stored before
// identities were marked is the same call).
func contentOf(r *messages.Request) (map[string]string, error) {
	c := *r
	c.V = 0
	c.Identity = ""
	data, err := json.Marshal(&c)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	delete(m, "v")
	out := make(map[string]string, len(m))
	for k, v := range m {
		var b strings.Builder
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		if err := canonicalJSON(&b, dec, 0); err != nil {
			return nil, fmt.Errorf("%s: %w", k, err)
		}
		out[k] = b.String()
	}
	return out, nil
}

// maxCanonicalDepth bounds the nesting canonicalJSON follows (the
// request's size is bounded already; this bounds the recursion).
const maxCanonicalDepth = 200

// canonicalJSON writes the next JSON value of dec in a form that two
// values share exactly when they are the same value: objects with their
// members sorted by key — a repeated key kept, each time, its values in
// the order they came — arrays in order, strings quoted by encoding/json,
// numbers as written.
func canonicalJSON(b *strings.Builder, dec *json.Decoder, depth int) error {
	if depth > maxCanonicalDepth {
		return errors.New("nested too deep")
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '[':
			b.WriteByte('[')
			for i := 0; dec.More(); i++ {
				if i > 0 {
					b.WriteByte(',')
				}
				if err := canonicalJSON(b, dec, depth+1); err != nil {
					return err
				}
			}
			b.WriteByte(']')
		case '{':
			type member struct{ key, value string }
			var members []member
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := kt.(string)
				var v strings.Builder
				if err := canonicalJSON(&v, dec, depth+1); err != nil {
					return err
				}
				members = append(members, member{key, v.String()})
			}
			slices.SortStableFunc(members, func(x, y member) int { return strings.Compare(x.key, y.key) })
			b.WriteByte('{')
			for i, m := range members {
				if i > 0 {
					b.WriteByte(',')
				}
				k, _ := json.Marshal(m.key)
				b.Write(k)
				b.WriteByte(':')
				b.WriteString(m.value)
			}
			b.WriteByte('}')
		}
		_, err = dec.Token() // the closing delimiter
		return err
	case string:
		q, _ := json.Marshal(t)
		b.Write(q)
	case json.Number:
		b.WriteString(string(t))
	case bool:
		b.WriteString(strconv.FormatBool(t))
	case nil:
		b.WriteString("null")
	}
	return nil
}

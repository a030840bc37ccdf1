package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
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
// any field the protocol gains does. Numbers compare by their JSON text
// (json.Number): one that no float64 holds (1e999) is still a value, never
// a reason to skip the comparison. Automatic decisions are not stored, so
// a retry of one is evaluated afresh whatever its content (docs/PROTOCOL.md).
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
		if !reflect.DeepEqual(a[k], b[k]) {
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

// contentOf is a request as JSON values by field, without the version
// and the identity (the broker's mark, not the agent's content: a request
// stored before identities were marked is the same call).
func contentOf(r *messages.Request) (map[string]any, error) {
	c := *r
	c.V = 0
	c.Identity = ""
	data, err := json.Marshal(&c)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	delete(m, "v")
	return m, nil
}

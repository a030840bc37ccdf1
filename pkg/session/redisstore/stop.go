package redisstore

import (
	"fmt"
	"strings"

	"github.com/signoff-dev/signoff/pkg/session"
)

// decodeStop reads a stored stop signal (docs/STATE.md "Keys"): the
// reason, then, after a NUL byte, the ids of the hard rejections behind
// it as fields. A value without a NUL is a stop that names no rejection
// (written by a version that kept none): any turn ends it.
func decodeStop(v string) (session.StopSignal, error) {
	reason, ids, ok := strings.Cut(v, "\x00")
	if !ok {
		return session.StopSignal{Reason: v}, nil
	}
	f, err := splitFields(ids)
	if err != nil {
		return session.StopSignal{}, fmt.Errorf("stop signal %q: rejections: %w", v, err)
	}
	return session.StopSignal{Reason: reason, Rejections: f}, nil
}

// turnArgs are new_turn's ARGV after the record key prefix: whether the
// turn is tracked, then the ids it names.
func turnArgs(prefix string, t session.Turn) []any {
	args := make([]any, 0, 2+len(t.Seen))
	tracked := "0"
	if t.Tracked {
		tracked = "1"
	}
	args = append(args, prefix, tracked)
	for _, id := range t.Seen {
		args = append(args, id)
	}
	return args
}

// asStrings reads a script reply that is an array of strings.
func asStrings(v any) ([]string, error) {
	a, err := asSlice(v)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(a))
	for i := range a {
		if out[i], err = asString(a[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

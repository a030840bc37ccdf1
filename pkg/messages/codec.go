package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// DefaultMaxBytes is the default size limit of a message sent to the
// broker. Messages from the broker embed a request and may be larger; their
// readers should allow the NATS max_payload (1 MiB by default).
const DefaultMaxBytes = 64 << 10

// validator is implemented by every message type that has rules beyond its
// JSON shape.
type validator interface{ Validate() error }

// Decode parses one message of type T from data and validates it. T is a
// message struct type such as [Request], not a pointer.
//
// It fails with an error wrapping:
//   - [ErrTooLarge] when data is longer than maxBytes (maxBytes <= 0 means
//     [DefaultMaxBytes]);
//   - [ErrUnsupportedVersion] when "v" is missing or is not [Version], with
//     the version seen; the version is checked before the rest of the
//     message, whose shape may differ in another version;
//   - [ErrInvalid] when data is not valid UTF-8, not a single JSON object
//     (trailing data included), has a field of the wrong JSON type (a
//     [*FieldError] naming the field), or when the decoded *T has a
//     Validate method and it fails.
//
// Unknown fields are ignored, so that a newer sender can add optional fields
// within version 1 without breaking older receivers. Field names are matched
// as encoding/json does (exact match preferred, else case-insensitive; the
// last of duplicate keys wins); senders must use the snake_case names
// exactly. A [Request] in the shape agents send is decoded without
// reflection (decodeRequestFast), with the same result.
func Decode[T any](data []byte, maxBytes int) (T, error) {
	var msg T
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if len(data) > maxBytes {
		return msg, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(data), maxBytes)
	}
	if err := checkEnvelope(data); err != nil {
		return msg, err
	}
	if r, ok := any(&msg).(*Request); !ok || !decodeRequestFast(data, r) {
		var zero T
		msg = zero
		if err := json.Unmarshal(data, &msg); err != nil {
			return zero, decodeError(data, err)
		}
	}
	v, ok := versionOf(&msg)
	if !ok || v != Version {
		if verr := checkVersion(data); verr != nil {
			var zero T
			return zero, verr
		}
	}
	if val, ok := any(&msg).(validator); ok {
		if err := val.Validate(); err != nil {
			var zero T
			return zero, err
		}
	}
	return msg, nil
}

// decodeError reports why json.Unmarshal refused data.
func decodeError(data []byte, err error) error {
	// A message of another version may fail to decode because its shape
	// changed; report the version, which is the real cause.
	if verr := checkVersion(data); verr != nil {
		return verr
	}
	return jsonError(err)
}

// checkEnvelope rejects what encoding/json would accept but the protocol
// does not: invalid UTF-8 (which encoding/json silently replaces, so the
// policy would judge other bytes than the agent runs) and top-level values
// other than an object.
func checkEnvelope(data []byte) error {
	i := 0
	for i < len(data) && isJSONSpace(data[i]) {
		i++
	}
	if i == len(data) {
		return fmt.Errorf("%w: empty message", ErrInvalid)
	}
	if data[i] != '{' {
		return fmt.Errorf("%w: message must be a JSON object, got %s", ErrInvalid, jsonValueKind(data[i]))
	}
	if !utf8.Valid(data) {
		return fmt.Errorf("%w: message is not valid UTF-8", ErrInvalid)
	}
	return nil
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func jsonValueKind(c byte) string {
	switch {
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 'n':
		return "null"
	case c == 't', c == 'f':
		return "a boolean"
	case c == '-', c >= '0' && c <= '9':
		return "a number"
	}
	return "invalid JSON (starts with " + strconv.QuoteRune(rune(c)) + ")"
}

// checkVersion reads "v" on its own and reports anything but Version. It is
// off the hot path: Decode calls it only when the message failed to decode or
// carried another version.
func checkVersion(data []byte) error {
	var probe struct {
		V json.RawMessage `json:"v"`
	}
	if err := json.Unmarshal(data, &probe); err != nil {
		// Not well-formed JSON: the caller reports the syntax error.
		return nil
	}
	switch {
	case probe.V == nil:
		return fmt.Errorf("%w: message has no \"v\" (this side speaks %d)", ErrUnsupportedVersion, Version)
	case string(probe.V) == strconv.Itoa(Version):
		return nil
	}
	seen := string(probe.V)
	if len(seen) > 32 {
		seen = seen[:32] + "…"
	}
	return fmt.Errorf("%w %s (this side speaks %d)", ErrUnsupportedVersion, seen, Version)
}

// jsonError turns an encoding/json error into one that names the field and
// the expected JSON type rather than Go types.
func jsonError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("%w: malformed JSON at byte %d: %v", ErrInvalid, se.Offset, se)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		field := te.Field
		if field == "" {
			field = "(message)"
		}
		return &FieldError{Field: field, Problem: "must be " + jsonTypeName(te.Type) + ", got " + te.Value, Err: err}
	}
	return fmt.Errorf("%w: %w", ErrInvalid, err)
}

func jsonTypeName(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		if t == reflect.TypeFor[time.Time]() {
			return "an RFC 3339 time string"
		}
		return "an object"
	}
	return "of type " + t.String()
}

// versionFields caches, per message type, the index of its top-level V
// field (-1 when it has none).
var versionFields sync.Map // reflect.Type → int

func versionField(t reflect.Type) int {
	if i, ok := versionFields.Load(t); ok {
		return i.(int)
	}
	idx := -1
	if t.Kind() == reflect.Struct {
		if f, ok := t.FieldByName("V"); ok && len(f.Index) == 1 && f.Type.Kind() == reflect.Int {
			idx = f.Index[0]
		}
	}
	versionFields.Store(t, idx)
	return idx
}

// versionOf returns msg.V when *T has a top-level int field V.
func versionOf[T any](msg *T) (int, bool) {
	rv := reflect.ValueOf(msg).Elem()
	i := versionField(rv.Type())
	if i < 0 {
		return 0, false
	}
	return int(rv.Field(i).Int()), true
}

// encodeBuffers recycles the scratch buffers of Encode.
var encodeBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Encode returns the JSON of msg. It sets msg.V to [Version] when it is
// zero, refuses any other version, and runs msg's Validate method when it
// has one, so that a sender finds its own mistakes before the receiver does.
//
// Unlike json.Marshal, Encode does not escape '<', '>' and '&': shell
// commands are full of them and must stay readable in logs and in the nats
// CLI. Readers that embed messages in HTML must escape them as any text.
func Encode[T any](msg *T) ([]byte, error) {
	if msg == nil {
		return nil, fmt.Errorf("%w: cannot encode a nil message", ErrInvalid)
	}
	rv := reflect.ValueOf(msg).Elem()
	if i := versionField(rv.Type()); i >= 0 {
		f := rv.Field(i)
		switch f.Int() {
		case 0:
			f.SetInt(Version)
		case Version:
		default:
			return nil, fmt.Errorf("%w %d: cannot encode (this side speaks %d)", ErrUnsupportedVersion, f.Int(), Version)
		}
	}
	if val, ok := any(msg).(validator); ok {
		if err := val.Validate(); err != nil {
			return nil, err
		}
	}
	buf := encodeBuffers.Get().(*bytes.Buffer)
	defer func() {
		// Do not keep huge buffers alive in the pool.
		if buf.Cap() <= 4*DefaultMaxBytes {
			buf.Reset()
			encodeBuffers.Put(buf)
		}
	}()
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(msg); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	// Encoder.Encode appends a newline; the wire form has none.
	return bytes.Clone(bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})), nil
}

package messages

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// addGoldenSeeds seeds a fuzzer with golden files, so that it starts from
// complete, valid messages.
func addGoldenSeeds(f *testing.F, names ...string) {
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join("testdata", "golden", n+".json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// checkDecodeProperty asserts the decoder's contract for one input: it
// never panics (the fuzzer reports that), it fails only with one of the
// protocol's sentinels, and whatever it accepts is valid and survives an
// encode/decode round trip unchanged.
func checkDecodeProperty[T any, PT interface {
	*T
	Validate() error
}](t *testing.T, data []byte) (T, bool) {
	var zero T
	v1, err := Decode[T](data, DefaultMaxBytes)
	if err != nil {
		if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrUnsupportedVersion) {
			t.Fatalf("Decode error wraps no protocol sentinel: %v", err)
		}
		return zero, false
	}
	if err := PT(&v1).Validate(); err != nil {
		t.Fatalf("Decode accepted a message that fails Validate: %v", err)
	}
	b1, err := Encode(&v1)
	if err != nil {
		t.Fatalf("Encode of a decoded message failed: %v\ninput: %q", err, data)
	}
	// Re-encoding may grow the message (U+2028 becomes \u2028), so the
	// second decode is allowed the size of what it gets.
	v2, err := Decode[T](b1, len(b1))
	if err != nil {
		t.Fatalf("Decode of a re-encoded message failed: %v\nencoded: %s", err, b1)
	}
	b2, err := Encode(&v2)
	if err != nil {
		t.Fatalf("second Encode failed: %v", err)
	}
	// Compare encodings, not Go values: json.RawMessage keeps the sender's
	// whitespace, which the encoder compacts.
	if !bytes.Equal(b1, b2) {
		t.Fatalf("round trip changed the message:\nfirst:  %s\nsecond: %s", b1, b2)
	}
	return v1, true
}

func FuzzDecodeRequest(f *testing.F) {
	addGoldenSeeds(f, "request")
	for _, s := range []string{
		`{"v":1,"request_id":"r","session_id":"s","agent_id":"a","tool":"read_file"}`,
		`{"v":1,"request_id":"r","session_id":"s.x","agent_id":"a","tool":"bash"}`,
		`{"v":1,"request_id":"r","session_id":"s","agent_id":"a","tool":"bash","arguments":null}`,
		`{"v":1,"request_id":"r","session_id":"s","agent_id":"a","tool":"bash","arguments":"{}"}`,
		`{"v":1,"request_id":"r","session_id":"s","agent_id":"a","tool":"w","batch_remaining":[{"tool":"x","arguments":[]}]}`,
		`{"v":2,"request_id":"r"}`,
		`{"V":1,"REQUEST_ID":"r","Session_Id":"s","agent_id":"a","tool":"t"}`,
		`{"v":1,"request_id":"r","request_id":"r.2","session_id":"s","agent_id":"a","tool":"t"}`,
		`{"v":1,"request_id":"r","session_id":"s","agent_id":"a","tool":"t","description":"\u2028\u202e"}`,
		`{"v":1,"request_id":"r","session_id":"s","agent_id":"a","tool":"t","ttl_ms":-1}`,
		`[{"v":1}]`, `null`, ``, `{"v":1} {}`, "{\"v\":1,\"tool\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
	subjects := Subjects{}
	f.Fuzz(func(t *testing.T, data []byte) {
		req, ok := checkDecodeProperty[Request](t, data)
		if !ok {
			return
		}
		// Every accepted id must survive a trip through a subject: this is
		// what keeps a hostile id from reaching another session's subjects.
		ps, err := subjects.Parse(subjects.Decision(req.SessionID, req.RequestID))
		if err != nil || ps.Session != req.SessionID || ps.RequestID != req.RequestID {
			t.Fatalf("ids %q/%q do not survive a decision subject: %+v, %v", req.SessionID, req.RequestID, ps, err)
		}
	})
}

func FuzzDecodeResponse(f *testing.F) {
	addGoldenSeeds(f, "response_approve", "response_reject")
	for _, s := range []string{
		`{"v":1,"request_id":"r","session_id":"s","approver":{"id":"bob"},"approved":true}`,
		`{"v":1,"request_id":"r","session_id":"s","approver":{"id":"bob"},"approved":false,"scope":"session"}`,
		`{"v":1,"request_id":"r","session_id":"s","approver":{"id":"bob"},"approved":true,"reject_mode":"reject_soft"}`,
		`{"v":1,"request_id":"r","session_id":"s","approver":{"id":""},"approved":true}`,
		`{"v":1,"request_id":"r","session_id":"s","approver":{"id":"bob"},"approved":"yes"}`,
		`{"v":1,"request_id":"r","session_id":"s","approver":{"id":"bob"},"approved":true,"answer":{"choice":[1,2]}}`,
		`{"v":1,"request_id":"r","session_id":"s","approver":null,"approved":true}`,
		`{"v":1,"request_id":"*","session_id":">","approver":{"id":"bob"},"approved":false}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		resp, ok := checkDecodeProperty[Response](t, data)
		if !ok {
			return
		}
		// An accepted response is unambiguous: an approval has a scope and
		// no reject mode, a rejection the reverse.
		if resp.Approved != (resp.EffectiveScope() != "") || resp.Approved == (resp.EffectiveRejectMode() != "") {
			t.Fatalf("ambiguous response accepted: approved=%v scope=%q reject_mode=%q",
				resp.Approved, resp.EffectiveScope(), resp.EffectiveRejectMode())
		}
	})
}

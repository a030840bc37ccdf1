package redisstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/session"
)

// The dictionary is part of the stored format: records compressed with it
// outlive a release. Changing it needs a new codec id.
func TestPayloadDictionaryIsFrozen(t *testing.T) {
	const want = "b84bc8c4961f9115823b505f19494977244fc4a351097621b66732ff7ace5b98"
	sum := sha256.Sum256(payloadDictV1)
	if got := hex.EncodeToString(sum[:]); got != want {
		t.Fatalf("payload_dict_v1.json has sha256 %s, want %s: add a new codec instead of changing it", got, want)
	}
}

// storedHead builds what the create script stores in front of a tail.
func storedHead(state, created, expires string) string {
	return encodeList([]string{recordVersion, state, created, expires, "", "2", encodeList([]string{"ann"}), ""})
}

func TestRecordRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte(`{"tool":"bash","arguments":{"command":"ls -la"}}`), 20)
	tests := []struct {
		name      string
		payload   []byte
		wantCodec string
	}{
		{"an empty payload", nil, codecRaw},
		{"a small payload stays raw", []byte(`{"tool":"bash"}`), codecRaw},
		{"a question-sized payload is compressed", big, codecZstd1},
		{"an incompressible payload stays raw", randomBytes(600), codecRaw},
		{"a payload with field separators", []byte("3:abc:4:"), codecRaw},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := session.Request{
				ID: "r:1", SessionID: "s{1", AgentID: "a:7", RequestedBy: "", Tool: "b:ash",
				Teams: []string{"ops", "3:x", ""}, ApprovalsRequired: 2, TTL: 1500 * time.Microsecond, Payload: tc.payload,
			}
			tail := encodeTail(&req)
			v := storedHead("pending", "1700000000000001", "1700000000001501") + string(tail)
			rec, err := decodeRecord(req.SessionID, req.ID, v)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(rec.Payload, req.Payload) || rec.AgentID != req.AgentID || rec.Tool != req.Tool ||
				!slices.Equal(rec.Teams, req.Teams) || rec.TTL != req.TTL || rec.ApprovalsRequired != 2 ||
				!slices.Equal(rec.Approvals, []string{"ann"}) || rec.State != "pending" {
				t.Errorf("decoded %+v, want the request back", rec)
			}
			if got := rec.ExpiresAt.Sub(rec.CreatedAt); got != 1500*time.Microsecond {
				t.Errorf("ExpiresAt - CreatedAt = %v", got)
			}
			f, err := splitFields(string(tail))
			if err != nil || f[fCodec-fTTL] != tc.wantCodec {
				t.Errorf("codec = %q (%v), want %q", f[fCodec-fTTL], err, tc.wantCodec)
			}
		})
	}
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func TestDecodeRecordRejectsDamagedValues(t *testing.T) {
	tail := string(encodeTail(&session.Request{Teams: []string{"ops"}, TTL: time.Second}))
	good := storedHead("pending", "1", "2") + tail
	tests := []struct {
		name string
		v    string
	}{
		{"an empty value", ""},
		{"a value that is not fields", "hello"},
		{"a truncated value", good[:len(good)-3]},
		{"a length past the end", "99:abc"},
		{"another format version", "1:2" + good[3:]},
		{"a bad time", storedHead("pending", "x", "2") + tail},
		{"an unknown codec", strings.TrimSuffix(good, "0:0:") + "2:q90:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := decodeRecord("s", "r", tc.v); err == nil {
				t.Fatalf("decodeRecord(%q) succeeded", tc.v)
			}
		})
	}
	if _, err := decodeRecord("s", "r", good); err != nil {
		t.Fatalf("the undamaged value: %v", err)
	}
}

func TestMicrosRoundsUp(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Nanosecond: "1", time.Microsecond: "1", 1001 * time.Nanosecond: "2", time.Second: "1000000",
	} {
		if got := micros(d); got != want {
			t.Errorf("micros(%v) = %s, want %s", d, got, want)
		}
	}
}

func TestHashTagNames(t *testing.T) {
	for name, ok := range map[string]bool{"sess-1": true, "a{b": true, "a}b": false, "{x}": false, "}x": false, "": true} {
		err := checkTag("session id", name)
		if (err == nil) != ok || (err != nil && !errors.Is(err, session.ErrInvalid)) {
			t.Errorf("checkTag(%q) = %v, want ok %v", name, err, ok)
		}
	}
}

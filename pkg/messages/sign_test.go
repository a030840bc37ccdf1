package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func signedResponse() Response {
	return Response{
		V:         Version,
		RequestID: "01JQ8Z6Q3W5R0V8K2M4N6P8R0T",
		SessionID: "sess-7f3a",
		Approver:  Approver{ID: "bob", Display: "Bob Ng", Channel: "web", Device: "Bob's phone"},
		Approved:  true,
		Scope:     ScopeSession,
		Feedback:  "ok <b>&</b>",
		Answer:    json.RawMessage(`{ "choice" : "<yes>", "n": 1.50 }`),
		SignedAt:  time.Date(2025, 1, 2, 3, 4, 5, 500, time.FixedZone("CET", 3600)),
		KeyID:     "UDXU4RCSJNZOIQHZNWXHXORDPRTGNJAHAHFRGZNEEJCPQTT2M7NLCNF4",
		Signature: "sig",
		StepUp: &StepUp{Method: StepUpWebAuthn, CredentialID: "AQIDBA",
			AssertedAt: time.Date(2025, 1, 2, 3, 4, 1, 0, time.UTC), UserVerified: true},
	}
}

// The format is what implementers in other languages reproduce: this vector
// is the one docs/PROTOCOL.md shows.
func TestSigningBytesFollowTheDocumentedFormat(t *testing.T) {
	r := Response{V: 1, RequestID: "r1", SessionID: "s1", Approver: Approver{ID: "alice", Channel: "web"},
		Approved: true, Scope: ScopeSession, SignedAt: time.Date(2025, 1, 2, 3, 4, 5, 5e8, time.UTC), KeyID: "UABC"}
	want := "\xff19:signoff-response-v1,1:1,2:r1,2:s1,5:alice,0:,3:web,0:,4:true,7:session,0:,0:,0:,22:2025-01-02T03:04:05.5Z,4:UABC,"
	if got := string(r.SigningBytes()); got != want {
		t.Fatalf("signing bytes\n got %q\nwant %q", got, want)
	}
	doc := readProtocolDoc(t)
	if !strings.Contains(doc, strings.TrimPrefix(want, "\xff")) {
		t.Error("docs/PROTOCOL.md does not show this example's signing bytes")
	}
}

// mutate changes v (a field of a Response) to another value of its type.
func mutate(t *testing.T, name string, v reflect.Value) {
	t.Helper()
	switch v.Interface().(type) {
	case time.Time:
		v.Set(reflect.ValueOf(v.Interface().(time.Time).Add(time.Nanosecond)))
		return
	case json.RawMessage:
		v.Set(reflect.ValueOf(json.RawMessage(`{"choice":"no"}`)))
		return
	case []string:
		v.Set(reflect.ValueOf(append(v.Interface().([]string), "x")))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + "x")
	case reflect.Bool:
		v.SetBool(!v.Bool())
	case reflect.Int:
		v.SetInt(v.Int() + 1)
	default:
		t.Fatalf("Response field %s has kind %s: teach SigningBytes and this test about it", name, v.Kind())
	}
}

// A field added to Response later must be signed too (or be the signature):
// this walks the struct instead of listing today's fields.
func TestSigningBytesCoverEveryFieldButTheSignature(t *testing.T) {
	base := signedResponse()
	want := base.SigningBytes()
	var walk func(prefix string, typ reflect.Type, path []int)
	walk = func(prefix string, typ reflect.Type, path []int) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			name := prefix + f.Name
			p := append(append([]int(nil), path...), i)
			if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeFor[time.Time]() {
				walk(name+".", f.Type, p)
				continue
			}
			if f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct {
				// signedResponse sets every pointer, so each field of
				// the pointed-to struct is reached and mutated.
				walk(name+".", f.Type.Elem(), p)
				continue
			}
			t.Run(name, func(t *testing.T) {
				r := signedResponse()
				mutate(t, name, reflect.ValueOf(&r).Elem().FieldByIndex(p))
				changed := !bytes.Equal(r.SigningBytes(), want)
				if name == "Signature" {
					if changed {
						t.Fatal("the signature is part of its own signing bytes")
					}
					return
				}
				if !changed {
					t.Fatalf("changing %s leaves the signing bytes unchanged: a tampered %s would verify", name, name)
				}
			})
		}
	}
	walk("", reflect.TypeFor[Response](), nil)
}

func TestSigningBytesOfApproverGroupsKeepTheirBoundaries(t *testing.T) {
	a := Response{V: 1, Approver: Approver{ID: "x"}, ApproverGroups: []string{"sre", "ops"}}
	b := Response{V: 1, RequestID: "r", SessionID: "s", Approver: Approver{ID: "x"}, ApproverGroups: []string{"sre\nops"}}
	c := Response{V: 1, Approver: Approver{ID: "x"}, ApproverGroups: []string{"ops", "sre"}}
	none := Response{V: 1, Approver: Approver{ID: "x"}}
	if bytes.Equal(a.SigningBytes(), none.SigningBytes()) || bytes.Equal(a.SigningBytes(), c.SigningBytes()) {
		t.Fatal("adding or reordering groups keeps the signing bytes")
	}
	// One group holding LF is refused by Validate, so the two never both
	// reach a broker; the bytes are equal only for that invalid pair.
	if err := b.Validate(); err == nil || !strings.Contains(err.Error(), "approver_groups[0]") {
		t.Fatalf("a group holding a newline: Validate = %v, want refused", err)
	}
	if !strings.HasSuffix(string(a.SigningBytes()), "14:groups:sre\nops,") {
		t.Fatalf("signing bytes %q do not end with the documented groups netstring", a.SigningBytes())
	}
}

func TestSigningBytesKeepFieldBoundaries(t *testing.T) {
	a := Response{V: 1, RequestID: "ab", SessionID: "c", Approver: Approver{ID: "x"}}
	b := Response{V: 1, RequestID: "a", SessionID: "bc", Approver: Approver{ID: "x"}}
	if bytes.Equal(a.SigningBytes(), b.SigningBytes()) {
		t.Fatal("moving a byte from request_id to session_id keeps the signing bytes")
	}
	c := Response{V: 1, Feedback: "1:a,", Approver: Approver{ID: "x"}}
	d := Response{V: 1, Feedback: "1:a", Approver: Approver{ID: "x", Display: ""}, Answer: json.RawMessage(`","`)}
	if bytes.Equal(c.SigningBytes(), d.SigningBytes()) {
		t.Fatal("netstring-looking text in feedback collides with another response")
	}
}

// Step-up evidence is signed after the digest, and only when present: an
// approval cannot lose it, or gain another authenticator's, on the way.
func TestSigningBytesOfASteppedUpApproval(t *testing.T) {
	r := signedResponse()
	with := r.SigningBytes()
	r.StepUp = nil
	without := r.SigningBytes()
	if bytes.Equal(with, without) {
		t.Fatal("removing step_up leaves the signing bytes unchanged")
	}
	if !bytes.HasPrefix(with, without) {
		t.Fatal("step_up is not appended after the other fields")
	}
	want := "47:step_up:webauthn:AQIDBA:2025-01-02T03:04:01Z:uv,"
	if got := string(with[len(without):]); got != want {
		t.Fatalf("step-up netstring %q, want %q", got, want)
	}
}

// Edited arguments are signed after key_id, and only when present: a
// response without them keeps the signing bytes it always had.
func TestSigningBytesOfAnApprovalWithChanges(t *testing.T) {
	r := Response{V: 1, RequestID: "r1", SessionID: "s1", Approver: Approver{ID: "alice", Channel: "web"},
		Approved: true, Scope: ScopeSession, SignedAt: time.Date(2025, 1, 2, 3, 4, 5, 5e8, time.UTC), KeyID: "UABC"}
	plain := string(r.SigningBytes())
	r.UpdatedArguments = json.RawMessage(`{ "command": "ls <dir>" }`)
	want := plain + `32:{"command":"ls \u003cdir\u003e"},`
	if got := string(r.SigningBytes()); got != want {
		t.Fatalf("signing bytes\n got %q\nwant %q", got, want)
	}
	doc := readProtocolDoc(t)
	if !strings.Contains(doc, strings.TrimPrefix(want, "\xff")) {
		t.Error("docs/PROTOCOL.md does not show this example's signing bytes")
	}
	// The edit cannot be moved into key_id (or back) without a new signature.
	moved := Response{V: 1, RequestID: "r1", SessionID: "s1", Approver: Approver{ID: "alice", Channel: "web"},
		Approved: true, Scope: ScopeSession, SignedAt: r.SignedAt, KeyID: `UABC,32:{"command":"ls \u003cdir\u003e"}`}
	if bytes.Equal(moved.SigningBytes(), r.SigningBytes()) {
		t.Fatal("an edit folded into key_id signs like the edit")
	}
}

func TestSigningBytesAreNeverUTF8(t *testing.T) {
	for _, r := range []Response{{}, signedResponse(), {Feedback: strings.Repeat("é", 100)}} {
		if utf8.Valid(r.SigningBytes()) {
			t.Fatalf("signing bytes of %+v are valid UTF-8: a NATS connect nonce could equal them", r)
		}
	}
}

// A signer computes the bytes before encoding; the broker after decoding.
// Both encoders of this module must leave them unchanged.
func TestSigningBytesSurviveEncodingAndDecoding(t *testing.T) {
	tests := []struct {
		name   string
		encode func(*Response) ([]byte, error)
	}{
		{"json.Marshal (escapes HTML)", func(r *Response) ([]byte, error) { return json.Marshal(r) }},
		{"Encode (does not escape HTML)", Encode[Response]},
	}
	answers := []string{
		`{ "choice" : "<yes>", "n": 1.50 }`,
		"[1,\n 2,\t3]",
		`"a & b \u2028 \u003c"`,
		`{"z":1,"a":{"b":[true,null]}}`,
		``,
	}
	for _, tc := range tests {
		for _, ans := range answers {
			t.Run(tc.name+"/"+ans, func(t *testing.T) {
				r := signedResponse()
				r.Answer = json.RawMessage(ans)
				want := r.SigningBytes()
				data, err := tc.encode(&r)
				if err != nil {
					t.Fatal(err)
				}
				got, err := Decode[Response](data, 0)
				if err != nil {
					t.Fatalf("decode %s: %v", data, err)
				}
				if !bytes.Equal(got.SigningBytes(), want) {
					t.Fatalf("signing bytes changed on the wire\nbefore %q\n after %q\nwire %s", want, got.SigningBytes(), data)
				}
			})
		}
	}
}

func TestSigningBytesTellTheSameInstantTheSameWay(t *testing.T) {
	utc := time.Date(2025, 6, 1, 12, 0, 0, 123456000, time.UTC)
	r1, r2 := signedResponse(), signedResponse()
	r1.SignedAt = utc
	r2.SignedAt = utc.In(time.FixedZone("PDT", -7*3600))
	if !bytes.Equal(r1.SigningBytes(), r2.SigningBytes()) {
		t.Fatal("the same instant in two zones gives different signing bytes")
	}
	if !bytes.Contains(r1.SigningBytes(), []byte("27:2025-06-01T12:00:00.123456Z,")) {
		t.Fatalf("signed_at is not RFC 3339 UTC without trailing zeros: %q", r1.SigningBytes())
	}
}

func TestDecodeSignature(t *testing.T) {
	sig := bytes.Repeat([]byte{0xfb, 0xff, 0x01}, 22)[:SignatureLen]
	good := EncodeSignature(sig)
	tests := []struct {
		name    string
		in      string
		wantErr bool
	}{
		{"an encoded ed25519 signature decodes", good, false},
		{"an empty signature is missing", "", true},
		{"a padded signature is refused", good + "==", true},
		{"standard base64 characters are refused", strings.NewReplacer("-", "+", "_", "/").Replace(good), true},
		{"a short signature is refused", good[:80], true},
		{"a long signature is refused", good + "AAAA", true},
		{"non-base64 characters are refused", good[:85] + "!", true},
	}
	if !strings.ContainsAny(good, "-_") {
		t.Fatal("the fixture should use the URL-safe characters")
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DecodeSignature(tc.in)
			if tc.wantErr {
				var fe *FieldError
				if !errors.As(err, &fe) || fe.Field != "signature" || !errors.Is(err, ErrInvalid) {
					t.Fatalf("err = %v, want a FieldError on signature", err)
				}
				return
			}
			if err != nil || !bytes.Equal(got, sig) {
				t.Fatalf("DecodeSignature = %x, %v", got, err)
			}
		})
	}
}

func BenchmarkSigningBytes(b *testing.B) {
	r := signedResponse()
	b.ReportAllocs()
	for b.Loop() {
		_ = r.SigningBytes()
	}
}

package messages

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// roundTrip encodes msg, compares it with its golden file, decodes it back
// and checks that encoding again yields the same bytes.
func roundTrip[T any](t *testing.T, name string, msg *T) {
	t.Helper()
	data, err := Encode(msg)
	if err != nil {
		t.Fatalf("Encode: %v", err)
	}
	golden := filepath.Join("testdata", "golden", name+".json")
	var indented bytes.Buffer
	if err := json.Indent(&indented, data, "", "  "); err != nil {
		t.Fatalf("Encode produced invalid JSON: %v\n%s", err, data)
	}
	indented.WriteByte('\n')
	if *update {
		if err := os.WriteFile(golden, indented.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(indented.Bytes(), want) {
		t.Errorf("encoding differs from %s:\ngot:\n%s\nwant:\n%s", golden, indented.Bytes(), want)
	}
	// The golden file itself must decode: other languages send the
	// indented form too.
	got, err := Decode[T](want, 0)
	if err != nil {
		t.Fatalf("Decode(golden): %v", err)
	}
	again, err := Encode(&got)
	if err != nil {
		t.Fatalf("Encode(decoded): %v", err)
	}
	if !bytes.Equal(again, data) {
		t.Errorf("round trip changed the message:\nfirst:  %s\nsecond: %s", data, again)
	}
}

func TestEveryMessageRoundTripsThroughItsGoldenJSON(t *testing.T) {
	t.Run("request", func(t *testing.T) { roundTrip(t, "request", validRequest()) })
	t.Run("receipt with a decision", func(t *testing.T) { roundTrip(t, "receipt", validReceipt()) })
	t.Run("pending receipt", func(t *testing.T) { roundTrip(t, "receipt_pending", validPendingReceipt()) })
	t.Run("allow decision", func(t *testing.T) { roundTrip(t, "decision_allow", validDecision()) })
	t.Run("deny decision", func(t *testing.T) { roundTrip(t, "decision_deny", validDenyDecision()) })
	t.Run("approval needed", func(t *testing.T) { roundTrip(t, "approval_needed", validApprovalNeeded()) })
	t.Run("approval response", func(t *testing.T) { roundTrip(t, "response_approve", validResponse()) })
	t.Run("approval with changes", func(t *testing.T) { roundTrip(t, "response_approve_edited", validEditedResponse()) })
	t.Run("decision of an approval with changes", func(t *testing.T) { roundTrip(t, "decision_allow_edited", validEditedDecision()) })
	t.Run("rejection response", func(t *testing.T) { roundTrip(t, "response_reject", validRejection()) })
	t.Run("respond reply", func(t *testing.T) { roundTrip(t, "respond_reply", validRespondReply()) })
	t.Run("resolved", func(t *testing.T) { roundTrip(t, "resolved", validResolved()) })
	t.Run("status request", func(t *testing.T) {
		roundTrip(t, "status_request", &StatusRequest{RequestID: "01JQ8Z6Q3W5R0V8K2M4N6P8R0T"})
	})
	t.Run("cancel request", func(t *testing.T) {
		roundTrip(t, "cancel_request", &CancelRequest{RequestIDs: []string{"r-1", "r-2"}, Reason: "agent shutting down"})
	})
	t.Run("cancel reply", func(t *testing.T) { roundTrip(t, "cancel_reply", &CancelReply{Cancelled: []string{"r-1"}}) })
	t.Run("turn request", func(t *testing.T) { roundTrip(t, "turn_request", &TurnRequest{}) })
	t.Run("turn reply", func(t *testing.T) { roundTrip(t, "turn_reply", &TurnReply{StopCleared: true}) })
	t.Run("pending request", func(t *testing.T) { roundTrip(t, "pending_request", &PendingRequest{}) })
	t.Run("pending reply", func(t *testing.T) {
		roundTrip(t, "pending_reply", &PendingReply{Questions: []ApprovalNeeded{*validApprovalNeeded()}})
	})
	t.Run("admin request", func(t *testing.T) {
		roundTrip(t, "admin_request", &AdminRequest{SessionID: "sess-7f3a", Mode: ModeAutoEdit})
	})
	t.Run("admin reply", func(t *testing.T) { roundTrip(t, "admin_reply", &AdminReply{OK: true, Message: "mode set"}) })
	t.Run("audit record", func(t *testing.T) { roundTrip(t, "audit_record", validAuditRecord()) })
	t.Run("audit batch", func(t *testing.T) { roundTrip(t, "audit_batch", validAuditBatch()) })
	t.Run("list grants request", func(t *testing.T) {
		roundTrip(t, "admin_list_grants", &AdminRequest{Teams: []string{"oncall"}, By: "carol"})
	})
	t.Run("list grants reply", func(t *testing.T) {
		roundTrip(t, "admin_list_grants_reply", &AdminReply{OK: true, Grants: []Grant{*validGrant()}})
	})
	t.Run("revoke grant request", func(t *testing.T) {
		roundTrip(t, "admin_revoke_grant", &AdminRequest{GrantID: "gr_3kq7x2mz9d4vbn8c", By: "carol"})
	})
	t.Run("revoke grant reply", func(t *testing.T) {
		roundTrip(t, "admin_revoke_grant_reply", &AdminReply{OK: true, Message: "grant revoked", Grant: validGrant()})
	})
	t.Run("grant event", func(t *testing.T) { roundTrip(t, "grant_event", validGrantEvent()) })
	t.Run("error reply", func(t *testing.T) {
		e := NewErrorReply(CodeInvalidRequest, `invalid request: field "tool": must not be empty`)
		roundTrip(t, "error_reply", &e)
	})
}

var snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)

// TestEveryWireFieldIsSnakeCase walks the message types so that a field
// added later without a snake_case tag is caught here, not by a client in
// another language.
func TestEveryWireFieldIsSnakeCase(t *testing.T) {
	top := []any{Request{}, Decision{}, Receipt{}, ApprovalNeeded{}, Response{}, RespondReply{}, Resolved{},
		StatusRequest{}, CancelRequest{}, CancelReply{}, TurnRequest{}, TurnReply{}, PendingRequest{},
		PendingReply{}, AdminRequest{}, AdminReply{}, AuditRecord{}, AuditBatch{}, GrantEvent{}, ErrorReply{}}
	seen := map[reflect.Type]bool{}
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || typ == reflect.TypeFor[time.Time]() || seen[typ] {
			return
		}
		seen[typ] = true
		for f := range typ.Fields() {
			tag, ok := f.Tag.Lookup("json")
			name, _, _ := strings.Cut(tag, ",")
			if !ok || !snakeCase.MatchString(name) {
				t.Errorf("%s.%s: json name %q is not snake_case", path, f.Name, name)
			}
			walk(path+"."+name, f.Type)
		}
	}
	for _, m := range top {
		typ := reflect.TypeOf(m)
		if f, ok := typ.FieldByName("V"); !ok || f.Tag.Get("json") != "v" {
			t.Errorf("%s has no \"v\" field", typ.Name())
		}
		walk(typ.Name(), typ)
	}
}

func TestDecodeRejectsWhatItCannotHandle(t *testing.T) {
	valid, err := Encode(validRequest())
	if err != nil {
		t.Fatal(err)
	}
	withV := func(v string) []byte {
		return bytes.Replace(valid, []byte(`"v":1`), []byte(`"v":`+v), 1)
	}
	tests := []struct {
		name     string
		data     []byte
		maxBytes int
		wantErr  error
		wantText string
	}{
		{"a message over the default limit is too large", append(valid[:len(valid)-1:len(valid)-1],
			[]byte(`,"description":"`+strings.Repeat("x", DefaultMaxBytes)+`"}`)...), 0, ErrTooLarge, "limit 65536"},
		{"a message over a custom limit is too large", valid, 100, ErrTooLarge, "limit 100"},
		{"a message without v has an unsupported version", bytes.Replace(valid, []byte(`"v":1,`), nil, 1), 0,
			ErrUnsupportedVersion, `no "v"`},
		{"version 2 is unsupported", withV("2"), 0, ErrUnsupportedVersion, "version 2"},
		{"version 0 is unsupported", withV("0"), 0, ErrUnsupportedVersion, "version 0"},
		{"a null version is unsupported", withV("null"), 0, ErrUnsupportedVersion, "version null"},
		{"a string version is unsupported", withV(`"1"`), 0, ErrUnsupportedVersion, `version "1"`},
		{"a fractional version is unsupported", withV("1.5"), 0, ErrUnsupportedVersion, "version 1.5"},
		{"a version 2 message of another shape reports the version",
			[]byte(`{"v":2,"request_id":{"new":"shape"}}`), 0, ErrUnsupportedVersion, "version 2"},
		{"an array is not a message", []byte(`[{"v":1}]`), 0, ErrInvalid, "got an array"},
		{"a string is not a message", []byte(`"hello"`), 0, ErrInvalid, "got a string"},
		{"null is not a message", []byte(` null`), 0, ErrInvalid, "got null"},
		{"a number is not a message", []byte(`42`), 0, ErrInvalid, "got a number"},
		{"an empty message is rejected", []byte(" \n"), 0, ErrInvalid, "empty message"},
		{"trailing garbage is rejected", append(bytes.Clone(valid), []byte(` {"v":1}`)...), 0, ErrInvalid,
			"after top-level value"},
		{"truncated JSON is rejected", valid[:len(valid)-1], 0, ErrInvalid, "malformed JSON"},
		{"invalid UTF-8 is rejected", bytes.Replace(valid, []byte("Install"), []byte("Inst\xffall"), 1), 0,
			ErrInvalid, "not valid UTF-8"},
		{"a field of the wrong JSON type is named", bytes.Replace(valid, []byte(`"tool":"bash"`), []byte(`"tool":5`), 1),
			0, ErrInvalid, `field "tool": must be a string, got number`},
		{"a nested field of the wrong JSON type is named", bytes.Replace(valid, []byte(`"tool":"write"`),
			[]byte(`"tool":true`), 1), 0, ErrInvalid, `field "batch_remaining.tool": must be a string, got bool`},
		{"an out-of-range integer is named", bytes.Replace(valid, []byte(`"ttl_ms":300000`),
			[]byte(`"ttl_ms":1e30`), 1), 0, ErrInvalid, `field "ttl_ms": must be an integer`},
		{"a message that fails Validate is rejected", bytes.Replace(valid, []byte(`"session_id":"sess-7f3a"`),
			[]byte(`"session_id":"sess.7f3a"`), 1), 0, ErrInvalid, `field "session_id": must be a single subject token`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Decode[Request](tt.data, tt.maxBytes)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Decode error = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("Decode error %q does not contain %q", err, tt.wantText)
			}
			if !reflect.DeepEqual(got, Request{}) {
				t.Errorf("Decode returned a partial message on error: %+v", got)
			}
		})
	}
}

func TestDecodeAcceptsWhatTheProtocolAllows(t *testing.T) {
	tests := []struct {
		name string
		data string
	}{
		{"unknown fields are ignored", `{"v":1,"request_id":"r","session_id":"s","agent_id":"a","tool":"bash","future_field":{"x":[1,2]}}`},
		{"whitespace around the object is fine", " \n\t{\"v\":1,\"request_id\":\"r\",\"session_id\":\"s\",\"agent_id\":\"a\",\"tool\":\"bash\"}\r\n"},
		{"optional fields may be omitted", `{"v":1,"request_id":"r","session_id":"s","agent_id":"a","tool":"read_file"}`},
		{"a message exactly at the limit is accepted", `{"v":1,"request_id":"r","session_id":"s","agent_id":"a","tool":"x"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Decode[Request]([]byte(tt.data), len(tt.data)); err != nil {
				t.Fatalf("Decode: %v", err)
			}
		})
	}
}

func TestDecodeChecksTheVersionOfTypesOutsideThePackage(t *testing.T) {
	type custom struct {
		Name string `json:"name"`
	}
	if _, err := Decode[custom]([]byte(`{"name":"x"}`), 0); !errors.Is(err, ErrUnsupportedVersion) {
		t.Errorf("missing v: err = %v, want ErrUnsupportedVersion", err)
	}
	got, err := Decode[custom]([]byte(`{"v":1,"name":"x"}`), 0)
	if err != nil || got.Name != "x" {
		t.Errorf("Decode = %+v, %v; want name x", got, err)
	}
}

func TestEncodeStampsTheVersionAndValidates(t *testing.T) {
	t.Run("a zero version becomes 1", func(t *testing.T) {
		msg := &TurnRequest{}
		data, err := Encode(msg)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != `{"v":1}` || msg.V != Version {
			t.Errorf("Encode = %s (msg.V %d), want {\"v\":1}", data, msg.V)
		}
	})
	t.Run("another version is refused", func(t *testing.T) {
		_, err := Encode(&TurnRequest{V: 2})
		if !errors.Is(err, ErrUnsupportedVersion) {
			t.Errorf("err = %v, want ErrUnsupportedVersion", err)
		}
	})
	t.Run("an invalid message is refused", func(t *testing.T) {
		req := validRequest()
		req.Tool = ""
		_, err := Encode(req)
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "tool" {
			t.Errorf("err = %v, want a FieldError on tool", err)
		}
	})
	t.Run("malformed raw arguments are refused", func(t *testing.T) {
		req := validRequest()
		req.Arguments = json.RawMessage(`{"command":}`)
		if _, err := Encode(req); !errors.Is(err, ErrInvalid) {
			t.Errorf("err = %v, want ErrInvalid", err)
		}
	})
	t.Run("shell metacharacters stay readable", func(t *testing.T) {
		data, err := Encode(validRequest())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(data, []byte(`npm install && npm run build > build.log`)) {
			t.Errorf("Encode escaped shell metacharacters: %s", data)
		}
		if bytes.HasSuffix(data, []byte("\n")) {
			t.Errorf("Encode output ends with a newline")
		}
	})
	t.Run("encoded bytes are not shared between calls", func(t *testing.T) {
		a, err := Encode(&AdminReply{OK: true, Message: "first"})
		if err != nil {
			t.Fatal(err)
		}
		keep := string(a)
		if _, err := Encode(&AdminReply{OK: true, Message: "second, longer message"}); err != nil {
			t.Fatal(err)
		}
		if string(a) != keep {
			t.Errorf("first result changed to %s after a second Encode", a)
		}
	})
}

func TestEncodeRefusesANilMessage(t *testing.T) {
	if _, err := Encode[Request](nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("Encode(nil) = %v, want ErrInvalid", err)
	}
}

// TestAuditRecordsReadsEveryShapeOfTheStream: a reader of the audit stream
// gets each decision's record whether it was appended alone or in a batch,
// and nothing from the stream's events.
func TestAuditRecordsReadsEveryShapeOfTheStream(t *testing.T) {
	encode := func(v interface{ AppendJSON([]byte) ([]byte, error) }) []byte {
		t.Helper()
		data, err := v.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	ids := func(recs []AuditRecord) []string {
		var out []string
		for i := range recs {
			id := AuditRecordID(&recs[i])
			out = append(out, id[:strings.LastIndexByte(id, '/')]) // less the call's digest
		}
		return out
	}
	single, batch := validAuditRecord(), validAuditBatch()
	grant, err := Encode(validGrantEvent())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		data []byte
		want []string
	}{
		{"one record", encode(single), []string{"sess-7f3a/01JQ8Z6Q3W5R0V8K2M4N6P8R0T/allow/approved"}},
		{"a batch", encode(batch), []string{"sess-7f3a/01JQ8Z6Q3W5R0V8K2M4N6P8R0T/allow/policy_allow",
			"sess-7f3a/01JQ8Z7B2C4D6E8F0G2H4J6K8M/deny/policy_deny"}},
		{"a grant event", grant, nil},
		{"an event of a type this reader does not know", []byte(`{"v":1,"type":"future_event","decision":{"request_id":"r"}}`), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			recs, err := AuditRecords(c.data)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(recs); !slices.Equal(got, c.want) {
				t.Errorf("records %q, want %q", got, c.want)
			}
		})
	}
	if recs, _ := AuditRecords(encode(batch)); recs[1].Request.RequestID != recs[1].Decision.RequestID ||
		string(recs[1].Request.Arguments) != `{"command":"rm -rf /"}` {
		t.Errorf("the batch's second record lost its request: %+v", recs[1].Request)
	}
	for name, data := range map[string]string{
		"not JSON":                          `{"v":1,"type":"audit_batch","records":[`,
		"a batch record without a decision": `{"v":1,"type":"audit_batch","session_id":"s","records":[{"v":1}]}`,
	} {
		if recs, err := AuditRecords([]byte(data)); err == nil {
			t.Errorf("%s: no error (records %v)", name, recs)
		}
	}
}

// TestRecentRecordsForgetsTheOldestPastItsBound: a copy read within the
// bound is seen again; one read after n other ids is new again.
func TestRecentRecordsForgetsTheOldestPastItsBound(t *testing.T) {
	r := NewRecentRecords(3)
	for _, id := range []string{"a", "b", "c"} {
		if r.Seen(id) {
			t.Fatalf("%s seen before it was read", id)
		}
	}
	if !r.Seen("a") || !r.Seen("c") {
		t.Fatal("a copy within the bound was not seen")
	}
	if r.Seen("d") { // forgets a
		t.Fatal("d seen before it was read")
	}
	if r.Seen("a") { // a is new again, and forgets b
		t.Fatal("a remembered past the bound")
	}
	if r.Seen("b") {
		t.Fatal("b remembered past the bound")
	}
	if !r.Seen("d") || !r.Seen("a") {
		t.Fatal("the latest ids were forgotten")
	}
}

// TestAuditRecordIDNamesTheCall: an agent that sends another call under a
// request id it used before gets a record of its own (the stream drops a
// repeated Nats-Msg-Id, readers count an id once); the same call decided
// again is the same record.
func TestAuditRecordIDNamesTheCall(t *testing.T) {
	a, b := validAuditRecord(), validAuditRecord()
	b.Recorded, b.Replica = b.Recorded.Add(time.Second), "broker-other"
	if AuditRecordID(a) != AuditRecordID(b) {
		t.Errorf("the same call decided again by another replica: ids %q and %q differ", AuditRecordID(a), AuditRecordID(b))
	}
	for name, change := range map[string]func(r *AuditRecord){
		"arguments": func(r *AuditRecord) { r.Request.Arguments = json.RawMessage(`{"command":"rm -rf /"}`) },
		"tool":      func(r *AuditRecord) { r.Request.Tool = "zsh" },
		"cwd":       func(r *AuditRecord) { r.Request.Cwd = "/etc" },
	} {
		c := validAuditRecord()
		change(c)
		if AuditRecordID(c) == AuditRecordID(a) {
			t.Errorf("another %s under the same request id: the same record id %q", name, AuditRecordID(a))
		}
	}
	// The same text joined another way: session x and request y/z are not
	// session x/y and request z (red team AW F2).
	x, y := validAuditRecord(), validAuditRecord()
	x.Decision.SessionID, x.Decision.RequestID = "x", "y/z"
	y.Decision.SessionID, y.Decision.RequestID = "x/y", "z"
	if AuditRecordID(x) == AuditRecordID(y) {
		t.Errorf("sessions x and x/y share the record id %q", AuditRecordID(x))
	}
	if id := AuditRecordID(a); !strings.HasPrefix(id, "sess-7f3a/01JQ8Z6Q3W5R0V8K2M4N6P8R0T/allow/approved/") || len(id) != len("sess-7f3a/01JQ8Z6Q3W5R0V8K2M4N6P8R0T/allow/approved/")+16 {
		t.Errorf("record id %q, want session/request/outcome/reason/16 hex digits", id)
	}
}

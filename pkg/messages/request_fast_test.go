package messages

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// jsonNames are the JSON names of a struct type's fields.
func jsonNames(t reflect.Type) []string {
	var names []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// TestRequestFieldNames: a field added to Request or BatchItem must be
// added to the fast decoder too; otherwise it would skip the new field as
// unknown and decode other values than encoding/json.
func TestRequestFieldNames(t *testing.T) {
	fast := slices.Sorted(slices.Values(requestFieldNames[:]))
	if want := jsonNames(reflect.TypeFor[Request]()); !slices.Equal(fast, want) {
		t.Errorf("decodeRequestFast knows Request fields %q; the struct has %q", fast, want)
	}
	fast = slices.Sorted(slices.Values(batchItemNames))
	if want := jsonNames(reflect.TypeFor[BatchItem]()); !slices.Equal(fast, want) {
		t.Errorf("decodeRequestFast knows BatchItem fields %q; the struct has %q", fast, want)
	}
}

// fastRequests are shapes agents send: the fast path must take them.
var fastRequests = []string{
	`{"v":1,"request_id":"r1","session_id":"s1","agent_id":"a","tool":"bash","arguments":{"command":"ls -la"}}`,
	"{\n  \"v\": 1,\n  \"request_id\": \"r1\",\n  \"session_id\": \"s1\",\n  \"agent_id\": \"a\",\n  \"tool\": \"Bash\",\n  \"arguments\": {\"command\": \"echo \\\"hi\\\" \\u00e9\", \"timeout\": 1.5e3, \"flags\": [true, false, null, -0.25]}\n}\n",
	`{"v":1,"request_id":"r1","session_id":"s1","agent_id":"a","agent_type":"coder","requested_by":"alice","call_id":"toolu_1","tool":"write","category":"write","arguments":{"file_path":"/x/y","content":"{}"},"description":"Write y","cwd":"/x","home":"/home/a","batch_remaining":[{"tool":"bash","arguments":{"command":"npm test"}},{"tool":"read","x":{"nested":[1,{"a":"b"}]}}],"ttl_ms":300000}`,
	`{"v":1,"request_id":"r1","session_id":"s1","agent_id":"a","tool":"mcp__fs__read","arguments":"a string","batch_remaining":[],"future_field":{"k":[1,2,3]},"ttl_ms":-5}`,
	`{"v":1,"request_id":"r1","session_id":"s1","agent_id":"a","tool":"bash","arguments":["bash","-lc","ls"]}`,
	`{"v":2,"request_id":"r1","tool":"bash"}`,
	`{}`,
}

// slowRequests are inputs the fast path must leave to encoding/json:
// escapes in fields it decodes, nulls, keys that match a field only
// case-insensitively (Unicode simple folding included), duplicates,
// numbers that are not plain integers, syntax errors.
var slowRequests = []string{
	`{"v":1,"request_id":"r\u0031","session_id":"s1","agent_id":"a","tool":"bash"}`,
	`{"v":1,"request_id":"r1","session_id":"s1","agent_id":"a","tool":"bash","Tool":"read"}`,
	`{"v":1,"request_id":"r1","ſession_id":"s1","agent_id":"a","tool":"bash"}`,
	`{"v":1,"request_id":"r1","session_id":"s1","agent_id":"a","tool":"bash","tool":"read"}`,
	`{"v":1,"request_id":"r1","session_id":"s1","agent_id":"a","tool":null}`,
	`{"v":1,"request_id":"r1","session_id":"s1","agent_id":"a","tool":"bash","arguments":null}`,
	`{"v":1.0,"request_id":"r1","session_id":"s1","agent_id":"a","tool":"bash"}`,
	`{"v":1e0,"request_id":"r1","session_id":"s1","agent_id":"a","tool":"bash"}`,
	`{"v":01,"request_id":"r1"}`,
	`{"v":1,"ttl_ms":1234567890123456789}`,
	`{"v":1,"tool":"bash"} x`,
	`{"v":1,"tool":"bash",}`,
	`{"v":1,"arguments":{"a":tru}}`,
	`{"v":1,"arguments":{"a":"\x"}}`,
	`{"v":1,"batch_remaining":[{"tool":"a","TOOL":"b"}]}`,
	`{"v":1,"batch_remaining":[null]}`,
	`{"v":1,"batch_remaining":[{"tool":"a","tool":"b"}]}`,
	`{"v":1,"x":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`,
	`{"v":"1"}`,
}

func TestDecodeRequestFastTakesCommonShapes(t *testing.T) {
	for _, in := range fastRequests {
		var fast, slow Request
		if !decodeRequestFast([]byte(in), &fast) {
			t.Errorf("%s: the fast path refused it", in)
			continue
		}
		if err := json.Unmarshal([]byte(in), &slow); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("%s:\nfast %#v\njson %#v", in, fast, slow)
		}
	}
}

func TestDecodeRequestFastLeavesTheRestToEncodingJSON(t *testing.T) {
	for _, in := range slowRequests {
		var r Request
		if decodeRequestFast([]byte(in), &r) {
			t.Errorf("%s: the fast path took it (%#v)", in, r)
		}
	}
	// And Decode still answers as encoding/json does: the case variant is
	// decoded (last wins), the duplicate too.
	for in, tool := range map[string]string{slowRequests[1]: "read", slowRequests[3]: "read"} {
		r, err := Decode[Request]([]byte(in), 0)
		if err != nil || r.Tool != tool {
			t.Errorf("Decode(%s) = tool %q, %v; want %q", in, r.Tool, err, tool)
		}
	}
}

// FuzzDecodeRequestFast holds the fast path to json.Unmarshal: whatever it
// takes, json.Unmarshal takes too and decodes to the same Request.
func FuzzDecodeRequestFast(f *testing.F) {
	for _, in := range append(slices.Clone(fastRequests), slowRequests...) {
		f.Add([]byte(in))
	}
	data, err := Encode(validRequest())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		if checkEnvelope(data) != nil {
			return // Decode refuses it before either decoder
		}
		var fast, slow Request
		if !decodeRequestFast(data, &fast) {
			return
		}
		if err := json.Unmarshal(data, &slow); err != nil {
			t.Fatalf("%q: the fast path took what json.Unmarshal refuses: %v", data, err)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Fatalf("%q:\nfast %#v\njson %#v", data, fast, slow)
		}
	})
}

package redisstore

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
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
	big := messages.ApprovalNeeded{V: 1, Type: "approval_needed",
		Request: messages.Request{Tool: "bash", Arguments: json.RawMessage(`{"command":"` + strings.Repeat("ls -la ", 60) + `"}`)}}
	tests := []struct {
		name      string
		question  messages.ApprovalNeeded
		min       int // compressMin; 0: the default
		wantCodec string
	}{
		{"an empty question", messages.ApprovalNeeded{}, 0, codecZstd1},
		{"a question below compressMin stays raw", messages.ApprovalNeeded{Request: messages.Request{Tool: "bash"}}, math.MaxInt, codecRaw},
		{"a question-sized payload is compressed", big, 0, codecZstd1},
		{"a question with field separators", messages.ApprovalNeeded{Team: "3:abc:4:"}, math.MaxInt, codecRaw},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.min != 0 {
				defer SetCompressMin(tc.min)()
			}
			req := session.Request{
				ID: "r:1", SessionID: "s{1", AgentID: "a:7", RequestedBy: "", Tool: "b:ash",
				Teams: []string{"ops", "3:x", ""}, ApprovalsRequired: 2, TTL: 1500 * time.Microsecond, Question: tc.question,
			}
			tail, err := encodeTail(&req)
			if err != nil {
				t.Fatal(err)
			}
			v := storedHead("pending", "1700000000000001", "1700000000001501") + string(tail)
			rec, err := decodeRecord(req.SessionID, req.ID, v)
			if err != nil {
				t.Fatal(err)
			}
			if rec.QuestionErr != nil || !reflect.DeepEqual(rec.Question, req.Question) || rec.AgentID != req.AgentID || rec.Tool != req.Tool ||
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

// oldTail builds the tail as the broker stored it before the question was
// typed on the record: the broker encoded the question itself and the store
// kept the bytes (raw, or compressed from compressMin with the v1
// dictionary).
func oldTail(req *session.Request, payload []byte, compress bool) string {
	codec := codecRaw
	if compress {
		codec, payload = codecZstd1, zstdEncoder().EncodeAll(payload, nil)
	}
	return encodeList([]string{"60000000000", req.AgentID, req.RequestedBy, req.Tool, encodeList(req.Teams), codec, string(payload)})
}

// Records written before the question was typed on the record read with
// their question: the stored format did not change.
func TestRecordOfTheOldWriterReads(t *testing.T) {
	q := messages.ApprovalNeeded{V: 1, Type: "approval_needed",
		Request: messages.Request{V: 1, RequestID: "r1", SessionID: "s1", AgentID: "a", Tool: "Bash",
			Arguments: json.RawMessage(`{"command":"git push origin main"}`)},
		Team: "ops", Risk: messages.Risk{Tier: "high", Subcommands: []messages.Verdict{{Command: "git push origin main", Action: "ask"}}},
		ApprovalsRequired: 1, Always: &messages.AlwaysGrant{Scope: messages.ScopeAlwaysPrefix, Tool: "bash", Patterns: []string{"git push *"}}}
	// What the broker's json.Marshal of the question produced.
	payload, err := json.Marshal(q)
	if err != nil {
		t.Fatal(err)
	}
	req := session.Request{ID: "r1", SessionID: "s1", AgentID: "a", Tool: "bash", Teams: []string{"ops"}}
	for _, compress := range []bool{false, true} {
		v := storedHead("pending", "1", "2") + oldTail(&req, payload, compress)
		rec, err := decodeRecord("s1", "r1", v)
		if err != nil || rec.QuestionErr != nil {
			t.Fatalf("compressed %v: %v, %v", compress, err, rec.QuestionErr)
		}
		if !reflect.DeepEqual(rec.Question, q) {
			t.Errorf("compressed %v: question %+v, want %+v", compress, rec.Question, q)
		}
	}
}

// A record whose question cannot be read still reads (it can be rejected,
// cancelled, expired), with QuestionErr naming the request and the cause.
func TestRecordWithADamagedQuestion(t *testing.T) {
	req := session.Request{ID: "r1", SessionID: "s1", AgentID: "a", Tool: "bash", Teams: []string{"ops"}}
	z := zstdEncoder().EncodeAll([]byte(`{"v":1}`), nil)
	tests := []struct {
		name, tail, why string
	}{
		{"JSON that is not a question", oldTail(&req, []byte(`{"request":[1,2]}`), false), "question JSON"},
		{"truncated JSON", oldTail(&req, []byte(`{"v":1,"requ`), false), "question JSON"},
		{"no question at all", oldTail(&req, nil, false), "no question stored"},
		{"a damaged compressed payload", encodeList([]string{"1", "a", "", "bash", encodeList(req.Teams), codecZstd1, string(z[:len(z)-2])}), "payload codec z1"},
		{"an unknown codec", encodeList([]string{"1", "a", "", "bash", encodeList(req.Teams), "q9", "{}"}), "unknown payload codec"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rec, err := decodeRecord("s1", "r1", storedHead("pending", "1", "2")+tc.tail)
			if err != nil {
				t.Fatalf("decodeRecord: %v; want the record with QuestionErr", err)
			}
			if rec.QuestionErr == nil {
				t.Fatalf("QuestionErr is nil; question %+v", rec.Question)
			}
			if msg := rec.QuestionErr.Error(); !strings.Contains(msg, "s1/r1") || !strings.Contains(msg, tc.why) {
				t.Errorf("QuestionErr = %q, want it to name s1/r1 and %q", msg, tc.why)
			}
			if rec.State != messages.StatePending || rec.AgentID != "a" || !reflect.DeepEqual(rec.Question, messages.ApprovalNeeded{}) {
				t.Errorf("record %+v: want its other fields and a zero question", rec)
			}
		})
	}
}

func TestDecodeRecordRejectsDamagedValues(t *testing.T) {
	tailBytes, err := encodeTail(&session.Request{Teams: []string{"ops"}, TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tail := string(tailBytes)
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

func TestEncodeTailRefusesAQuestionThatIsNotJSON(t *testing.T) {
	req := session.Request{ID: "r1", SessionID: "s1", Question: messages.ApprovalNeeded{
		Request: messages.Request{Arguments: json.RawMessage(`{"command":`)}}}
	if _, err := encodeTail(&req); !errors.Is(err, session.ErrInvalid) || !strings.Contains(err.Error(), "s1/r1") {
		t.Fatalf("encodeTail = %v, want ErrInvalid naming s1/r1", err)
	}
}

// Approvals stored before they kept their scope (bare ids) have none, read
// as once: they stand behind no grant. A standing answer is "<id> <scope>"; an
// entry naming an unknown scope is a damaged record.
func TestApprovalScopesOfOldAndNewEntries(t *testing.T) {
	tail, err := encodeTail(&session.Request{Teams: []string{"ops"}, TTL: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	head := func(entries ...string) string {
		return encodeList([]string{recordVersion, "pending", "1", "2", "", "3", encodeList(entries), ""})
	}
	rec, err := decodeRecord("s", "r", head("ann", "bob session", "cid always_prefix", "dee once")+string(tail))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ann", "bob", "cid", "dee"}; !slices.Equal(rec.Approvals, want) {
		t.Errorf("Approvals = %v, want %v", rec.Approvals, want)
	}
	if want := []messages.Scope{"", messages.ScopeSession, messages.ScopeAlwaysPrefix, messages.ScopeOnce}; !slices.Equal(rec.ApprovalScopes, want) {
		t.Errorf("ApprovalScopes = %v, want %v", rec.ApprovalScopes, want)
	}
	if s := rec.ApprovalScope(0); s != messages.ScopeOnce {
		t.Errorf("ApprovalScope of a bare id = %q, want once", s)
	}
	if e := approvalEntry(session.Vote{ApproverID: "ann"}); e != "ann" {
		t.Errorf("approvalEntry without a scope = %q, want the bare id (the old form)", e)
	}
	if e := approvalEntry(session.Vote{ApproverID: "ann", Scope: messages.ScopeOnce}); e != "ann once" {
		t.Errorf("approvalEntry of a once vote = %q", e)
	}
	if e := approvalEntry(session.Vote{ApproverID: "bob", Scope: messages.ScopeAlways}); e != "bob always" {
		t.Errorf("approvalEntry of an always vote = %q", e)
	}
	if _, err := decodeRecord("s", "r", head("ann forever")+string(tail)); err == nil || !strings.Contains(err.Error(), "forever") {
		t.Errorf("an unknown stored scope: err = %v, want it named", err)
	}
}

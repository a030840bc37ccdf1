package messages

import (
	"encoding/json"
	"testing"
	"time"
)

// The codec benchmarks come in pairs: Decode against plain json.Unmarshal of
// the same bytes (Encode against json.Marshal), so that the codec's own cost
// (size, UTF-8, version and Validate checks) reads as the difference; a
// Request takes the fast path (request_fast.go), so DecodeRequest is below
// its baseline:
//
//	go test -run '^$' -bench . -count 10 ./pkg/messages/

func benchRequestJSON(b *testing.B) []byte {
	data, err := Encode(validRequest())
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func BenchmarkDecodeRequest(b *testing.B) {
	data := benchRequestJSON(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode[Request](data, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshalRequestBaseline(b *testing.B) {
	data := benchRequestJSON(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var r Request
		if err := json.Unmarshal(data, &r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeResponse(b *testing.B) {
	data, err := Encode(validResponse())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode[Response](data, 0); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeDecision(b *testing.B) {
	d := validDenyDecision()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(d); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshalDecisionBaseline(b *testing.B) {
	d := validDenyDecision()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(d); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidateRequest(b *testing.B) {
	r := validRequest()
	b.ReportAllocs()
	for b.Loop() {
		if err := r.Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseDecisionSubject(b *testing.B) {
	s := Subjects{}
	subject := s.Decision("sess-7f3a", "01JQ8Z6Q3W5R0V8K2M4N6P8R0T")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Parse(subject); err != nil {
			b.Fatal(err)
		}
	}
}

// benchAudit is an audit record shaped like the broker's for an automatic
// shell decision.
func benchAudit() AuditRecord {
	at := time.Date(2026, 11, 22, 2, 40, 1, 123456789, time.UTC)
	return AuditRecord{
		V: Version,
		Request: Request{V: Version, RequestID: "9ZbJq3ydPmO8WvA4nLq1Xk", SessionID: "sess-42", AgentID: "pod-7",
			Tool: "bash", Arguments: json.RawMessage(`{"command":"git log --oneline -n 20 | grep fix | head -5"}`)},
		Decision: Decision{V: Version, RequestID: "9ZbJq3ydPmO8WvA4nLq1Xk", SessionID: "sess-42", Tool: "bash",
			Outcome: OutcomeAllow, ReasonCode: ReasonPolicyAllow, Reason: `rule bash(git log *) allows "git log --oneline -n 20"`,
			DecidedBy: Decider{Kind: DeciderPolicy, ID: "broker-1"}, DecidedAt: at, PolicyVersion: "sha256:0f3a9c"},
		Risk: &Risk{Tier: "exec", Rule: "bash(git log *)", Reason: `rule bash(git log *) allows "git log --oneline -n 20"`,
			Subcommands: []Verdict{
				{Command: "git log --oneline -n 20", Words: []string{"git", "log", "--oneline", "-n", "20"}, Kind: "command", Action: "allow", Rule: "bash(git log *)"},
				{Command: "grep fix", Words: []string{"grep", "fix"}, Kind: "command", Action: "allow", Rule: "bash(grep *)"},
				{Command: "head -5", Words: []string{"head", "-5"}, Kind: "command", Action: "allow", Rule: "bash(head *)"},
			}},
		Replica:  "broker-1",
		Recorded: at,
	}
}

// BenchmarkEncodeAuditRecord compares AppendJSON (what the broker uses on
// every automatic decision) with json.Marshal of the same record.
func BenchmarkEncodeAuditRecord(b *testing.B) {
	rec := benchAudit()
	b.Run("json.Marshal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(&rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("AppendJSON", func(b *testing.B) {
		buf := make([]byte, 0, 2048)
		b.ReportAllocs()
		for b.Loop() {
			var err error
			if buf, err = rec.AppendJSON(buf[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

package messages

import (
	"encoding/json"
	"testing"
)

// The codec benchmarks come in pairs: Decode against plain json.Unmarshal of
// the same bytes (Encode against json.Marshal), so that the codec's own cost
// (size, UTF-8, version and Validate checks) reads as the difference:
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

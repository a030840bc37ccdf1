package tenancy

import (
	"encoding/json"
	"testing"
)

// FuzzRequestInfoScanMatchesEncodingJSON holds the scan equal to
// encoding/json: whatever it reads, encoding/json reads the same.
func FuzzRequestInfoScanMatchesEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"start":"2026-11-28T04:37:02Z","host":"10.0.3.17","id":4711,"acc":"ACME","user":"acme-agent","name":"x","rtt":412000,"tags":["a","b"],"kind":"Client"}`,
		`{"acc":"A","acc":"B"}`, `{"ACC":"B","acc":"A"}`, `{"user":"u\"x","acc":"A"}`, `{}`, `{"rtt":-0}`,
		`{"id":01,"acc":"A"}`, `{"acc":"A","x":null,"y":true}`, ` {"acc" : "A" } `, `{"acc":"A"}x`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := scanRequestInfo(s)
		if !ok {
			return
		}
		var want RequestInfo
		if err := json.Unmarshal([]byte(s), &want); err != nil {
			t.Fatalf("scan accepted %q that encoding/json refuses: %v", s, err)
		}
		if got != want {
			t.Fatalf("scan %q = %+v, encoding/json %+v", s, got, want)
		}
	})
}

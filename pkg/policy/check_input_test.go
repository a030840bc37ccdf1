package policy

import (
	"bytes"
	"strings"
	"testing"
)

func TestRunCheckRefusesWhatTheBrokerRefuses(t *testing.T) {
	p := mustLoadSoundness(t)
	for _, tt := range []struct{ name, line, want string }{
		{"a line over the broker's 64 KiB limit", `{"tool":"bash","arguments":{"command":"echo ` + strings.Repeat("a", MaxCheckLine) + `"}}`, "broker's message limit"},
		{"a line that is not UTF-8", "{\"tool\":\"bash\",\"arguments\":{\"command\":\"echo \xff\"}}", "not valid UTF-8"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			if err := RunCheck(strings.NewReader(tt.line+"\n"), &out, p, ""); err == nil {
				t.Error("RunCheck returned no error")
			}
			if !strings.Contains(out.String(), tt.want) {
				t.Errorf("output %q, want an error containing %q", out.String(), tt.want)
			}
		})
	}
}

func mustLoadSoundness(t *testing.T) *Policy {
	t.Helper()
	p, err := Load("testdata/corpus_policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

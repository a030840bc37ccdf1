package agentcfg

import (
	"strings"
	"testing"

	"github.com/signoff-dev/signoff/pkg/messages"
)

func TestTokenMapsHostIDsOntoValidDistinctTokens(t *testing.T) {
	inputs := []string{
		"8a4c2e1f-3b5d-4f6a-9c7e-0d1b2a3c4e5f", "a.b", "a~2Eb", "a b", "a*", "a>", "{x}", "a~b", "a~7Eb",
		"pod-12.ns.svc.cluster.local", "ümlaut", "\u200bzero", "tab\there", strings.Repeat("x", 128),
		strings.Repeat("x", 129), strings.Repeat(".", 60), "~h" + strings.Repeat("0", 64),
	}
	seen := map[string]string{}
	for _, in := range inputs {
		tok := Token(in)
		if err := messages.ValidateToken("id", tok); err != nil {
			t.Errorf("Token(%q) = %q, not a token: %v", in, tok, err)
		}
		if prev, dup := seen[tok]; dup {
			t.Errorf("Token(%q) = Token(%q) = %q", in, prev, tok)
		}
		seen[tok] = in
		if Token(in) != tok {
			t.Errorf("Token(%q) is not stable", in)
		}
	}
	if got := Token("8a4c2e1f-3b5d"); got != "8a4c2e1f-3b5d" {
		t.Errorf("a plain id changed: %q", got)
	}
	if got := Token("a.b"); got != "a~2Eb" {
		t.Errorf("Token(a.b) = %q", got)
	}
}

func FuzzToken(f *testing.F) {
	for _, s := range []string{"a.b", "~", "x y", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok := Token(s)
		if s == "" {
			return
		}
		if err := messages.ValidateToken("id", tok); err != nil {
			t.Fatalf("Token(%q) = %q: %v", s, tok, err)
		}
	})
}

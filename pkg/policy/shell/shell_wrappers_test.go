package shell

import (
	"testing"
)

func TestShellIsDuration(t *testing.T) {
	for s, want := range map[string]bool{
		"5": true, "5s": true, "1.5m": true, "2h": true, "1d": true, "inf": true, "INF": true,
		"Infinity": true, "0x10": true, "0x1p3": true, "+5": true, "1e3": true, ".5": true, "5.": true,
		"": false, "-1": false, "nan": false, "5x": false, "5ss": false, "1_0": false, "x": false, "++5": false,
	} {
		if got := shIsDuration(shWord{text: s, lit: true}); got != want {
			t.Errorf("shIsDuration(%q) = %v, want %v", s, got, want)
		}
	}
}

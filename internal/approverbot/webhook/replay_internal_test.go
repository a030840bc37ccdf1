package webhook

import (
	"testing"
	"time"
)

func TestReplayCacheRefusesASecondUseWithinTheWindowOnly(t *testing.T) {
	var rc replayCache
	t0 := time.Unix(1_700_000_000, 0)
	steps := []struct {
		name string
		sig  string
		at   time.Time
		want bool
	}{
		{"a first use is taken", "sig-a", t0, true},
		{"another signature is taken", "sig-b", t0.Add(time.Second), true},
		{"a second use is refused", "sig-a", t0.Add(time.Minute), false},
		{"a second use at the edge of the window is refused", "sig-a", t0.Add(2 * MaxSkew), false},
		{"after the window the signature is forgotten (its timestamp is stale by then)", "sig-a", t0.Add(2*MaxSkew + time.Second), true},
	}
	for _, s := range steps {
		if got := rc.first(s.sig, s.at); got != s.want {
			t.Errorf("%s: first = %v, want %v", s.name, got, s.want)
		}
	}
	if len(rc.seen) != 2 || len(rc.order) != 2 {
		t.Errorf("cache holds %d signatures in %d entries, want 2: sig-b expired, sig-a again", len(rc.seen), len(rc.order))
	}
}

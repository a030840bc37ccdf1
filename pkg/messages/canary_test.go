package messages

import (
	"fmt"
	"testing"
)

func TestCanaryShareIsStablePerSessionAndNearTheShareOver10kIDs(t *testing.T) {
	for _, share := range []float64{10, 50} {
		c := &Canary{Spec: CanarySpec{SharePercent: share}, ID: "c-1", State: CanaryActive}
		in := 0
		for i := range 10000 {
			s := fmt.Sprintf("session-%d", i)
			got := c.Covers(s, "a1", "")
			if got != c.Covers(s, "a1", "") || got != InShare("c-1", s, share) {
				t.Fatalf("session %s: covered differently on a second look", s)
			}
			if got {
				in++
			}
		}
		if lo, hi := int(share*100)-150, int(share*100)+150; in < lo || in > hi {
			t.Errorf("%v%% canary: %d of 10000 sessions in, want %d to %d", share, in, lo, hi)
		}
	}
	// Another canary draws another share.
	same := 0
	for i := range 1000 {
		s := fmt.Sprintf("session-%d", i)
		if InShare("c-1", s, 50) == InShare("c-2", s, 50) {
			same++
		}
	}
	if same > 600 || same < 400 {
		t.Errorf("two 50%% canaries agree on %d of 1000 sessions: want independent draws (~500)", same)
	}
}

func TestCanaryCoversOnlyItsSelectorWhileActive(t *testing.T) {
	c := &Canary{Spec: CanarySpec{SharePercent: 100, Selector: &Selector{AgentType: "reviewer"}}, ID: "c", State: CanaryActive}
	if !c.Covers("s1", "a1", "Reviewer") || c.Covers("s1", "a1", "coder") || c.Covers("s1", "a1", "") {
		t.Errorf("an agent-type canary covers the wrong calls")
	}
	c.Spec.Selector = &Selector{Agent: "ci-*"}
	if !c.Covers("s1", "ci-7", "") || c.Covers("s1", "dev-1", "") {
		t.Errorf("an agent-glob canary covers the wrong calls")
	}
	c.State = CanaryRolledBack
	if c.Covers("s1", "ci-7", "") {
		t.Errorf("a rolled-back canary still covers calls")
	}
}

func TestCanarySpecValidateRefusesBadBounds(t *testing.T) {
	good := CanarySpec{Policy: "x", SharePercent: 10, MaxAskRate: 0.3, MaxDenyRate: 0.1, MinRequests: 50, WindowMS: 600000}
	if err := good.Validate(); err != nil {
		t.Fatalf("good spec: %v", err)
	}
	for name, mod := range map[string]func(*CanarySpec){
		"no policy":          func(c *CanarySpec) { c.Policy = "" },
		"share above 100":    func(c *CanarySpec) { c.SharePercent = 101 },
		"share zero":         func(c *CanarySpec) { c.SharePercent = 0 },
		"ask rate above 1":   func(c *CanarySpec) { c.MaxAskRate = 1.1 },
		"negative deny rate": func(c *CanarySpec) { c.MaxDenyRate = -0.1 },
		"no min requests":    func(c *CanarySpec) { c.MinRequests = 0 },
		"window too short":   func(c *CanarySpec) { c.WindowMS = 10 },
		"session selector":   func(c *CanarySpec) { c.Selector = &Selector{Session: "s1"} },
		"empty selector":     func(c *CanarySpec) { c.Selector = &Selector{} },
	} {
		c := good
		mod(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

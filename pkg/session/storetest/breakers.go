package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// breakerTests cover the outbreak breakers' counts and trips. The backend
// is shared by parallel subtests: each names its own breakers and looks
// only for those.
func (r *runner) breakerTests() []test {
	return []test{
		{"HitBreakers does not trip with one agent short of the threshold, and trips once at it", testBreakerTripsAtThreshold},
		{"HitBreakers counts an agent that hits twice once", testBreakerSameAgentOnce},
		{"HitBreakers counts only hits within the window", testBreakerWindow},
		{"HitBreakers counts each rule apart", testBreakerRulesApart},
		{"HitBreakers from many callers at once trips the breaker exactly once", testBreakerConcurrentTrip},
		{"ResetBreaker lifts the trip and forgets the counts; a breaker not tripped is not found", testBreakerReset},
		{"HitBreakers refuses a hit it cannot count, storing nothing", testBreakerInvalid},
	}
}

// breakerHit is a hit of breaker name on rule by agent, threshold n.
func breakerHit(name, rule, agent string, n int, window time.Duration) session.BreakerHit {
	return session.BreakerHit{Breaker: name, Rule: rule, AgentID: agent, SessionID: "sess-" + agent,
		Threshold: n, Window: window, Selector: messages.Selector{AgentType: "coder"}, Team: "sec"}
}

// hitAll sends hits one call each and returns every trip made.
func hitAll(t *testing.T, e *env, hits ...session.BreakerHit) []messages.BreakerTrip {
	t.Helper()
	var out []messages.BreakerTrip
	for _, h := range hits {
		trips, err := e.breakers.HitBreakers(e.ctx, []session.BreakerHit{h})
		if err != nil {
			t.Fatalf("HitBreakers(%s by %s): %v", h.Breaker, h.AgentID, err)
		}
		out = append(out, trips...)
	}
	return out
}

func findTrip(t *testing.T, e *env, name string) (messages.BreakerTrip, bool) {
	t.Helper()
	all, err := e.breakers.BreakerTrips(e.ctx)
	return findIn(t, "BreakerTrips", all, err, func(tr messages.BreakerTrip) bool { return tr.Breaker == name })
}

func testBreakerTripsAtThreshold(t *testing.T, e *env) {
	name, rule := e.name("breaker"), "bash(curl *)"
	a1, a2, a3, a4 := e.name("agent"), e.name("agent"), e.name("agent"), e.name("agent")
	if trips := hitAll(t, e, breakerHit(name, rule, a1, 3, time.Minute), breakerHit(name, rule, a2, 3, time.Minute)); len(trips) != 0 {
		t.Fatalf("two agents of three tripped it: %+v", trips)
	}
	if _, ok := findTrip(t, e, name); ok {
		t.Fatal("BreakerTrips lists a breaker two agents of three hit")
	}
	before, err := e.backend.Now(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	trips := hitAll(t, e, breakerHit(name, rule, a3, 3, time.Minute))
	if len(trips) != 1 {
		t.Fatalf("the third agent made trips %+v, want one", trips)
	}
	tr := trips[0]
	if tr.Breaker != name || tr.Rule != rule || !slices.Equal(tr.Agents, []string{a1, a2, a3}) || tr.Threshold != 3 ||
		tr.Window() != time.Minute || tr.Selector.AgentType != "coder" || tr.Team != "sec" || tr.SessionID != "sess-"+a3 {
		t.Fatalf("trip %+v: want %s on %q by %s, %s, %s (oldest first), threshold 3, 1m, the selector, team and session", tr, name, rule, a1, a2, a3)
	}
	if tr.TrippedAt.Before(before.Add(-time.Second)) || tr.TrippedAt.After(before.Add(5*time.Second)) {
		t.Fatalf("tripped_at %v is not the store's clock (%v)", tr.TrippedAt, before)
	}
	stored, ok := findTrip(t, e, name)
	if !ok || !slices.Equal(stored.Agents, tr.Agents) || !stored.TrippedAt.Equal(tr.TrippedAt) || stored.Rule != rule {
		t.Fatalf("BreakerTrips has %+v (found %v), want %+v", stored, ok, tr)
	}
	// Tripped: a fourth agent trips nothing more.
	if trips := hitAll(t, e, breakerHit(name, rule, a4, 3, time.Minute)); len(trips) != 0 {
		t.Fatalf("a hit on a tripped breaker tripped it again: %+v", trips)
	}
}

func testBreakerSameAgentOnce(t *testing.T, e *env) {
	name, rule := e.name("breaker"), "bash(rm -rf /*)"
	a1, a2 := e.name("agent"), e.name("agent")
	if trips := hitAll(t, e, breakerHit(name, rule, a1, 3, time.Minute), breakerHit(name, rule, a1, 3, time.Minute),
		breakerHit(name, rule, a2, 3, time.Minute), breakerHit(name, rule, a1, 3, time.Minute)); len(trips) != 0 {
		t.Fatalf("two agents (one hitting three times) tripped a breaker of three: %+v", trips)
	}
	// In one batch too.
	trips, err := e.breakers.HitBreakers(e.ctx, []session.BreakerHit{breakerHit(name, rule, a2, 3, time.Minute), breakerHit(name, rule, a1, 3, time.Minute)})
	if err != nil || len(trips) != 0 {
		t.Fatalf("a batch of the same two agents: trips %+v, err %v; want none", trips, err)
	}
}

func testBreakerWindow(t *testing.T, e *env) {
	name, rule := e.name("breaker"), "bash(curl *)"
	const window = 600 * time.Millisecond
	a1, a2, a3 := e.name("agent"), e.name("agent"), e.name("agent")
	hitAll(t, e, breakerHit(name, rule, a1, 2, window))
	time.Sleep(window + 200*time.Millisecond)
	if trips := hitAll(t, e, breakerHit(name, rule, a2, 2, window)); len(trips) != 0 {
		t.Fatalf("a hit older than the window counted: %+v", trips)
	}
	trips := hitAll(t, e, breakerHit(name, rule, a3, 2, window))
	if len(trips) != 1 || !slices.Equal(trips[0].Agents, []string{a2, a3}) {
		t.Fatalf("two agents within the window made trips %+v, want one by %s and %s", trips, a2, a3)
	}
}

func testBreakerRulesApart(t *testing.T, e *env) {
	name := e.name("breaker")
	a1, a2 := e.name("agent"), e.name("agent")
	if trips := hitAll(t, e, breakerHit(name, "bash(curl *)", a1, 2, time.Minute), breakerHit(name, "safety: rm -rf /", a2, 2, time.Minute)); len(trips) != 0 {
		t.Fatalf("two agents hitting two different rules tripped a breaker of two: %+v", trips)
	}
	trips := hitAll(t, e, breakerHit(name, "safety: rm -rf /", a1, 2, time.Minute))
	if len(trips) != 1 || trips[0].Rule != "safety: rm -rf /" {
		t.Fatalf("two agents on the same rule made trips %+v, want one on it", trips)
	}
}

func testBreakerConcurrentTrip(t *testing.T, e *env) {
	name, rule := e.name("breaker"), "bash(curl *)"
	const callers, n = 24, 5
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		trips []messages.BreakerTrip
		errs  []error
	)
	for i := range callers {
		agent := fmt.Sprintf("%s-%d", e.name("agent"), i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := e.breakers.HitBreakers(e.ctx, []session.BreakerHit{breakerHit(name, rule, agent, n, time.Minute)})
			mu.Lock()
			defer mu.Unlock()
			trips = append(trips, got...)
			if err != nil {
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatalf("HitBreakers: %v", errs[0])
	}
	if len(trips) != 1 {
		t.Fatalf("%d callers of distinct agents made %d trips, want exactly one", callers, len(trips))
	}
	if len(trips[0].Agents) != n {
		t.Fatalf("the trip names %d agents %v, want the %d that tripped it", len(trips[0].Agents), trips[0].Agents, n)
	}
}

func testBreakerReset(t *testing.T, e *env) {
	name, rule := e.name("breaker"), "bash(curl *)"
	a1, a2, a3 := e.name("agent"), e.name("agent"), e.name("agent")
	if _, err := e.breakers.ResetBreaker(e.ctx, name); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("ResetBreaker of a breaker never tripped: %v, want ErrNotFound", err)
	}
	if trips := hitAll(t, e, breakerHit(name, rule, a1, 2, time.Minute), breakerHit(name, rule, a2, 2, time.Minute)); len(trips) != 1 {
		t.Fatalf("trips %+v, want one", trips)
	}
	lifted, err := e.breakers.ResetBreaker(e.ctx, name)
	if err != nil || lifted.Breaker != name || !slices.Equal(lifted.Agents, []string{a1, a2}) {
		t.Fatalf("ResetBreaker = %+v, %v; want the trip by %s and %s", lifted, err, a1, a2)
	}
	if _, ok := findTrip(t, e, name); ok {
		t.Fatal("BreakerTrips still lists a breaker that was reset")
	}
	// The counts are gone: a1 and a2 hit before the reset, so one more
	// agent does not trip it; a second does.
	if trips := hitAll(t, e, breakerHit(name, rule, a3, 2, time.Minute)); len(trips) != 0 {
		t.Fatalf("a hit after the reset counted the hits before it: %+v", trips)
	}
	if trips := hitAll(t, e, breakerHit(name, rule, a1, 2, time.Minute)); len(trips) != 1 {
		t.Fatalf("two agents after the reset made trips %+v, want one", trips)
	}
	if _, err := e.breakers.ResetBreaker(e.ctx, name); err != nil {
		t.Fatalf("ResetBreaker of the new trip: %v", err)
	}
	if _, err := e.breakers.ResetBreaker(e.ctx, name); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("second ResetBreaker: %v, want ErrNotFound", err)
	}
}

func testBreakerInvalid(t *testing.T, e *env) {
	name := e.name("breaker")
	good := breakerHit(name, "bash(curl *)", e.name("agent"), 2, time.Minute)
	for _, tc := range []struct {
		what string
		mod  func(h *session.BreakerHit)
	}{
		{"no breaker", func(h *session.BreakerHit) { h.Breaker = "" }},
		{"no agent", func(h *session.BreakerHit) { h.AgentID = "" }},
		{"an agent id with a space", func(h *session.BreakerHit) { h.AgentID = "a b" }},
		{"no rule", func(h *session.BreakerHit) { h.Rule = "" }},
		{"a threshold of zero", func(h *session.BreakerHit) { h.Threshold = 0 }},
		{"no window", func(h *session.BreakerHit) { h.Window = 0 }},
		{"an empty selector", func(h *session.BreakerHit) { h.Selector = messages.Selector{} }},
	} {
		bad := good
		tc.mod(&bad)
		// The good hit first in the batch: nothing of the batch is stored.
		if _, err := e.breakers.HitBreakers(e.ctx, []session.BreakerHit{good, bad}); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("%s: HitBreakers = %v, want ErrInvalid", tc.what, err)
		}
	}
	other := breakerHit(name, "bash(curl *)", e.name("agent"), 2, time.Minute)
	if trips := hitAll(t, e, other); len(trips) != 0 {
		t.Fatalf("a refused batch was counted: one more agent tripped a breaker of two: %+v", trips)
	}
}

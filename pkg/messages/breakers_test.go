package messages

import (
	"strings"
	"testing"
	"time"
)

func TestBreakerAdminOpsAreValidated(t *testing.T) {
	for _, tc := range []struct {
		name string
		op   string
		req  AdminRequest
		want string // "" valid, else the field at fault
	}{
		{"list_breakers takes no fields", AdminOpListBreakers, AdminRequest{V: 1}, ""},
		{"list_breakers refuses a breaker", AdminOpListBreakers, AdminRequest{V: 1, Breaker: "b"}, "breaker"},
		{"list_breakers refuses a session", AdminOpListBreakers, AdminRequest{V: 1, SessionID: "s"}, "session_id"},
		{"breaker_reset takes a breaker and by", AdminOpBreakerReset, AdminRequest{V: 1, Breaker: "injection", By: "jane"}, ""},
		{"breaker_reset needs a breaker", AdminOpBreakerReset, AdminRequest{V: 1}, "breaker"},
		{"breaker_reset refuses a breaker that is not a token", AdminOpBreakerReset, AdminRequest{V: 1, Breaker: "a.b"}, "breaker"},
		{"breaker_reset refuses a selector", AdminOpBreakerReset, AdminRequest{V: 1, Breaker: "b", Selector: &Selector{All: true}}, "selector"},
		{"another op refuses a breaker", AdminOpListStops, AdminRequest{V: 1, Breaker: "b"}, "breaker"},
		{"stop refuses a breaker", AdminOpStop, AdminRequest{V: 1, Breaker: "b", Selector: &Selector{All: true}}, "breaker"},
	} {
		err := tc.req.ValidateOp(tc.op)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want an error about %s", tc.name, err, tc.want)
		}
	}
}

func validBreakerTrip() BreakerTrip {
	return BreakerTrip{Breaker: "injection", Rule: "bash(curl *)", Agents: []string{"coder-1", "coder-2", "coder-3"},
		Threshold: 3, WindowMS: 600_000, Selector: Selector{AgentType: "coder"}, Team: "security",
		SessionID: "sess-coder-3", TrippedAt: time.Date(2026, 11, 28, 8, 10, 42, 948_000_000, time.UTC)}
}

func TestBreakerMessagesRoundTripThroughTheirGoldenJSON(t *testing.T) {
	trip := validBreakerTrip()
	t.Run("breaker event", func(t *testing.T) {
		roundTrip(t, "breaker_event", &BreakerEvent{Type: TypeBreakerEvent, Event: BreakerReset, Trip: trip, By: "jane",
			Replica: "broker-1", Recorded: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)})
	})
	t.Run("breaker reset reply", func(t *testing.T) {
		roundTrip(t, "admin_breaker_reset_reply", &AdminReply{OK: true, Message: "breaker injection reset", Breaker: &trip})
	})
	if got := trip.Describe(); got != "breaker injection tripped at 2026-11-28T08:10:42Z: 3 agents hit bash(curl *) within 10m0s" {
		t.Errorf("Describe = %q", got)
	}
}

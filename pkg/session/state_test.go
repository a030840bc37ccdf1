package session_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

func TestCloneCopiesEverythingTheCallerMayChange(t *testing.T) {
	orig := &session.Record{
		Request:   validRequest(),
		State:     messages.StateApproved,
		Approvals: []string{"ann", "bob"},
		Decision: &messages.Decision{
			Reason: "ok", GrantedPattern: []string{"git push *"}, Answer: json.RawMessage(`{"a":1}`),
		},
	}
	orig.Payload = []byte(`{"x":1}`)
	c := orig.Clone()
	c.Teams[0] = "changed"
	c.Payload[0] = 'X'
	c.Approvals[0] = "changed"
	c.Decision.Reason = "changed"
	c.Decision.GrantedPattern[0] = "changed"
	c.Decision.Answer[0] = 'X'
	if orig.Teams[0] != "ops" || orig.Payload[0] != '{' || orig.Approvals[0] != "ann" ||
		orig.Decision.Reason != "ok" || orig.Decision.GrantedPattern[0] != "git push *" || orig.Decision.Answer[0] != '{' {
		t.Errorf("changing the clone changed the original: %+v %+v", orig, orig.Decision)
	}
	if !slices.Equal(orig.Clone().Approvals, orig.Approvals) || orig.Clone().Decision.Reason != "ok" {
		t.Error("clone differs from the original")
	}
	if (*session.Record)(nil).Clone() != nil {
		t.Error("Clone of nil is not nil")
	}
	if (&session.Record{}).Clone().Decision != nil {
		t.Error("Clone invented a decision")
	}
}

func TestOpenAndDueSplitAtTheExpiry(t *testing.T) {
	exp := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		state     messages.State
		now       time.Time
		open, due bool
	}{
		{"pending before the expiry is open", messages.StatePending, exp.Add(-time.Nanosecond), true, false},
		{"pending at the expiry is due", messages.StatePending, exp, false, true},
		{"pending after the expiry is due", messages.StatePending, exp.Add(time.Hour), false, true},
		{"approved before the expiry is neither", messages.StateApproved, exp.Add(-time.Hour), false, false},
		{"expired is neither", messages.StateExpired, exp.Add(time.Hour), false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := &session.Record{State: tc.state, ExpiresAt: exp}
			if r.Open(tc.now) != tc.open || r.Due(tc.now) != tc.due {
				t.Errorf("Open, Due = %v, %v; want %v, %v", r.Open(tc.now), r.Due(tc.now), tc.open, tc.due)
			}
		})
	}
}

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
	orig.Question = messages.ApprovalNeeded{
		Request: messages.Request{Tool: "bash", Arguments: json.RawMessage(`{"x":1}`),
			BatchRemaining: []messages.BatchItem{{Tool: "ls", Arguments: json.RawMessage(`{"y":2}`)}}},
		Risk:           messages.Risk{Subcommands: []messages.Verdict{{Command: "git push", Words: []string{"git", "push"}}}},
		BatchRemaining: []messages.BatchItem{{Tool: "cat", Arguments: json.RawMessage(`{"z":3}`)}},
		ApprovalsSoFar: []string{"ann"},
		Always:         &messages.AlwaysGrant{Tool: "bash", Patterns: []string{"git push *"}},
		Offers:         []messages.GrantOffer{{Scope: messages.ScopeSession, Offered: true, Tool: "bash", Patterns: []string{"git push *"}}},
	}
	question := func(r *session.Record) string {
		b, err := json.Marshal(r.Question)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	wantQuestion := question(orig)
	c := orig.Clone()
	c.Teams[0] = "changed"
	c.Question.Request.Arguments[0] = 'X'
	c.Question.Request.BatchRemaining[0].Arguments[0] = 'X'
	c.Question.Risk.Subcommands[0].Words[0] = "changed"
	c.Question.Risk.Subcommands[0].Command = "changed"
	c.Question.BatchRemaining[0].Arguments[0] = 'X'
	c.Question.BatchRemaining[0].Tool = "changed"
	c.Question.ApprovalsSoFar[0] = "changed"
	c.Question.Always.Patterns[0] = "changed"
	c.Question.Always.Tool = "changed"
	c.Question.Offers[0].Patterns[0] = "changed"
	c.Question.Offers[0].Tool = "changed"
	if got := question(orig); got != wantQuestion {
		t.Errorf("changing the clone's question changed the original's:\n %s\nwas\n %s", got, wantQuestion)
	}
	c.Approvals[0] = "changed"
	c.Decision.Reason = "changed"
	c.Decision.GrantedPattern[0] = "changed"
	c.Decision.Answer[0] = 'X'
	if orig.Teams[0] != "ops" || orig.Approvals[0] != "ann" ||
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

package memstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/storetest"
)

func TestNonPositiveRetentionMeansTheDefault(t *testing.T) {
	for _, r := range []time.Duration{0, -time.Second} {
		if got := New(Options{Retention: r}).retention; got != session.DefaultRetention {
			t.Errorf("Retention %v gives %v, want %v", r, got, session.DefaultRetention)
		}
	}
}

// TestNothingOutlivesItsLifetime checks that every index lets go of what it
// held once requests settle, expire and pass their retention, and grants
// lapse: a long-running dev broker does not grow.
func TestNothingOutlivesItsLifetime(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	s := New(Options{Clock: func() time.Time { return now }, Retention: time.Hour})
	ctx := context.Background()
	for i := range 100 {
		req := session.Request{
			ID: fmt.Sprintf("r%d", i), SessionID: fmt.Sprintf("s%d", i%10), AgentID: "a",
			Teams: []string{"t1", "t2"}, ApprovalsRequired: 1, TTL: time.Minute,
		}
		if _, _, err := storetest.Create(ctx, s, req); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := s.AddGrant(ctx, session.Grant{Grant: messages.Grant{ID: req.ID, Scope: messages.ScopeSession, SessionID: req.SessionID, Tool: "write", Teams: []string{"default"}}}); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if _, err := s.Settle(ctx, req.SessionID, req.ID, messages.StateCancelled, messages.Decision{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	now = now.Add(time.Minute)
	if got, err := s.ClaimExpired(ctx, 1000); err != nil || len(got) != 50 {
		t.Fatalf("ClaimExpired = %d records, %v; want 50", len(got), err)
	}
	if len(s.bySession)+len(s.byAgent)+len(s.byTeam) != 0 || s.expiry.len() != 0 {
		t.Errorf("pending indexes hold %d sessions, %d agents, %d teams, %d expiries after every request settled",
			len(s.bySession), len(s.byAgent), len(s.byTeam), s.expiry.len())
	}
	now = now.Add(time.Hour)
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if len(s.requests) != 0 || s.purge.len() != 0 || len(s.sessionGrants) != 0 || s.grantExpiry.len() != 0 {
		t.Errorf("after the retention the store holds %d requests, %d purge timers, %d grant sets, %d grant timers",
			len(s.requests), s.purge.len(), len(s.sessionGrants), s.grantExpiry.len())
	}
}

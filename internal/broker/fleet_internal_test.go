package broker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
)

// unreadableFleet is a store whose fleet stops cannot be read.
type unreadableFleet struct{ session.Fleet }

func (unreadableFleet) FleetStops(context.Context) ([]messages.FleetStop, error) {
	return nil, session.ErrUnavailable
}

func TestFleetStopsThatWereNeverReadFailClosed(t *testing.T) {
	ft := newFleetTable(unreadableFleet{}, 0)
	if err := ft.refresh(t.Context(), time.Second); !errors.Is(err, session.ErrUnavailable) {
		t.Fatalf("refresh = %v, want ErrUnavailable", err)
	}
	if st, err := ft.StopFor("a1", "", "s1"); err == nil {
		t.Fatalf("StopFor with stops never read = %v, nil; want an error (deny)", st)
	}
}

func TestFleetStopsGoneStaleFailClosed(t *testing.T) {
	ft := newFleetTable(memstore.New(memstore.Options{}), 0)
	if err := ft.refresh(t.Context(), time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := ft.StopFor("a1", "", "s1"); err != nil {
		t.Fatalf("StopFor right after a read: %v", err)
	}
	ft.read = unreadableFleet{}.FleetStops
	_ = ft.refresh(t.Context(), time.Second)
	ft.mu.Lock()
	ft.readAt = time.Now().Add(-fleetStale - time.Millisecond)
	ft.mu.Unlock()
	if _, err := ft.StopFor("a1", "", "s1"); !errors.Is(err, session.ErrUnavailable) {
		t.Fatalf("StopFor with a stale copy = %v, want the read's error", err)
	}
}

func TestFleetStopForNamesTheStopCoveringTheCall(t *testing.T) {
	st := memstore.New(memstore.Options{})
	sel := messages.Selector{Agent: "a2*"}
	if _, err := st.PutFleetStop(t.Context(), messages.FleetStop{ID: sel.Key(), Selector: sel, Reason: "r"}); err != nil {
		t.Fatal(err)
	}
	ft := newFleetTable(st, 0)
	if err := ft.refresh(t.Context(), time.Second); err != nil {
		t.Fatal(err)
	}
	if got, err := ft.StopFor("a21", "", "s"); err != nil || got == nil || got.ID != "agent=a2*" {
		t.Fatalf("StopFor(a21) = %+v, %v; want agent=a2*", got, err)
	}
	if got, err := ft.StopFor("a3", "", "s"); err != nil || got != nil {
		t.Fatalf("StopFor(a3) = %+v, %v; want none", got, err)
	}
}

func TestSilentFlagsOnlyAnAgentThatWasSteadyAndStoppedAsking(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	steady := messages.AgentSeen{FirstSeen: now.Add(-2 * time.Hour), LastSeen: now.Add(-time.Hour), Requests: 61} // one a minute
	tests := []struct {
		name string
		a    messages.AgentSeen
		want bool
	}{
		{"steady for an hour, silent for an hour", steady, true},
		{"steady and still asking", messages.AgentSeen{FirstSeen: steady.FirstSeen, LastSeen: now.Add(-time.Minute), Requests: 120}, false},
		{"too few requests to call it steady", messages.AgentSeen{FirstSeen: steady.FirstSeen, LastSeen: steady.LastSeen, Requests: 5}, false},
		{"a gap under the floor is not silence", messages.AgentSeen{FirstSeen: now.Add(-10 * time.Minute), LastSeen: now.Add(-4 * time.Minute), Requests: 100}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := silent(&tc.a, now); got != tc.want {
				t.Fatalf("silent(%+v) = %v, want %v", tc.a, got, tc.want)
			}
		})
	}
}

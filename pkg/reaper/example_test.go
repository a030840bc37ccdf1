package reaper_test

import (
	"context"
	"fmt"
	"time"

	"github.com/signoff-dev/signoff/pkg/reaper"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
)

func ExampleReaper_SweepOnce() {
	ctx := context.Background()
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	store := memstore.New(memstore.Options{Clock: func() time.Time { return now }})
	// The broker's two-step create: stored held, then opened (pending).
	_, _, _ = store.Prepare(ctx, session.Request{
		ID: "req-1", SessionID: "sess-1", AgentID: "worker-7", Tool: "bash",
		Teams: []string{"ops"}, ApprovalsRequired: 1, TTL: 5 * time.Minute,
	})
	_, _ = store.Open(ctx, "sess-1", "req-1")
	r, err := reaper.New(reaper.Config{
		Store: store,
		OnExpired: func(ctx context.Context, rec *session.Record) {
			// The broker publishes the timeout decision here.
			fmt.Printf("%s %s: deny (%s)\n", rec.ID, rec.State, reaper.TimeoutReason)
		},
	})
	if err != nil {
		panic(err)
	}
	now = now.Add(5 * time.Minute) // the store's clock reaches the expiry
	n, err := r.SweepOnce(ctx)
	fmt.Println(n, err)
	// Output:
	// req-1 expired: deny (approval timed out (no approver response))
	// 1 <nil>
}

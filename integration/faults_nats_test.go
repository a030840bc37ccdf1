package integration

import (
	"context"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/integration/internal/workload"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// testNATSNodeRestarted stops nats-2 (docker stop) while agents ask and
// approvers answer, and starts it again. Its clients — agents, brokers, the
// observer — reconnect to the other nodes; decisions published while an
// agent was away reach it through the status subject; every request gets
// exactly its one decision, with no fail-closed deny: Redis never left.
func testNATSNodeRestarted(t *testing.T, h *harness) {
	ctx := context.Background()
	const nodeIndex = 1 // nats-2
	node := h.p.NATS[nodeIndex]
	tr := h.startTraffic(t, h.name("natsnode"), trafficConfig{Agents: 9, Gap: 10 * time.Millisecond, Think: 200 * time.Millisecond, Mix: workload.Split(6)})
	t.Cleanup(func() { restartIfDown(t, node) })

	time.Sleep(time.Second)
	stopAt := time.Now()
	if err := node.Stop(ctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s stopped", node.Name)
	time.Sleep(3 * time.Second)
	startAt := time.Now()
	if err := node.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s started again (%s after the stop; ready in %s)", node.Name, startAt.Sub(stopAt).Round(100*time.Millisecond), time.Since(startAt).Round(100*time.Millisecond))
	time.Sleep(2 * time.Second)
	tr.Stop(t)
	tr.Check(t, workload.Tolerance{})

	// The agents homed on nats-2 (agent i goes through node i%N+1 first)
	// lost their connection and got it back elsewhere.
	var homed, reconnects uint64
	for i, nc := range tr.Fleet.Conns {
		if i%len(h.p.NATS) == nodeIndex {
			homed++
			reconnects += nc.Stats().Reconnects
		}
	}
	entries := tr.Ledger.Entries()
	whileDown := count(entries, func(e *workload.Entry, d *messages.Decision) bool {
		return e.Sent.After(stopAt) && e.Done.Before(startAt) && d != nil
	})
	afterwards := count(entries, func(e *workload.Entry, d *messages.Decision) bool { return e.Sent.After(startAt) && d != nil })
	t.Logf("%d agents homed on %s reconnected %d times; %d requests decided while it was down, %d after it came back",
		homed, node.Name, reconnects, whileDown, afterwards)
	if reconnects < homed {
		t.Errorf("agents homed on %s reconnected %d times, want at least %d", node.Name, reconnects, homed)
	}
	if whileDown == 0 {
		t.Errorf("no request was decided while %s was down", node.Name)
	}
	if afterwards == 0 {
		t.Errorf("no request was decided after %s came back", node.Name)
	}
}

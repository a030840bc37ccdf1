package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/signoff-dev/signoff/integration/internal/plane"
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
	tr.CheckAllowingStoreStalls(t, t.Name())

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

// nonLeaderNode returns the NATS node that leads neither the audit stream
// nor the JetStream meta group and carries the most broker connections
// (so that the scenario cuts some brokers off), with that count.
func nonLeaderNode(ctx context.Context, t *testing.T, h *harness) (*plane.Node, int) {
	t.Helper()
	js, err := jetstream.New(h.p.Connect(t, h.name("leaders")))
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, messages.AuditStream)
	if err != nil {
		t.Fatal(err)
	}
	leaders := map[string]bool{}
	if c := st.CachedInfo().Cluster; c != nil {
		leaders[c.Leader] = true
	}
	if info, err := js.AccountInfo(ctx); err == nil && info.Domain == "" {
		// The meta leader is in /jsz of any node.
		if code, body, err := h.p.NATS[0].Get(ctx, "8222", "/jsz"); err == nil && code == 200 {
			var jsz struct {
				Meta struct {
					Leader string `json:"leader"`
				} `json:"meta_cluster"`
			}
			if json.Unmarshal([]byte(body), &jsz) == nil {
				leaders[jsz.Meta.Leader] = true
			}
		}
	}
	var best *plane.Node
	most := -1
	for _, n := range h.p.NATS {
		if leaders[n.Name] {
			continue
		}
		code, body, err := n.Get(ctx, "8222", "/connz?limit=1024")
		if err != nil || code != 200 {
			t.Fatalf("%s /connz: %d %v", n.Name, code, err)
		}
		var connz struct {
			Conns []struct {
				Name string `json:"name"`
			} `json:"connections"`
		}
		if err := json.Unmarshal([]byte(body), &connz); err != nil {
			t.Fatalf("%s /connz: %v", n.Name, err)
		}
		brokers := 0
		for _, c := range connz.Conns {
			if strings.HasPrefix(c.Name, "signoff-broker") {
				brokers++
			}
		}
		if brokers > most {
			best, most = n, brokers
		}
	}
	if best == nil {
		t.Fatalf("every NATS node leads something (%v)", leaders)
	}
	return best, most
}

// brokerConnsSince lists the broker connections on node that connected
// before since (by the node's /connz): those that never left it. Right
// after a SIGCONT the node still lists the connections its clients closed
// while it was frozen, until it reads their close: they are given 10 s to
// go; one whose client never left stays.
func brokerConnsSince(ctx context.Context, t *testing.T, node *plane.Node, since time.Time) []string {
	t.Helper()
	var stayed []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		var connz struct {
			Conns []struct {
				CID   uint64    `json:"cid"`
				Name  string    `json:"name"`
				Start time.Time `json:"start"`
			} `json:"connections"`
		}
		code, body, err := node.Get(ctx, "8222", "/connz?limit=1024")
		if err == nil && code == 200 && json.Unmarshal([]byte(body), &connz) == nil {
			stayed = stayed[:0]
			for _, c := range connz.Conns {
				if strings.HasPrefix(c.Name, "signoff-broker") && c.Start.Before(since) {
					stayed = append(stayed, fmt.Sprintf("%s (cid %d, connected %s)", c.Name, c.CID, c.Start.Format(time.RFC3339Nano)))
				}
			}
			if len(stayed) == 0 {
				return nil
			}
		}
		if time.Now().After(deadline) {
			if code != 200 || err != nil {
				t.Fatalf("%s /connz after the freeze: %d %v", node.Name, code, err)
			}
			return stayed
		}
	}
}

// testNATSNonLeaderKilled kills (-9) a NATS node that leads neither the
// audit stream nor the meta group, under traffic, and starts it again: the
// cluster keeps its quorum, the clients on that node (agents, brokers)
// reconnect to the others at once (the socket closes), and every request
// gets exactly its one decision with nothing failed closed; every decision
// of an approver or the reaper has one audit record.
func testNATSNonLeaderKilled(t *testing.T, h *harness) { testNATSNonLeaderDown(t, h, true) }

// testNATSNonLeaderStopped is the same with the node's nats-server
// SIGSTOPped: its sockets stay open and silent, so its clients only learn
// from their pings. The brokers' defaults (--nats-ping-interval 5s,
// --nats-max-pings-out 2, a 5-s write deadline that reconnects) must have
// every broker connection of that node declared stale (or its blocked write
// timed out) and moved to another node within 20 s, well before the
// node is resumed; nats.go's own defaults (2 min × 2) would have kept them
// on it for the whole scenario.
func testNATSNonLeaderStopped(t *testing.T, h *harness) { testNATSNonLeaderDown(t, h, false) }

// natsStopFor is how long the SIGSTOPped node stays frozen: longer than
// the brokers' ping budget (5 s × (2 + 1)) and some.
const natsStopFor = 22 * time.Second

func testNATSNonLeaderDown(t *testing.T, h *harness, kill bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	node, brokerConns := nonLeaderNode(ctx, t, h)
	t.Logf("%s leads nothing and carries %d broker connections", node.Name, brokerConns)
	t.Cleanup(func() { _ = node.Signal(context.Background(), "CONT"); restartIfDown(t, node) })
	name := h.name(map[bool]string{true: "natskill", false: "natsstop"}[kill])
	logsBefore := map[string]int{}
	for _, b := range h.p.Brokers {
		lines, _ := b.LogLines(ctx)
		logsBefore[b.Name] = len(lines)
	}
	tr := h.startTraffic(t, name, trafficConfig{Agents: 9, Gap: 10 * time.Millisecond, Think: 200 * time.Millisecond, Mix: workload.Split(6)})
	time.Sleep(time.Second)
	downAt := time.Now()
	if kill {
		if err := node.Kill(ctx); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Second)
		if err := node.Start(ctx); err != nil {
			t.Fatal(err)
		}
	} else {
		if err := node.Signal(ctx, "STOP"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(natsStopFor)
		if err := node.Signal(ctx, "CONT"); err != nil {
			t.Fatal(err)
		}
		// Every broker connection the node had when it froze left it: what
		// is on it now connected after the freeze began (a reconnection).
		if stayed := brokerConnsSince(ctx, t, node, downAt); len(stayed) > 0 {
			t.Errorf("%d of the %d broker connections on the SIGSTOPped %s stayed on it through %s (ping budget 15 s): %v",
				len(stayed), brokerConns, node.Name, natsStopFor, stayed)
		}
	}
	upAt := time.Now()
	t.Logf("%s %s for %s", node.Name, map[bool]string{true: "killed and restarted", false: "stopped (SIGSTOP) and resumed"}[kill],
		upAt.Sub(downAt).Round(100*time.Millisecond))
	time.Sleep(3 * time.Second)
	tr.Stop(t)
	tr.CheckAllowingStoreStalls(t, t.Name())

	entries := tr.Ledger.Entries()
	whileDown := count(entries, func(e *workload.Entry, d *messages.Decision) bool {
		return e.Sent.After(downAt) && e.Done.Before(upAt) && d != nil
	})
	t.Logf("%d requests decided while %s was down", whileDown, node.Name)
	if whileDown == 0 {
		t.Errorf("no request was decided while %s was down", node.Name)
	}

	// Every broker connection on the node left it: a stale connection
	// (SIGSTOP) within the ping budget, a closed one (kill) at once.
	stale := 0
	for _, b := range h.p.Brokers {
		lines, err := b.LogLines(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines[min(logsBefore[b.Name], len(lines)):] {
			// Stale (pings unanswered) or a write past the same budget
			// (natsurl.Liveness): a busy connection's writes block first.
			if strings.Contains(l, "NATS disconnected; reconnecting") {
				stale++
				if !kill {
					t.Logf("%s: %s", b.Name, l)
				}
			}
		}
	}
	if !kill {
		// How they left is in the brokers' logs (that they left is checked
		// on the node above): a connection whose writes block first may
		// be closed by an error other than these two.
		t.Logf("%d broker disconnections logged (of %d connections on %s)", stale, brokerConns, node.Name)
	}
	if kill && stale > 0 {
		t.Logf("%d broker connections went stale (the kill closed the others' sockets)", stale)
	}

	// One audit record per decision of a human or the reaper.
	bySession := map[string][]workload.Entry{}
	want := 0
	for _, e := range entries {
		if d := e.Decision(); d != nil && (d.DecidedBy.Kind == messages.DeciderApprover || d.DecidedBy.Kind == messages.DeciderReaper) {
			bySession[e.Session] = append(bySession[e.Session], e)
			want++
		}
	}
	sessions := make([]string, 0, len(bySession))
	for s := range bySession {
		sessions = append(sessions, s)
	}
	if len(sessions) == 0 {
		t.Fatal("no decision by an approver: the audit check checked nothing")
	}
	var counts map[string]int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		counts = auditRecordsOf(ctx, t, h, sessions, want)
		missing := 0
		for _, es := range bySession {
			for _, e := range es {
				if counts[e.ID] == 0 {
					missing++
				}
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, es := range bySession {
		for _, e := range es {
			if counts[e.ID] != 1 {
				t.Errorf("%s (%s): %d audit records, want exactly 1", e.ID, e.Decision().ReasonCode, counts[e.ID])
			}
		}
	}
}

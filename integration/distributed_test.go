package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/integration/internal/plane"
	"github.com/signoff-dev/signoff/integration/internal/workload"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// brokerFlags are the flags of every broker of the suite: a fast reaper and
// a short bound on Redis calls, so faults show within a second.
var brokerFlags = []string{
	"--reap-interval", "200ms",
	"--store-timeout", "500ms",
	"--shutdown-grace", "5s",
	"--retention", "1h",
}

// TestDistributed runs the plane in containers — a 3-node NATS cluster with
// JetStream, Redis with an append-only file, 3 broker replicas — and puts
// it through the faults of a distributed deployment, one scenario after the
// other on the same plane, each with fresh session ids. Every scenario
// checks with a workload.Ledger that each request got exactly one decision
// and that nothing was allowed without a policy allow or a stored
// approval, and ends with every broker ready again.
func TestDistributed(t *testing.T) {
	images := requireImages(t)
	ctx := context.Background()
	start := time.Now()
	p := plane.Start(ctx, t, plane.Config{
		Images:     images,
		Policy:     []byte(workload.Policy),
		BrokerArgs: brokerFlags,
	})
	t.Logf("plane up in %s: %d NATS nodes, redis, %d brokers", time.Since(start).Round(100*time.Millisecond), len(p.NATS), len(p.Brokers))
	h := &harness{p: p, run: fmt.Sprintf("r%d", time.Now().UnixNano()%1e9)}

	scenarios := []struct {
		name string
		run  func(*testing.T, *harness)
	}{
		{"two devices answer the same question at once", testTwoDevices},
		{"two web devices answer the same question at once", testTwoWebDevices},
		{"load with one then three replicas", testLoad},
		{"a broker killed mid-request", testBrokerKilled},
		{"a NATS node stopped and started", testNATSNodeRestarted},
		{"a NATS node that leads nothing killed", testNATSNonLeaderKilled},
		{"a NATS node that leads nothing SIGSTOPped", testNATSNonLeaderStopped},
		{"Redis paused", testRedisPaused},
		{"Redis restarted keeps pending requests grants and stops", testRedisRestarted},
		{"a broker cut off from Redis", testBrokerCutOff},
		{"a deciding broker frozen during CLIENT PAUSE WRITE and killed as writes resume", testVoteOfADeadBroker},
		{"hard rejects in a burst with Redis killed", testHardRejectsAndRedisKilled},
		{"hard rejects in a burst with Redis frozen", testHardRejectsAndRedisFrozen},
		{"a hard stop holds through a write stall with votes in flight on two frozen then killed brokers", testHardStopThroughAWriteStall},
		{"the audit stream's leader frozen", testAuditLeaderFrozen},
		{"the audit stream's leader killed", testAuditLeaderKilled},
		{"an outbreak trips a breaker across the fleet until reset", testBreakerTripsAcrossTheFleet},
		{"a canary that asks past its bound rolls back", testCanaryRollsBack},
	}
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			h.requireReady(t, "before the scenario")
			began := time.Now()
			s.run(t, h)
			h.requireReady(t, "after the scenario")
			t.Logf("scenario took %s", time.Since(began).Round(100*time.Millisecond))
		})
	}
}

// harness is the shared plane and what the scenarios need around it.
type harness struct {
	p   *plane.Plane
	run string // makes session ids unique across runs on one Redis

	mu sync.Mutex
	n  int
}

// name returns a fresh scenario name for session and request ids.
func (h *harness) name(what string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.n++
	return fmt.Sprintf("%s-%s%d", what, h.run, h.n)
}

// requireReady waits (up to 45 s) until every broker's /readyz and every
// NATS node's /healthz answer 200.
func (h *harness) requireReady(t *testing.T, when string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	if err := h.p.WaitReady(ctx); err != nil {
		t.Fatalf("%s: %v", when, err)
	}
}

// traffic is agents and approvers running against the plane, with a ledger.
type traffic struct {
	Ledger    *workload.Ledger
	Fleet     *workload.Fleet
	Approvers []*workload.Approver

	stopIssue     context.CancelFunc
	stopApprovers context.CancelFunc
	stopObserve   func()
	fleetErr      error
	fleetDone     chan struct{}
	approversDone sync.WaitGroup
	haltOnce      sync.Once
}

// trafficConfig shapes the traffic of a fault scenario.
type trafficConfig struct {
	Agents   int
	PerAgent int           // 0: until stop
	Gap      time.Duration // between two requests of an agent
	Think    time.Duration // approvers' think time
	Mix      func(agent, n int) workload.Kind
	Options  []client.Option // more agent client options
	// Pool, when positive, replaces the two devices by a pool of that many
	// approver workers sharing the questions in a queue group (each
	// question answered once), without polling.
	Pool int
}

// startTraffic starts cfg.Agents agents, each on its own connection (agent
// i through NATS node i%3+1 first, so every node carries agents), and the
// approvers: by default two devices of the default team, alice through
// nats-1 and bob through the last node, each seeing every question and
// answering it, and asking for the team's open questions every second to
// recover what they missed while disconnected (cfg.Pool replaces them by a
// worker pool). Decisions published are observed through a connection of
// its own.
func (h *harness) startTraffic(t *testing.T, name string, cfg trafficConfig) *traffic {
	t.Helper()
	tr := &traffic{Ledger: workload.NewLedger(), fleetDone: make(chan struct{})}
	var err error
	tr.stopObserve, err = workload.Observe(h.p.Connect(t, name+"-observer"), messages.DefaultPrefix, name, tr.Ledger)
	if err != nil {
		t.Fatal(err)
	}
	nodes := len(h.p.NATS)
	if cfg.Pool > 0 {
		for i := range cfg.Pool {
			id := [...]string{"alice", "bob"}[i%2]
			tr.Approvers = append(tr.Approvers, &workload.Approver{
				ID: id, Device: fmt.Sprintf("worker%d", i),
				Conn:  h.p.ConnectVia(t, i%nodes+1, fmt.Sprintf("%s-approver%d", name, i)),
				Queue: name + "-approvers", Think: cfg.Think, Ledger: tr.Ledger,
			})
		}
	} else {
		tr.Approvers = []*workload.Approver{
			{ID: "alice", Device: "laptop", Conn: h.p.ConnectVia(t, 1, name+"-alice"), Think: cfg.Think, Poll: time.Second, Ledger: tr.Ledger},
			{ID: "bob", Device: "phone", Conn: h.p.ConnectVia(t, nodes, name+"-bob"), Think: cfg.Think + cfg.Think/2, Poll: time.Second, Ledger: tr.Ledger},
		}
	}
	actx, acancel := context.WithCancel(context.Background())
	tr.stopApprovers = acancel
	for _, a := range tr.Approvers {
		tr.approversDone.Go(func() {
			if err := a.Run(actx); err != nil {
				t.Errorf("approver %s: %v", a.ID, err)
			}
		})
	}
	conns := make([]*nats.Conn, cfg.Agents)
	for i := range conns {
		conns[i] = h.p.ConnectVia(t, i%len(h.p.NATS)+1, fmt.Sprintf("%s-agent%d", name, i))
	}
	tr.Fleet = &workload.Fleet{
		Conns: conns, Agents: cfg.Agents, PerAgent: cfg.PerAgent, Name: name,
		Mix: cfg.Mix, Ledger: tr.Ledger, Gap: cfg.Gap, Timeout: 60 * time.Second, Options: cfg.Options,
	}
	ictx, icancel := context.WithCancel(context.Background())
	tr.stopIssue = icancel
	go func() { tr.fleetErr = tr.Fleet.Run(ictx); close(tr.fleetDone) }()
	t.Cleanup(tr.halt)
	return tr
}

// Stop stops issuing new requests, waits until every request sent has its
// decision, then stops the approvers and the observer.
func (tr *traffic) Stop(t *testing.T) {
	t.Helper()
	tr.halt()
	if tr.fleetErr != nil {
		t.Fatalf("fleet: %v", tr.fleetErr)
	}
}

// Wait waits until the fleet sent all its requests and got their
// decisions, then stops the approvers and the observer.
func (tr *traffic) Wait(t *testing.T) {
	t.Helper()
	<-tr.fleetDone
	tr.Stop(t)
}

func (tr *traffic) halt() {
	tr.haltOnce.Do(func() {
		tr.stopIssue()
		<-tr.fleetDone
		tr.stopApprovers()
		tr.approversDone.Wait()
		tr.stopObserve()
	})
}

// Check fails t with every violation of the ledger's invariants and logs
// the summary.
// CheckAllowingStoreStalls is Check for a scenario whose fault is not
// Redis's: a store call that outlived the brokers' 500 ms store timeout
// (two cores, the race-enabled unit tests running beside the suite, a
// container being killed or started) is failed closed — deny
// unavailable, "state store unavailable", which is correct — and is
// counted, logged and capped at 1 % of the requests, as under load
// (load_test.go). Any other fail-closed deny, and every other invariant,
// is held strictly.
func (tr *traffic) CheckAllowingStoreStalls(t *testing.T, what string) {
	t.Helper()
	var stalls atomic.Int64
	tr.Check(t, workload.Tolerance{FailClosed: func(_ *workload.Entry, d *messages.Decision) bool {
		// The two reads of Redis a request makes: the session's state and
		// the fleet stops (internal/engine).
		if !strings.HasPrefix(d.Reason, "state store unavailable:") && !strings.HasPrefix(d.Reason, "fleet stops cannot be read") {
			return false
		}
		stalls.Add(1)
		return true
	}})
	n, all := stalls.Load(), int64(len(tr.Ledger.Entries()))
	if n == 0 {
		return
	}
	t.Logf("%s: %d of %d requests failed closed on a store call that timed out", what, n, all)
	if n*100 > all {
		t.Errorf("%s: %d of %d requests failed closed on the store, more than 1 %%", what, n, all)
	}
}

func (tr *traffic) Check(t *testing.T, tol workload.Tolerance) {
	t.Helper()
	t.Log(tr.Ledger.Summary())
	problems := tr.Ledger.Check(tol)
	if len(problems) == 0 {
		return
	}
	const show = 25
	more := ""
	if len(problems) > show {
		more = fmt.Sprintf("\n… and %d more", len(problems)-show)
		problems = problems[:show]
	}
	t.Errorf("%d invariant violations:\n%s%s", len(problems), strings.Join(problems, "\n"), more)
}

// decidedBy counts the entries whose decision was made by replica (policy
// decisions name the replica), among those keep selects.
func decidedBy(entries []workload.Entry, replica string, keep func(*workload.Entry, *messages.Decision) bool) int {
	n := 0
	for i := range entries {
		e := &entries[i]
		if d := e.Decision(); d != nil && d.DecidedBy.ID == replica && (keep == nil || keep(e, d)) {
			n++
		}
	}
	return n
}

// count counts the entries keep selects.
func count(entries []workload.Entry, keep func(*workload.Entry, *messages.Decision) bool) int {
	n := 0
	for i := range entries {
		e := &entries[i]
		if keep(e, e.Decision()) {
			n++
		}
	}
	return n
}

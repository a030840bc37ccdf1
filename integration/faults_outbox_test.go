package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	goredis "github.com/redis/go-redis/v9"

	"github.com/signoff-dev/signoff/integration/internal/plane"
	"github.com/signoff-dev/signoff/integration/internal/workload"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session/redisstore"
)

// Scenarios of issue 14: every effect of a decision happens whichever
// replica dies, and a hard reject stops its session even when Redis fails
// around it. The agents here never poll their status: a decision must
// reach them by publication.

// redisClient connects the test to the plane's Redis.
func redisClient(ctx context.Context, t *testing.T, h *harness) *goredis.Client {
	t.Helper()
	addr, err := h.p.Redis.Endpoint(ctx, "6379/tcp")
	if err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(&goredis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// storeOf opens a session store on the plane's Redis, to read records as
// the brokers stored them.
func storeOf(ctx context.Context, t *testing.T, h *harness) *redisstore.Store {
	t.Helper()
	addr, err := h.p.Redis.Endpoint(ctx, "6379/tcp")
	if err != nil {
		t.Fatal(err)
	}
	s, err := redisstore.New(ctx, redisstore.Options{URL: "redis://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// resolvedTap collects the default team's resolutions by request id.
type resolvedTap struct {
	mu   sync.Mutex
	seen map[string][]messages.Resolved
}

func newResolvedTap(t *testing.T, nc *nats.Conn) *resolvedTap {
	t.Helper()
	r := &resolvedTap{seen: map[string][]messages.Resolved{}}
	sub, err := nc.Subscribe(messages.DefaultPrefix+".resolved.default", func(m *nats.Msg) {
		var res messages.Resolved
		if json.Unmarshal(m.Data, &res) == nil {
			r.mu.Lock()
			r.seen[res.RequestID] = append(r.seen[res.RequestID], res)
			r.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *resolvedTap) has(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.seen[id]) > 0
}

// stoppedSession is one session of the hard-reject scenarios: an agent
// (which does not poll) with two questions open, the target of the
// reject_hard and a sibling.
type stoppedSession struct {
	c                 *client.Client
	target, sibling   client.Call
	tq, sq            messages.ApprovalNeeded
	targetD, siblingD <-chan outcome
	// reasked counts, per request id, the fail-closed denies (unavailable)
	// its agent got before its question was asked, and asked again after:
	// each is a decision of its own, with its own audit record.
	reasked map[string]int
}

func openStoppedSession(ctx context.Context, t *testing.T, agents *nats.Conn, questions *questionTap, session string) *stoppedSession {
	t.Helper()
	c, err := client.New(agents, client.WithSession(session), client.WithAgent(session+"-pod"),
		client.WithRequestedBy("agent-user"), client.WithAttemptTimeout(2*time.Second), client.WithStatusInterval(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	s := &stoppedSession{c: c}
	s.target = workload.CallFor(workload.KindAsk, session+"-target")
	s.target.RequestID = session + "-target"
	s.target.TTL = 2 * time.Minute
	s.sibling = workload.CallFor(workload.KindAsk, session+"-sibling")
	s.sibling.RequestID = session + "-sibling"
	s.sibling.TTL = 2 * time.Minute
	s.targetD = requestAsync(ctx, c, s.target)
	s.siblingD = requestAsync(ctx, c, s.sibling)
	return s
}

// check waits for the session's decisions and checks the stop: the target
// rejected (reject_hard), the sibling rejected hard_stop or approved before
// the reject, both seen by the devices, a policy allow of the session
// denied hard_stop; then checkAudit.
func (s *stoppedSession) check(ctx context.Context, t *testing.T, h *harness, resolved *resolvedTap, within time.Duration) {
	t.Helper()
	s.decided(ctx, t, h, resolved, within)
	checkAudit(ctx, t, h, s)
}

// checkAudit checks that the target and the sibling of every session have
// exactly one audit record of their final decision, and besides it one
// deny/unavailable record for each time the agent asked again after such a
// deny (askAll), at most.
func checkAudit(ctx context.Context, t *testing.T, h *harness, ss ...*stoppedSession) {
	t.Helper()
	sessions := make([]string, len(ss))
	want := 0
	for i, s := range ss {
		sessions[i] = s.c.SessionID()
		want += 2 + s.reasked[s.target.RequestID] + s.reasked[s.sibling.RequestID]
	}
	reasons := auditReasonsOf(ctx, t, h, sessions, want)
	for _, s := range ss {
		for _, id := range []string{s.target.RequestID, s.sibling.RequestID} {
			final, unavailable := 0, 0
			for _, rc := range reasons[id] {
				if rc == workload.ReasonUnavailable {
					unavailable++
				} else {
					final++
				}
			}
			if final != 1 || unavailable > s.reasked[id] {
				t.Errorf("%s: audit records %v, want exactly 1 of its final decision and at most %d deny/unavailable (its agent asked again that often)", id, reasons[id], s.reasked[id])
			}
		}
	}
}

// decided is check without the audit records.
func (s *stoppedSession) decided(ctx context.Context, t *testing.T, h *harness, resolved *resolvedTap, within time.Duration) {
	t.Helper()
	wait := func(ch <-chan outcome, what string) *messages.Decision {
		select {
		case o := <-ch:
			return o.decision(t, what)
		case <-time.After(within):
			t.Fatalf("%s: no decision published within %v (the agent does not poll)", what, within)
			return nil
		}
	}
	td := wait(s.targetD, s.target.RequestID)
	expect(t, s.target.RequestID, td, messages.OutcomeDeny, messages.ReasonRejected)
	if td.RejectMode != messages.RejectHard {
		t.Fatalf("%s: reject mode %q, want reject_hard", s.target.RequestID, td.RejectMode)
	}
	sd := wait(s.siblingD, s.sibling.RequestID)
	switch {
	case sd.Outcome == messages.OutcomeDeny && sd.ReasonCode == messages.ReasonHardStop:
	case sd.Outcome == messages.OutcomeAllow && sd.ReasonCode == messages.ReasonApproved:
		// Allowed only if Redis settled it before the reject (by Redis
		// TIME: the decisions carry their brokers' clocks).
		store := storeOf(ctx, t, h)
		tr, err1 := store.Get(ctx, s.c.SessionID(), s.target.RequestID)
		sr, err2 := store.Get(ctx, s.c.SessionID(), s.sibling.RequestID)
		if err1 != nil || err2 != nil {
			t.Fatalf("reading the records: %v %v", err1, err2)
		}
		if sr.DecidedAt.After(tr.DecidedAt) {
			t.Fatalf("%s approved at %v (Redis time), after its session's reject_hard at %v", s.sibling.RequestID, sr.DecidedAt, tr.DecidedAt)
		}
	default:
		t.Fatalf("%s: %s/%s, want hard_stop, or an approval from before the reject", s.sibling.RequestID, sd.Outcome, sd.ReasonCode)
	}
	deadline := time.Now().Add(within)
	for !resolved.has(s.target.RequestID) || !resolved.has(s.sibling.RequestID) {
		if time.Now().After(deadline) {
			t.Fatalf("devices did not get resolved for %s and %s", s.target.RequestID, s.sibling.RequestID)
		}
		time.Sleep(50 * time.Millisecond)
	}
	d := request(ctx, t, s.c, workload.KindAllow, s.c.SessionID()+"-after")
	expect(t, "a policy allow after the hard reject", d, messages.OutcomeDeny, messages.ReasonHardStop)
}

// testVoteOfADeadBroker: a reject_hard reaches the only serving broker
// while Redis pauses writes (CLIENT PAUSE WRITE); the broker is frozen
// before its call times out, so Redis runs the vote when writes resume
// and the broker never learns it; it is then killed. Before the outbox,
// the rejection stood in Redis with no stop, no decision for the agent, no
// resolved, no audit record, and the sibling stayed open. Now the other
// replicas carry all of it out from the outbox.
func testVoteOfADeadBroker(t *testing.T, h *harness) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b1, others := h.p.Brokers[0], h.p.Brokers[1:]
	t.Cleanup(func() {
		_ = b1.Unpause(context.Background())
		for _, b := range h.p.Brokers {
			restartIfDown(t, b)
		}
	})
	for _, b := range others {
		if err := b.Stop(ctx, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	name := h.name("deadvote")
	agents := h.p.Connect(t, name+"-agents")
	device := h.p.ConnectVia(t, 2, name+"-device")
	questions := newQuestionTap(t, device)
	resolved := newResolvedTap(t, device)
	s := openStoppedSession(ctx, t, agents, questions, name)
	askAll(ctx, t, questions, []*stoppedSession{s})

	rdb := redisClient(ctx, t, h)
	const pause = 1500 * time.Millisecond
	if err := rdb.Do(ctx, "CLIENT", "PAUSE", pause.Milliseconds(), "WRITE").Err(); err != nil {
		t.Fatal(err)
	}
	pausedAt := time.Now()
	go func() {
		// Its reply never comes: the broker is frozen, then killed.
		_, _ = workload.Respond(ctx, device, messages.DefaultPrefix,
			response(s.tq, messages.Response{Approver: messages.Approver{ID: "alice"}, RejectMode: messages.RejectHard, Feedback: "stop"}), 30*time.Second)
	}()
	time.Sleep(250 * time.Millisecond) // the vote waits in Redis; the store call's bound is 500 ms
	if err := b1.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(pausedAt.Add(pause + 500*time.Millisecond))) // writes resumed: the vote ran
	if err := b1.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	t.Log("the deciding broker was frozen before its vote ran and killed after")
	var rec string
	if err := rdb.Get(ctx, "signoff:{"+name+"}:stop").Scan(&rec); err != nil {
		t.Fatalf("the stop signal after the vote ran: %v (want it set by the vote itself)", err)
	}
	for _, b := range others {
		if err := b.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s.check(ctx, t, h, resolved, 30*time.Second)
	if err := b1.Start(ctx); err != nil {
		t.Fatal(err)
	}
	h.requireReady(t, "after the deciding broker's restart")
}

// redisFault is a fault of Redis for the hard-reject burst: it starts the
// fault and returns what ends it.
type redisFault func(ctx context.Context, t *testing.T, redis *plane.Node) (end func())

// killRedis kills Redis (-9); the end restarts it from its append-only file.
func killRedis(ctx context.Context, t *testing.T, redis *plane.Node) func() {
	if err := redis.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := redis.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// freezeRedis freezes Redis (SIGSTOP, docker pause); the end thaws it.
func freezeRedis(ctx context.Context, t *testing.T, redis *plane.Node) func() {
	t.Cleanup(func() { _ = redis.Unpause(context.Background()) })
	if err := redis.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := redis.Unpause(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// testHardRejectsAndRedisKilled: a burst of hard rejects, with approvals of
// their sessions' other questions racing them, and Redis killed (-9)
// within milliseconds; Redis restarts from its append-only file and the
// approvers retry what failed. Every session must end stopped: the
// rejected question and its sibling decided and published (the agents do
// not poll), no sibling approved after its session's reject, every policy
// allow of the session denied hard_stop, one audit record each.
func testHardRejectsAndRedisKilled(t *testing.T, h *harness) {
	testHardRejectsAndRedisFault(t, h, killRedis)
}

// testHardRejectsAndRedisFrozen is the same burst with Redis frozen for a
// second instead: the votes in flight may run when it thaws, after their
// brokers answered the approvers "unavailable".
func testHardRejectsAndRedisFrozen(t *testing.T, h *harness) {
	testHardRejectsAndRedisFault(t, h, freezeRedis)
}

func testHardRejectsAndRedisFault(t *testing.T, h *harness, fault redisFault) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	redis := h.p.Redis
	t.Cleanup(func() { restartIfDown(t, redis) })
	name := h.name("rejectburst")
	agents := h.p.Connect(t, name+"-agents")
	device := h.p.ConnectVia(t, 2, name+"-device")
	questions := newQuestionTap(t, device)
	resolved := newResolvedTap(t, device)
	const n = 20
	sessions := make([]*stoppedSession, n)
	for i := range sessions {
		sessions[i] = openStoppedSession(ctx, t, agents, questions, fmt.Sprintf("%s-%d", name, i))
	}
	// A broker may fail closed on an ask on a loaded machine: its agent
	// asks again (askAll).
	askAll(ctx, t, questions, sessions)

	// The burst: each session's reject and its sibling's approval at once,
	// Redis killed a few milliseconds in. Each answer is sent until it gets
	// a reply other than unavailable (an approver retrying).
	var wg sync.WaitGroup
	answer := func(q messages.ApprovalNeeded, r messages.Response) {
		wg.Go(func() {
			if _, err := workload.Respond(ctx, device, messages.DefaultPrefix, response(q, r), time.Second); err != nil {
				t.Errorf("answering %s: %v", q.Request.RequestID, err)
			}
		})
	}
	for _, s := range sessions {
		answer(s.tq, messages.Response{Approver: messages.Approver{ID: "bob"}, RejectMode: messages.RejectHard, Feedback: "stop"})
		answer(s.sq, messages.Response{Approver: messages.Approver{ID: "alice"}, Approved: true})
	}
	time.Sleep(3 * time.Millisecond)
	end := fault(ctx, t, redis)
	t.Log("redis fault in the burst")
	time.Sleep(time.Second)
	end()
	h.requireReady(t, "after the Redis fault")
	wg.Wait()
	for _, s := range sessions {
		s.decided(ctx, t, h, resolved, 30*time.Second)
	}
	checkAudit(ctx, t, h, sessions...)
}

// auditFreeze is long enough for the other nodes to elect a new leader.
const auditFreeze = 10 * time.Second

// testAuditLeaderFrozen freezes (SIGSTOP, docker pause) the NATS node that
// leads the audit stream while agents ask and approvers answer, long enough for an election,
// then lets it go on. Every request gets exactly one decision (published
// repeats of one decision count once: effects are at least once), and
// every decision a human or the reaper made has exactly one audit record:
// its append is an outbox effect, retried until the stream acknowledges
// it and deduplicated by its Nats-Msg-Id.
func testAuditLeaderFrozen(t *testing.T, h *harness) { testAuditLeaderDown(t, h, false) }

// testAuditLeaderKilled is the same with the node killed (-9) and started
// again after as long.
func testAuditLeaderKilled(t *testing.T, h *harness) { testAuditLeaderDown(t, h, true) }

func testAuditLeaderDown(t *testing.T, h *harness, kill bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	name := h.name("auditleader")
	js, err := jetstream.New(h.p.Connect(t, name+"-js"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := js.Stream(ctx, messages.AuditStream)
	if err != nil {
		t.Fatal(err)
	}
	info := st.CachedInfo()
	if info.Cluster == nil || info.Cluster.Leader == "" {
		t.Fatalf("audit stream has no leader: %+v", info.Cluster)
	}
	var node *plane.Node
	for _, n := range h.p.NATS {
		if n.Name == info.Cluster.Leader {
			node = n
		}
	}
	if node == nil {
		t.Fatalf("audit stream leader %q is not a node of the plane", info.Cluster.Leader)
	}
	t.Cleanup(func() { _ = node.Unpause(context.Background()); restartIfDown(t, node) })
	tr := h.startTraffic(t, name, trafficConfig{Agents: 6, Gap: 20 * time.Millisecond, Think: 100 * time.Millisecond, Mix: workload.Split(2)})
	time.Sleep(time.Second)
	if kill {
		if err := node.Kill(ctx); err != nil {
			t.Fatal(err)
		}
	} else if err := node.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s (audit leader) %s", node.Name, map[bool]string{true: "killed", false: "frozen"}[kill])
	time.Sleep(auditFreeze)
	if kill {
		if err := node.Start(ctx); err != nil {
			t.Fatal(err)
		}
	} else if err := node.Unpause(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	tr.Stop(t)
	tr.CheckAllowingStoreStalls(t, t.Name())

	// One audit record per decision of a human or the reaper.
	bySession := map[string][]workload.Entry{}
	for _, e := range tr.Ledger.Entries() {
		if d := e.Decision(); d != nil && (d.DecidedBy.Kind == messages.DeciderApprover || d.DecidedBy.Kind == messages.DeciderReaper) {
			bySession[e.Session] = append(bySession[e.Session], e)
		}
	}
	// An append that failed in the fault is carried out again once its
	// outbox lease (5 s) has run out, and may wait for its stream's ack
	// timeout (5 s) first: wait that long for the records.
	sessions, want := make([]string, 0, len(bySession)), 0
	for sess, entries := range bySession {
		sessions = append(sessions, sess)
		want += len(entries)
	}
	if len(sessions) == 0 {
		t.Fatal("no decision by an approver: the scenario checked nothing")
	}
	var counts map[string]int
	waitFrom := time.Now()
	for deadline := waitFrom.Add(30 * time.Second); ; time.Sleep(time.Second) {
		counts = auditRecordsOf(ctx, t, h, sessions, want)
		missing := 0
		for _, entries := range bySession {
			for _, e := range entries {
				if counts[e.ID] == 0 {
					missing++
				}
			}
		}
		if missing == 0 || time.Now().After(deadline) {
			break
		}
	}
	human := 0
	for _, entries := range bySession {
		for _, e := range entries {
			human++
			if counts[e.ID] != 1 {
				t.Errorf("%s (%s): %d audit records, want exactly 1", e.ID, e.Decision().ReasonCode, counts[e.ID])
			}
		}
	}
	t.Logf("%d decisions of approvers or the reaper checked for one audit record each (records complete %v after the traffic stopped)",
		human, time.Since(waitFrom).Round(100*time.Millisecond))
}

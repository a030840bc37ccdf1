package broker_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/signoff-dev/signoff/internal/broker"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
)

// lonePlane is one broker on a memory store and a NATS server of its own,
// with its metrics, its log, and the admin's view of the audit stream.
type lonePlane struct {
	t    *testing.T
	ns   *testenv.NATSServer
	nc   *nats.Conn
	js   jetstream.JetStream
	m    *broker.Metrics
	logs *brokertest.LogBuffer
	stop func() // ends Run and waits for it
}

func startLonePlane(t *testing.T, cfg broker.Config) *lonePlane {
	t.Helper()
	pol, err := policy.Parse([]byte(brokertest.DefaultPolicy), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := &lonePlane{t: t, ns: testenv.NATS(t), logs: &brokertest.LogBuffer{}, m: broker.NewMetrics(nil)}
	cfg.Conn = p.ns.Connect(t)
	cfg.AuditConn = p.ns.Connect(t)
	cfg.Store = memstore.New(memstore.Options{})
	if cfg.Policy == nil {
		cfg.Policy = broker.StaticPolicy{P: pol}
	}
	cfg.Logger = slog.New(slog.NewTextHandler(p.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg.Metrics = p.m
	cfg.DisableReaper = true
	b, err := broker.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	stopped := false
	p.stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("broker.Run: %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Error("broker.Run did not return within 20 s")
		}
	}
	t.Cleanup(p.stop)
	for b.Ready(context.Background()) != nil {
		time.Sleep(10 * time.Millisecond)
	}
	p.nc = p.ns.Connect(t)
	if p.js, err = jetstream.New(p.ns.Connect(t)); err != nil {
		t.Fatal(err)
	}
	return p
}

// decide sends one request and returns its decision.
func (p *lonePlane) decide(session, id, command string) messages.Decision {
	p.t.Helper()
	data, _ := json.Marshal(messages.Request{V: 1, RequestID: id, SessionID: session, AgentID: "pod-1", Tool: "bash",
		Arguments: json.RawMessage(fmt.Sprintf(`{"command":%q}`, command))})
	rep, err := p.nc.Request("signoff.v1.req."+session, data, 5*time.Second)
	if err != nil {
		p.t.Fatalf("request %s: %v", id, err)
	}
	var rc messages.Receipt
	if err := json.Unmarshal(rep.Data, &rc); err != nil || rc.Decision == nil {
		p.t.Fatalf("request %s: reply %s is not a decided receipt (%v)", id, rep.Data, err)
	}
	return *rc.Decision
}

// dropStream deletes the audit stream: appends find no stream to answer
// them, as during a leader election.
func (p *lonePlane) dropStream() {
	p.t.Helper()
	if err := p.js.DeleteStream(context.Background(), messages.AuditStream); err != nil {
		p.t.Fatal(err)
	}
}

// restoreStream creates the audit stream again, as the broker does.
func (p *lonePlane) restoreStream() {
	p.t.Helper()
	_, err := p.js.CreateStream(context.Background(), jetstream.StreamConfig{
		Name: messages.AuditStream, Subjects: []string{"signoff.v1.audit.>"}, Storage: jetstream.FileStorage,
		AllowBatchPublish: true})
	if err != nil {
		p.t.Fatal(err)
	}
}

// records returns the decision of every record in the audit stream (its
// id less the call's digest: session/request/outcome/reason), those of
// batches included, and fails the test if a record or a message id
// appears twice.
func (p *lonePlane) records() []string {
	p.t.Helper()
	ctx := context.Background()
	s, err := p.js.Stream(ctx, messages.AuditStream)
	if err != nil {
		p.t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		p.t.Fatal(err)
	}
	var ids []string
	seen := map[string]bool{}
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
		m, err := s.GetMsg(ctx, seq)
		if err != nil {
			p.t.Fatalf("audit record %d: %v", seq, err)
		}
		if id := m.Header.Get(nats.MsgIdHdr); seen["msg "+id] {
			p.t.Fatalf("audit message %s stored twice", id)
		} else {
			seen["msg "+id] = true
		}
		recs, err := messages.AuditRecords(m.Data)
		if err != nil {
			p.t.Fatalf("audit message %d: %v", seq, err)
		}
		for _, r := range recs {
			id := messages.AuditRecordID(&r)
			if seen[id] {
				p.t.Fatalf("audit record %s stored twice", id)
			}
			seen[id] = true
			ids = append(ids, decisionKey(id))
		}
	}
	return ids
}

func (p *lonePlane) waitFor(what string, cond func() bool) {
	p.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			p.t.Fatalf("timed out waiting for %s; broker log:\n%s", what, p.logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The lost records: appends during a leader election (no stream
// answers) or into a frozen leader (no acknowledgement ever comes) were
// dropped, some without a trace. Each is now counted, logged, kept in
// memory and stored exactly once when the stream is back.
func TestAuditRecordsAreRetriedUntilTheStreamTakesThem(t *testing.T) {
	for _, tc := range []struct {
		name   string
		frozen bool
		kind   string
	}{
		{name: "no stream answers, as during a leader election", kind: "no_stream"},
		{name: "the stream leader takes appends and never acknowledges them", frozen: true, kind: "timeout"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startLonePlane(t, broker.Config{AuditAckTimeout: 300 * time.Millisecond})
			p.decide("s-1", "before", "ls")
			p.waitFor("the first record", func() bool { return len(p.records()) == 1 })

			p.dropStream()
			if tc.frozen {
				// A responder that swallows appends: a leader frozen by
				// SIGSTOP, as far as the publisher can tell.
				sub, err := p.nc.Subscribe("signoff.v1.audit.>", func(*nats.Msg) {})
				if err != nil {
					t.Fatal(err)
				}
				if err := p.nc.Flush(); err != nil {
					t.Fatal(err)
				}
				defer func() { _ = sub.Unsubscribe() }()
			}
			want := map[string]bool{"s-1/before/allow/policy_allow": true}
			const n = 12
			for i := range n {
				id := fmt.Sprintf("r-%d", i)
				cmd, rc := "ls", "allow/policy_allow"
				if i%3 == 0 {
					cmd, rc = "rm -rf /etc", "deny/policy_deny"
				}
				d := p.decide("s-1", id, cmd)
				if got := string(d.Outcome) + "/" + string(d.ReasonCode); got != rc {
					t.Fatalf("%s: decision %s, want %s (async audit is not a gate)", id, got, rc)
				}
				want["s-1/"+id+"/"+rc] = true
			}
			p.waitFor("every failed record in the retry set", func() bool {
				return testutil.ToFloat64(p.m.AuditRetryPending) == n
			})
			if got := testutil.ToFloat64(p.m.AuditFailures.WithLabelValues(tc.kind)); got < n {
				t.Errorf("signoff_audit_failures_total{kind=%q} = %v, want at least %d", tc.kind, got, n)
			}
			// One line per message that failed first: a record alone, or
			// a session's records batched together.
			if got := strings.Count(p.logs.String(), "audit records not stored yet; retrying from memory"); got < 1 || got > n {
				t.Errorf("%d first-failure log lines, want one per failed message (1 to %d)", got, n)
			}

			// The swallower stays: with the stream back, the stream's
			// acknowledgement is the reply, as when a leader wakes up.
			p.restoreStream()
			p.waitFor("every record stored", func() bool {
				return testutil.ToFloat64(p.m.AuditRetryPending) == 0 && len(p.records()) == len(want)-1
			})
			for _, id := range p.records() {
				if !want[id] {
					t.Errorf("unexpected audit record %s", id)
				}
			}
			if got := testutil.ToFloat64(p.m.AuditRetried); got != n {
				t.Errorf("signoff_audit_retried_total = %v, want %d", got, n)
			}
			if lost := metricSum(t, p.m, "signoff_audit_lost_total"); lost != 0 {
				t.Errorf("%v records counted lost, want none", lost)
			}
		})
	}
}

// A record the retry set has no room for, and the records still in it when
// the broker stops, are the losses the docs allow: each is counted by
// reason and logged.
func TestAuditLossesAreCountedAndLogged(t *testing.T) {
	p := startLonePlane(t, broker.Config{AuditAckTimeout: 200 * time.Millisecond, AuditRetryLimit: 2})
	p.dropStream()
	// Five sessions: each record is a message of its own (a session's
	// records decided together are one).
	for i := range 5 {
		p.decide(fmt.Sprintf("s-%d", i), fmt.Sprintf("r-%d", i), "ls")
	}
	p.waitFor("three records lost to overflow and two held for retry", func() bool {
		return testutil.ToFloat64(p.m.AuditLost.WithLabelValues("overflow")) == 3 &&
			testutil.ToFloat64(p.m.AuditRetryPending) == 2
	})
	time.Sleep(100 * time.Millisecond)
	if got := testutil.ToFloat64(p.m.AuditLost.WithLabelValues("overflow")); got != 3 {
		t.Errorf("%v records lost to overflow, want 3", got)
	}
	if got := strings.Count(p.logs.String(), "audit records lost: the retry queue is full"); got != 3 {
		t.Errorf("%d overflow log lines, want 3", got)
	}
	p.stop()
	if got := testutil.ToFloat64(p.m.AuditLost.WithLabelValues("shutdown")); got != 2 {
		t.Errorf("signoff_audit_lost_total{reason=shutdown} = %v, want the 2 records left in memory", got)
	}
	if !strings.Contains(p.logs.String(), "audit records lost: the broker stopped before the stream took them") {
		t.Errorf("no log line for the records lost at shutdown:\n%s", p.logs.String())
	}
}

// Records left in memory are stored by the shutdown flush when the stream
// comes back in time: nothing is counted lost.
func TestShutdownFlushStoresWhatTheStreamTakes(t *testing.T) {
	p := startLonePlane(t, broker.Config{AuditAckTimeout: 200 * time.Millisecond})
	p.dropStream()
	p.decide("s-1", "r-1", "ls")
	p.waitFor("the record in the retry set", func() bool { return testutil.ToFloat64(p.m.AuditRetryPending) == 1 })
	p.restoreStream()
	p.stop()
	if got := p.records(); len(got) != 1 || got[0] != "s-1/r-1/allow/policy_allow" {
		t.Errorf("stream holds %v, want the one record", got)
	}
	if lost := metricSum(t, p.m, "signoff_audit_lost_total"); lost != 0 {
		t.Errorf("%v records counted lost, want none", lost)
	}
}

// Strict mode: no allow leaves the broker before its record is stored; an
// allow the stream cannot take is a fail-closed deny, and allows resume as
// soon as the stream is back. Denies do not wait for the stream.
func TestStrictAuditRepliesNoAllowBeforeItsRecordIsStored(t *testing.T) {
	p := startLonePlane(t, broker.Config{AuditMode: broker.AuditStrict, AuditAckTimeout: 300 * time.Millisecond})

	d := p.decide("s-1", "r-1", "ls")
	brokertest.WantDecision(t, &d, messages.OutcomeAllow, messages.ReasonPolicyAllow)
	// No wait: strict mode stored it before replying.
	if got := p.records(); len(got) != 1 || got[0] != "s-1/r-1/allow/policy_allow" {
		t.Fatalf("stream holds %v right after the allow, want its record", got)
	}
	// The agent's retry of the same request is the same record; the same
	// request id in another session is another.
	p.decide("s-1", "r-1", "ls")
	p.decide("s-2", "r-1", "ls")
	if got := p.records(); len(got) != 2 {
		t.Fatalf("stream holds %v, want one record per session's request", got)
	}

	p.dropStream()
	d = p.decide("s-1", "r-2", "ls")
	brokertest.WantDecision(t, &d, messages.OutcomeDeny, messages.ReasonUnavailable)
	if d.LLMMessage == "" || !strings.Contains(d.Reason, "audit") {
		t.Errorf("unavailable deny = %+v, want a reason naming the audit stream and an llm_message", d)
	}
	d = p.decide("s-1", "r-3", "rm -rf /etc")
	brokertest.WantDecision(t, &d, messages.OutcomeDeny, messages.ReasonPolicyDeny)

	p.restoreStream()
	d = p.decide("s-1", "r-2", "ls")
	brokertest.WantDecision(t, &d, messages.OutcomeAllow, messages.ReasonPolicyAllow)
	// The allow, and (retried from memory) the two denies.
	p.waitFor("the denies' records", func() bool { return len(p.records()) == 3 })
	got := strings.Join(p.records(), " ")
	for _, id := range []string{"s-1/r-2/allow/policy_allow", "s-1/r-2/deny/unavailable", "s-1/r-3/deny/policy_deny"} {
		if !strings.Contains(got, id) {
			t.Errorf("stream holds %s, want %s", got, id)
		}
	}
}

func TestBrokerConfigRefusesBadAuditSettings(t *testing.T) {
	nc := testenv.NATS(t, testenv.WithoutJetStream()).Connect(t)
	pol := broker.StaticPolicy{P: policy.Default()}
	for _, tc := range []struct {
		name string
		cfg  broker.Config
		want string
	}{
		{"strict audit needs the audit stream", broker.Config{AuditMode: broker.AuditStrict, DisableAudit: true}, "needs the audit stream"},
		{"an unknown audit mode", broker.Config{AuditMode: "paranoid"}, `audit mode "paranoid"`},
		{"a negative ack timeout", broker.Config{AuditAckTimeout: -time.Second}, "must not be negative"},
		{"a negative retry limit", broker.Config{AuditRetryLimit: -1}, "must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Conn, tc.cfg.Store, tc.cfg.Policy = nc, memstore.New(memstore.Options{}), pol
			if _, err := broker.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// metricSum is the sum of every series of metric name (0 when none).
func metricSum(t *testing.T, m *broker.Metrics, name string) float64 {
	t.Helper()
	families, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, s := range f.GetMetric() {
			sum += s.GetCounter().GetValue() + s.GetGauge().GetValue()
		}
	}
	return sum
}

func TestParseAuditMode(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    broker.AuditMode
		wantErr bool
	}{
		{"", broker.AuditAsync, false},
		{"async", broker.AuditAsync, false},
		{"strict", broker.AuditStrict, false},
		{"Strict", "", true},
		{"off", "", true},
	} {
		got, err := broker.ParseAuditMode(tc.in)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("ParseAuditMode(%q) = %q, %v", tc.in, got, err)
		}
	}
}

// Strict mode holds back a human approval too: the decision is published
// to the agent, and a status query answers it, only once its audit record
// is stored.
func TestStrictAuditHoldsAnApprovalUntilItsRecordIsStored(t *testing.T) {
	p := startLonePlane(t, broker.Config{AuditMode: broker.AuditStrict, AuditAckTimeout: 300 * time.Millisecond})
	dev := newDevice(t, p.ns)
	decisions, err := p.nc.SubscribeSync(subjects.Decision("s-1", "a-1"))
	if err != nil {
		t.Fatal(err)
	}
	out := p.call(subjects.Req("s-1"), messages.Request{V: 1, RequestID: "a-1", SessionID: "s-1", AgentID: "pod-1",
		Tool: "bash", Arguments: json.RawMessage(`{"command":"make deploy"}`)})
	if !strings.Contains(string(out), `"pending"`) {
		t.Fatalf("reply %s, want pending", out)
	}
	q := dev.nextAsk(t, "a-1")

	p.dropStream()
	dev.approve(t, q)
	if m, err := decisions.NextMsg(time.Second); err == nil {
		t.Fatalf("decision published before its audit record was stored: %s", m.Data)
	}
	code, _ := errorCode(p.call(subjects.Status("s-1"), messages.StatusRequest{V: 1, RequestID: "a-1"}))
	if code != messages.CodeUnavailable {
		t.Fatalf("status while the stream is gone: code %q, want unavailable (not the allow)", code)
	}

	p.restoreStream()
	m, err := decisions.NextMsg(10 * time.Second)
	if err != nil {
		t.Fatalf("no decision once the stream is back: %v\n%s", err, p.logs.String())
	}
	var d messages.Decision
	if err := json.Unmarshal(m.Data, &d); err != nil {
		t.Fatal(err)
	}
	brokertest.WantDecision(t, &d, messages.OutcomeAllow, messages.ReasonApproved)
	if got := p.records(); len(got) != 1 || got[0] != "s-1/a-1/allow/approved" {
		t.Errorf("stream holds %v, want the approval's record once", got)
	}
	var rc messages.Receipt
	if err := json.Unmarshal(p.call(subjects.Status("s-1"), messages.StatusRequest{V: 1, RequestID: "a-1"}), &rc); err != nil ||
		rc.Decision == nil || rc.Decision.Outcome != messages.OutcomeAllow {
		t.Errorf("status after the stream is back: %+v", rc)
	}
	if got := p.records(); len(got) != 1 {
		t.Errorf("the status query's append was not deduplicated: %v", got)
	}
}

// The NATS server restarts (same JetStream directory) while decisions are
// made: appends caught in flight fail with a disconnect or find no stream
// while JetStream recovers, and are retried; every decision an agent got
// ends up in the stream exactly once.
func TestEveryDecisionIsAuditedOnceAcrossANATSRestart(t *testing.T) {
	p := startLonePlane(t, broker.Config{AuditAckTimeout: 500 * time.Millisecond})
	agent := p.ns.Connect(t, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	decidedIDs := make(chan string, 1024)
	stop := make(chan struct{})
	var sent atomic.Int64
	var workers sync.WaitGroup
	for w := range 4 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("w%d-%d", w, i)
				data, _ := json.Marshal(messages.Request{V: 1, RequestID: id, SessionID: "s-restart", AgentID: "pod-1", Tool: "bash",
					Arguments: json.RawMessage(`{"command":"ls"}`)})
				sent.Add(1)
				rep, err := agent.Request(subjects.Req("s-restart"), data, time.Second)
				if err != nil || !strings.Contains(string(rep.Data), `"decided"`) {
					time.Sleep(20 * time.Millisecond) // the server or the broker is not back yet
					continue
				}
				decidedIDs <- "s-restart/" + id + "/allow/policy_allow"
			}
		}()
	}
	// Let some decisions through, restart the server under the load, and
	// let more through after it.
	for sent.Load() < 60 {
		time.Sleep(5 * time.Millisecond)
	}
	p.ns.Shutdown()
	time.Sleep(300 * time.Millisecond)
	p.ns.Restart()
	decided := map[string]bool{}
	deadline := time.After(30 * time.Second)
	for len(decided) < 300 {
		select {
		case id := <-decidedIDs:
			decided[id] = true
		case <-deadline:
			close(stop)
			workers.Wait()
			t.Fatalf("only %d requests decided within 30 s of the restart", len(decided))
		}
	}
	close(stop)
	workers.Wait()
	close(decidedIDs)
	for id := range decidedIDs {
		decided[id] = true
	}
	p.waitFor("every decision's record stored", func() bool {
		if testutil.ToFloat64(p.m.AuditRetryPending) != 0 {
			return false
		}
		got := map[string]bool{}
		for _, id := range p.records() {
			got[id] = true
		}
		for id := range decided {
			if !got[id] {
				return false
			}
		}
		return true
	})
	if lost := metricSum(t, p.m, "signoff_audit_lost_total"); lost != 0 {
		t.Errorf("%v records counted lost", lost)
	}
	t.Logf("%d decisions, %v appends failed, %v retried", len(decided),
		testutil.ToFloat64(p.m.NATSErrors.WithLabelValues("audit")), testutil.ToFloat64(p.m.AuditRetried))
}

// natsCluster starts three embedded JetStream servers routed into one
// cluster and returns their client URLs once JetStream has a meta leader.
func natsCluster(t *testing.T) []string {
	t.Helper()
	var clusterPorts []int
	for range 3 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		clusterPorts = append(clusterPorts, l.Addr().(*net.TCPAddr).Port)
		l.Close()
	}
	var routes []string
	for _, p := range clusterPorts {
		routes = append(routes, fmt.Sprintf("nats://127.0.0.1:%d", p))
	}
	var urls []string
	for i, cp := range clusterPorts {
		o := &server.Options{ServerName: fmt.Sprintf("n%d", i), Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
			JetStream: true, StoreDir: t.TempDir(),
			Cluster: server.ClusterOpts{Name: "audit", Host: "127.0.0.1", Port: cp},
			Routes:  server.RoutesFromStr(strings.Join(routes, ","))}
		srv, err := server.NewServer(o)
		if err != nil {
			t.Fatal(err)
		}
		go srv.Start()
		t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
		if !srv.ReadyForConnections(10 * time.Second) {
			t.Fatalf("server n%d not ready", i)
		}
		urls = append(urls, srv.ClientURL())
	}
	nc, err := nats.Connect(strings.Join(urls, ","))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := js.AccountInfo(context.Background()); err == nil {
			return urls
		} else if time.Now().After(deadline) {
			t.Fatalf("JetStream cluster has no meta leader: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The election: on a 3-node JetStream cluster, the audit stream's
// leader steps down again and again while decisions are made. Appends
// during each election find no leader ("no response from stream") or are
// not acknowledged in time; each is retried, and every decision an agent
// got is in the replicated stream exactly once.
// auditElectionWindow is the duplicate window of the leader-election test:
// the shortest the broker accepts with a 1 s ack timeout (36 s), and then
// some.
const auditElectionWindow = 40 * time.Second

func TestEveryDecisionIsAuditedOnceAcrossStreamLeaderElections(t *testing.T) {
	urls := natsCluster(t)
	pol, err := policy.Parse([]byte(brokertest.DefaultPolicy), "policy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	connect := func() *nats.Conn {
		nc, err := nats.Connect(strings.Join(urls, ","), nats.MaxReconnects(-1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	m := broker.NewMetrics(nil)
	logs := &brokertest.LogBuffer{}
	b, err := broker.New(broker.Config{Conn: connect(), AuditConn: connect(), Store: memstore.New(memstore.Options{}),
		Policy: broker.StaticPolicy{P: pol}, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})), Metrics: m,
		DisableReaper: true, AuditReplicas: 3, AuditAckTimeout: time.Second, AuditDedupWindow: auditElectionWindow})
	if err != nil {
		t.Fatal(err)
	}
	brokertest.Run(t, "broker.Run", b.Run)
	for b.Ready(context.Background()) != nil {
		time.Sleep(20 * time.Millisecond)
	}
	agent, admin := connect(), connect()

	decided := map[string]bool{}
	var mu sync.Mutex
	stop := make(chan struct{})
	var workers sync.WaitGroup
	for w := range 4 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id := fmt.Sprintf("w%d-%d", w, i)
				data, _ := json.Marshal(messages.Request{V: 1, RequestID: id, SessionID: "s-elect", AgentID: "pod-1", Tool: "bash",
					Arguments: json.RawMessage(`{"command":"ls"}`)})
				rep, err := agent.Request(subjects.Req("s-elect"), data, 2*time.Second)
				if err == nil && strings.Contains(string(rep.Data), `"decided"`) {
					mu.Lock()
					decided["s-elect/"+id+"/allow/policy_allow"] = true
					mu.Unlock()
				}
			}
		}()
	}
	stepdowns := 0
	for range 4 {
		time.Sleep(300 * time.Millisecond)
		rep, err := admin.Request("$JS.API.STREAM.LEADER.STEPDOWN."+messages.AuditStream, nil, 5*time.Second)
		if err == nil && strings.Contains(string(rep.Data), `"success":true`) {
			stepdowns++
		}
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	workers.Wait()
	if stepdowns == 0 {
		t.Fatal("no leader stepdown succeeded")
	}

	js, _ := jetstream.New(admin)
	// A record whose append a leader staged and lost in its stepdown can
	// be refused as "duplicate message id is in process" until the
	// duplicate window forgets it (docs/OPERATIONS.md): the wait covers
	// the window.
	deadline := time.Now().Add(auditElectionWindow + 20*time.Second)
	for {
		got, dup := map[string]bool{}, ""
		// The stream may still be electing its leader: ask again.
		stream, err := js.Stream(context.Background(), messages.AuditStream)
		var info *jetstream.StreamInfo
		if err == nil {
			info, err = stream.Info(context.Background())
		}
		if err == nil {
			for seq := info.State.FirstSeq; seq <= info.State.LastSeq && info.State.Msgs > 0; seq++ {
				msg, err := stream.GetMsg(context.Background(), seq)
				if err != nil {
					continue
				}
				recs, err := messages.AuditRecords(msg.Data)
				if err != nil {
					t.Fatalf("audit message %d: %v", seq, err)
				}
				for _, r := range recs {
					id := messages.AuditRecordID(&r)
					if got[id] {
						dup = id
					}
					got[id], got[decisionKey(id)] = true, true
				}
			}
		}
		if dup != "" {
			t.Fatalf("audit record %s stored twice", dup)
		}
		missing := 0
		for id := range decided {
			if !got[id] {
				missing++
			}
		}
		if missing == 0 && testutil.ToFloat64(m.AuditRetryPending) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d decisions have no audit record (retry set %v)\n%s", missing, len(decided),
				testutil.ToFloat64(m.AuditRetryPending), logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if lost := metricSum(t, m, "signoff_audit_lost_total"); lost != 0 {
		t.Errorf("%v records counted lost", lost)
	}
	t.Logf("%d decisions over %d leader elections; %v appends failed, %v stored by a retry", len(decided), stepdowns,
		testutil.ToFloat64(m.NATSErrors.WithLabelValues("audit")), testutil.ToFloat64(m.AuditRetried))
}

// decisionKey is a record id (messages.AuditRecordID) less its call's
// digest: session/request/outcome/reason_code.
func decisionKey(id string) string { return id[:strings.LastIndexByte(id, '/')] }

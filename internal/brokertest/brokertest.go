package brokertest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"github.com/signoff-dev/signoff/internal/broker"
	"github.com/signoff-dev/signoff/internal/escalator"
	"github.com/signoff-dev/signoff/internal/testenv"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
	"github.com/signoff-dev/signoff/pkg/session/redisstore"
)

// DefaultPolicy is the policy a plane runs when Options.Policy is empty:
// ls is allowed, rm -rf of absolute paths and .env reads are denied, kubectl
// goes to the oncall team (two approvals), everything else follows
// auto-edit mode (exec asks the default team).
const DefaultPolicy = `
mode: auto-edit
rules:
` + DefaultRules + DefaultTeams

// DefaultRules are the rules of [DefaultPolicy], as items of its rules
// list, and DefaultTeams its teams section: the pieces a test policy that
// adds to the default (tools, rules of its own) is built from.
const (
	DefaultRules = `  - { rule: "bash(ls)", action: allow }
  - { rule: "bash(ls *)", action: allow }
  - { rule: "bash(rm -rf /*)", action: deny }
  - { rule: "read_file(**/.env)", action: deny }
  - { rule: "bash(kubectl *)", action: ask, route: oncall }
`
	DefaultTeams = `teams:
  default: { members: [alice, bob, carol] }
  oncall:  { members: [carol, dave, erin], approvals_required: 2 }
`
)

// Options shape a plane.
type Options struct {
	// Policy is the policy YAML (default DefaultPolicy).
	Policy string
	// Tracer is the replicas' tracer (broker.Config.Tracer; nil: off).
	Tracer trace.Tracer
	// Replicas is the number of broker replicas (default 1).
	Replicas int
	// NoBroker starts no replica (benchmark baselines).
	NoBroker bool
	// Redis runs the replicas on a real redis-server (each with its own
	// client, as separate processes); otherwise they share a memory store.
	Redis bool
	// ReapInterval is the reaper's sweep interval (default 100 ms).
	ReapInterval time.Duration
	// DisableReaper runs the replicas without their reaper.
	DisableReaper bool
	// DisableAudit runs the replicas without the JetStream audit stream
	// (benchmarks that measure its cost).
	DisableAudit bool
	// ReadRoundTrips, with Redis, is the store's redisstore
	// Options.ReadRoundTrips (benchmarks that measure read coalescing).
	ReadRoundTrips int
	// EffectLease is the store's outbox lease (default the store's, 5 s):
	// tests of effects left by a replica that died shorten it.
	EffectLease time.Duration
	// OutboxInterval is the replicas' outbox worker interval (default the
	// broker's, 1 s).
	OutboxInterval time.Duration
	// RedisHook, with Redis, is added to every replica's Redis client (to
	// count round trips).
	RedisHook redis.Hook
	// Pagers, WebURL, EscalationInterval and EscalationWatch are the
	// replicas' escalation settings (broker.Config).
	Pagers             *escalator.Pagers
	WebURL             string
	EscalationInterval time.Duration
	EscalationWatch    time.Duration
	// DisableEscalation runs the replicas without their escalator (tests
	// that count Redis round trips).
	DisableEscalation bool
}

// Plane is a whole approval plane in one test process: an embedded NATS
// server, the state store and broker replicas, each with its own NATS
// connection.
type Plane struct {
	t        testing.TB
	o        Options
	NATS     *testenv.NATSServer
	Redis    *testenv.RedisServer // nil with the memory store
	Policy   *policy.Policy
	Replicas []*Replica
	Subjects messages.Subjects
	mem      *memstore.Store
}

// Replica is one broker replica of a plane.
type Replica struct {
	Name   string
	Broker *broker.Broker
	// Metrics are the replica's metrics.
	Metrics *broker.Metrics
	nc      *nats.Conn
	cancel  context.CancelFunc
	done    chan error
}

func testLogger() *slog.Logger {
	if os.Getenv("SIGNOFF_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// Start starts a plane and registers its shutdown with t.Cleanup. Set
// SIGNOFF_TEST_LOG=1 to see the brokers' logs.
func Start(t testing.TB, o Options) *Plane {
	t.Helper()
	if o.Policy == "" {
		o.Policy = DefaultPolicy
	}
	if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.ReapInterval == 0 {
		o.ReapInterval = 100 * time.Millisecond
	}
	pol, err := policy.Parse([]byte(o.Policy), "test-policy.yaml")
	if err != nil {
		t.Fatalf("brokertest: policy: %v", err)
	}
	subj, _ := messages.NewSubjects(messages.DefaultPrefix)
	p := &Plane{t: t, o: o, NATS: testenv.NATS(t), Policy: pol, Subjects: subj}
	if o.Redis {
		p.Redis = testenv.Redis(t)
	} else {
		p.mem = memstore.New(memstore.Options{EffectLease: o.EffectLease})
	}
	for i := range o.Replicas {
		if o.NoBroker {
			break
		}
		p.StartReplica(fmt.Sprintf("replica-%d", i))
	}
	return p
}

// StartReplica starts one more broker replica and waits until it serves.
func (p *Plane) StartReplica(name string) *Replica {
	t := p.t
	t.Helper()
	var store session.Store = p.mem
	if p.Redis != nil {
		ro := p.RedisOptions()
		if p.o.RedisHook != nil {
			rdb := redis.NewClient(&redis.Options{Addr: p.Redis.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
			rdb.AddHook(p.o.RedisHook)
			t.Cleanup(func() { _ = rdb.Close() })
			ro.URL, ro.Client = "", rdb
		}
		rs, err := redisstore.New(context.Background(), ro)
		if err != nil {
			t.Fatalf("brokertest: redis store: %v", err)
		}
		t.Cleanup(func() { _ = rs.Close() })
		store = rs
	}
	nc := p.NATS.Connect(t)
	metrics := broker.NewMetrics(nil)
	b, err := broker.New(broker.Config{
		Metrics:        metrics,
		Conn:           nc,
		AuditConn:      p.NATS.Connect(t),
		Store:          store,
		Policy:         broker.StaticPolicy{P: p.Policy},
		Logger:         testLogger().With("replica", name),
		Replica:        name,
		StoreTimeout:   500 * time.Millisecond,
		ReapInterval:   p.o.ReapInterval,
		OutboxInterval: p.o.OutboxInterval,
		DisableReaper:  p.o.DisableReaper,
		DisableAudit:   p.o.DisableAudit,

		Pagers:             p.o.Pagers,
		WebURL:             p.o.WebURL,
		EscalationInterval: p.o.EscalationInterval,
		EscalationWatch:    p.o.EscalationWatch,
		DisableEscalation:  p.o.DisableEscalation,
		Tracer:             p.o.Tracer,
	})
	if err != nil {
		t.Fatalf("brokertest: broker.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Replica{Name: name, Broker: b, Metrics: metrics, nc: nc, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- b.Run(ctx) }()
	t.Cleanup(func() { r.Stop(t) })
	deadline := time.Now().Add(10 * time.Second)
	for b.Ready(context.Background()) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("brokertest: replica %s not ready: %v", name, b.Ready(context.Background()))
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.Replicas = append(p.Replicas, r)
	return r
}

// RedisOptions are the options of the replicas' Redis stores (with Redis).
func (p *Plane) RedisOptions() redisstore.Options {
	return redisstore.Options{URL: p.Redis.URL(), OpTimeout: 500 * time.Millisecond, ReadRoundTrips: p.o.ReadRoundTrips, EffectLease: p.o.EffectLease}
}

// WaitStepsDone waits until the plane's store lists n escalation steps
// of the request as done. A step's effect (a reminder, a page) reaches
// its devices just before the escalator records it; a test that answers
// on the effect and wants the audit record to list the step waits here
// first, as a person reading the reminder would have.
func (p *Plane) WaitStepsDone(sessionID, requestID string, n int) {
	p.t.Helper()
	st := p.Store()
	deadline := time.Now().Add(15 * time.Second)
	for {
		done, err := st.StepsDone(context.Background(), sessionID, requestID)
		if err == nil && len(done) >= n {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("brokertest: the store lists %+v (%v) as done after 15 s, want %d steps", done, err, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Store returns the plane's memory store, or a new store on its Redis
// (closed with the test): what a replica that died would have written
// with.
func (p *Plane) Store() session.Store {
	if p.Redis == nil {
		return p.mem
	}
	rs, err := redisstore.New(context.Background(), p.RedisOptions())
	if err != nil {
		p.t.Fatalf("brokertest: redis store: %v", err)
	}
	p.t.Cleanup(func() { _ = rs.Close() })
	return rs
}

// Stop shuts the replica down gracefully (idempotent).
func (r *Replica) Stop(t testing.TB) {
	r.cancel()
	select {
	case <-r.done:
		r.done <- nil
	case <-time.After(10 * time.Second):
		t.Errorf("brokertest: replica %s did not stop", r.Name)
	}
	r.nc.Close()
}

// Kill drops the replica's NATS connection at once, like a crashed process.
func (r *Replica) Kill() {
	r.nc.Close()
	r.cancel()
}

// LastAudit returns the last audit record on session's audit subject (the
// last of a batch), waiting up to 5 s for one; none by then, or one that
// does not decode, fails the test.
func (p *Plane) LastAudit(session string) messages.AuditRecord {
	p.t.Helper()
	js, err := jetstream.New(p.NATS.Connect(p.t))
	if err != nil {
		p.t.Fatalf("brokertest: jetstream: %v", err)
	}
	stream, err := js.Stream(p.t.Context(), messages.AuditStream)
	if err != nil {
		p.t.Fatalf("brokertest: audit stream: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		msg, err := stream.GetLastMsgForSubject(p.t.Context(), p.Subjects.Audit(session))
		if err == nil {
			recs, err := messages.AuditRecords(msg.Data)
			if err != nil || len(recs) == 0 {
				p.t.Fatalf("brokertest: audit record of %s: %v (%d records)", session, err, len(recs))
			}
			return recs[len(recs)-1]
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("brokertest: no audit record of %s: %v", session, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// URL is the NATS URL agents and approvers connect to.
func (p *Plane) URL() string { return p.NATS.ClientURL() }

// Agent returns an SDK client for a session on its own connection.
func (p *Plane) Agent(session, agent string, opts ...client.Option) *client.Client {
	p.t.Helper()
	nc := p.NATS.Connect(p.t)
	c, err := client.New(nc, append([]client.Option{client.WithSession(session), client.WithAgent(agent), client.WithAttemptTimeout(time.Second)}, opts...)...)
	if err != nil {
		p.t.Fatalf("brokertest: client.New: %v", err)
	}
	return c
}

// Approver is one approver device: it sees questions and resolutions of the
// teams it watches and sends responses.
type Approver struct {
	t testing.TB
	// NC is the device's own connection.
	NC       *nats.Conn
	subj     messages.Subjects
	mu       sync.Mutex
	resolved []messages.Resolved
	// Asks receives every question the device sees.
	Asks chan messages.ApprovalNeeded
}

func (p *Plane) Approver(teams ...string) *Approver {
	p.t.Helper()
	a := &Approver{t: p.t, NC: p.NATS.Connect(p.t), subj: p.Subjects, Asks: make(chan messages.ApprovalNeeded, 100)}
	for _, team := range teams {
		_, err := a.NC.Subscribe(p.Subjects.Ask(team), func(m *nats.Msg) {
			var q messages.ApprovalNeeded
			if err := json.Unmarshal(m.Data, &q); err != nil {
				p.t.Errorf("bad question: %v", err)
				return
			}
			a.Asks <- q
		})
		if err != nil {
			p.t.Fatal(err)
		}
		_, err = a.NC.Subscribe(p.Subjects.Resolved(team), func(m *nats.Msg) {
			var r messages.Resolved
			if err := json.Unmarshal(m.Data, &r); err != nil {
				p.t.Errorf("bad resolved: %v", err)
				return
			}
			a.mu.Lock()
			a.resolved = append(a.resolved, r)
			a.mu.Unlock()
		})
		if err != nil {
			p.t.Fatal(err)
		}
	}
	if err := a.NC.Flush(); err != nil {
		p.t.Fatal(err)
	}
	return a
}

// NextAsk waits for the next question for requestID.
func (a *Approver) NextAsk(requestID string) messages.ApprovalNeeded {
	a.t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case q := <-a.Asks:
			if q.Request.RequestID == requestID {
				return q
			}
		case <-timeout:
			a.t.Fatalf("no question for %s", requestID)
		}
	}
}

// ResolvedFor returns the resolution the device saw for requestID.
func (a *Approver) ResolvedFor(requestID string) (messages.Resolved, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range a.resolved {
		if r.RequestID == requestID {
			return r, true
		}
	}
	return messages.Resolved{}, false
}

// WaitResolved waits up to 5 s for the device to see requestID resolved:
// the resolution reaches it on its own subscription, after the decision
// reached the agent and other devices.
func (a *Approver) WaitResolved(requestID string) (messages.Resolved, bool) {
	for deadline := time.Now().Add(5 * time.Second); ; {
		if r, ok := a.ResolvedFor(requestID); ok || time.Now().After(deadline) {
			return r, ok
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Respond sends a response (the version is filled in) and returns the
// broker's reply; an error reply fails the test.
func (a *Approver) Respond(r messages.Response) messages.RespondReply {
	a.t.Helper()
	r.V = messages.Version
	data, _ := json.Marshal(r)
	msg, err := a.NC.Request(a.subj.Respond(), data, 5*time.Second)
	if err != nil {
		a.t.Fatalf("respond: %v", err)
	}
	if e, ok := messages.IsErrorReply(msg.Data); ok {
		a.t.Fatalf("respond: error reply %s: %s", e.Error.Code, e.Error.Message)
	}
	var rep messages.RespondReply
	if err := json.Unmarshal(msg.Data, &rep); err != nil {
		a.t.Fatalf("respond reply: %v", err)
	}
	return rep
}

// Approve answers q approved with scope as approver who, naming q's
// digest as an approver bot does.
func (a *Approver) Approve(q messages.ApprovalNeeded, who string, scope messages.Scope) messages.RespondReply {
	return a.Respond(messages.Response{RequestID: q.Request.RequestID, SessionID: q.Request.SessionID,
		Approver: messages.Approver{ID: who, Channel: "test"}, Approved: true, Scope: scope, Digest: q.Digest})
}

// Reject answers q rejected with mode and feedback as approver who.
func (a *Approver) Reject(q messages.ApprovalNeeded, who string, mode messages.RejectMode, feedback string) messages.RespondReply {
	return a.Respond(messages.Response{RequestID: q.Request.RequestID, SessionID: q.Request.SessionID,
		Approver: messages.Approver{ID: who, Channel: "test"}, Approved: false, RejectMode: mode, Feedback: feedback, Digest: q.Digest})
}

// Pending is an agent request running in the background.
type Pending struct {
	ID   string
	done chan result
}

type result struct {
	d   *messages.Decision
	err error
}

// Ask sends a request from c in the background.
func Ask(ctx context.Context, c *client.Client, id, tool string, args any) *Pending {
	p := &Pending{ID: id, done: make(chan result, 1)}
	go func() {
		d, err := c.Request(ctx, client.Call{RequestID: id, Tool: tool, Arguments: args})
		p.done <- result{d, err}
	}()
	return p
}

// Result waits for the request's decision or error (no time limit).
func (p *Pending) Result() (*messages.Decision, error) {
	r := <-p.done
	p.done <- r
	return r.d, r.err
}

// Peek returns the request's decision or error if it has finished, and
// nil, nil while it waits.
func (p *Pending) Peek() (*messages.Decision, error) {
	select {
	case r := <-p.done:
		p.done <- r
		return r.d, r.err
	default:
		return nil, nil
	}
}

// Wait returns the request's decision; no decision in 10 s fails the test.
func (p *Pending) Wait(t testing.TB) *messages.Decision {
	t.Helper()
	select {
	case r := <-p.done:
		if r.err != nil {
			t.Fatalf("request %s: %v", p.ID, r.err)
		}
		return r.d
	case <-time.After(10 * time.Second):
		t.Fatalf("request %s: no decision", p.ID)
	}
	return nil
}

// Bash returns the arguments of a bash call.
func Bash(cmd string) map[string]any { return map[string]any{"command": cmd} }

// WantDecision fails the test unless d has outcome and code.
func WantDecision(t testing.TB, d *messages.Decision, outcome messages.Outcome, code messages.ReasonCode) {
	t.Helper()
	if d == nil {
		t.Fatalf("no decision, want %s/%s", outcome, code)
	}
	if d.Outcome != outcome || d.ReasonCode != code {
		t.Fatalf("decision %s/%s (%s), want %s/%s", d.Outcome, d.ReasonCode, d.Reason, outcome, code)
	}
}

// RawRequest sends data on subject and returns the raw reply.
func (p *Plane) RawRequest(subject string, data []byte) []byte {
	p.t.Helper()
	nc := p.NATS.Connect(p.t)
	defer nc.Close()
	msg, err := nc.Request(subject, data, 5*time.Second)
	if err != nil {
		p.t.Fatalf("request %s: %v", subject, err)
	}
	return msg.Data
}

package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/signoff-dev/signoff/internal/engine"
	"github.com/signoff-dev/signoff/internal/escalator"
	"github.com/signoff-dev/signoff/pkg/backoff"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/reaper"
	"github.com/signoff-dev/signoff/pkg/session"
)

// Broker is one stateless replica: it serves every subject of DESIGN §2 on
// its NATS connection and keeps all shared state in the store. Any number of
// replicas may run against the same NATS and store.
type Broker struct {
	cfg   Config
	log   *slog.Logger
	nc    *nats.Conn
	store session.Store
	subj  messages.Subjects
	// out are the subjects this broker publishes on: subj, or a tenant's
	// (<prefix>.t.<account>.…) on a [Plane].
	out messages.Subjects
	m   *Metrics

	js    jetstream.JetStream
	aud   *auditLog // nil with DisableAudit
	modes *modeTable
	// fleet is this replica's copy of the fleet stops; seen the agents'
	// last seen not yet written (fleet.go).
	fleet *fleetTable
	seen  seenBatch
	// breakers is this replica's copy of the tripped breakers and its
	// hits not yet counted (breakers.go).
	breakers *breakerTable
	// eng runs the decision procedure; the broker is its transport.
	eng *engine.Engine

	// The worker pool: jobs hands a message to an idle worker; workers
	// counts the live ones (at most cfg.Workers); workersDone ends them.
	jobs        chan job
	workers     atomic.Int32
	workersDone chan struct{}
	inflight    sync.WaitGroup

	// acks acknowledges carried-out outbox effects (outbox.go); nil until
	// Run starts it, and then effects are acknowledged inline.
	acks *acker

	mu      sync.Mutex
	subs    []*nats.Subscription
	running bool
	closed  atomic.Bool
	ready   atomic.Bool
}

// New checks cfg and returns a broker ready to Run.
func New(cfg Config) (*Broker, error) {
	cfg.setDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	subj, _ := messages.NewSubjects(cfg.Prefix)
	out, _ := messages.NewSubjects(cfg.publishPrefix())
	if cfg.Replica == "" {
		if id, err := cfg.Conn.GetClientID(); err == nil {
			cfg.Replica = fmt.Sprintf("broker-%d", id)
		} else {
			cfg.Replica = "broker"
		}
	}
	b := &Broker{
		cfg:         cfg,
		log:         cfg.Logger.With("replica", cfg.Replica),
		nc:          cfg.Conn,
		store:       cfg.Store,
		subj:        subj,
		out:         out,
		m:           cfg.Metrics,
		jobs:        make(chan job),
		workersDone: make(chan struct{}),
		modes:       newModeTable(),
		fleet:       newFleetTable(cfg.Store, cfg.StoreTimeout),
		breakers:    &breakerTable{storeCopy: storeCopy[messages.BreakerTrip]{read: cfg.Store.BreakerTrips, timeout: cfg.StoreTimeout}},
	}
	eng, err := engine.New(engine.Config{
		Requests:     cfg.Store,
		Sessions:     cfg.Store,
		Grants:       cfg.Store,
		Policy:       cfg.Policy,
		Modes:        b.modes,
		FleetStops:   b.fleet,
		Breakers:     b.breakers,
		Canary:       &b.modes.canary,
		Publisher:    natsPublisher{b},
		Audit:        auditSink{b},
		Acker:        outboxAcker{b},
		Metrics:      b.m.engine(),
		Logger:       b.log,
		Replica:      cfg.Replica,
		StoreTimeout: cfg.StoreTimeout,
		OpenTeams:    cfg.OpenTeams,
		Tracer:       cfg.Tracer,
	})
	if err != nil {
		return nil, fmt.Errorf("broker: %w", err)
	}
	b.eng = eng
	b.m.setPolicyVersion(cfg.Policy.Current().Version())
	if src, ok := cfg.Policy.(reloadReporter); ok {
		src.OnReload(b.m.policyReloaded)
	}
	return b, nil
}

// Ready reports whether the broker serves its subjects and its store and
// NATS connection answer (for /readyz).
func (b *Broker) Ready(ctx context.Context) error {
	if !b.ready.Load() {
		return errors.New("broker is not serving")
	}
	if !b.nc.IsConnected() {
		return errors.New("NATS is not connected")
	}
	ctx, cancel := context.WithTimeout(ctx, b.cfg.StoreTimeout)
	defer cancel()
	if err := b.store.Ping(ctx); err != nil {
		return fmt.Errorf("store: %w", err)
	}
	return nil
}

// Run serves until ctx is done, then shuts down gracefully: it stops taking
// new messages, finishes the ones in flight, and returns. Run may be called
// once.
func (b *Broker) Run(ctx context.Context) error {
	b.mu.Lock()
	if b.running || b.closed.Load() {
		b.mu.Unlock()
		return errors.New("broker: Run called twice or after Close")
	}
	b.running = true
	b.mu.Unlock()

	if err := b.setupJetStream(ctx); err != nil {
		return err
	}
	// Before the handlers start: a request is denied until the fleet stops
	// are read (fail closed).
	if err := b.fleet.refresh(ctx, b.cfg.StoreTimeout); err != nil {
		b.log.Error("cannot read the fleet stops; requests are denied until they are read", "err", err)
	}
	b.readBreakers(ctx)
	// Before the handlers start: they queue acknowledgements.
	b.startAcker()
	if err := b.subscribe(); err != nil {
		b.stopServing()
		b.acks.stop()
		return err
	}
	b.ready.Store(true)
	b.log.Info("broker serving", "prefix", b.cfg.Prefix, "nats", b.nc.ConnectedUrlRedacted())

	var wg sync.WaitGroup
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	// The audit retry loop outlives the handlers and background work: it
	// stops (and flushes) after them, below.
	auditCtx, stopAudit := context.WithCancel(context.Background())
	defer stopAudit()
	var auditDone sync.WaitGroup
	if b.aud != nil {
		auditDone.Add(1)
		go func() { defer auditDone.Done(); b.aud.run(auditCtx) }()
	}
	if err := b.startLoops(runCtx, &wg); err != nil {
		b.stopServing()
		return fmt.Errorf("broker: %w", err)
	}

	<-ctx.Done()
	b.ready.Store(false)
	b.log.Info("broker draining")
	b.stopServing()
	b.eng.Close()
	stop()
	wg.Wait()
	b.acks.stop()
	stopAudit()
	auditDone.Wait()
	b.closed.Store(true)
	b.log.Info("broker stopped")
	return nil
}

// startLoops starts this replica's background loops under ctx, each
// counted in wg: the outbox worker, the modes watcher, and (unless
// disabled) grant expiry, the escalator and the reaper.
func (b *Broker) startLoops(ctx context.Context, wg *sync.WaitGroup) error {
	ow, err := b.newOutboxWorker()
	if err != nil {
		return fmt.Errorf("outbox: %w", err)
	}
	var esc *escalator.Escalator
	if !b.cfg.DisableEscalation {
		if esc, err = b.newEscalator(); err != nil {
			return fmt.Errorf("escalator: %w", err)
		}
	}
	var r *reaper.Reaper
	if !b.cfg.DisableReaper {
		r, err = reaper.New(reaper.Config{
			Store:     b.store,
			Interval:  b.cfg.ReapInterval,
			OnExpired: b.onExpired,
			// Each report waits for its audit append: enough at once that
			// a slow stream does not hold the next expiries back.
			Concurrency: 16,
			Logger:      b.log,
		})
		if err != nil {
			return fmt.Errorf("reaper: %w", err)
		}
	}
	loop := func(name string, run func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				b.log.Error(name+" stopped", "err", err)
			}
		}()
	}
	loop("outbox worker", ow.Run)
	loop("modes watcher", func(ctx context.Context) error { b.modes.follow(ctx, b.log); return nil })
	loop("fleet stops", func(ctx context.Context) error { b.followFleet(ctx); return nil })
	loop("agents' last seen", func(ctx context.Context) error { b.runSeen(ctx); return nil })
	loop("breakers", func(ctx context.Context) error { b.runBreakers(ctx); return nil })
	loop("canary", func(ctx context.Context) error { b.runCanary(ctx); return nil })
	if esc != nil {
		loop("escalator", esc.Run)
	}
	if r != nil {
		loop("grant expiry", func(ctx context.Context) error { b.runGrantExpiry(ctx, b.cfg.GrantExpiryInterval); return nil })
		loop("reaper", r.Run)
	}
	return nil
}

func (b *Broker) setupJetStream(ctx context.Context) error {
	if b.cfg.DisableAudit {
		b.log.Warn("audit stream disabled: decisions are not recorded in JetStream")
		return nil
	}
	jsConn := b.cfg.AuditConn
	if jsConn == nil {
		jsConn = b.nc
	}
	aud := newAuditLog(nil, &b.cfg, b.log, b.m)
	// Every async append has an ack timeout: an append into a frozen
	// stream leader fails (and is retried) instead of waiting forever.
	js, err := jetstream.New(jsConn,
		jetstream.WithPublishAsyncErrHandler(aud.failed),
		jetstream.WithPublishAsyncTimeout(b.cfg.AuditAckTimeout),
		jetstream.WithPublishAsyncMaxPending(8192))
	if err != nil {
		return fmt.Errorf("broker: jetstream: %w", err)
	}
	aud.js = js
	// A fresh NATS cluster may still be electing its JetStream leader: keep
	// trying (not ready meanwhile) rather than exit and restart.
	retry := backoff.Policy{Min: 250 * time.Millisecond, Max: 5 * time.Second}
	for attempt := 1; ; attempt++ {
		kv, stream, err := b.createStreams(ctx, js)
		if err == nil {
			if err := aud.configure(jsConn, stream); err != nil {
				return fmt.Errorf("broker: %w", err)
			}
			// The watcher outlives setup: it stops in modes.follow.
			if err := b.modes.start(context.WithoutCancel(ctx), kv, b.log); err != nil {
				return fmt.Errorf("broker: %w", err)
			}
			b.js = js
			b.aud = aud
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
		wait := retry.Delay(attempt)
		b.log.Warn("JetStream not ready; retrying", "attempt", attempt, "err", err, "retry_in", wait)
		if backoff.Sleep(ctx, wait) != nil {
			return err
		}
	}
}

// createStreams creates (or updates) the audit stream and the modes bucket.
// It returns the audit stream as the server keeps it (an older server
// ignores allow_batched).
func (b *Broker) createStreams(ctx context.Context, js jetstream.JetStream) (jetstream.KeyValue, jetstream.Stream, error) {
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	stream, err := js.CreateOrUpdateStream(sctx, jetstream.StreamConfig{
		Name:        messages.AuditStream,
		Description: "Signoff: one record per decision",
		Subjects:    b.cfg.auditSubjects(),
		Storage:     jetstream.FileStorage,
		Replicas:    b.cfg.AuditReplicas,
		MaxAge:      b.cfg.AuditMaxAge,
		Discard:     jetstream.DiscardOld,
		// Asynchronous appends are published as fast batches (audit.go).
		AllowBatchPublish: true,
		Duplicates:        b.cfg.AuditDedupWindow,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("broker: create audit stream %s: %w", messages.AuditStream, err)
	}
	kv, err := js.CreateOrUpdateKeyValue(sctx, jetstream.KeyValueConfig{
		Bucket:      b.cfg.modesBucket(),
		Description: "Signoff: admin mode overrides per session and agent type",
		Replicas:    b.cfg.AuditReplicas,
		History:     1,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("broker: create key-value bucket %s: %w", b.cfg.modesBucket(), err)
	}
	return kv, stream, nil
}

// handler handles one message and returns the reply body (nil: no reply).
type handler struct {
	fn func(ctx context.Context, msg *nats.Msg) []byte
	// unbounded handlers get a context without a deadline: every blocking
	// call they make is bounded on its own (storeCtx), and the request path
	// does not pay for a second timer.
	unbounded bool
}

// bounded handlers run under one deadline for the whole message.
func bounded(fn func(context.Context, *nats.Msg) []byte) handler { return handler{fn: fn} }

func unbounded(fn func(context.Context, *nats.Msg) []byte) handler {
	return handler{fn: fn, unbounded: true}
}

// route is one subject the broker serves and its handler.
type route struct {
	subject string
	kind    messages.SubjectKind
	h       handler
	// broadcast subjects reach every replica (no queue group).
	broadcast bool
}

// routes are the subjects the broker serves, in the order a [Plane]
// indexes them.
func (b *Broker) routes() []route {
	return []route{
		{b.subj.ReqAll(), messages.SubjectReq, unbounded(b.handleRequest), false},
		{b.subj.StatusAll(), messages.SubjectStatus, bounded(b.handleStatus), false},
		{b.subj.CancelAll(), messages.SubjectCancel, bounded(b.handleCancel), false},
		{b.subj.TurnAll(), messages.SubjectTurn, bounded(b.handleTurn), false},
		{b.subj.Respond(), messages.SubjectRespond, bounded(b.handleRespond), false},
		{b.subj.PendingAll(), messages.SubjectPending, bounded(b.handlePending), false},
		{b.subj.AdminAll(), messages.SubjectAdmin, bounded(b.handleAdmin), false},
		// People events (sign-ins, step-ups) come from approver bots
		// only, as responses do: the plane admits them as it admits a
		// response.
		{b.subj.People(), messages.SubjectRespond, bounded(b.handlePeople), false},
		// Policy reloads, policy versions and fleet stop changes must
		// reach every replica: no queue group.
		{b.subj.Admin(messages.AdminOpReloadPolicy), messages.SubjectAdmin, bounded(b.handleReload), true},
		{b.subj.Admin(messages.AdminOpPolicyVersion), messages.SubjectAdmin, bounded(b.handlePolicyVersion), true},
		{b.subj.Admin(messages.AdminOpStopsChanged), messages.SubjectAdmin, bounded(b.handleStopsChanged), true},
	}
}

func (b *Broker) subscribe() error {
	if b.cfg.tenant != nil {
		return nil // the plane subscribes and hands this tenant its messages
	}
	for _, q := range b.routes() {
		if q.broadcast {
			sub, err := b.nc.Subscribe(q.subject, b.dispatch(q.h))
			if err != nil {
				return fmt.Errorf("broker: subscribe %s: %w", q.subject, err)
			}
			b.subs = append(b.subs, sub)
			continue
		}
		sub, err := b.nc.QueueSubscribe(q.subject, messages.QueueGroup, b.dispatch(q.h))
		if err != nil {
			return fmt.Errorf("broker: subscribe %s: %w", q.subject, err)
		}
		// The broker bounds its own concurrency; let NATS buffer bursts.
		_ = sub.SetPendingLimits(1<<20, 256<<20)
		b.subs = append(b.subs, sub)
	}
	return b.nc.Flush()
}

// stopServing stops taking messages, lets the ones in flight finish, and
// ends the workers.
func (b *Broker) stopServing() {
	b.unsubscribe()
	b.inflight.Wait()
	close(b.workersDone)
}

func (b *Broker) unsubscribe() {
	b.mu.Lock()
	subs := b.subs
	b.subs = nil
	b.mu.Unlock()
	drain(subs, b.log, b.cfg.StoreTimeout+5*time.Second)
}

// drain drains subs: delivery stops and the messages already received
// finish, which it waits for up to wait. A failure other than a closed
// connection's is logged.
func drain(subs []*nats.Subscription, log *slog.Logger, wait time.Duration) {
	for _, s := range subs {
		// Drain stops delivery and lets messages already received finish.
		if err := s.Drain(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			log.Warn("drain subscription", "subject", s.Subject, "err", err)
		}
	}
	deadline := time.Now().Add(wait)
	for _, s := range subs {
		for s.IsValid() && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// job is one message for a worker.
type job struct {
	h   handler
	msg *nats.Msg
	// caller is the requester's NATS user on a [Plane] ("": declared).
	caller string
}

// dispatch runs h on the worker pool and sends its reply. Workers live for
// the whole Run, so each message is handled on a goroutine whose stack has
// already grown to what a decision needs (a fresh goroutine per message
// spent 5 % of the process's CPU growing stacks). A message goes to an idle
// worker, else to a new one while there are fewer than cfg.Workers; with
// every worker busy the NATS callback blocks, so bursts queue in the
// subscription's pending buffer instead of in goroutines.
func (b *Broker) dispatch(h handler) nats.MsgHandler {
	return func(msg *nats.Msg) { b.enqueue(job{h: h, msg: msg}) }
}

// enqueue hands j to a worker (dispatch).
func (b *Broker) enqueue(j job) {
	b.inflight.Add(1)
	select {
	case b.jobs <- j:
		return
	default:
	}
	if b.spawnWorker() {
		go b.worker(j)
		return
	}
	b.jobs <- j
}

// spawnWorker reserves a place for a new worker, if there is one.
func (b *Broker) spawnWorker() bool {
	for {
		n := b.workers.Load()
		if int(n) >= b.cfg.Workers {
			return false
		}
		if b.workers.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// worker handles j, then every job handed to it until Run has finished.
func (b *Broker) worker(j job) {
	defer b.workers.Add(-1)
	for {
		b.handle(j)
		select {
		case j = <-b.jobs:
		case <-b.workersDone:
			return
		}
	}
}

// handle runs one job and replies; a panic is logged and answered with an
// internal error instead of taking the replica down.
func (b *Broker) handle(j job) {
	defer b.inflight.Done()
	defer func() {
		if r := recover(); r != nil {
			b.log.Error("handler panic", "subject", j.msg.Subject, "panic", r)
			b.reply(j.msg, encodeError(messages.CodeInternal, "internal error"))
		}
	}()
	ctx := context.Background()
	if j.caller != "" {
		ctx = withCaller(ctx, j.caller)
	}
	if !j.h.unbounded {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 2*b.cfg.StoreTimeout+5*time.Second)
		defer cancel()
	}
	if out := j.h.fn(ctx, j.msg); out != nil {
		b.reply(j.msg, out)
	}
}

// storeCtx bounds one store call.
func (b *Broker) storeCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, b.cfg.StoreTimeout)
}

// storeRead calls read (a store method that takes nothing but the
// context) bounded by the store timeout.
func storeRead[T any](b *Broker, ctx context.Context, read func(context.Context) (T, error)) (T, error) {
	sctx, cancel := b.storeCtx(ctx)
	defer cancel()
	return read(sctx)
}

func (b *Broker) storeErr(op string, err error, attrs ...any) {
	b.m.StoreErrors.WithLabelValues(op).Inc()
	b.log.Error("store "+op+" failed", append(attrs, "err", err)...)
}

package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/tenancy"
	"github.com/signoff-dev/signoff/pkg/messages"
	"github.com/signoff-dev/signoff/pkg/session"
)

// TenantParts are what a tenant's broker needs of its own: its store (the
// tenant's Redis key prefix) and its policy.
type TenantParts struct {
	Store  session.Store
	Policy PolicySource
	// Close releases them once the tenant's broker has stopped (optional).
	Close func()
}

// PlaneConfig configures a [Plane].
type PlaneConfig struct {
	// Base is every tenant broker's configuration (connection, prefix,
	// timeouts, audit, metrics…); its Store and Policy are ignored: each
	// tenant's come from Open.
	Base Config
	// Tenants is the tenants file in force (required).
	Tenants *tenancy.File
	// Open builds a tenant's store and policy (required). It is called with
	// nil for the declared tenant (allow_declared).
	Open func(ctx context.Context, t *tenancy.Tenant) (TenantParts, error)
}

// Plane is a broker replica that serves many tenants (DESIGN §10): it
// subscribes once to every subject, reads each message's
// Nats-Request-Info once, refuses what the tenant's credentials may not do,
// and hands the rest to that tenant's [Broker], which has its own store,
// policy, modes and publish subjects. Reload changes the tenants without a
// restart.
type Plane struct {
	cfg  PlaneConfig
	log  *slog.Logger
	subj messages.Subjects

	mu      sync.RWMutex
	file    *tenancy.File
	tenants map[string]*planeTenant // by account; "" is the declared tenant
	runCtx  context.Context
	wg      sync.WaitGroup
	subs    []*nats.Subscription
}

// planeTenant is one running tenant broker.
type planeTenant struct {
	state  *tenantState
	b      *Broker
	routes []route
	stop   context.CancelFunc
	done   chan struct{}
}

// NewPlane checks cfg and returns a plane ready to Run.
func NewPlane(cfg PlaneConfig) (*Plane, error) {
	if cfg.Tenants == nil || cfg.Open == nil {
		return nil, errors.New("broker: plane: Tenants and Open are required")
	}
	base := cfg.Base
	base.setDefaults()
	if base.Conn == nil {
		return nil, errors.New("broker: plane: Conn is required")
	}
	subj, err := messages.NewSubjects(base.Prefix)
	if err != nil {
		return nil, fmt.Errorf("broker: plane: %w", err)
	}
	cfg.Base = base
	return &Plane{cfg: cfg, log: base.Logger, subj: subj, file: cfg.Tenants, tenants: map[string]*planeTenant{}}, nil
}

// Run starts every tenant's broker, serves until ctx is done, then stops
// taking messages and stops the tenants' brokers gracefully.
func (p *Plane) Run(ctx context.Context) error {
	p.mu.Lock()
	p.runCtx = ctx
	first := p.file
	p.mu.Unlock()
	if err := p.apply(ctx, first); err != nil {
		p.stopAll()
		return err
	}
	if err := p.subscribe(); err != nil {
		p.stopAll()
		return err
	}
	// p.file under the lock: a Reload may replace it already.
	p.mu.RLock()
	tenants, declared := len(p.file.Tenants), p.file.AllowDeclared
	p.mu.RUnlock()
	p.log.Info("plane serving", "tenants", tenants, "allow_declared", declared)
	<-ctx.Done()
	p.unsubscribe()
	p.stopAll()
	return nil
}

// Reload puts a new tenants file in force: tenants it adds start, tenants
// it drops stop, and the others take its identities, bots and admins at
// once. A tenant whose policy file changed keeps its policy until the
// broker restarts (it says so in the log). Reload is safe while Run serves.
func (p *Plane) Reload(f *tenancy.File) error {
	p.mu.RLock()
	ctx := p.runCtx
	p.mu.RUnlock()
	if ctx == nil {
		return errors.New("broker: plane: Reload before Run")
	}
	return p.apply(ctx, f)
}

// apply starts, updates and stops tenants so that f is in force.
func (p *Plane) apply(ctx context.Context, f *tenancy.File) error {
	want := map[string]*tenancy.Tenant{}
	for _, t := range f.Tenants {
		want[t.Account] = t
	}
	if f.AllowDeclared {
		want[""] = nil
	}
	p.mu.RLock()
	var start []string
	for acc, t := range want {
		pt := p.tenants[acc]
		switch {
		case pt == nil:
			start = append(start, acc)
		case t != nil && pt.state.id != t.ID:
			return fmt.Errorf("tenants file %s: account %s changes tenant id %q → %q: remove it, reload, then add it", f.Path, acc, pt.state.id, t.ID)
		}
	}
	p.mu.RUnlock()
	started := map[string]*planeTenant{}
	for _, acc := range start {
		pt, err := p.startTenant(ctx, acc, want[acc])
		if err != nil {
			for _, s := range started {
				s.stop()
				<-s.done
			}
			return err
		}
		started[acc] = pt
	}
	p.mu.Lock()
	var stopped []*planeTenant
	for acc, pt := range p.tenants {
		t, kept := want[acc]
		if !kept {
			stopped = append(stopped, pt)
			delete(p.tenants, acc)
			continue
		}
		if t != nil && pt.b.cfg.Policy != nil && p.file != nil {
			if old := p.file.ForAccount(acc); old != nil && old.Policy != t.Policy {
				p.log.Warn("tenant policy file changed: restart the broker to serve the new file", "tenant", t.ID)
			}
		}
		pt.state.t.Store(t)
	}
	for acc, pt := range started {
		p.tenants[acc] = pt
	}
	p.file = f
	p.mu.Unlock()
	for _, pt := range stopped {
		p.log.Info("tenant removed", "tenant", pt.state.id)
		pt.stop()
		<-pt.done
	}
	return nil
}

// startTenant starts a tenant's broker and waits until it serves.
func (p *Plane) startTenant(ctx context.Context, account string, t *tenancy.Tenant) (*planeTenant, error) {
	id := tenancy.DeclaredTenant
	if t != nil {
		id = t.ID
	}
	parts, err := p.cfg.Open(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("broker: tenant %q: %w", id, err)
	}
	st := &tenantState{account: account, id: id}
	st.t.Store(t)
	cfg := p.cfg.Base
	cfg.Store, cfg.Policy, cfg.tenant = parts.Store, parts.Policy, st
	cfg.Logger = p.log.With("tenant", id)
	b, err := New(cfg)
	if err != nil {
		if parts.Close != nil {
			parts.Close()
		}
		return nil, fmt.Errorf("broker: tenant %q: %w", id, err)
	}
	tctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	pt := &planeTenant{state: st, b: b, routes: b.routes(), stop: stop, done: make(chan struct{})}
	errc := make(chan error, 1)
	go func() {
		defer close(pt.done)
		if parts.Close != nil {
			defer parts.Close()
		}
		errc <- b.Run(tctx)
	}()
	for !b.ready.Load() {
		select {
		case err := <-errc:
			stop()
			return nil, fmt.Errorf("broker: tenant %q: %w", id, err)
		case <-ctx.Done():
			stop()
			<-pt.done
			return nil, ctx.Err()
		case <-sleepTick():
		}
	}
	p.log.Info("tenant serving", "tenant", id, "account", account)
	return pt, nil
}

func (p *Plane) stopAll() {
	p.mu.Lock()
	all := p.tenants
	p.tenants = map[string]*planeTenant{}
	p.mu.Unlock()
	for _, pt := range all {
		pt.stop()
	}
	for _, pt := range all {
		<-pt.done
	}
}

// Ready reports whether every tenant's broker serves (for /readyz).
func (p *Plane) Ready(ctx context.Context) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if len(p.subs) == 0 {
		return errors.New("plane is not serving")
	}
	for _, pt := range p.tenants {
		if err := pt.b.Ready(ctx); err != nil {
			return fmt.Errorf("tenant %q: %w", pt.state.id, err)
		}
	}
	return nil
}

package brokerd

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"

	"github.com/signoff-dev/signoff/internal/broker"
	"github.com/signoff-dev/signoff/internal/tenancy"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
	"github.com/signoff-dev/signoff/pkg/session/redisstore"
)

// runner is a broker replica: one [broker.Broker], or a [broker.Plane] of
// tenants with --tenants.
type runner interface {
	Run(ctx context.Context) error
	HTTPHandler() http.Handler
}

// newRunner returns the broker cfg describes, or with --tenants a plane
// whose tenants each get a broker of cfg with their own store (Redis key
// prefix signoff:t:<id>) and policy (the tenant's file, else pol).
func newRunner(ctx context.Context, o Options, log *slog.Logger, pol broker.PolicySource, cfg broker.Config) (runner, error) {
	if o.TenantsFile == "" {
		return broker.New(cfg)
	}
	f, err := tenancy.Load(o.TenantsFile)
	if err != nil {
		return nil, err
	}
	if f.AllowDeclared {
		log.Warn("tenants file allows declared requests (allow_declared): requests without credentials are served as tenant \"default\"; development only", "file", f.Path)
	}
	p, err := broker.NewPlane(broker.PlaneConfig{Base: cfg, Tenants: f, Open: tenantOpener(o, log, pol, cfg.Store)})
	if err != nil {
		return nil, err
	}
	go reloadTenantsOnHUP(ctx, o.TenantsFile, p, log)
	return p, nil
}

// tenantOpener builds a tenant's store and policy. The declared tenant
// uses the replica's own store.
func tenantOpener(o Options, log *slog.Logger, pol broker.PolicySource, declared session.Store) func(context.Context, *tenancy.Tenant) (broker.TenantParts, error) {
	return func(ctx context.Context, t *tenancy.Tenant) (broker.TenantParts, error) {
		if t == nil {
			return broker.TenantParts{Store: declared, Policy: pol}, nil
		}
		parts := broker.TenantParts{Policy: pol}
		var closers []func()
		if t.Policy != "" {
			w, err := policy.NewWatcher(t.Policy, log.With("tenant", t.ID), o.PolicyInterval)
			if err != nil {
				return parts, fmt.Errorf("policy: %w", err)
			}
			wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
			go func() { _ = w.Run(wctx) }()
			parts.Policy = w
			closers = append(closers, stop)
		}
		if o.Dev {
			parts.Store = memstore.New(memstore.Options{Retention: o.RedisRetention})
		} else {
			rs, err := redisstore.New(ctx, redisstore.Options{URL: o.RedisURL, Retention: o.RedisRetention, OpTimeout: o.StoreTimeout,
				KeyPrefix: redisstore.DefaultKeyPrefix + ":t:" + t.ID})
			if err != nil {
				for _, c := range closers {
					c()
				}
				return parts, fmt.Errorf("redis: %w", err)
			}
			parts.Store = rs
			closers = append(closers, func() { _ = rs.Close() })
		}
		parts.Close = func() {
			for _, c := range closers {
				c()
			}
		}
		return parts, nil
	}
}

// reloadTenantsOnHUP re-reads the tenants file on each SIGHUP; a bad file
// is logged and the tenants in force stay.
func reloadTenantsOnHUP(ctx context.Context, path string, p *broker.Plane, log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		f, err := tenancy.Load(path)
		if err == nil {
			err = p.Reload(f)
		}
		if err != nil {
			log.Error("tenants reload failed; the tenants in force stay", "err", err)
			continue
		}
		log.Info("tenants reloaded", "file", path, "tenants", len(f.Tenants))
	}
}

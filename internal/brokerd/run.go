package brokerd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/redis/go-redis/v9"

	"github.com/signoff-dev/signoff/internal/broker"
	"github.com/signoff-dev/signoff/internal/buildinfo"
	"github.com/signoff-dev/signoff/internal/escalator"
	"github.com/signoff-dev/signoff/internal/natsurl"
	"github.com/signoff-dev/signoff/internal/tracing"
	"github.com/signoff-dev/signoff/pkg/policy"
	"github.com/signoff-dev/signoff/pkg/session"
	"github.com/signoff-dev/signoff/pkg/session/memstore"
	"github.com/signoff-dev/signoff/pkg/session/redisstore"
)

// NewLogger returns the logger the options ask for, writing to w.
func NewLogger(o *Options, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.LogLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", o.LogLevel)
	}
	ho := &slog.HandlerOptions{Level: level, ReplaceAttr: humanDurations}
	if o.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	}
	return slog.New(slog.NewTextHandler(w, ho)), nil
}

// humanDurations writes durations as Go duration strings ("1.5s", "250ms")
// in both formats: slog's JSON handler would write nanoseconds, a number
// without its unit.
func humanDurations(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}

// redisLogger routes go-redis's own log lines (its connection pool's dial
// failures) through slog at debug level: the broker's own lines ("store
// create failed", /readyz) already surface every Redis error that matters,
// with the request it hit.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.DebugContext(ctx, strings.TrimSpace(fmt.Sprintf(format, v...)), "component", "go-redis")
}

// Run runs one broker replica (or, with Dev, the whole plane) until ctx is
// done, then shuts down gracefully within ShutdownGrace. It prints the
// addresses to connect to on out.
func Run(ctx context.Context, o Options, out io.Writer, log *slog.Logger) error {
	if err := o.Validate(); err != nil {
		return err
	}
	var cleanups []func()
	defer func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}()
	// Policy first: a bad policy file must stop the start, not a request.
	pol, watcher, pagers, err := loadPolicy(o, log)
	if err != nil {
		return err
	}
	approverKeys, err := broker.ParseApproverKeys(o.ApproverKeys)
	if err != nil {
		return fmt.Errorf("--approver-keys: %w", err)
	}
	// Subscriptions the NATS server refuses (permissions) make /readyz fail:
	// a replica that cannot receive requests is not ready, whatever its
	// connection says.
	refused := &subRefusals{}
	pl, err := openPlane(ctx, o, out, log, refused)
	if err != nil {
		return err
	}
	cleanups = append(cleanups, pl.cleanups...)
	tp, err := tracing.Setup(ctx, tracing.Config{Endpoint: o.OTLPEndpoint, Service: "signoff-broker", Version: buildinfo.String(), Logger: log})
	if err != nil {
		return err
	}
	cleanups = append(cleanups, tp.Flush)
	cfg := brokerConfig(o, log, pl, pol)
	cfg.Tracer, cfg.Pagers, cfg.ApproverKeys = tp.Tracer(), pagers, approverKeys
	b, err := newRunner(ctx, o, log, pol, cfg)
	if err != nil {
		return err
	}
	return serve(ctx, o, out, log, b, watcher, refused)
}

// loadPolicy reads the policy (the built-in one in dev mode without
// --policy) and builds its pagers: their keys are read now, so a missing
// one stops the start. A reload that changes them rebuilds them; one that
// cannot be built keeps the pagers in use (logged).
func loadPolicy(o Options, log *slog.Logger) (broker.PolicySource, *policy.Watcher, *escalator.Pagers, error) {
	var pol broker.PolicySource
	var watcher *policy.Watcher
	switch o.PolicyFile {
	case "", BuiltinPolicy:
		// Validate allows "" in dev mode only.
		pol = broker.StaticPolicy{P: policy.Default()}
		log.Info("using the built-in policy (--policy FILE to use yours)", "policy_version", pol.Current().Version())
	default:
		w, err := policy.NewWatcher(o.PolicyFile, log, o.PolicyInterval)
		if err != nil {
			return nil, nil, nil, err
		}
		watcher, pol = w, w
	}
	pagers, err := escalator.NewPagers(pol.Current().Pagers(), log)
	if err != nil {
		return nil, nil, nil, err
	}
	if watcher != nil {
		watcher.OnChange(func(p *policy.Policy) {
			if err := pagers.Update(p.Pagers()); err != nil {
				log.Error("the new policy's pagers cannot be built; the pagers in use stay", "err", err)
			}
		})
	}
	return pol, watcher, pagers, nil
}

// plane is what a replica connects to: NATS (and its audit connection, nil
// with NoAudit) and the store, with what closes them in order.
type plane struct {
	nc, auditNC *nats.Conn
	store       session.Store
	cleanups    []func()
}

// openPlane starts dev mode's embedded NATS and memory store, or connects
// to the production NATS and Redis.
func openPlane(ctx context.Context, o Options, out io.Writer, log *slog.Logger, refused *subRefusals) (*plane, error) {
	pl := &plane{}
	var err error
	if o.Dev {
		err = pl.openDev(o, out, log)
	} else {
		err = pl.openProduction(ctx, o, log, refused)
	}
	if err != nil {
		for i := len(pl.cleanups) - 1; i >= 0; i-- {
			pl.cleanups[i]()
		}
		return nil, err
	}
	pl.cleanups = append(pl.cleanups, func() { _ = pl.store.Close() }, func() { drain(pl.nc, log) })
	if pl.auditNC != nil {
		pl.cleanups = append(pl.cleanups, func() { drain(pl.auditNC, log) })
	}
	return pl, nil
}

func (pl *plane) openDev(o Options, out io.Writer, log *slog.Logger) error {
	srv, removeDir, err := startEmbeddedNATS(o, log)
	if err != nil {
		return err
	}
	pl.cleanups = append(pl.cleanups, func() { srv.Shutdown(); srv.WaitForShutdown(); removeDir() })
	connect := func(name string) (*nats.Conn, error) {
		nc, err := nats.Connect(srv.ClientURL(), nats.InProcessServer(srv), nats.Name(name), nats.MaxReconnects(-1))
		if err != nil {
			return nil, fmt.Errorf("connect to the embedded NATS server: %w", err)
		}
		return nc, nil
	}
	if pl.nc, err = connect(o.NATSName); err != nil {
		return err
	}
	if !o.NoAudit {
		if pl.auditNC, err = connect(o.NATSName + "-audit"); err != nil {
			pl.nc.Close()
			return err
		}
	}
	pl.store = memstore.New(memstore.Options{Retention: o.RedisRetention})
	fmt.Fprintf(out, "Signoff dev broker\n  NATS:    %s   (agents and approvers connect here)\n", srv.ClientURL())
	fmt.Fprintf(out, "  Open:    this NATS has no authorization: any local process can ask, publish questions and answer them (dev only; a production broker refuses a NATS without credentials unless --insecure-nats)\n")
	log.Warn("dev mode: the embedded NATS server has no authorization: any local process can ask, publish questions and answer them; use it on your own machine only",
		"nats", srv.ClientURL())
	return nil
}

func (pl *plane) openProduction(ctx context.Context, o Options, log *slog.Logger, refused *subRefusals) error {
	if !o.hasNATSCredentials() {
		log.Warn("--insecure-nats: connecting to NATS without credentials; whoever reaches the NATS servers can answer questions and administer the plane unless their authorization stops them",
			"nats", o.NATSURL)
	}
	var err error
	if pl.nc, err = connectNATS(o, o.NATSName, log, refused); err != nil {
		return err
	}
	if !o.NoAudit {
		if pl.auditNC, err = connectNATS(o, o.NATSName+"-audit", log, refused); err != nil {
			pl.nc.Close()
			return err
		}
	}
	redis.SetLogger(redisLogger{log})
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	pl.store, err = redisstore.New(sctx, redisstore.Options{URL: o.RedisURL, Retention: o.RedisRetention, OpTimeout: o.StoreTimeout})
	cancel()
	if err != nil {
		pl.nc.Close()
		if pl.auditNC != nil {
			pl.auditNC.Close()
		}
		return fmt.Errorf("redis: %w", err)
	}
	return nil
}

// brokerConfig is the broker's config from the options and the plane.
func brokerConfig(o Options, log *slog.Logger, pl *plane, pol broker.PolicySource) broker.Config {
	replica := o.Replica
	if replica == "" {
		host, _ := os.Hostname()
		replica = host + "-" + strconv.Itoa(os.Getpid())
	}
	maxBytes := o.MaxBytes
	if maxBytes == 0 {
		// Follow the server: a request up to half its max_payload leaves
		// room for the question that embeds it.
		maxBytes = int(pl.nc.MaxPayload() / 2)
	}
	return broker.Config{
		Conn:             pl.nc,
		AuditConn:        pl.auditNC,
		Store:            pl.store,
		Policy:           pol,
		Logger:           log,
		Prefix:           o.Prefix,
		Replica:          replica,
		MaxMessageBytes:  maxBytes,
		Workers:          o.Workers,
		StoreTimeout:     o.StoreTimeout,
		ReapInterval:     o.ReapInterval,
		DisableAudit:     o.NoAudit,
		AuditMode:        broker.AuditMode(o.Audit),
		AuditAckTimeout:  o.AuditTimeout,
		AuditDedupWindow: o.AuditDedup,
		AuditRetryLimit:  o.AuditRetryMax,
		AuditReplicas:    o.AuditReplicas,
		OpenTeams:        o.Dev,
		WebURL:           o.WebURL,

		RequireSignedResponses: o.RequireSigned,
	}
}

// serve runs b, the policy watcher and the HTTP server until ctx is done,
// then shuts them down within ShutdownGrace.
func serve(ctx context.Context, o Options, out io.Writer, log *slog.Logger, b runner, watcher *policy.Watcher, refused *subRefusals) error {
	runCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	var wg sync.WaitGroup
	if watcher != nil {
		wg.Add(1)
		go func() { defer wg.Done(); _ = watcher.Run(runCtx) }()
	}
	var httpSrv *http.Server
	if o.HTTPAddr != "" {
		ln, err := net.Listen("tcp", o.HTTPAddr)
		if err != nil {
			return fmt.Errorf("--http %s: %w", o.HTTPAddr, err)
		}
		httpSrv = &http.Server{Handler: refused.gate(b.HTTPHandler()), ReadHeaderTimeout: 5 * time.Second}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := httpSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("http server", "err", err)
			}
		}()
		fmt.Fprintf(out, "  HTTP:    http://%s/healthz  /readyz  /metrics\n", ln.Addr())
	}
	errc := make(chan error, 1)
	go func() { errc <- b.Run(runCtx) }()
	select {
	case err := <-errc: // failed to start
		stop()
		if httpSrv != nil {
			_ = httpSrv.Close()
		}
		wg.Wait()
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", o.ShutdownGrace)
	stop()
	var runErr error
	select {
	case runErr = <-errc:
	case <-time.After(o.ShutdownGrace):
		runErr = fmt.Errorf("shutdown took longer than %s; in-flight requests were abandoned (agents retry them)", o.ShutdownGrace)
	}
	if httpSrv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = httpSrv.Shutdown(sctx)
		cancel()
	}
	wg.Wait()
	return runErr
}

// startEmbeddedNATS starts dev mode's NATS server. removeDir deletes the
// JetStream directory when startEmbeddedNATS created it (no --data-dir);
// call it after the server has shut down.
func startEmbeddedNATS(o Options, log *slog.Logger) (srv *server.Server, removeDir func(), err error) {
	host, portStr, err := net.SplitHostPort(o.Listen)
	if err != nil {
		return nil, nil, fmt.Errorf("--listen %q: %w", o.Listen, err)
	}
	port, err := strconv.Atoi(portStr)
	if err != nil || port < 0 {
		return nil, nil, fmt.Errorf("--listen %q: bad port", o.Listen)
	}
	if port == 0 {
		port = server.RANDOM_PORT // nats-server reads 0 as its default port 4222
	} else if err := portFree(o.Listen); err != nil {
		// nats-server reports a taken port only by never becoming ready;
		// a second `make run` should hear why at once, not in 10 s.
		return nil, nil, fmt.Errorf("dev mode: cannot listen on %s (--listen): %w; is another broker --dev (make run) running? A second one takes free ports with --listen 127.0.0.1:0 --http 127.0.0.1:0", o.Listen, err)
	}
	dir := o.DataDir
	removeDir = func() {}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "signoff-dev-*"); err != nil {
			return nil, nil, fmt.Errorf("dev mode: JetStream directory: %w", err)
		}
		removeDir = func() {
			if err := os.RemoveAll(dir); err != nil {
				log.Warn("could not remove the dev JetStream directory", "dir", dir, "err", err)
			}
		}
	}
	srv, err = server.NewServer(&server.Options{
		ServerName: "signoff-dev",
		Host:       host,
		Port:       port,
		JetStream:  true,
		StoreDir:   dir,
		NoSigs:     true,
		NoLog:      true,
	})
	if err != nil {
		removeDir()
		return nil, nil, fmt.Errorf("embedded NATS server: %w", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		srv.WaitForShutdown()
		removeDir()
		return nil, nil, fmt.Errorf("embedded NATS server did not start on %s (port in use?)", o.Listen)
	}
	log.Info("embedded NATS server started", "url", srv.ClientURL(), "jetstream_dir", dir)
	return srv, removeDir, nil
}

// portFree reports whether addr can be listened on now, by listening and
// closing at once.
func portFree(addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Err != nil {
			return op.Err
		}
		return err
	}
	return l.Close()
}

// drain lets a connection's pending messages go out, then closes it.
func drain(nc *nats.Conn, log *slog.Logger) {
	if err := nc.Drain(); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
		log.Warn("drain NATS connection", "name", nc.Opts.Name, "err", err)
		nc.Close()
		return
	}
	for !nc.IsClosed() {
		time.Sleep(10 * time.Millisecond)
	}
}

// connectNATS opens one connection with the configured credentials. The
// broker opens two: one for requests and replies, one for its JetStream
// traffic (docs/OPERATIONS.md).
func connectNATS(o Options, name string, log *slog.Logger, refused *subRefusals) (*nats.Conn, error) {
	opts := []nats.Option{
		nats.Name(name),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(500 * time.Millisecond),
		nats.DisconnectErrHandler(func(nc *nats.Conn, err error) {
			// A clean close or drain (shutdown) disconnects with no error.
			if err != nil {
				log.Warn("NATS disconnected; reconnecting", "name", nc.Opts.Name, "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			// The subscriptions were sent again: refused ones are reported
			// again if the permissions still refuse them.
			refused.clear(nc.Opts.Name)
			log.Info("NATS reconnected", "url", nc.ConnectedUrlRedacted())
		}),
		nats.ErrorHandler(func(nc *nats.Conn, s *nats.Subscription, err error) {
			subject := ""
			if s != nil {
				subject = s.Subject
			}
			refused.note(nc.Opts.Name, err)
			log.Error("NATS error", "subject", subject, "err", err)
		}),
	}
	opts = append(opts, natsurl.Liveness(cmp.Or(o.NATSPingInterval, DefaultNATSPingInterval), cmp.Or(o.NATSMaxPingsOut, DefaultNATSMaxPingsOut))...)
	auth, err := natsurl.Auth{Creds: o.NATSCred, NKeySeed: o.NATSNKey, User: o.NATSUser, Password: o.NATSPass,
		CA: o.NATSCA, Cert: o.NATSCert, Key: o.NATSKey}.Options()
	if err != nil {
		return nil, fmt.Errorf("--nats-nkey: %w", err)
	}
	opts = append(opts, auth...)
	nc, err := nats.Connect(o.NATSURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to NATS %s: %w", natsurl.Redact(o.NATSURL), err)
	}
	return nc, nil
}

// subRefusals records the subscriptions NATS refused, per connection.
type subRefusals struct {
	mu  sync.Mutex
	err map[string]error // connection name → the refusal
}

// note records err when it is a refused subscription.
func (r *subRefusals) note(conn string, err error) {
	if !errors.Is(err, nats.ErrPermissionViolation) || !strings.Contains(err.Error(), "Subscription to") {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		r.err = map[string]error{}
	}
	r.err[conn] = err
}

func (r *subRefusals) clear(conn string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.err, conn)
}

// check returns a refusal, if any.
func (r *subRefusals) check() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.err))
	for name := range r.err {
		names = append(names, name)
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	return fmt.Errorf("NATS refused a subscription of connection %s (check the broker user's permissions and --prefix): %w", names[0], r.err[names[0]])
}

// gate makes GET /readyz answer 503 while a subscription is refused, and
// hands everything else to next.
func (r *subRefusals) gate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/readyz" {
			if err := r.check(); err != nil {
				w.Header().Set("Content-Type", "text/plain; charset=utf-8")
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = w.Write([]byte("not ready: " + err.Error() + "\n"))
				return
			}
		}
		next.ServeHTTP(w, req)
	})
}

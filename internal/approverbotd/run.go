package approverbotd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"

	"github.com/signoff-dev/signoff/internal/approverbot"
	// The built-in channels register themselves.
	_ "github.com/signoff-dev/signoff/internal/approverbot/channels"
)

// shutdownGrace bounds the graceful part of a shutdown: HTTP requests in
// flight, then draining NATS.
const shutdownGrace = 10 * time.Second

// UsageError is a problem with the config or the environment found while
// starting (a channel refusing its settings, a port in use): the command
// exits with status 2 for it.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Run connects, serves until ctx is done or a part fails, then shuts down
// gracefully. stdin and stdout are the terminal channel's; tracer (nil:
// off) makes the spans of the responses sent (docs/OPERATIONS.md
// "Traces").
func Run(ctx context.Context, cfg *approverbot.Config, stdin io.Reader, stdout io.Writer, log *slog.Logger, tracer trace.Tracer) error {
	var bot atomic.Pointer[approverbot.Bot]
	nc, closed, err := connectNATS(cfg.NATS, log, func() {
		if b := bot.Load(); b != nil {
			b.Reconnected()
		}
	}, func(s *nats.Subscription, err error) {
		if b := bot.Load(); b != nil {
			b.NATSError(s, err)
		}
	})
	if err != nil {
		return err
	}
	defer drainNATS(nc, closed, log)

	b, channels, err := newBot(cfg, nc, stdin, stdout, log, tracer)
	if err != nil {
		return err
	}
	bot.Store(b)
	ln, err := net.Listen("tcp", cfg.HTTP.Listen)
	if err != nil {
		return UsageError{fmt.Errorf("http.listen: %w", err)}
	}
	srv := &http.Server{
		Handler:           httpMux(cfg, nc, b, channels, log),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	names := make([]string, len(channels))
	for i, ch := range channels {
		names[i] = ch.Name()
	}
	log.Info("approver bot started", "teams", cfg.Teams, "channels", names,
		"http", ln.Addr().String(), "nats", nc.ConnectedUrlRedacted())
	return serve(ctx, b, srv, ln, log)
}

// newBot builds the channels and the bot, which signs its responses with
// the key that logs it in (when it has one), so brokers started with
// --require-signed-responses accept them.
func newBot(cfg *approverbot.Config, nc *nats.Conn, stdin io.Reader, stdout io.Writer, log *slog.Logger, tracer trace.Tracer) (*approverbot.Bot, []approverbot.Channel, error) {
	channels, err := approverbot.Build(cfg, log, stdin, stdout)
	if err != nil {
		return nil, nil, UsageError{err}
	}
	opts := approverbot.Options{Logger: log, Tracer: tracer}
	if cfg.NATS.NKeySeed != "" {
		signer, err := approverbot.NewNKeySigner(cfg.NATS.NKeySeed)
		if err != nil {
			return nil, nil, UsageError{err}
		}
		opts.Signer = signer
		log.Info("signing responses", "key_id", signer.PublicKey())
	}
	b, err := approverbot.New(cfg, nc, channels, opts)
	if err != nil {
		return nil, nil, UsageError{err}
	}
	return b, channels, nil
}

// httpMux serves the channels' pages and the operations endpoints.
func httpMux(cfg *approverbot.Config, nc *nats.Conn, b *approverbot.Bot, channels []approverbot.Channel, log *slog.Logger) *http.ServeMux {
	mux := http.NewServeMux()
	for _, ch := range channels {
		if h, ok := ch.(approverbot.HTTPChannel); ok {
			h.Register(mux)
		}
	}
	mux.HandleFunc("GET /healthz", healthz)
	mux.Handle("GET /readyz", opsOnly(cfg.HTTP.OpsToken, readyz(nc, b, channels)))
	mux.Handle("GET /metrics", opsOnly(cfg.HTTP.OpsToken, promhttp.HandlerFor(b.Metrics().Registry, promhttp.HandlerOpts{})))
	if _, public := cfg.Channels["web"]; public && cfg.HTTP.OpsToken == "" {
		log.Info("the web page's listener also serves /readyz and /metrics to anyone who reaches it: set http.ops_token to require a token for them",
			"http", cfg.HTTP.Listen)
	}
	return mux
}

// serve runs the bot and the HTTP server until ctx is done or either stops
// on its own (a failed channel, a dead listener), then stops the rest.
func serve(ctx context.Context, b *approverbot.Bot, srv *http.Server, ln net.Listener, log *slog.Logger) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	botDone := make(chan error, 1)
	go func() { botDone <- b.Run(ctx) }()
	httpDone := make(chan error, 1)
	go func() {
		err := srv.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		} else if err != nil {
			err = fmt.Errorf("http server: %w", err)
		}
		httpDone <- err
	}()
	var botErr, httpErr error
	botOver, httpOver := false, false
	select {
	case <-ctx.Done():
	case botErr = <-botDone:
		botOver = true
	case httpErr = <-httpDone:
		httpOver = true
	}
	log.Info("shutting down")
	// Channels first: the web page ends its event streams, so the HTTP
	// server's connections go idle and Shutdown can finish.
	cancel()
	sctx, scancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer scancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("HTTP connections still open at the shutdown deadline; closing them", "err", err)
		_ = srv.Close()
	}
	if !botOver {
		botErr = <-botDone
	}
	if !httpOver {
		httpErr = <-httpDone
	}
	return errors.Join(botErr, httpErr)
}

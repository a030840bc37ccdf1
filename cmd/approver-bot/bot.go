package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/approverbot/slack"
	"github.com/signoff-dev/signoff/internal/approverbot/telegram"
	"github.com/signoff-dev/signoff/internal/approverbot/terminal"
	"github.com/signoff-dev/signoff/internal/approverbot/web"
	"github.com/signoff-dev/signoff/internal/approverbot/webhook"
)

// shutdownGrace bounds the graceful part of a shutdown: HTTP requests in
// flight, then draining NATS.
const shutdownGrace = 10 * time.Second

// runBot connects, serves until ctx is done or a part fails, then shuts
// down gracefully.
func runBot(ctx context.Context, cfg *approverbot.Config, stdin io.Reader, stdout io.Writer, log *slog.Logger) error {
	var bot atomic.Pointer[approverbot.Bot]
	nc, closed, err := connectNATS(cfg.NATS, log, func() {
		if b := bot.Load(); b != nil {
			b.Reconnected()
		}
	})
	if err != nil {
		return err
	}
	defer drainNATS(nc, closed, log)

	channels, err := buildChannels(cfg, stdin, stdout, log)
	if err != nil {
		return usageError{err}
	}
	opts := approverbot.Options{Logger: log}
	if cfg.NATS.NKeySeed != "" {
		// The key that logs the bot in also signs its responses, so brokers
		// started with --require-signed-responses accept them.
		signer, err := approverbot.NewNKeySigner(cfg.NATS.NKeySeed)
		if err != nil {
			return usageError{err}
		}
		opts.Signer = signer
		log.Info("signing responses", "key_id", signer.PublicKey())
	}
	b, err := approverbot.New(cfg, nc, channels, opts)
	if err != nil {
		return usageError{err}
	}
	bot.Store(b)

	mux := http.NewServeMux()
	names := make([]string, len(channels))
	for i, ch := range channels {
		names[i] = ch.Name()
		if h, ok := ch.(approverbot.HTTPChannel); ok {
			h.Register(mux)
		}
	}
	mux.HandleFunc("GET /healthz", healthz)
	mux.Handle("GET /readyz", readyz(nc, channels))
	ln, err := net.Listen("tcp", cfg.HTTP.Listen)
	if err != nil {
		return usageError{fmt.Errorf("http.listen: %w", err)}
	}
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("approver bot started", "teams", cfg.Teams, "channels", names,
		"http", ln.Addr().String(), "nats", nc.ConnectedUrlRedacted())

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

	// Wait for a signal or for a part to stop on its own (a failed
	// channel, a dead listener), then stop the rest.
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

// buildChannels creates the channels the config enables, in a fixed order.
func buildChannels(cfg *approverbot.Config, stdin io.Reader, stdout io.Writer, log *slog.Logger) ([]approverbot.Channel, error) {
	var chs []approverbot.Channel
	if cfg.Terminal != nil {
		chs = append(chs, terminal.New(stdin, stdout, terminal.Options{Logger: log.With("channel", "terminal")}))
	}
	if cfg.Web != nil {
		ch, err := web.New(cfg, web.Options{Logger: log.With("channel", "web")})
		if err != nil {
			return nil, err
		}
		chs = append(chs, ch)
	}
	if cfg.Slack != nil {
		ch, err := slack.New(cfg, slack.Options{Logger: log.With("channel", "slack")})
		if err != nil {
			return nil, err
		}
		chs = append(chs, ch)
	}
	if cfg.Telegram != nil {
		ch, err := telegram.New(cfg, telegram.Options{Logger: log.With("channel", "telegram")})
		if err != nil {
			return nil, err
		}
		chs = append(chs, ch)
	}
	if cfg.Webhook != nil {
		ch, err := webhook.New(cfg, webhook.Options{Logger: log.With("channel", "webhook")})
		if err != nil {
			return nil, err
		}
		chs = append(chs, ch)
	}
	return chs, nil
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

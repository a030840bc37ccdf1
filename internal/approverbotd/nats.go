package approverbotd

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/approverbot"
	"github.com/signoff-dev/signoff/internal/natsurl"
)

// connectNATS connects as c says. It reconnects forever (a bot outlives
// NATS restarts) and calls onReconnect after each reconnect, so the bot
// replays what it missed, and onError with each asynchronous error (a
// refused subscription makes the bot not ready). closed is closed when the
// connection is.
func connectNATS(c approverbot.NATSConfig, log *slog.Logger, onReconnect func(), onError func(*nats.Subscription, error)) (nc *nats.Conn, closed <-chan struct{}, err error) {
	opts, err := natsOptions(c)
	if err != nil {
		return nil, nil, UsageError{err}
	}
	done := make(chan struct{})
	opts = append(opts,
		nats.MaxReconnects(-1),
		nats.ReconnectWait(time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				log.Warn("NATS connection lost; reconnecting", "err", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			log.Info("NATS reconnected; replaying open questions", "nats", nc.ConnectedUrlRedacted())
			onReconnect()
		}),
		nats.ErrorHandler(func(_ *nats.Conn, s *nats.Subscription, err error) {
			subject := ""
			if s != nil {
				subject = s.Subject
			}
			log.Warn("NATS error", "subject", subject, "err", err)
			onError(s, err)
		}),
		nats.ClosedHandler(func(*nats.Conn) { close(done) }),
	)
	nc, err = nats.Connect(c.URL, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to NATS at %s (is the plane running?): %w", natsurl.Redact(c.URL), err)
	}
	return nc, done, nil
}

// Defaults of nats.ping_interval and nats.max_pings_out: a frozen NATS
// server is left in about 15 s (nats.go's own defaults take minutes).
const (
	defaultPingInterval = 5 * time.Second
	defaultMaxPingsOut  = 2
)

// natsOptions turns the config's credentials and TLS files into options.
func natsOptions(c approverbot.NATSConfig) ([]nats.Option, error) {
	if c.PingInterval < 0 {
		return nil, fmt.Errorf("nats.ping_interval %s: must not be negative (0: the default, %s)", c.PingInterval, defaultPingInterval)
	}
	if c.MaxPingsOut < 0 {
		return nil, fmt.Errorf("nats.max_pings_out %d: must not be negative (0: the default, %d)", c.MaxPingsOut, defaultMaxPingsOut)
	}
	opts := []nats.Option{
		nats.Name(c.Name),
	}
	opts = append(opts, natsurl.Liveness(cmp.Or(c.PingInterval, defaultPingInterval), cmp.Or(c.MaxPingsOut, defaultMaxPingsOut))...)
	if c.Creds != "" && c.NKeySeed != "" {
		return nil, errors.New("nats: set creds or nkey_seed, not both (a creds file holds its own nkey)")
	}
	if c.Password != "" && c.User == "" {
		return nil, errors.New("nats: password is set without user")
	}
	if (c.Cert == "") != (c.Key == "") {
		return nil, errors.New("nats: cert and key go together (client TLS certificate and its private key)")
	}
	auth, err := natsurl.Auth{Creds: c.Creds, NKeySeed: c.NKeySeed, User: c.User, Password: c.Password,
		CA: c.CA, Cert: c.Cert, Key: c.Key, InboxPrefix: c.InboxPrefix}.Options()
	if err != nil {
		return nil, fmt.Errorf("nats.nkey_seed: %w", err)
	}
	opts = append(opts, auth...)
	if err := checkCredentials(c); err != nil {
		return nil, err
	}
	return opts, nil
}

// checkCredentials refuses a connection without credentials to a NATS
// server that is not on this machine, unless nats.insecure says so on
// purpose: a bot on a NATS that lets it in unauthenticated is on a plane
// where anyone may answer questions. A server on this machine's loopback
// address is the dev plane (broker --dev, `make run`), whose embedded NATS
// has no users at all.
func checkCredentials(c approverbot.NATSConfig) error {
	if c.Insecure || c.Creds != "" || c.NKeySeed != "" || c.User != "" || c.Cert != "" {
		return nil
	}
	for _, raw := range strings.Split(c.URL, ",") {
		raw = strings.TrimSpace(raw)
		if !strings.Contains(raw, "://") {
			raw = "nats://" + raw // nats.go takes host:port as well
		}
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return fmt.Errorf("nats.url %q: not a URL (nats://host:4222)", natsurl.Redact(raw))
		}
		if u.User != nil && u.User.Username() != "" {
			return nil // a user or a token in the URL
		}
		if !isLoopback(u.Hostname()) {
			return fmt.Errorf("nats: no credentials (creds, nkey_seed, user or cert) for %s, which is not on this machine: "+
				"on a NATS that lets a bot in without them anyone may answer questions. Give the bot its key "+
				"(deploy/nats: make keys, then nats.nkey_seed), or set nats.insecure: true to connect without on purpose", u.Host)
		}
	}
	return nil
}

// isLoopback reports whether host names this machine's loopback interface.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// drainNATS drains the connection (pending messages are delivered and
// flushed) and waits for it to close, within shutdownGrace.
func drainNATS(nc *nats.Conn, closed <-chan struct{}, log *slog.Logger) {
	if err := nc.Drain(); err != nil {
		nc.Close()
		return
	}
	select {
	case <-closed:
	case <-time.After(shutdownGrace):
		log.Warn("NATS did not drain in time; closing")
		nc.Close()
	}
}

package testenv

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// natsReadyTimeout bounds how long an embedded server may take to accept
// connections.
const natsReadyTimeout = 10 * time.Second

// NATSOption changes the options of an embedded NATS server before it
// starts (accounts, users, authorization, limits…).
type NATSOption func(*server.Options)

// WithoutJetStream starts the server without JetStream.
func WithoutJetStream() NATSOption {
	return func(o *server.Options) { o.JetStream = false }
}

// NATSServer is an embedded nats-server started for one test. Shutdown and
// Restart must be called from the test's goroutine; the other methods are
// safe for concurrent use.
type NATSServer struct {
	t    testing.TB
	opts server.Options

	mu  sync.Mutex
	srv *server.Server
}

// NATS starts an embedded NATS server on a free loopback port, with
// JetStream storing into a temporary directory, no logging and no signal
// handlers; it waits until the server accepts connections and registers its
// shutdown with t.Cleanup.
func NATS(t testing.TB, opts ...NATSOption) *NATSServer {
	t.Helper()
	o := server.Options{
		Host:      "127.0.0.1",
		Port:      -1,
		NoLog:     true,
		NoSigs:    true,
		JetStream: true,
		StoreDir:  t.TempDir(),
	}
	for _, fn := range opts {
		fn(&o)
	}
	s := &NATSServer{t: t, opts: o}
	t.Cleanup(s.shutdown)
	// Restart must come back on the same port, so the port is chosen here
	// (away from the ports outgoing connections take) rather than by the
	// server; another listener may still take it first: try a few.
	const attempts = 3
	auto := s.opts.Port == -1
	for i := 1; ; i++ {
		if auto {
			p, err := freePort()
			if err != nil {
				t.Fatalf("testenv: nats: find a free port: %v", err)
			}
			s.opts.Port = p
		}
		err := s.start()
		if err == nil {
			return s
		}
		if !auto || i == attempts || !errors.Is(err, errListen) {
			t.Fatalf("testenv: %v", err)
		}
	}
}

func (s *NATSServer) start() error {
	o := s.opts // the server keeps a pointer; give each run its own copy
	srv, err := server.NewServer(&o)
	if err != nil {
		return fmt.Errorf("nats: %v", err)
	}
	log := &errorLog{}
	srv.SetLogger(log, false, false)
	go srv.Start()
	if !srv.ReadyForConnections(natsReadyTimeout) {
		srv.Shutdown()
		return log.notReady(0)
	}
	s.mu.Lock()
	s.srv = srv
	s.mu.Unlock()
	return nil
}

// ClientURL returns the nats:// URL clients connect to. It stays the same
// across Restart.
func (s *NATSServer) ClientURL() string {
	return "nats://" + net.JoinHostPort(s.opts.Host, strconv.Itoa(s.opts.Port))
}

// Connect connects to the server with opts and registers the connection's
// Close with t.Cleanup. It fails the test when the connection fails.
func (s *NATSServer) Connect(t testing.TB, opts ...nats.Option) *nats.Conn {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL(), opts...)
	if err != nil {
		t.Fatalf("testenv: nats connect %s: %v", s.ClientURL(), err)
	}
	t.Cleanup(nc.Close)
	return nc
}

// Shutdown stops the server and waits until it is down; clients see a
// disconnect. Restart brings it back.
func (s *NATSServer) Shutdown() {
	s.t.Helper()
	if !s.running() {
		s.t.Fatalf("testenv: nats Shutdown: the server is not running")
	}
	s.shutdown()
}

// Restart starts a shut-down server again on the same port with the same
// JetStream directory, so streams and their messages survive.
func (s *NATSServer) Restart() {
	s.t.Helper()
	if s.running() {
		s.t.Fatalf("testenv: nats Restart: the server is running")
	}
	if err := s.start(); err != nil {
		s.t.Fatalf("testenv: %v", err)
	}
}

// running reports whether the server is up (not shut down).
func (s *NATSServer) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv != nil
}

func (s *NATSServer) shutdown() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		srv.Shutdown()
		srv.WaitForShutdown()
	}
}

// errorLog is an embedded server's logger that keeps only its errors, to
// say why the server did not become ready.
type errorLog struct {
	mu   sync.Mutex
	errs []string
}

func (l *errorLog) Noticef(string, ...any) {}
func (l *errorLog) Warnf(string, ...any)   {}
func (l *errorLog) Debugf(string, ...any)  {}
func (l *errorLog) Tracef(string, ...any)  {}

// Errorf and Fatalf keep the message; a server's Fatalf does not exit the
// test binary.
func (l *errorLog) Errorf(format string, a ...any) { l.keep(format, a) }
func (l *errorLog) Fatalf(format string, a ...any) { l.keep(format, a) }

func (l *errorLog) keep(format string, a []any) {
	l.mu.Lock()
	l.errs = append(l.errs, fmt.Sprintf(format, a...))
	l.mu.Unlock()
}

// notReady is the error of server i that did not accept connections in
// time, with what it logged; it wraps errListen when a port was taken.
func (l *errorLog) notReady(i int) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	err := fmt.Errorf("nats server %d not ready within %v (its errors: %q)", i, natsReadyTimeout, l.errs)
	for _, e := range l.errs {
		if strings.HasPrefix(e, "Error listening") {
			return fmt.Errorf("%w: %w", errListen, err)
		}
	}
	return err
}

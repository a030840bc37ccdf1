package natsurl_test

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/natsurl"
	"github.com/signoff-dev/signoff/internal/testenv"
)

// A busy connection to a frozen server (SIGSTOP: it reads nothing, so the
// socket's buffers fill and writes block) still leaves it within the ping
// budget: the write deadline ends the blocked write. With nats.go's default
// one-minute write deadline the blocked flush holds the connection's lock
// and the ping timer never declares it stale.
func TestLivenessLeavesAFrozenServerWhileWritesBlock(t *testing.T) {
	ns := testenv.NATS(t, testenv.WithoutJetStream())
	fr := testenv.NewFreezer(t, strings.TrimPrefix(ns.ClientURL(), "nats://"))
	var (
		mu      sync.Mutex
		lostErr error
	)
	lost := make(chan struct{}, 1)
	opts := append(natsurl.Liveness(200*time.Millisecond, 2),
		nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			mu.Lock()
			lostErr = err
			mu.Unlock()
			select {
			case lost <- struct{}{}:
			default:
			}
		}))
	nc, err := nats.Connect("nats://"+fr.Addr(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if want := 200 * time.Millisecond; nc.Opts.FlusherTimeout != want || !nc.Opts.ReconnectOnFlusherError {
		t.Fatalf("write deadline %s, reconnect on a failed flush %t; want the ping interval %s and true",
			nc.Opts.FlusherTimeout, nc.Opts.ReconnectOnFlusherError, want)
	}

	fr.Freeze()
	frozenAt := time.Now()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		payload := make([]byte, 64<<10)
		for {
			select {
			case <-stop:
				return
			default:
			}
			// Blocks once the frozen proxy stops reading and the socket's
			// buffers are full; fails or is buffered while reconnecting.
			_ = nc.Publish("liveness.fill", payload)
		}
	}()
	select {
	case <-lost:
	case <-time.After(20 * time.Second):
		t.Fatal("a busy connection to a frozen server was not left within 20 s (nats.go's default write deadline is one minute)")
	}
	mu.Lock()
	defer mu.Unlock()
	if lostErr == nil {
		t.Fatal("the connection was left without an error")
	}
	t.Logf("left the frozen server after %s: %v", time.Since(frozenAt).Round(time.Millisecond), lostErr)
	if !errors.Is(lostErr, nats.ErrStaleConnection) && !strings.Contains(lostErr.Error(), "timeout") {
		t.Errorf("left with %v, want a stale connection or a write timeout", lostErr)
	}
}

func TestLivenessDefaults(t *testing.T) {
	if opts := natsurl.Liveness(0, 0); opts != nil {
		t.Errorf("Liveness(0, 0) = %d options, want none (nats.go's defaults)", len(opts))
	}
	var o nats.Options
	for _, opt := range natsurl.Liveness(0, 3) {
		if err := opt(&o); err != nil {
			t.Fatal(err)
		}
	}
	if o.PingInterval != nats.DefaultPingInterval || o.MaxPingsOut != 3 || o.FlusherTimeout != nats.DefaultPingInterval || !o.ReconnectOnFlusherError {
		t.Errorf("Liveness(0, 3): ping %s, %d out, write deadline %s, reconnect on a failed flush %t; want nats.go's interval, 3, one interval, true",
			o.PingInterval, o.MaxPingsOut, o.FlusherTimeout, o.ReconnectOnFlusherError)
	}
}

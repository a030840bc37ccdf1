package testenv

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Freezer is a TCP proxy in front of a server that can be frozen: while
// frozen it forwards nothing either way and keeps every connection open,
// as a SIGSTOPped server or a silent network partition would. New
// connections are accepted and frozen too.
type Freezer struct {
	ln     net.Listener
	target string
	frozen atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
}

// NewFreezer listens on a free loopback port and forwards to target until
// the test ends.
func NewFreezer(t testing.TB, target string) *Freezer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &Freezer{ln: ln, target: target}
	go f.accept()
	t.Cleanup(f.close)
	return f
}

// Addr is the proxy's host:port.
func (f *Freezer) Addr() string { return f.ln.Addr().String() }

// Freeze stops all forwarding; Thaw resumes it.
func (f *Freezer) Freeze() { f.frozen.Store(true) }

// Thaw resumes forwarding.
func (f *Freezer) Thaw() { f.frozen.Store(false) }

func (f *Freezer) accept() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", f.target)
		if err != nil {
			_ = c.Close()
			continue
		}
		f.mu.Lock()
		f.conns = append(f.conns, c, up)
		f.mu.Unlock()
		go f.pipe(up, c)
		go f.pipe(c, up)
	}
}

// pipe copies src to dst, holding what it read while frozen.
func (f *Freezer) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		for f.frozen.Load() {
			time.Sleep(5 * time.Millisecond)
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				_ = dst.Close()
			}
			return
		}
	}
}

func (f *Freezer) close() {
	_ = f.ln.Close()
	f.frozen.Store(false)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		_ = c.Close()
	}
}

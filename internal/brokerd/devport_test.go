package brokerd

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// A second dev broker on a taken port says so, with the way out, before
// starting the embedded server (which would only fail its 10 s readiness
// wait, "did not start").
func TestADevBrokerOnATakenPortSaysSoAtOnce(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	o := Options{Dev: true, Listen: l.Addr().String(), PolicyFile: "builtin", LogFormat: "text", NoAudit: true,
		PolicyInterval: time.Second, StoreTimeout: time.Second, ShutdownGrace: time.Second}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = Run(ctx, o, io.Discard, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), l.Addr().String()) || !strings.Contains(err.Error(), "in use") ||
		!strings.Contains(err.Error(), "--listen 127.0.0.1:0 --http 127.0.0.1:0") {
		t.Fatalf("Run = %v, want a start failure naming the taken address and the free-port flags", err)
	}
}

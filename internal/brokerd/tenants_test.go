package brokerd

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A tenants file with a mistake stops the start, naming the file, the
// tenant and the field.
func TestABadTenantsFileStopsTheStart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tenants.yaml")
	src := "tenants:\n  - id: acme\n    account: ACME\n    agents: [{user: u1, agent_id: a.b}]\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	o := Options{Dev: true, Listen: "127.0.0.1:0", LogFormat: "text", NoAudit: true, PolicyInterval: time.Second,
		StoreTimeout: time.Second, ShutdownGrace: time.Second, TenantsFile: path}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := Run(ctx, o, io.Discard, slog.New(slog.DiscardHandler))
	for _, want := range []string{path, `id "acme"`, "agents[0].agent_id"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Run = %v, want a start failure naming %q", err, want)
		}
	}
}

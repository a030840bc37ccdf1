package quickstart

import (
	"flag"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/signoff-dev/signoff/internal/approverbot"
	_ "github.com/signoff-dev/signoff/internal/approverbot/channels" // the bot config's channel sections
	"github.com/signoff-dev/signoff/internal/brokerd"
)

// TestTheDevAndComposePortsNeverClash: the README runs `make run` and its
// example bots, then the compose plane; none of them may take a port
// another one of them takes, so they run side by side in any order.
func TestTheDevAndComposePortsNeverClash(t *testing.T) {
	owner := map[string]string{} // port → who takes it
	take := func(port, who string) {
		t.Helper()
		if port == "" || port == "0" {
			t.Errorf("%s: no fixed port", who)
			return
		}
		if other, ok := owner[port]; ok {
			t.Errorf("port %s is taken by %s and by %s", port, other, who)
		}
		owner[port] = who
	}
	portOf := func(addr, who string) string {
		t.Helper()
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			t.Fatalf("%s: %q: %v", who, addr, err)
		}
		return port
	}

	// make run: the broker's defaults.
	var o brokerd.Options
	fs := flag.NewFlagSet("broker", flag.ContinueOnError)
	o.Flags(fs)
	for _, name := range []string{"listen", "http"} {
		take(portOf(fs.Lookup(name).DefValue, "broker --"+name), "make run (broker --"+name+")")
	}
	// The example bots.
	bots, err := filepath.Glob(filepath.Join(repoRoot, "examples", "approver-bot", "*.yaml"))
	if err != nil || len(bots) < 2 {
		t.Fatalf("example bot configs %v: %v", bots, err)
	}
	for _, f := range bots {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := approverbot.ParseConfig(data, f)
		if err != nil {
			t.Fatalf("%s does not parse: %v", f, err)
		}
		take(portOf(cfg.HTTP.Listen, f), f)
	}
	// The compose plane's published ports (their defaults).
	data, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "compose", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	published := regexp.MustCompile(`"127\.0\.0\.1:\$\{(SIGNOFF_COMPOSE_[A-Z0-9_]+)-(\d*)\}:\d+"`).FindAllStringSubmatch(string(data), -1)
	if len(published) == 0 {
		t.Fatal("no published ports found in docker-compose.yml")
	}
	fixed := 0
	for _, m := range published {
		if m[2] == "" {
			continue // a free port chosen by Docker
		}
		fixed++
		take(m[2], "compose "+m[1])
	}
	if fixed < 2 {
		t.Errorf("compose publishes %d fixed ports, want NATS and the web page", fixed)
	}
}

package agentcfg

import (
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/testenv"
)

// parse binds a Config to a fresh flag set and parses args with the given
// environment (SIGNOFF_* and HOSTNAME) and config file contents.
func parse(t *testing.T, args []string, env map[string]string, file string) (Config, error) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "SIGNOFF_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	if file != "" {
		path := filepath.Join(t.TempDir(), "signoff.yaml")
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--config", path)
	}
	var c Config
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fill := c.Bind(fs)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	return c, fill()
}

func TestConfigPrecedenceIsFlagThenEnvironmentThenFile(t *testing.T) {
	file := "nats: nats://from-file:4222\nrequested-by: file-user\nagent: file-agent\nattempt-timeout: 3s\n"
	c, err := parse(t, []string{"--agent", "flag-agent"}, map[string]string{"SIGNOFF_REQUESTED_BY": "env-user"}, file)
	if err != nil {
		t.Fatal(err)
	}
	if c.Agent != "flag-agent" || c.RequestedBy != "env-user" || c.NATSURL != "nats://from-file:4222" || c.AttemptTimeout != 3*time.Second {
		t.Fatalf("%+v", c)
	}
}

func TestConfigErrors(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		file    string
		wantErr string
	}{
		{"an unknown key in the file is refused", nil, nil, "natz: nats://x\n", `unknown key "natz"`},
		{"a bad duration in the environment names the variable", nil, map[string]string{"SIGNOFF_ATTEMPT_TIMEOUT": "fast"}, "", "SIGNOFF_ATTEMPT_TIMEOUT"},
		{"an agent id that is not a token is refused", []string{"--agent", "pod.1"}, nil, "", "single subject token"},
		{"a client certificate without its key is refused", []string{"--agent", "a", "--nats-cert", "c.pem"}, nil, "", "go together"},
		{"creds and an nkey together are refused", []string{"--agent", "a", "--nats-creds", "a.creds", "--nats-nkey", "a.nk"}, nil, "", "not both"},
		{"a password without a user is refused", []string{"--agent", "a", "--nats-password", "x"}, nil, "", "without --nats-user"},
		{"a bad prefix is refused", []string{"--agent", "a", "--prefix", "a..b"}, nil, "", "--prefix"},
		{"a zero ping interval is refused", []string{"--agent", "a", "--nats-ping-interval", "0s"}, nil, "", "--nats-ping-interval"},
		{"zero pings out are refused", []string{"--agent", "a", "--nats-max-pings-out", "0"}, nil, "", "--nats-max-pings-out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parse(t, tt.args, tt.env, tt.file)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err %v, want %q", err, tt.wantErr)
			}
		})
	}
}

// The agent id is never the host name: without --agent (SIGNOFF_AGENT,
// the file's agent) the configuration is refused and says how to set it.
func TestTheAgentIdIsRequiredAndNotTheHostName(t *testing.T) {
	_, err := parse(t, nil, map[string]string{"HOSTNAME": "agent-7c9f"}, "")
	if err == nil || !strings.Contains(err.Error(), "--agent is not set") || !strings.Contains(err.Error(), "SIGNOFF_AGENT") {
		t.Fatalf("no agent id: err = %v, want it refused naming --agent and SIGNOFF_AGENT", err)
	}
	for name, set := range map[string]struct {
		args []string
		env  map[string]string
		file string
	}{
		"the flag":     {args: []string{"--agent", "ci-deploy"}},
		"the variable": {env: map[string]string{"SIGNOFF_AGENT": "ci-deploy"}},
		"the file":     {file: "agent: ci-deploy\n"},
	} {
		c, err := parse(t, set.args, set.env, set.file)
		if err != nil || c.Agent != "ci-deploy" {
			t.Errorf("%s: agent %q, err %v; want ci-deploy", name, c.Agent, err)
		}
	}
}

func TestRepeatableFlagsTakeAListFromTheFile(t *testing.T) {
	var got []string
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.Func("upstream", "", func(s string) error { got = append(got, s); return nil })
	cfg := fs.String("config", "", "")
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("upstream:\n  - a=http://a\n  - b=cmd x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse([]string{"--config", path}); err != nil {
		t.Fatal(err)
	}
	_ = cfg
	if err := Fill(fs, "config"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "a=http://a|b=cmd x" {
		t.Fatalf("got %q", got)
	}
}

// The agent's connection leaves a frozen NATS server while a call waits:
// its pings go unanswered and it reconnects, within the ping budget.
func TestTheAgentLeavesAFrozenNATSServer(t *testing.T) {
	ns := testenv.NATS(t, testenv.WithoutJetStream())
	fr := testenv.NewFreezer(t, strings.TrimPrefix(ns.ClientURL(), "nats://"))
	c, err := parse(t, []string{"--agent", "a", "--nats", "nats://" + fr.Addr(), "--nats-ping-interval", "200ms"}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.NATSMaxPingsOut != 2 {
		t.Fatalf("default max pings out = %d, want 2", c.NATSMaxPingsOut)
	}
	nc, err := c.Connect(context.Background(), "agent")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if nc.Opts.PingInterval != 200*time.Millisecond || nc.Opts.MaxPingsOut != 2 {
		t.Fatalf("connection pings every %s, %d out; want 200ms, 2", nc.Opts.PingInterval, nc.Opts.MaxPingsOut)
	}
	fr.Freeze()
	deadline := time.Now().Add(5 * time.Second)
	for nc.IsConnected() {
		if time.Now().After(deadline) {
			t.Fatal("the agent's connection to a frozen server still counts as connected after 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	fr.Thaw()
}

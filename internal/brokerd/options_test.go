package brokerd

import (
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/signoff-dev/signoff/internal/testenv"
)

func parse(t *testing.T, args []string, env map[string]string, file string) (Options, error) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	if file != "" {
		path := filepath.Join(t.TempDir(), "broker.yaml")
		if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--config", path)
	}
	var o Options
	fs := flag.NewFlagSet("broker", flag.ContinueOnError)
	fill := o.Flags(fs)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	return o, fill()
}

func TestAFlagBeatsTheEnvironmentWhichBeatsTheFile(t *testing.T) {
	o, err := parse(t,
		[]string{"--workers", "7"},
		map[string]string{"SIGNOFF_WORKERS": "8", "SIGNOFF_STORE_TIMEOUT": "3s", "SIGNOFF_NATS": "nats://env:4222"},
		"workers: 9\nstore-timeout: 4s\nredis: redis://file:6379/0\nnats: nats://file:4222\n")
	if err != nil {
		t.Fatal(err)
	}
	if o.Workers != 7 {
		t.Errorf("workers = %d, want the flag's 7", o.Workers)
	}
	if o.StoreTimeout != 3*time.Second {
		t.Errorf("store-timeout = %s, want the environment's 3s", o.StoreTimeout)
	}
	if o.NATSURL != "nats://env:4222" || o.RedisURL != "redis://file:6379/0" {
		t.Errorf("nats = %q, redis = %q: want the environment's NATS and the file's Redis", o.NATSURL, o.RedisURL)
	}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--policy") {
		t.Errorf("Validate without a policy: %v, want the missing --policy refused", err)
	}
	o.PolicyFile = BuiltinPolicy
	o.NATSNKey = "broker.nk"
	if err := o.Validate(); err != nil {
		t.Errorf("Validate with --policy builtin: %v", err)
	}
}

func TestBadSettingsSayWhatAndWhere(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		file string
		want string
	}{
		{"an unknown config key", nil, nil, "wokers: 3\n", `unknown key "wokers"`},
		{"a policy file given as the config", nil, nil, "mode: auto-edit\nrules: []\n", "looks like a policy file"},
		{"a bad duration in the file", nil, nil, "store-timeout: soon\n", "store-timeout"},
		{"a bad number in the environment", nil, map[string]string{"SIGNOFF_WORKERS": "many"}, "", "SIGNOFF_WORKERS"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse(t, tc.args, tc.env, tc.file)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestValidateRefusesContradictions(t *testing.T) {
	cases := []struct {
		name string
		o    Options
		want string
	}{
		{"dev with a NATS URL", Options{Dev: true, NATSURL: "nats://x", LogFormat: "text"}, "--dev"},
		{"production without NATS", Options{RedisURL: "redis://x", LogFormat: "text"}, "--nats"},
		{"production without Redis", Options{NATSURL: "nats://x", LogFormat: "text"}, "--redis"},
		{"production without a policy", Options{NATSURL: "nats://x", RedisURL: "redis://x", LogFormat: "text"}, "production mode needs --policy FILE"},
		{"an unknown log format", Options{Dev: true, LogFormat: "xml"}, "--log-format"},
		{"a certificate without its key", Options{Dev: true, LogFormat: "text", NATSCert: "c.pem"}, "--nats-key"},
		{"an unknown audit mode", Options{Dev: true, LogFormat: "text", Audit: "paranoid"}, "--audit"},
		{"strict audit without the audit stream", Options{Dev: true, LogFormat: "text", Audit: "strict", NoAudit: true}, "--no-audit"},
		{"a negative audit timeout", Options{Dev: true, LogFormat: "text", AuditTimeout: -time.Second}, "--audit-timeout"},
		{"a negative audit retry limit", Options{Dev: true, LogFormat: "text", AuditRetryMax: -1}, "--audit-retry-limit"},
		{"a negative ping interval", Options{Dev: true, LogFormat: "text", NATSPingInterval: -time.Second}, "--nats-ping-interval"},
		{"negative pings out", Options{Dev: true, LogFormat: "text", NATSMaxPingsOut: -1}, "--nats-max-pings-out"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.o.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// A production broker presents credentials to NATS, or is told on purpose
// (--insecure-nats) to go without; dev mode's embedded server is exempt.
func TestAProductionBrokerRefusesNATSWithoutCredentials(t *testing.T) {
	base := func(o Options) *Options {
		o.RedisURL, o.PolicyFile, o.LogFormat = "redis://x", BuiltinPolicy, "text"
		if o.NATSURL == "" {
			o.NATSURL = "nats://n1:4222,nats://n2:4222"
		}
		return &o
	}
	err := base(Options{}).Validate()
	for _, want := range []string{"production mode needs NATS credentials", "--nats-nkey", "--insecure-nats", "make keys"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("no credentials: err = %v, want it to mention %q", err, want)
		}
	}
	accepted := map[string]Options{
		"an nkey seed":               {NATSNKey: "broker.nk"},
		"a credentials file":         {NATSCred: "broker.creds"},
		"a user and password":        {NATSUser: "broker", NATSPass: "secret"},
		"a client certificate":       {NATSCert: "c.pem", NATSKey: "k.pem"},
		"a user in a URL":            {NATSURL: "nats://n1:4222,nats://broker:secret@n2:4222"},
		"a token in the URL":         {NATSURL: "nats://s3cr3t@n1:4222"},
		"--insecure-nats on purpose": {InsecureNATS: true},
	}
	for name, o := range accepted {
		if err := base(o).Validate(); err != nil {
			t.Errorf("%s: %v, want accepted", name, err)
		}
	}
	if err := base(Options{NATSURL: "nats://@n1:4222"}).Validate(); err == nil {
		t.Error("an empty user in the URL was taken for credentials")
	}
	if err := (&Options{Dev: true, LogFormat: "text"}).Validate(); err != nil {
		t.Errorf("dev mode (embedded NATS) without credentials: %v, want accepted", err)
	}
}

// SIGNOFF_INSECURE_NATS is the flag's variable, like every other option's.
func TestInsecureNATSComesFromTheEnvironment(t *testing.T) {
	o, err := parse(t, []string{"--nats", "nats://n:4222", "--redis", "redis://r", "--policy", BuiltinPolicy},
		map[string]string{"SIGNOFF_INSECURE_NATS": "true"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if !o.InsecureNATS {
		t.Fatal("SIGNOFF_INSECURE_NATS=true did not set --insecure-nats")
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("Validate with SIGNOFF_INSECURE_NATS=true: %v", err)
	}
}

func TestDevModeKeepsTheBuiltInPolicy(t *testing.T) {
	o := Options{Dev: true, LogFormat: "text"}
	if err := o.Validate(); err != nil {
		t.Fatalf("dev mode without --policy: %v, want the built-in policy", err)
	}
}

// A frozen NATS server (SIGSTOP, a silent partition) is noticed by the
// connection's pings: it is declared stale and reconnects within
// interval × (max pings out + 1), not after nats.go's default minutes.
func TestAFrozenNATSServerIsLeftWithinThePingBudget(t *testing.T) {
	ns := testenv.NATS(t, testenv.WithoutJetStream())
	fr := testenv.NewFreezer(t, strings.TrimPrefix(ns.ClientURL(), "nats://"))
	logs := &testenv.LogBuffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	o := Options{NATSURL: "nats://" + fr.Addr(), NATSPingInterval: 200 * time.Millisecond, NATSMaxPingsOut: 2}
	nc, err := connectNATS(o, "stale-test", log, &subRefusals{})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if nc.Opts.PingInterval != 200*time.Millisecond || nc.Opts.MaxPingsOut != 2 {
		t.Fatalf("connection pings every %s, %d out; want the options' 200ms, 2", nc.Opts.PingInterval, nc.Opts.MaxPingsOut)
	}
	frozenAt := time.Now()
	fr.Freeze()
	deadline := time.Now().Add(5 * time.Second)
	for nc.IsConnected() {
		if time.Now().After(deadline) {
			t.Fatal("the connection to a frozen server still counts as connected after 5 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if took := time.Since(frozenAt); took > 2*time.Second {
		t.Errorf("stale connection noticed after %s, want within about 600 ms", took)
	}
	if !logs.WaitFor("stale connection", 2*time.Second) {
		t.Errorf("no WARN naming the stale connection:\n%s", logs.String())
	}
	fr.Thaw()

	// The defaults apply when the options leave them zero.
	plain, err := connectNATS(Options{NATSURL: ns.ClientURL()}, "defaults", log, &subRefusals{})
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	if plain.Opts.PingInterval != DefaultNATSPingInterval || plain.Opts.MaxPingsOut != DefaultNATSMaxPingsOut {
		t.Errorf("default connection pings every %s, %d out; want %s, %d", plain.Opts.PingInterval, plain.Opts.MaxPingsOut,
			DefaultNATSPingInterval, DefaultNATSMaxPingsOut)
	}
}

// A broker that cannot reach NATS says where it tried without the
// password or token in the URL: the error lands in logs and terminals.
func TestAFailedNATSConnectionHidesTheURLsSecrets(t *testing.T) {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	for _, url := range []string{"nats://broker:s3cret-pass@127.0.0.1:1", "nats://s3cret-token@127.0.0.1:1"} {
		_, err := connectNATS(Options{NATSURL: url}, "redact-test", log, &subRefusals{})
		if err == nil {
			t.Fatalf("%s: connected to a closed port", url)
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("the error shows the URL's secret: %v", err)
		}
		if !strings.Contains(err.Error(), "127.0.0.1:1") {
			t.Errorf("the error does not say where it tried: %v", err)
		}
	}
}

package brokerd

import (
	"errors"
	"flag"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/signoff-dev/signoff/internal/cmdflag"
	"github.com/signoff-dev/signoff/internal/escalator"
)

// Options are the broker's settings. Each has a flag, an environment
// variable (SIGNOFF_ + the flag name in upper case with '-' as '_') and a
// key in the --config file (the flag name); a flag beats the environment,
// which beats the file.
type Options struct {
	Dev      bool
	Listen   string
	DataDir  string
	NATSURL  string
	NATSCred string
	NATSNKey string
	NATSUser string
	NATSPass string
	NATSCA   string
	NATSCert string
	NATSKey  string
	NATSName string
	// InsecureNATS lets a production broker connect to NATS without
	// credentials (Validate refuses that otherwise).
	InsecureNATS bool
	// NATSPingInterval and NATSMaxPingsOut: a connection whose server
	// answered none of MaxPingsOut pings sent PingInterval apart is stale
	// and reconnects elsewhere (a frozen server is noticed in about
	// PingInterval × (MaxPingsOut + 1)).
	NATSPingInterval time.Duration
	NATSMaxPingsOut  int

	RedisURL       string
	RedisRetention time.Duration

	PolicyFile     string
	PolicyInterval time.Duration
	TenantsFile    string
	HTTPAddr       string
	Prefix         string
	Replica        string
	MaxBytes       int
	Workers        int
	StoreTimeout   time.Duration
	ReapInterval   time.Duration
	AuditReplicas  int
	NoAudit        bool
	Audit          string
	AuditTimeout   time.Duration
	AuditRetryMax  int
	AuditDedup     time.Duration
	RequireSigned  bool
	ApproverKeys   string
	ShutdownGrace  time.Duration
	WebURL         string
	LogLevel       string
	LogFormat      string
	ConfigFile     string
	// OTLPEndpoint is where traces of the decision path are exported
	// (internal/tracing; empty: the OTEL_EXPORTER_OTLP_* variables decide,
	// and without them tracing is off).
	OTLPEndpoint string
}

// Defaults of --nats-ping-interval and --nats-max-pings-out: a frozen
// (SIGSTOPped, partitioned) NATS server is left in about 15 s, not the
// minutes of nats.go's defaults (2 min × 2).
const (
	DefaultNATSPingInterval = 5 * time.Second
	DefaultNATSMaxPingsOut  = 2
)

// BuiltinPolicy is the --policy value that selects the built-in policy
// (pkg/policy's Default) explicitly; a file of that name is ./builtin.
const BuiltinPolicy = "builtin"

// Flags binds every option to fs and returns a function that, after
// fs.Parse, fills the options not set by a flag from the environment and
// then from the --config file.
func (o *Options) Flags(fs *flag.FlagSet) func() error {
	fs.BoolVar(&o.Dev, "dev", false, "dev mode: embed a NATS server (with JetStream) and keep state in memory; nothing else to install")
	fs.StringVar(&o.Listen, "listen", "127.0.0.1:4222", "dev mode: address of the embedded NATS server (port 0: a free port, printed at start)")
	fs.StringVar(&o.DataDir, "data-dir", "", "dev mode: JetStream directory of the embedded NATS server (default: a temporary directory removed at exit)")
	fs.StringVar(&o.NATSURL, "nats", "", "NATS server URLs, comma-separated (production mode), e.g. nats://nats-1:4222,nats://nats-2:4222")
	fs.StringVar(&o.NATSCred, "nats-creds", "", "NATS credentials file (JWT + nkey seed)")
	fs.StringVar(&o.NATSNKey, "nats-nkey", "", "NATS nkey seed file")
	fs.StringVar(&o.NATSUser, "nats-user", "", "NATS user name")
	fs.StringVar(&o.NATSPass, "nats-password", "", "NATS password (prefer SIGNOFF_NATS_PASSWORD)")
	fs.StringVar(&o.NATSCA, "nats-ca", "", "CA certificate file to verify the NATS servers")
	fs.StringVar(&o.NATSCert, "nats-cert", "", "client certificate file for NATS mutual TLS")
	fs.StringVar(&o.NATSKey, "nats-key", "", "client key file for NATS mutual TLS")
	fs.StringVar(&o.NATSName, "nats-name", "signoff-broker", "connection name shown by the NATS server")
	fs.BoolVar(&o.InsecureNATS, "insecure-nats", false, "production mode: connect to NATS without credentials, on purpose (refused otherwise: on a NATS without authorization any client may answer questions and administer the plane)")
	fs.DurationVar(&o.NATSPingInterval, "nats-ping-interval", DefaultNATSPingInterval, "how often each NATS connection pings its server; with --nats-max-pings-out a frozen server is left for another in about interval × (max + 1)")
	fs.IntVar(&o.NATSMaxPingsOut, "nats-max-pings-out", DefaultNATSMaxPingsOut, "unanswered pings after which a NATS connection is stale and reconnects")
	fs.StringVar(&o.RedisURL, "redis", "", "Redis URL (production mode): redis://[user:pass@]host:6379/0, rediss:// for TLS, redis+sentinel://host:26379,host2:26379/master")
	fs.DurationVar(&o.RedisRetention, "retention", 24*time.Hour, "how long settled requests stay readable (status after a reconnect)")
	fs.StringVar(&o.PolicyFile, "policy", "", "policy `file` (YAML), reloaded on change; required in production mode ("+BuiltinPolicy+": the built-in dev policy, on purpose); dev mode default: the built-in policy")
	fs.DurationVar(&o.PolicyInterval, "policy-interval", time.Second, "how often the policy file is checked for changes")
	fs.StringVar(&o.TenantsFile, "tenants", "", "tenants `file` (YAML, docs/OPERATIONS.md \"Tenants and identity\"): serve one tenant per NATS account, identities from credentials; reloaded on SIGHUP (empty: one declared tenant)")
	fs.StringVar(&o.HTTPAddr, "http", "127.0.0.1:8080", "address for /healthz, /readyz and /metrics (empty: off)")
	fs.StringVar(&o.Prefix, "prefix", "signoff.v1", "subject prefix")
	fs.StringVar(&o.Replica, "replica", "", "replica name in logs and audit records (default: host name)")
	fs.IntVar(&o.MaxBytes, "max-message-bytes", 0, "largest message accepted (0: half the NATS server's max_payload, 512 KiB with its default 1 MiB, so that a question embedding a request still fits in one message)")
	fs.IntVar(&o.Workers, "workers", 256, "messages handled at once by this replica")
	fs.DurationVar(&o.StoreTimeout, "store-timeout", 2*time.Second, "bound on each state store call; slower calls fail closed")
	fs.DurationVar(&o.ReapInterval, "reap-interval", 500*time.Millisecond, "how often the reaper looks for expired requests (expiries are reported within expiry + one interval)")
	fs.IntVar(&o.AuditReplicas, "audit-replicas", 1, "JetStream replicas of the audit stream (3 on a 3-node cluster)")
	fs.BoolVar(&o.NoAudit, "no-audit", false, "do not record decisions in JetStream (for NATS servers without JetStream)")
	fs.StringVar(&o.Audit, "audit", "async", "audit mode: async (reply first, retry failed appends from memory) or strict (no allow before its audit record is stored; deny unavailable when the stream cannot take it)")
	fs.IntVar(&o.AuditRetryMax, "audit-retry-limit", 65536, "audit records held in memory while the stream cannot take them (about 1-2 KiB each); past it a record is lost, counted and logged")
	fs.DurationVar(&o.AuditDedup, "audit-dedup-window", 2*time.Minute, "the audit stream's duplicate window (set on the stream; same on every replica): an append of a decision older than the window less --audit-timeout and 5 s looks its record up first; at least --audit-timeout + 35s")
	fs.DurationVar(&o.AuditTimeout, "audit-timeout", 2*time.Second, "bound on each audit append's acknowledgement; a slower append is retried (async) or denies the allow (strict)")
	fs.BoolVar(&o.RequireSigned, "require-signed-responses", false, "accept only approver responses signed by a key in --approver-keys (docs/PROTOCOL.md, Signed responses)")
	fs.StringVar(&o.ApproverKeys, "approver-keys", "", "public nkeys (U…) of the approver bots whose response signatures are trusted: a comma-separated list, or a file with one per line")
	fs.StringVar(&o.WebURL, "web-url", "", "public base URL of the approver web page (https://signoff.example.com): escalation pages link to the question there")
	fs.DurationVar(&o.ShutdownGrace, "shutdown-grace", 15*time.Second, "how long a graceful shutdown may take")
	fs.StringVar(&o.LogLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&o.LogFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&o.OTLPEndpoint, "otlp-endpoint", "", "export traces of the decision path over OTLP to this `URL` (http://collector:4318; the standard OTEL_EXPORTER_OTLP_* variables are honoured too; empty and unset: off)")
	fs.StringVar(&o.ConfigFile, "config", "", "broker config `file` (YAML): keys are the flag names (the policy file is --policy)")
	return func() error { return o.fill(fs) }
}

// fill applies the environment and the config file to the flags that were
// not set on the command line.
func (o *Options) fill(fs *flag.FlagSet) error {
	return cmdflag.Fill(fs, "config", func(path string) (map[string]any, error) { return readConfigFile(path, fs) }, false)
}

// readConfigFile reads a broker config file: a YAML map whose keys are the
// flag names of fs.
func readConfigFile(path string, fs *flag.FlagSet) (map[string]any, error) {
	file, err := cmdflag.ReadConfig(path, fs, "config")
	if !errors.Is(err, cmdflag.ErrUnknownKey) {
		return file, err
	}
	// A policy file given as --config (the old `policy check --config`).
	for _, k := range []string{"rules", "teams", "mode", "agents", "tools", "max_ttl", "pagers"} {
		if _, ok := file[k]; ok {
			return nil, fmt.Errorf("config %s: this looks like a policy file (it has the key %q): pass it as --policy %s; --config names a broker config file, whose keys are the flag names", path, k, path)
		}
	}
	return nil, err
}

// PolicyOfConfig returns the policy file a broker config file names (its
// "policy" key; "" when it has none), checking the file as the broker does.
func PolicyOfConfig(path string) (string, error) {
	var o Options
	fs := flag.NewFlagSet("broker", flag.ContinueOnError)
	o.Flags(fs)
	file, err := readConfigFile(path, fs)
	if err != nil {
		return "", err
	}
	v, ok := file["policy"]
	if !ok || v == nil {
		return "", nil
	}
	return fmt.Sprint(v), nil
}

// hasNATSCredentials reports whether the broker presents credentials to
// its NATS servers: an nkey, a credentials file, a user, a client
// certificate, or a user (or token) in one of the --nats URLs.
func (o *Options) hasNATSCredentials() bool {
	if o.NATSNKey != "" || o.NATSCred != "" || o.NATSUser != "" || o.NATSCert != "" {
		return true
	}
	for _, u := range strings.Split(o.NATSURL, ",") {
		if pu, err := url.Parse(strings.TrimSpace(u)); err == nil && pu.User != nil && pu.User.Username() != "" {
			return true
		}
	}
	return false
}

// Validate reports contradictory or missing settings.
func (o *Options) Validate() error {
	switch {
	case o.Dev && (o.NATSURL != "" || o.RedisURL != ""):
		return errors.New("--dev embeds NATS and keeps state in memory: drop --nats and --redis, or drop --dev")
	case !o.Dev && o.NATSURL == "":
		return errors.New("production mode needs --nats (or SIGNOFF_NATS); use --dev to run everything in one process")
	case !o.Dev && o.RedisURL == "":
		return errors.New("production mode needs --redis (or SIGNOFF_REDIS): the replicas share their state there")
	case !o.Dev && o.PolicyFile == "":
		return errors.New("production mode needs --policy FILE (or SIGNOFF_POLICY): without one the broker would run the built-in dev policy, " +
			"whose team \"default\" lists no members, so no answer would count and every question would time out; " +
			"pass your policy file (docs/POLICY.md), or --policy " + BuiltinPolicy + " to run the built-in policy on purpose")
	case !o.Dev && !o.InsecureNATS && !o.hasNATSCredentials():
		return errors.New("production mode needs NATS credentials: --nats-nkey, --nats-creds, --nats-user or a client certificate (--nats-cert/--nats-key). " +
			"Without them the NATS server has no idea who the broker is, and a NATS that lets it in unauthenticated lets any client in: " +
			"an agent could answer its own questions, publish decisions or switch a session to yolo. " +
			"deploy/nats makes the keys (make keys); pass --insecure-nats (SIGNOFF_INSECURE_NATS=true) to connect without credentials on purpose")
	case o.LogFormat != "text" && o.LogFormat != "json":
		return fmt.Errorf("--log-format %q: want text or json", o.LogFormat)
	case (o.NATSCert == "") != (o.NATSKey == ""):
		return errors.New("--nats-cert and --nats-key go together")
	case o.Audit != "" && o.Audit != "async" && o.Audit != "strict":
		return fmt.Errorf("--audit %q: want async or strict", o.Audit)
	case o.Audit == "strict" && o.NoAudit:
		return errors.New("--audit=strict needs the audit stream: drop --no-audit")
	case o.NATSPingInterval < 0:
		return fmt.Errorf("--nats-ping-interval %s: must not be negative (0: the default, %s)", o.NATSPingInterval, DefaultNATSPingInterval)
	case o.NATSMaxPingsOut < 0:
		return fmt.Errorf("--nats-max-pings-out %d: must not be negative (0: the default, %d)", o.NATSMaxPingsOut, DefaultNATSMaxPingsOut)
	case o.AuditTimeout < 0:
		return fmt.Errorf("--audit-timeout %s: must not be negative", o.AuditTimeout)
	case o.AuditDedup < 0:
		return fmt.Errorf("--audit-dedup-window %s: must not be negative", o.AuditDedup)
	case o.AuditRetryMax < 0:
		return fmt.Errorf("--audit-retry-limit %d: must not be negative", o.AuditRetryMax)
	case o.WebURL != "" && escalator.CheckWebURL(o.WebURL) != nil:
		return fmt.Errorf("--web-url: %w", escalator.CheckWebURL(o.WebURL))
	case o.RequireSigned && o.ApproverKeys == "":
		return errors.New("--require-signed-responses needs --approver-keys: the public nkeys of the approver bots (deploy/nats/genkeys writes them)")
	}
	return nil
}

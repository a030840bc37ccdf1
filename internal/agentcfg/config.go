package agentcfg

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/cmdflag"
	"github.com/signoff-dev/signoff/pkg/client"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// Config is what every subcommand of cmd/signoff needs to ask Signoff.
type Config struct {
	// NATSURL lists the NATS servers, comma-separated (default
	// nats://127.0.0.1:4222, where `broker --dev` listens).
	NATSURL string
	// NATSCreds is a credentials file (JWT + nkey seed); NATSNKey an nkey
	// seed file; NATSToken a token; NATSUser/NATSPassword a user.
	NATSCreds    string
	NATSNKey     string
	NATSToken    string
	NATSUser     string
	NATSPassword string
	// NATSCA verifies the servers; NATSCert/NATSKey are a client
	// certificate for mutual TLS.
	NATSCA   string
	NATSCert string
	NATSKey  string
	// NATSInboxPrefix replaces "_INBOX" for replies, to match NATS
	// permissions that give each agent its own inbox space.
	NATSInboxPrefix string
	// NATSPingInterval and NATSMaxPingsOut: a server that answered none
	// of MaxPingsOut pings sent PingInterval apart is left for another
	// while a call waits (a frozen server is noticed in about
	// interval × (max + 1)).
	NATSPingInterval time.Duration
	NATSMaxPingsOut  int
	// Prefix is the subject prefix (default signoff.v1).
	Prefix string
	// Agent is the agent (worker, pod) id that "always" grants attach to.
	// Required: it is never taken from the host name.
	Agent string
	// AgentType names the agent type whose policy layer applies when the
	// host does not say (Claude Code reports its subagents' types itself).
	AgentType string
	// RequestedBy is the human the agent works for; they may not approve
	// their own agent's calls.
	RequestedBy string
	// AttemptTimeout bounds each request to the broker (retried until the
	// deadline).
	AttemptTimeout time.Duration
	// ReceiptTimeout bounds how long a request waits for a broker to take
	// it (no broker, no responders) before it is refused.
	ReceiptTimeout time.Duration
	// ConfigFile is the YAML file the other settings may come from.
	ConfigFile string
}

// Bind registers the connection and identity flags on fs, with their
// defaults, and returns the function to call after fs.Parse: it fills what no
// flag set from the environment (SIGNOFF_ + the flag name in upper case,
// '-' as '_') and then from the --config file, and validates the result.
func (c *Config) Bind(fs *flag.FlagSet) func() error {
	c.BindConn(fs)
	fs.StringVar(&c.Agent, "agent", "", "agent id that \"always\" grants attach to (required; on a tenant plane, the one its NATS identity may use)")
	fs.StringVar(&c.AgentType, "agent-type", "", "agent type whose policy layer applies, when the host does not report one")
	fs.StringVar(&c.RequestedBy, "requested-by", "", "the human the agent works for (may not approve their own agent's calls)")
	fs.DurationVar(&c.AttemptTimeout, "attempt-timeout", 2*time.Second, "bound on each request to a broker (retried with the same id until the deadline)")
	fs.DurationVar(&c.ReceiptTimeout, "receipt-timeout", 10*time.Second, "how long to retry while no broker takes a request before refusing the call")
	return func() error {
		if err := Fill(fs, "config"); err != nil {
			return err
		}
		return c.setDefaultsAndValidate()
	}
}

// BindConn registers only the connection flags on fs (NATS servers,
// credentials, TLS, liveness, the subject prefix and --config): what a
// command that is not an agent (signoff admin) shares with the others.
// Validate them with [Config.ValidateConn] after [Fill].
func (c *Config) BindConn(fs *flag.FlagSet) {
	fs.StringVar(&c.NATSURL, "nats", nats.DefaultURL, "NATS server URLs, comma-separated")
	fs.StringVar(&c.NATSCreds, "nats-creds", "", "NATS credentials `file` (JWT + nkey seed)")
	fs.StringVar(&c.NATSNKey, "nats-nkey", "", "NATS nkey seed `file`")
	fs.StringVar(&c.NATSToken, "nats-token", "", "NATS token (prefer SIGNOFF_NATS_TOKEN)")
	fs.StringVar(&c.NATSUser, "nats-user", "", "NATS user name")
	fs.StringVar(&c.NATSPassword, "nats-password", "", "NATS password (prefer SIGNOFF_NATS_PASSWORD)")
	fs.StringVar(&c.NATSCA, "nats-ca", "", "CA certificate `file` to verify the NATS servers")
	fs.StringVar(&c.NATSCert, "nats-cert", "", "client certificate `file` for NATS mutual TLS")
	fs.StringVar(&c.NATSKey, "nats-key", "", "client key `file` for NATS mutual TLS")
	fs.StringVar(&c.NATSInboxPrefix, "nats-inbox-prefix", "", "inbox prefix for replies (default _INBOX), to match per-agent NATS permissions")
	fs.DurationVar(&c.NATSPingInterval, "nats-ping-interval", 5*time.Second, "how often the NATS connection pings its server; a frozen server is left for another in about interval × (max pings out + 1)")
	fs.IntVar(&c.NATSMaxPingsOut, "nats-max-pings-out", 2, "unanswered pings after which the NATS connection is stale and reconnects")
	fs.StringVar(&c.Prefix, "prefix", messages.DefaultPrefix, "subject prefix")
	fs.StringVar(&c.ConfigFile, "config", "", "config `file` (YAML): keys are the flag names")
}

func (c *Config) setDefaultsAndValidate() error {
	if c.Agent == "" {
		// No default: a host name is what any agent on the host may claim,
		// and "always" grants attach to this id (docs/AGENTS.md, Agent id).
		return errors.New("--agent is not set: name this agent with --agent or SIGNOFF_AGENT (a token such as ci-deploy); " +
			"\"always\" grants attach to it, so it is not taken from the host name, which every agent on the host shares. " +
			"On a plane with tenant accounts the broker checks it against the agent's NATS identity")
	}
	if err := validToken("--agent", c.Agent); err != nil {
		return err
	}
	if err := c.ValidateConn(); err != nil {
		return err
	}
	switch {
	case c.AttemptTimeout <= 0:
		return fmt.Errorf("--attempt-timeout %s must be positive", c.AttemptTimeout)
	case c.ReceiptTimeout <= 0:
		return fmt.Errorf("--receipt-timeout %s must be positive", c.ReceiptTimeout)
	}
	return nil
}

// ValidateConn checks the connection settings (those of [Config.BindConn]).
func (c *Config) ValidateConn() error {
	if _, err := messages.NewSubjects(c.Prefix); err != nil {
		return fmt.Errorf("--prefix: %w", err)
	}
	switch {
	case c.NATSURL == "":
		return errors.New("--nats is empty: set the NATS server URL (SIGNOFF_NATS)")
	case (c.NATSCert == "") != (c.NATSKey == ""):
		return errors.New("--nats-cert and --nats-key go together (client certificate and its key)")
	case c.NATSCreds != "" && c.NATSNKey != "":
		return errors.New("set --nats-creds or --nats-nkey, not both (a creds file holds its own nkey)")
	case c.NATSPassword != "" && c.NATSUser == "":
		return errors.New("--nats-password is set without --nats-user")
	case c.NATSPingInterval <= 0:
		return fmt.Errorf("--nats-ping-interval %s must be positive", c.NATSPingInterval)
	case c.NATSMaxPingsOut < 1:
		return fmt.Errorf("--nats-max-pings-out %d must be at least 1", c.NATSMaxPingsOut)
	}
	return nil
}

// Fill sets every flag of fs that the command line did not set from the
// environment (SIGNOFF_<FLAG>) and then from the YAML file named by the flag
// configFlag (whose own value may come from the environment). Keys of the
// file are flag names; an unknown key is an error. A list in the file is
// given to the flag item by item (for repeatable flags).
func Fill(fs *flag.FlagSet, configFlag string) error {
	return cmdflag.Fill(fs, configFlag, nil, true)
}

// EnvName is the environment variable of a flag: SIGNOFF_ and the flag name
// in upper case with '-' as '_'.
func EnvName(flagName string) string { return cmdflag.EnvName(flagName) }

// ClientOptions are the SDK options for one session of this agent;
// agentType, when not empty, overrides the configured agent type.
func (c *Config) ClientOptions(session, agentType string) []client.Option {
	if agentType == "" {
		agentType = c.AgentType
	}
	return []client.Option{
		client.WithSession(session),
		client.WithAgent(c.Agent),
		client.WithAgentType(agentType),
		client.WithRequestedBy(c.RequestedBy),
		client.WithPrefix(c.Prefix),
		client.WithAttemptTimeout(c.AttemptTimeout),
		client.WithReceiptTimeout(c.ReceiptTimeout),
	}
}

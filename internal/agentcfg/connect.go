package agentcfg

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/natsurl"
)

// Connect connects to NATS as c says, named name. The first connection
// attempt is bounded by ctx's deadline (at most 5 s); a server that cannot
// be reached is an error at once, not a retry loop, so that a hook answers
// before its host gives up on it. Later disconnections are retried while the
// caller waits for a decision.
//
// extra options come last; a long-running caller passes
// nats.RetryOnFailedConnect(true) to start while NATS is away.
func (c *Config) Connect(ctx context.Context, name string, extra ...nats.Option) (*nats.Conn, error) {
	timeout := 5 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl))
	}
	if timeout <= 0 {
		return nil, fmt.Errorf("connect to NATS at %s: %w", natsurl.Redact(c.NATSURL), context.DeadlineExceeded)
	}
	opts := []nats.Option{
		nats.Name(name),
		nats.Timeout(timeout),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.MaxReconnects(-1),
		nats.NoCallbacksAfterClientClose(),
	}
	// Zero (a Config built in code, not by Bind): nats.go's defaults.
	opts = append(opts, natsurl.Liveness(c.NATSPingInterval, c.NATSMaxPingsOut)...)
	auth, err := natsurl.Auth{Creds: c.NATSCreds, NKeySeed: c.NATSNKey, Token: c.NATSToken,
		User: c.NATSUser, Password: c.NATSPassword, CA: c.NATSCA, Cert: c.NATSCert, Key: c.NATSKey,
		InboxPrefix: c.NATSInboxPrefix}.Options()
	if err != nil {
		return nil, fmt.Errorf("--nats-nkey: %w", err)
	}
	opts = append(opts, auth...)
	nc, err := nats.Connect(c.NATSURL, append(opts, extra...)...)
	if err != nil {
		return nil, fmt.Errorf("connect to NATS at %s: %w", natsurl.Redact(c.NATSURL), err)
	}
	return nc, nil
}

package mcpgateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/signoff-dev/signoff/internal/agentcfg"
)

// Upstream is one MCP server the gateway fronts: a command to run over stdio
// or a streamable-HTTP URL.
type Upstream struct {
	// Name prefixes the upstream's tools: letters, digits and '-', at most
	// 32 bytes, unique among the upstreams.
	Name string
	// Command and its arguments, for a stdio server.
	Command []string
	// URL of a streamable-HTTP server.
	URL string
}

var upstreamName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,31}$`)

// ParseUpstream reads "name=URL" (http:// or https://) or "name=command
// arg…" (split on spaces; put arguments that hold spaces in a wrapper
// script).
func ParseUpstream(s string) (Upstream, error) {
	name, target, ok := strings.Cut(s, "=")
	target = strings.TrimSpace(target)
	if !ok || target == "" {
		return Upstream{}, fmt.Errorf("upstream %q: want name=URL or name=command [args]", s)
	}
	u := Upstream{Name: strings.TrimSpace(name)}
	if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") {
		if _, err := url.Parse(target); err != nil {
			return Upstream{}, fmt.Errorf("upstream %q: %w", u.Name, err)
		}
		u.URL = target
	} else {
		u.Command = strings.Fields(target)
	}
	return u, u.validate()
}

func (u Upstream) validate() error {
	if !upstreamName.MatchString(u.Name) {
		return fmt.Errorf("upstream name %q: use letters, digits and '-' (at most 32; no '_', which separates it from the tool name)", u.Name)
	}
	if (u.URL == "") == (len(u.Command) == 0) {
		return fmt.Errorf("upstream %q: set a command or a URL", u.Name)
	}
	return nil
}

// Config shapes a [Gateway].
type Config struct {
	// Upstreams are the servers fronted (at least one).
	Upstreams []Upstream
	// Agent is the connection to Signoff and the agent's identity.
	Agent agentcfg.Config
	// Session is the Signoff session of every call (default: the MCP
	// session id for HTTP clients, a random id per gateway for stdio).
	Session string
	// DecisionTimeout bounds the wait for a decision on one call (default
	// 10 min); a call still pending then is cancelled and not run.
	DecisionTimeout time.Duration
	// CallTimeout bounds one forwarded call (default 5 min).
	CallTimeout time.Duration
	// Connect opens the NATS connection (default Agent.Connect: a server
	// that cannot be reached at start is an error; later disconnections
	// are retried).
	Connect func(ctx context.Context, name string) (*nats.Conn, error)
	// BearerToken, when set, is required of HTTP clients
	// ("Authorization: Bearer <token>").
	BearerToken string
	// Logger receives the gateway's logs (default: discarded).
	Logger *slog.Logger
	// Version is reported to clients and upstreams.
	Version string
}

func (c *Config) setDefaults() {
	if c.DecisionTimeout == 0 {
		c.DecisionTimeout = 10 * time.Minute
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = 5 * time.Minute
	}
	if c.Connect == nil {
		// The gateway outlives NATS outages after its start (calls made
		// meanwhile are refused, not forwarded), but not at start: a user
		// who mistyped the URL learns it at once, not from each call.
		c.Connect = func(ctx context.Context, name string) (*nats.Conn, error) {
			return c.Agent.Connect(ctx, name)
		}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Version == "" {
		c.Version = "(devel)"
	}
}

// Validate reports what the gateway cannot work with.
func (c *Config) Validate() error {
	if len(c.Upstreams) == 0 {
		return errors.New("no upstream: give at least one --upstream name=URL or name=command")
	}
	seen := map[string]bool{}
	for _, u := range c.Upstreams {
		if err := u.validate(); err != nil {
			return err
		}
		if seen[strings.ToLower(u.Name)] {
			return fmt.Errorf("upstream name %q is used twice", u.Name)
		}
		seen[strings.ToLower(u.Name)] = true
	}
	if c.Session != "" && agentcfg.Token(c.Session) != c.Session {
		return fmt.Errorf("session %q is not a single subject token", c.Session)
	}
	if c.DecisionTimeout < 0 || c.CallTimeout < 0 {
		return errors.New("timeouts must not be negative")
	}
	return nil
}

package mcpgateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signoff-dev/signoff/pkg/client"
)

// upstream is one fronted MCP server and the client session to it. A
// session that ends (a stdio server that exited, an HTTP session the server
// dropped) is opened again on the next call.
type upstream struct {
	g   *Gateway
	cfg Upstream

	// refreshing serializes listings, so that an older list is never
	// applied after a newer one.
	refreshing sync.Mutex

	mu sync.Mutex
	cs *mcp.ClientSession
}

// home is the home directory the upstream's ~ means: the gateway's user's
// for a server it starts, unknown for one it reaches by URL.
func (u *upstream) home() string {
	if u.cfg.URL != "" {
		return ""
	}
	return client.HostHome()
}

func (u *upstream) transport() mcp.Transport {
	if u.cfg.URL != "" {
		return &mcp.StreamableClientTransport{Endpoint: u.cfg.URL}
	}
	cmd := exec.Command(u.cfg.Command[0], u.cfg.Command[1:]...)
	cmd.Env = upstreamEnv(os.Environ())
	return &mcp.CommandTransport{Command: cmd}
}

// upstreamEnv is the gateway's environment without its SIGNOFF_* settings:
// an upstream server is someone else's code, and with the agent's NATS
// credentials it could speak for the agent's sessions (start a new turn,
// cancel requests).
func upstreamEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "SIGNOFF_") {
			out = append(out, kv)
		}
	}
	return out
}

// connect opens the session.
func (u *upstream) connect(ctx context.Context) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.connectLocked(ctx)
}

func (u *upstream) connectLocked(ctx context.Context) error {
	c := mcp.NewClient(&mcp.Implementation{Name: "signoff-mcp-gateway", Version: u.g.cfg.Version}, &mcp.ClientOptions{
		Logger: u.g.log,
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			// Not on the notification's goroutine: refresh calls the
			// upstream, whose reply that goroutine would deliver.
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), u.g.cfg.CallTimeout)
				defer cancel()
				if err := u.g.refresh(ctx, u); err != nil {
					u.g.log.Warn("refreshing tools after list_changed", "upstream", u.cfg.Name, "err", err)
				}
			}()
		},
	})
	cs, err := c.Connect(ctx, u.transport(), nil)
	if err != nil {
		return fmt.Errorf("upstream %s: connect: %w", u.cfg.Name, err)
	}
	u.cs = cs
	// Forget the session when it ends (a stdio server that exited), so the
	// next call opens a new one. The goroutine ends with the session.
	u.g.wg.Add(1)
	go func() {
		defer u.g.wg.Done()
		_ = cs.Wait()
		u.drop(cs)
	}()
	return nil
}

// session returns the open session, opening it again if it ended.
func (u *upstream) session(ctx context.Context) (*mcp.ClientSession, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cs == nil {
		if err := u.connectLocked(ctx); err != nil {
			return nil, err
		}
	}
	return u.cs, nil
}

// call forwards one tool call. When the session turns out to be closed the
// call was not delivered, so it is retried once on a new session.
func (u *upstream) call(ctx context.Context, tool string, args json.RawMessage) (*mcp.CallToolResult, error) {
	for attempt := 0; ; attempt++ {
		cs, err := u.session(ctx)
		if err != nil {
			return nil, err
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err == nil {
			return res, nil
		}
		if !errors.Is(err, mcp.ErrConnectionClosed) || attempt > 0 {
			return nil, err
		}
		u.drop(cs)
	}
}

// drop forgets cs if it is still the current session.
func (u *upstream) drop(cs *mcp.ClientSession) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cs == cs {
		_ = cs.Close()
		u.cs = nil
	}
}

func (u *upstream) close() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.cs != nil {
		_ = u.cs.Close()
		u.cs = nil
	}
}

package mcpgateway_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/signoff-dev/signoff/internal/agentcfg"
	"github.com/signoff-dev/signoff/internal/brokertest"
	"github.com/signoff-dev/signoff/internal/mcpgateway"
	"github.com/signoff-dev/signoff/pkg/messages"
)

// interopPolicy allows greet, denies log and asks about the other tools of
// the SDK's "everything" example server.
const interopPolicy = `
mode: auto-edit
rules:
  - { tool: mcp__every__greet, action: allow }
  - { tool: mcp__every__log, action: deny }
teams:
  default: { members: [alice, bob] }
`

// buildEverything builds the MCP Go SDK's example server that implements
// every feature of the protocol.
func buildEverything(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "everything")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/modelcontextprotocol/go-sdk/examples/server/everything").CombinedOutput()
	if err != nil {
		t.Fatalf("building the SDK's everything server: %v\n%s", err, out)
	}
	return bin
}

// interopClient is what a test needs of an MCP client library.
type interopClient interface {
	protocol() string
	tools(ctx context.Context) ([]string, error)
	// call returns the result's text, whether it is a tool error, and the
	// server named in its _meta (if any).
	call(ctx context.Context, tool string, args map[string]any) (text string, isError bool, server string, err error)
	close()
}

type goSDKClient struct{ cs *mcp.ClientSession }

func (c goSDKClient) protocol() string { return c.cs.InitializeResult().ProtocolVersion }
func (c goSDKClient) close()           { _ = c.cs.Close() }
func (c goSDKClient) tools(ctx context.Context) ([]string, error) {
	res, err := c.cs.ListTools(ctx, nil)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	return names, nil
}

func (c goSDKClient) call(ctx context.Context, tool string, args map[string]any) (string, bool, string, error) {
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", false, "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	server := ""
	if info, ok := res.Meta[mcp.MetaKeyServerInfo].(map[string]any); ok {
		server, _ = info["name"].(string)
	}
	return b.String(), res.IsError, server, nil
}

type mcpGoClient struct{ c *mcpgoclient.Client }

func (c mcpGoClient) protocol() string { return c.c.ProtocolVersion() }
func (c mcpGoClient) close()           { _ = c.c.Close() }
func (c mcpGoClient) tools(ctx context.Context) ([]string, error) {
	res, err := c.c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		return nil, err
	}
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	return names, nil
}

func (c mcpGoClient) call(ctx context.Context, tool string, args map[string]any) (string, bool, string, error) {
	req := mcpgo.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	res, err := c.c.CallTool(ctx, req)
	if err != nil {
		return "", false, "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := mcpgo.AsTextContent(c); ok {
			b.WriteString(tc.Text)
		}
	}
	server := ""
	if info := res.GetResultMeta().ServerInfo(); info != nil {
		server = info.Name
	}
	return b.String(), res.IsError, server, nil
}

// The gateway in front of the SDK's example server, served over streamable
// HTTP to the MCP clients of today as their users build them: the go-sdk's
// and mark3labs/mcp-go's, with their defaults (protocol 2026-07-28,
// stateless) and pinned to the last protocol with sessions.
func TestGatewayServesTodaysClientsOverHTTP(t *testing.T) {
	everything := buildEverything(t)
	p := brokertest.Start(t, brokertest.Options{Policy: interopPolicy})
	g, err := mcpgateway.New(t.Context(), mcpgateway.Config{
		Upstreams: []mcpgateway.Upstream{{Name: "every", Command: []string{everything}}},
		Agent:     agentcfg.Config{NATSURL: p.URL(), Agent: "pod-1", Prefix: messages.DefaultPrefix, AttemptTimeout: time.Second, ReceiptTimeout: 5 * time.Second},
		Version:   "v9.9.9-test",
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(func() { srv.Close(); g.Close() })
	approver := p.Approver("default")

	clients := []struct {
		name         string
		wantProtocol string
		connect      func(t *testing.T) (interopClient, error)
	}{
		{"the go-sdk client with its defaults", "2026-07-28", func(t *testing.T) (interopClient, error) {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "go-sdk", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL}, nil)
			return goSDKClient{cs}, err
		}},
		{"the go-sdk client on 2025-11-25", "2025-11-25", func(t *testing.T) (interopClient, error) {
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "go-sdk", Version: "1"}, nil).Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: srv.URL},
				&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
			return goSDKClient{cs}, err
		}},
		{"the mcp-go client with its defaults", "2026-07-28", func(t *testing.T) (interopClient, error) {
			c, err := mcpgoclient.NewStreamableHttpClient(srv.URL)
			if err != nil {
				return nil, err
			}
			return startMCPGo(t, c)
		}},
		{"the mcp-go client on the initialize handshake", "2025-11-25", func(t *testing.T) (interopClient, error) {
			tr, err := mcpgotransport.NewStreamableHTTP(srv.URL)
			if err != nil {
				return nil, err
			}
			return startMCPGo(t, mcpgoclient.NewClient(tr, mcpgoclient.WithLegacyProtocolOnly()))
		}},
	}
	for _, tc := range clients {
		t.Run(tc.name, func(t *testing.T) {
			c, err := tc.connect(t)
			if err != nil {
				t.Fatal(err)
			}
			defer c.close()
			ctx := t.Context()
			if c.protocol() != tc.wantProtocol {
				t.Fatalf("negotiated %q, want %q", c.protocol(), tc.wantProtocol)
			}

			names, err := c.tools(ctx)
			if err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			if !contains(names, "every__greet") || !contains(names, "every__log") || len(names) < 10 {
				t.Fatalf("tools %v", names)
			}

			text, isError, server, err := c.call(ctx, "every__greet", map[string]any{"name": "Ada"})
			if err != nil || isError || text != "Hi Ada" {
				t.Fatalf("allowed call: %q error=%v %v", text, isError, err)
			}
			// The client speaks to the gateway: a result names the gateway,
			// never the upstream behind it (in protocols that name one).
			if server != "" && server != "signoff-mcp-gateway" {
				t.Fatalf("the result names server %q", server)
			}
			if tc.wantProtocol == "2026-07-28" && server == "" {
				t.Fatal("a 2026-07-28 result names no server")
			}

			text, isError, _, err = c.call(ctx, "every__log", map[string]any{})
			if err != nil || !isError || !strings.Contains(text, "Tool 'mcp__every__log' was denied by policy") {
				t.Fatalf("denied call: %q error=%v %v", text, isError, err)
			}

			// A call waiting for a person, abandoned by the client: the
			// question is withdrawn and the client gets no result.
			cctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, _, _, err := c.call(cctx, "every__ping", map[string]any{})
				done <- err
			}()
			var q messages.ApprovalNeeded
			select {
			case q = <-approver.Asks:
			case <-time.After(10 * time.Second):
				t.Fatal("no question reached the approver")
			}
			if q.Request.Tool != "mcp__every__ping" {
				t.Fatalf("question about %q", q.Request.Tool)
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("the cancelled call returned %v, want context.Canceled", err)
			}
			waitState(t, p, q, messages.StateCancelled)
		})
	}
}

func startMCPGo(t *testing.T, c *mcpgoclient.Client) (interopClient, error) {
	if err := c.Start(t.Context()); err != nil {
		return nil, err
	}
	req := mcpgo.InitializeRequest{}
	req.Params.ClientInfo = mcpgo.Implementation{Name: "mcp-go", Version: "1"}
	if _, err := c.Initialize(t.Context(), req); err != nil {
		_ = c.Close()
		return nil, err
	}
	return mcpGoClient{c}, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// waitState waits until the question's request is in state want.
func waitState(t *testing.T, p *brokertest.Plane, q messages.ApprovalNeeded, want messages.State) {
	t.Helper()
	agent := p.Agent(q.Request.SessionID, "pod-1")
	deadline := time.Now().Add(5 * time.Second)
	for {
		rc, err := agent.Status(t.Context(), q.Request.RequestID)
		if err == nil && rc.State == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("request %s is %s (%v), want %s", q.Request.RequestID, rc.State, err, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
